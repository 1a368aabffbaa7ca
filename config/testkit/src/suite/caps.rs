//! A cap holds however many calls arrive at once (many callers): a burst of forty calls
//! under a $0.0001 daily cap reaches OpenAI once, foreground and background, on one
//! instance and across two sharing a real Redis; and a cancelled call is charged from
//! its own client's calls, never another client's.

use super::http::{post_with_token, waits_for};
use super::observability::answered as priced_answer;
use super::store::Redis;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;
use std::net::SocketAddr;
use std::thread;

const CI_TOKEN: &str = "PLANTED-caps-ci-token-0123456789";
const BIG_TOKEN: &str = "PLANTED-caps-big-token-0123456789";
const OPS_TOKEN: &str = "PLANTED-caps-ops-token-0123456789";

/// How many calls arrive at once.
const BURST: u64 = 40;

fn call(id: u64, task: bool) -> Value {
    let mut m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}});
    if task {
        m["params"]["task"] = json!({"ttl": 60_000});
    }
    m
}

/// The clients file: `ci` capped at $0.0001 a day, `big` without a cap, `ops` reading
/// the metrics.
fn clients() -> String {
    format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    spend_per_day_usd: 0.0001\n  - name: big\n    token_sha256: {}\n  - name: ops\n    token_sha256: {}\n    metrics: true\n",
        sha256_hex(CI_TOKEN),
        sha256_hex(BIG_TOKEN),
        sha256_hex(OPS_TOKEN)
    )
}

/// `BURST` calls of `ci`, each on its own connection, sent at once to `addrs` in turn;
/// the replies.
fn burst(addrs: &[SocketAddr], task: bool) -> Vec<Value> {
    let gate = std::sync::Arc::new(std::sync::Barrier::new(usize::try_from(BURST).unwrap_or(1)));
    let threads: Vec<_> = (0..BURST)
        .map(|i| {
            let addr = addrs[usize::try_from(i).unwrap_or(0) % addrs.len()];
            let gate = gate.clone();
            thread::spawn(move || {
                let mut c = HttpConn::open(addr);
                gate.wait();
                post_with_token(&mut c, &call(i + 1, task), CI_TOKEN).json()
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap_or(Value::Null))
        .collect()
}

/// Of `replies`, those refused by the spend cap (each saying what is spent and held),
/// and the others.
fn refused_by_the_cap(replies: &[Value]) -> (usize, usize) {
    let mut refused = 0;
    for reply in replies {
        let details = &reply["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        if details["refusal"] == "limit_spend_per_day" {
            assert_eq!(details["scope"], "client", "{reply}");
            assert!(details["spent_usd"].is_number(), "{reply}");
            assert!(details["held_usd"].is_number(), "{reply}");
            refused += 1;
        }
    }
    (refused, replies.len() - refused)
}

/// The creates that reached OpenAI.
fn creates(fake: &FakeOpenAi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/responses"))
        .count()
}

/// An instance serving `ci`, `big` and `ops` with `yaml` beside its clients file (and
/// its folder, kept as long as it runs).
fn one_instance(fake: &FakeOpenAi, yaml: &str) -> (Mcp, TempDir) {
    let dir = temp_dir("caps");
    std::fs::write(dir.join("clients.yaml"), clients()).unwrap();
    let yaml = format!("server: {{http: {{clients_file: clients.yaml}}}}\n{yaml}");
    let mcp = Mcp::spawn(
        Opts::http(&fake.url)
            .config(&dir, &yaml)
            .env("MCP_TASKS_SECRET", "a-secret-for-the-caps-test"),
    );
    (mcp, dir)
}

/// What `replies` said, in brief, for an assertion's message.
fn brief(replies: &[Value]) -> Vec<String> {
    replies
        .iter()
        .map(|r| {
            let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
            let head: String = text.chars().take(160).collect();
            if r["result"]["task"].is_object() {
                "a task".to_owned()
            } else {
                head
            }
        })
        .collect()
}

pub fn a_burst_under_a_daily_cap_reaches_openai_once() {
    // Each answer is held 800 ms upstream: every call of the burst arrives while the
    // first still runs.
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &priced_answer()).after(Duration::from_millis(800))
    });
    let (server, _dir) = one_instance(&fake, "");
    let replies = burst(&[listening(&server)], false);
    let (refused, others) = refused_by_the_cap(&replies);
    assert_eq!((refused, others), (39, 1), "{:?}", brief(&replies));
    assert_eq!(creates(&fake), 1, "the overrun is at most one call");
}

pub fn a_burst_of_background_tasks_under_a_daily_cap_starts_one_run() {
    let openai = crate::fake_openai::Background::new(&priced_answer(), Duration::from_millis(800));
    let fake =
        FakeOpenAi::start(move |r, _| openai.answer_for(r).after(Duration::from_millis(200)));
    let (server, _dir) = one_instance(
        &fake,
        "tasks: {openai_background: true, poll_interval_ms: 100}\n",
    );
    let replies = burst(&[listening(&server)], true);
    let (refused, others) = refused_by_the_cap(&replies);
    assert_eq!((refused, others), (39, 1), "{:?}", brief(&replies));
    assert_eq!(creates(&fake), 1, "one background run");
}

pub fn a_burst_across_two_instances_sharing_a_store_reaches_openai_once() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &priced_answer()).after(Duration::from_millis(800))
    });
    let instance = |name: &str| {
        let dir = temp_dir(name);
        std::fs::write(dir.join("clients.yaml"), clients()).unwrap();
        let yaml = format!(
            "server: {{http: {{clients_file: clients.yaml}}, store: {{url: \"redis://127.0.0.1:{port}/0\"}}}}\n"
        );
        let mcp = Mcp::spawn(
            Opts::http(&fake.url)
                .config(&dir, &yaml)
                .env("MCP_TASKS_SECRET", "a-secret-for-the-caps-test"),
        );
        (mcp, dir)
    };
    let ((a, _a_dir), (b, _b_dir)) = (instance("caps-a"), instance("caps-b"));
    let replies = burst(&[listening(&a), listening(&b)], false);
    let (refused, others) = refused_by_the_cap(&replies);
    assert_eq!((refused, others), (39, 1), "{:?}", brief(&replies));
    assert_eq!(creates(&fake), 1, "one call across the fleet");
}

pub fn a_cancelled_call_is_charged_from_its_own_clients_calls() {
    // `big`'s questions read a great deal ($7.50 each); every other answer is small.
    // The slow question is held until it is cancelled.
    let fake = FakeOpenAi::start(|r, _| {
        let body = r.body.to_string();
        if body.contains("BIG") {
            let mut big: Value = serde_json::from_slice(&priced_answer()).unwrap_or_default();
            big["usage"] = json!({"input_tokens": 2_000_000, "output_tokens": 500_000});
            Action::json(200, &serde_json::to_vec(&big).unwrap_or_default())
        } else if body.contains("SLOW") {
            Action::json(200, &priced_answer()).after(Duration::from_secs(30))
        } else {
            Action::json(200, &priced_answer())
        }
    });
    let dir = temp_dir("caps-cancel");
    std::fs::write(
        dir.join("clients.yaml"),
        clients().replace("spend_per_day_usd: 0.0001", "spend_per_day_usd: 1000"),
    )
    .unwrap();
    let server = Mcp::spawn(
        Opts::http(&fake.url)
            .config(&dir, "server: {http: {clients_file: clients.yaml}}\n")
            .arg("--log-format")
            .arg("json"),
    );
    let addr = listening(&server);
    let ask = move |token: &str, id: u64, query: &str| {
        let m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"answer","arguments":{"query":query}}});
        post_with_token(&mut HttpConn::open(addr), &m, token).json()
    };
    for id in 1..=3 {
        let r = ask(BIG_TOKEN, id, "a BIG question");
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    let r = ask(CI_TOKEN, 4, "a small question");
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    // ci asks a slow question, and cancels it once OpenAI has it.
    let slow = thread::spawn(move || ask(CI_TOKEN, 5, "a SLOW question"));
    waits_for("the slow question to reach OpenAI", || {
        fake.requests().len() >= 5
    });
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}});
    let _ = post_with_token(&mut HttpConn::open(addr), &cancel, CI_TOKEN);
    let _ = slow.join();
    waits_for("the cancelled call's line", || {
        call_lines(&server.stderr())
            .iter()
            .any(|l| l["outcome"] == "cancelled")
    });
    let lines = call_lines(&server.stderr());
    let cost_of = |outcome: &str, client: &str| {
        lines
            .iter()
            .filter(|l| l["outcome"] == outcome && l["client"] == client)
            .filter_map(|l| l["cost_usd"].as_f64())
            .next_back()
            .unwrap_or(f64::NAN)
    };
    let (big, own, cancelled) = (
        cost_of("ok", "big"),
        cost_of("ok", "ci"),
        cost_of("cancelled", "ci"),
    );
    assert!(big > 7.0, "big's calls are large: {lines:?}");
    assert!((own - 0.06025).abs() < 1e-9, "{lines:?}");
    assert!(
        cancelled >= own && cancelled < 0.1,
        "the cancelled call is charged ci's own median call (${own}), not big's (${big}): ${cancelled}"
    );
}

fn call_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "call")
        .collect()
}

/// An instance serving `ci`, `big` and `ops` through the Redis on `port`, with `yaml`
/// beside its clients file.
fn stored_instance(fake: &FakeOpenAi, port: u16, name: &str, yaml: &str) -> (Mcp, TempDir) {
    let dir = temp_dir(name);
    std::fs::write(dir.join("clients.yaml"), clients()).unwrap();
    let yaml = format!(
        "server: {{http: {{clients_file: clients.yaml}}, store: {{url: \"redis://127.0.0.1:{port}/0\"}}}}\n{yaml}"
    );
    let mcp = Mcp::spawn(
        Opts::http(&fake.url)
            .config(&dir, &yaml)
            .env("MCP_TASKS_SECRET", "a-secret-for-the-caps-test"),
    );
    (mcp, dir)
}

/// The UTC day of now, as the store's keys name it.
fn utc_day() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0)
}

/// A replica killed while its call runs leaves that call's estimate held in the store
/// only until its word that it is alive lapses (15 s): then every other replica admits
/// the client again (found by the attack on 655a0ce, where the hold stood for the rest
/// of the UTC day, and with an instance cap locked every client out).
pub fn a_killed_replicas_hold_lapses_in_the_store() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    // The first call is held until its replica dies; later ones are answered at once.
    let fake = FakeOpenAi::start(|_, i| {
        let answer = Action::json(200, &priced_answer());
        if i == 0 {
            answer.after(Duration::from_secs(60))
        } else {
            answer
        }
    });
    let (mut a, _a_dir) = stored_instance(&fake, port, "caps-kill-a", "");
    let (b, _b_dir) = stored_instance(&fake, port, "caps-kill-b", "");
    let held = format!("orm:r:ci:{}", utc_day());
    let a_addr = listening(&a);
    let slow = thread::spawn(move || {
        let mut c = HttpConn::open(a_addr);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            post_with_token(&mut c, &call(1, false), CI_TOKEN)
        }));
    });
    waits_for("a's call to reach OpenAI", || !fake.requests().is_empty());
    let holders = super::store::redis_command(port, &format!("SCARD {held}"));
    assert!(holders.contains(":1"), "a's call holds: {holders}");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &a.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    a.wait_exit(PATIENCE);
    let _ = slow.join();
    // At once, b still sees a's hold: a may only be slow.
    let b_addr = listening(&b);
    let r = post_with_token(&mut HttpConn::open(b_addr), &call(2, false), CI_TOKEN).json();
    let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(details["refusal"], "limit_spend_per_day", "{r}");
    assert_eq!(details["spent_usd"], 0.0, "nothing was spent: {r}");
    // Once a's word lapses, its hold goes, and b admits ci's call.
    // (15 s of the store's clock, and a renewal every 5 s: a lapse is at most 20 s away.)
    let start = std::time::Instant::now();
    for id in 3.. {
        let r = post_with_token(&mut HttpConn::open(b_addr), &call(id, false), CI_TOKEN).json();
        if r["result"]["structuredContent"].is_object() {
            break;
        }
        let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(details["refusal"], "limit_spend_per_day", "{r}");
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "the dead replica's hold never lapsed: {r}"
        );
        thread::sleep(Duration::from_millis(250));
    }
}

/// FINDING (review of 655a0ce, ignored; a race, so it fails only sometimes: 3 of 4 runs
/// on the blocking runtime here, 0 of 4 on smol): the ledger's last store operations
/// (the `UNHOLD` and `SPEND` of the calls that ended in the shutdown grace) do not hold
/// the exit. `Host::serve` hands them to the store thread's channel (`Store::perform`)
/// and `exit()` flushes the listeners and the spans, not the store, before
/// `process::exit`: a replica stopped by SIGTERM (every rolling deploy) may exit with
/// them unsent, and then its calls ran uncharged (`spent` stays 0) and their estimates
/// stay held in the store for the rest of the day.
pub fn a_drained_replicas_last_spend_and_unhold_reach_the_store() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &priced_answer()).after(Duration::from_millis(1_500))
    });
    let (mut a, _a_dir) = stored_instance(&fake, port, "caps-drain-a", "");
    let day = utc_day();
    let (held, spent) = (format!("orm:r:ci:{day}"), format!("orm:s:ci:{day}"));
    let addr = listening(&a);
    let slow = thread::spawn(move || {
        post_with_token(&mut HttpConn::open(addr), &call(1, false), CI_TOKEN).json()
    });
    waits_for("the call to reach OpenAI", || !fake.requests().is_empty());
    let _ = a.terminate();
    let r = slow.join().unwrap_or(Value::Null);
    assert!(
        r["result"]["structuredContent"].is_object(),
        "answered in the grace: {r}"
    );
    assert_eq!(
        (
            super::store::redis_integer(port, &held),
            super::store::redis_integer(port, &spent) > 0
        ),
        (0, true),
        "the drained replica's call let its hold go and spent its cost in the store"
    );
}

/// One command to the Redis on `port` in RESP (a script's text holds newlines, which
/// the inline protocol cannot carry); its raw answer.
fn resp(port: u16, args: &[String]) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(out.as_bytes()).unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The store's own reserve and unhold, as an instance sends them.
fn eval(port: u16, op: &responses_mcp_core::store::StoreOp) -> String {
    use responses_mcp_core::store::{StoreOp, RESERVE_SCRIPT, UNHOLD_SCRIPT};
    let (script, keys, args): (&str, Vec<String>, Vec<String>) = match op {
        StoreOp::Reserve { keys, args, hold } => {
            let mut args: Vec<String> = args.iter().map(i64::to_string).collect();
            args.push(hold.holder.clone());
            args.push(hold.n.to_string());
            (RESERVE_SCRIPT, keys.to_vec(), args)
        }
        StoreOp::Unhold { keys, hold } => {
            let args = vec![hold.holder.clone(), hold.n.to_string()];
            (UNHOLD_SCRIPT, keys.to_vec(), args)
        }
        other => panic!("not a hold: {other:?}"),
    };
    let mut all = vec!["EVAL".to_owned(), script.to_owned(), keys.len().to_string()];
    all.extend(keys);
    all.extend(args);
    resp(port, &all)
}

/// A store that comes back without its keys (a restart without persistence, a failover
/// to a replica that missed writes) keeps the holds made after it: three calls in
/// flight, the store restarts, three more fill the day again, the first three end, and
/// their unholds take nothing from the new three's (each hold is a field of its own;
/// found by the attack on 655a0ce, where one counter per day let nine calls run under a
/// cap of three).
pub fn a_store_that_lost_its_keys_keeps_later_holds() {
    use responses_mcp_core::clients::Limit;
    use responses_mcp_core::money::Picodollars;
    use responses_mcp_core::store::HoldName;
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let estimate = Picodollars(1_000);
    let own = Limit {
        calls_per_minute: None,
        spend_per_day: Some(Picodollars(3_000)),
    };
    let reserve = |n: u64| {
        let hold = HoldName {
            holder: "test".into(),
            n,
        };
        let limits = (own, Limit::default());
        eval(
            port,
            &responses_mcp_core::store::reserve("ci", limits, now, (estimate, &hold)),
        )
    };
    let admitted = |answer: &str| answer.starts_with("*3\r\n:0\r\n");
    let first: Vec<bool> = (0..4).map(|n| admitted(&reserve(n))).collect();
    assert_eq!(
        first,
        [true, true, true, false],
        "three estimates fill the day"
    );
    assert!(resp(port, &["FLUSHALL".to_owned()]).starts_with("+OK"));
    let second: Vec<bool> = (10..13).map(|n| admitted(&reserve(n))).collect();
    assert_eq!(second, [true, true, true], "the day is full again");
    for n in 0..3 {
        // The first three calls end.
        let hold = HoldName {
            holder: "test".into(),
            n,
        };
        eval(port, &responses_mcp_core::store::unhold("ci", &hold, now));
    }
    let third: Vec<bool> = (20..23).map(|n| admitted(&reserve(n))).collect();
    assert_eq!(
        third,
        [false, false, false],
        "three calls still run and hold: the day stays full"
    );
}
