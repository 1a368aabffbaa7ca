//! The fleet as a platform runs it: replicas started together as PID 1 each on one Redis,
//! clients that reach for what is not theirs, a store that stalls, an identity provider
//! that blinks, and secrets that hold any character. Each test drives the real binary
//! against the real components (redis-server, oidc-provider) on loopback.

use super::http::{post_with_token, waits_for};
use super::oauth::{server_opts, Provider, STATIC};
use super::store::{
    gated_openai, legacy, redis_command, redis_integer, task_call, task_id_of, task_request, Redis,
    ALICE_TOKEN, LEGACY,
};
use crate::fake_openai::{Action, FakeOpenAi, StreamThen};
use crate::http_client::{listening, HttpConn};
use crate::*;
use std::collections::BTreeSet;

const BOB_TOKEN: &str = "PLANTED-fleet-bob-token-0123456789";
const SECRET: &str = "one-secret-for-every-instance-0123";

/// How to start an instance on `fake` sharing the Redis on `port` (`store` adds to its
/// `server.store` settings, `more` to the configuration), with the clients alice and bob
/// and the task secret every instance has, in a folder of its own: a configuration
/// written while another instance starts would be read half-written.
fn on_store(fake: &FakeOpenAi, port: u16, store: &str, more: &str) -> Opts {
    let dir = temp_dir("fleet");
    let clients = format!(
        "clients:\n  - name: alice\n    token_sha256: {}\n  - name: bob\n    token_sha256: {}\n",
        sha256_hex(ALICE_TOKEN),
        sha256_hex(BOB_TOKEN)
    );
    std::fs::write(dir.join("clients.yaml"), clients).unwrap();
    let config = format!(
        "server: {{http: {{clients_file: clients.yaml}}, store: {{url: \"redis://127.0.0.1:{port}/0\"{store}}}}}\n{more}"
    );
    Opts::http(&fake.url)
        .config(&dir, &config)
        .env("MCP_TASKS_SECRET", SECRET)
        .keeping(dir)
}

/// The error message of a JSON-RPC reply (empty when it is none).
fn error_message(reply: &Value) -> String {
    reply["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A fake OpenAI whose answer names the `fleet-…` word of the query it was asked, so
/// that an answer read back shows whose call it was.
fn echo_openai() -> FakeOpenAi {
    FakeOpenAi::start(|r, _| {
        let sent = r.body.to_string();
        let tag: String = sent
            .find("fleet-")
            .map(|at| {
                sent[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect()
            })
            .unwrap_or_default();
        let mut body: Value = serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
        body["output"][0]["content"][0]["text"] = format!("The answer for {tag}.").into();
        Action::json(200, body.to_string().as_bytes())
    })
}

/// Whether this process may make PID namespaces (root: CI runs as root).
fn may_unshare() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0");
    if !root {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root: the PID namespace test needs it"
        );
        eprintln!("skipping: PID namespaces need root");
    }
    root
}

/// The PID the child of `parent` has in its own PID namespace (the last of `NSpid`).
fn pid_in_namespace(parent: u32) -> Option<u32> {
    let children =
        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    let child = children.split_whitespace().next()?;
    let status = std::fs::read_to_string(format!("/proc/{child}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
    line.split_whitespace().last()?.parse().ok()
}

/// Three replicas, each PID 1 in a PID namespace of its own as a container runs it,
/// started together on one Redis and one task secret. Two clients make a task on every
/// replica: every id differs, every owner reads its own answer on another replica, and
/// the other client is refused it.
pub fn replicas_started_together_as_pid_1_never_share_a_task_id() {
    let (Some(redis_bin), Some(unshare)) =
        (system_program("redis-server"), system_program("unshare"))
    else {
        return;
    };
    if !may_unshare() {
        return;
    }
    let port = free_port();
    let _redis = Redis::start(&redis_bin, port);
    let fake = echo_openai();
    let unshare = unshare.to_string_lossy().into_owned();
    let replica = || {
        let pid_1 = ["--pid", "--fork", "--mount-proc", "--kill-child"];
        Mcp::spawn(on_store(&fake, port, "", "").under(&unshare, &pid_1))
    };
    // Started together, as a Deployment starts its replicas.
    let replicas = [replica(), replica(), replica()];
    let addrs: Vec<_> = replicas.iter().map(listening).collect();
    for r in &replicas {
        assert_eq!(pid_in_namespace(r.pid()), Some(1), "each replica is PID 1");
    }
    let mut tasks = Vec::new();
    let mut id = 0;
    for (at, addr) in addrs.iter().enumerate() {
        for (who, token) in [("alice", ALICE_TOKEN), ("bob", BOB_TOKEN)] {
            id += 1;
            let tag = format!("fleet-{who}-on-{at}");
            let mut c = HttpConn::open(*addr);
            let created = post_with_token(&mut c, &task_call(id, &tag), token).json();
            tasks.push((token, at, task_id_of(&created), tag));
        }
    }
    let distinct: BTreeSet<&String> = tasks.iter().map(|(_, _, task, _)| task).collect();
    assert_eq!(distinct.len(), 6, "{tasks:?}");
    for (token, at, task, tag) in &tasks {
        let mut c = HttpConn::open(addrs[(at + 1) % 3]);
        let result = post_with_token(&mut c, &task_request(100, "tasks/result", task), token);
        let answer = answer_of(&result.json())["answer"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(answer.contains(&format!("{tag}.")), "{tag}: {answer}");
        let other = if *token == ALICE_TOKEN {
            BOB_TOKEN
        } else {
            ALICE_TOKEN
        };
        let refused = post_with_token(&mut c, &task_request(101, "tasks/result", task), other);
        let message = error_message(&refused.json());
        assert!(
            message.contains("not one of this client's tasks"),
            "{message}"
        );
    }
}

/// A client that names another client's task in `tasks/cancel` is refused, and the
/// owner's call runs on to its answer (the store compared the owner before it wrote or
/// told anyone anything).
pub fn a_foreign_cancel_is_refused_and_the_owners_call_runs_on() {
    let Some(redis_bin) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&redis_bin, port);
    let fake = gated_openai();
    let spawn = || Mcp::spawn(on_store(&fake, port, "", ""));
    let (a, b) = (spawn(), spawn());
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    let created = post_with_token(&mut ca, &task_call(1, "please-slow fleet"), ALICE_TOKEN).json();
    let task = task_id_of(&created);
    fake.wait_requests(1, PATIENCE);
    let refused = post_with_token(&mut cb, &task_request(2, "tasks/cancel", &task), BOB_TOKEN);
    let message = error_message(&refused.json());
    assert!(
        message.contains("not one of this client's tasks"),
        "{message}"
    );
    // Nothing was written: the store still holds it working.
    let status = redis_field(port, &format!("orm:t:{task}"), "status");
    assert!(
        status == "working" || status == "completed",
        "the foreign cancel changed the task: {status}"
    );
    // The owner's call was not stopped: it ends with its answer.
    let result = post_with_token(
        &mut ca,
        &task_request(3, "tasks/result", &task),
        ALICE_TOKEN,
    );
    assert_eq!(answer_of(&result.json())["used_search"], true);
    let got = post_with_token(&mut cb, &task_request(4, "tasks/get", &task), ALICE_TOKEN).json();
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert!(fake.closed().is_empty(), "no upstream request was closed");
}

/// `HGET key field` on the Redis at `port`, by an inline command.
fn redis_field(port: u16, key: &str, field: &str) -> String {
    redis_command(port, &format!("HGET {key} {field}"))
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

/// Sends `signal` (`-TERM`, `-KILL`, `-STOP`, `-CONT`) to process `pid`.
pub(super) fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
}

/// Redis stopped (SIGSTOP) past the store's timeout while a call is admitted: the call is
/// refused naming the store but not its address, and once Redis runs again the call was
/// counted at most once, never twice (a batch that timed out may have reached the store,
/// so it is not sent again).
pub fn a_store_that_stalls_never_counts_a_call_twice() {
    let Some(redis_bin) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let redis = Redis::start(&redis_bin, port);
    let fake = gated_openai();
    let mcp = Mcp::spawn(on_store(&fake, port, ", timeout_ms: 300", ""));
    let mut c = HttpConn::open(listening(&mcp));
    let minute = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 60
    };
    let start = minute();
    let calls = |port| {
        (start..=minute() + 1)
            .map(|m| redis_integer(port, &format!("orm:c:alice:{m}")))
            .sum::<i64>()
    };
    let ok = |r: &Value| r["result"]["structuredContent"].is_object();
    let first = super::http::answer_with_token(&mut c, 1, ALICE_TOKEN).json();
    assert!(ok(&first));
    assert_eq!(calls(port), 1);
    // Stopped until the call is refused: refused naming the store, not its address.
    signal(redis.pid(), "-STOP");
    let refused = super::http::answer_with_token(&mut c, 2, ALICE_TOKEN).json();
    signal(redis.pid(), "-CONT");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("store"), "{text}");
    assert!(!text.contains(&format!(":{port}")), "no address: {text}");
    waits_for("Redis to answer again", || super::store::ping(port));
    waits_for("the instance to see the store again", || {
        c.get("/ready").status == 200
    });
    let held = calls(port);
    assert!((1..=2).contains(&held), "counted twice: {held}");
    // Stopped for 0.45 s: the batch times out at 0.3 s, and Redis runs again while a
    // new connection would still be waiting for it, so a batch sent again would land
    // as well as the first, which Redis still holds in its socket. Answered or refused,
    // the call is counted once at most.
    signal(redis.pid(), "-STOP");
    let pid = redis.pid();
    let resume = thread::spawn(move || {
        thread::sleep(Duration::from_millis(450));
        signal(pid, "-CONT");
    });
    let _ = super::http::answer_with_token(&mut c, 3, ALICE_TOKEN).json();
    resume.join().unwrap();
    waits_for("Redis to answer again", || super::store::ping(port));
    waits_for("the instance to see the store again", || {
        c.get("/ready").status == 200
    });
    let after = calls(port);
    assert!(
        (held..=held + 1).contains(&after),
        "counted twice: {held} then {after}"
    );
    // The instance serves again, and counts each call once.
    let again = super::http::answer_with_token(&mut c, 4, ALICE_TOKEN).json();
    assert!(ok(&again));
    assert_eq!(calls(port), after + 1);
}

/// A store password that holds `/`, `+` and `=` (base64 keys often do) is shown nowhere:
/// not by `--show-config`, not in the error that refuses its URL unencoded, not in the log
/// of an instance that reaches a Redis requiring it.
pub fn a_store_password_of_any_characters_is_never_shown() {
    const PASSWORD: &str = "PLANTED/pass+word=k3y==";
    let encoded = "PLANTED%2Fpass%2Bword%3Dk3y%3D%3D";
    for url in [
        format!("redis://app:{PASSWORD}@127.0.0.1:6390/0"),
        format!("redis://:{PASSWORD}@127.0.0.1:6390"),
        format!("rediss://default:{encoded}@127.0.0.1:6390/2"),
    ] {
        let out = super::config::run(&["--show-config"], &[("MCP_STORE_URL", &url)]);
        let shown = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        for secret in [PASSWORD, encoded, "pass+word", "k3y=="] {
            assert!(!shown.contains(secret), "{url}: {shown}");
        }
        let out = super::config::run(
            &["--stdio"],
            &[("MCP_STORE_URL", &url), ("MCP_TASKS_SECRET", SECRET)],
        );
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        for secret in [PASSWORD, encoded, "pass+word", "k3y=="] {
            assert!(!said.contains(secret), "{url}: {said}");
        }
    }
    // Written raw in the URL, it cannot be read: refused, saying how to write it.
    let raw = format!("redis://app:{PASSWORD}@127.0.0.1:6390/0");
    let out = super::config::run(&["--stdio"], &[("MCP_STORE_URL", &raw)]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("percent-encoded"), "{said}");

    let Some(redis_bin) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&redis_bin, port);
    assert!(redis_command(port, &format!("CONFIG SET requirepass {PASSWORD}")).starts_with("+OK"));
    let fake = gated_openai();
    for (url, env) in [
        (
            format!("redis://127.0.0.1:{port}/0"),
            vec![("MCP_STORE_PASSWORD", PASSWORD)],
        ),
        (format!("redis://:{encoded}@127.0.0.1:{port}/0"), Vec::new()),
    ] {
        let config =
            format!("server: {{store: {{url: \"{url}\", password_env: MCP_STORE_PASSWORD}}}}\n");
        let mut opts = Opts::http(&fake.url)
            .temp_config("fleet-password", &config)
            .env("MCP_TASKS_SECRET", SECRET)
            .arg("--debug");
        for (k, v) in env {
            opts = opts.env(k, v);
        }
        let mut mcp = Mcp::spawn(opts);
        let mut c = HttpConn::open(listening(&mcp));
        let created = legacy(&mut c, &task_call(1, "fleet-password"));
        let task = task_id_of(&created);
        assert!(task.starts_with("task-"), "{created}");
        assert_eq!(c.get("/ready").status, 200);
        drop(c);
        let log = mcp.terminate();
        for secret in [PASSWORD, encoded, "pass+word", "k3y=="] {
            assert!(!log.contains(secret), "{url}: the log shows the password");
        }
    }
}

/// A store without the task secret is a fleet whose instances refuse each other's
/// tasks: refused at startup, naming the variable.
pub fn a_store_without_the_task_secret_refuses_to_start() {
    let out = super::config::run(
        &["--stdio"],
        &[("MCP_STORE_URL", "redis://127.0.0.1:6390/0")],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("MCP_TASKS_SECRET"), "{said}");
    // --show-config still shows what is set, and says the secret is not.
    let out = super::config::run(
        &["--show-config"],
        &[("MCP_STORE_URL", "redis://127.0.0.1:6390/0")],
    );
    assert!(out.status.success());
}

/// `/ready` is right from the first request: started without an API key, an instance
/// answers 503 to a `/ready` that connects the moment the port is open, every time.
pub fn ready_is_right_from_the_first_request() {
    use std::io::{Read, Write};
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    for _ in 0..10 {
        let port = free_port();
        // Knocking before the server starts: the first connect that succeeds asks.
        let asker = thread::spawn(move || {
            let start = Instant::now();
            let mut stream = loop {
                if let Ok(s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                    break s;
                }
                assert!(start.elapsed() < PATIENCE, "the port never opened");
                std::thread::yield_now();
            };
            let ask = format!(
                "GET /ready HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(ask.as_bytes()).unwrap();
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            answer
        });
        let mut opts = Opts::http(&fake.url);
        opts.key = false;
        opts.args = vec![
            "--http".into(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
        ];
        let _mcp = Mcp::spawn(opts);
        let answer = asker.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            answer.contains("no API key") || answer.contains("starting"),
            "{answer}"
        );
    }
}

/// A cancelled call is charged: a call whose stream had begun a web search, cancelled
/// before its answer, shows its estimated cost in the call log and in the day's spend
/// key of the store.
pub fn a_call_cancelled_mid_stream_is_charged() {
    let Some(redis_bin) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&redis_bin, port);
    // The stream up to the first search item, then silence.
    let whole = fixture("stream-web-search.sse");
    let text = String::from_utf8_lossy(&whole).into_owned();
    let cut = text
        .find("\"type\":\"web_search_call\"")
        .and_then(|at| text[at..].find("\n\n").map(|end| at + end + 2))
        .expect("the fixture begins a search");
    let begun = whole[..cut].to_vec();
    let fake = FakeOpenAi::start(move |_, _| Action::Stream {
        body: begun.clone(),
        size: 1 << 16,
        interval: Duration::ZERO,
        then: StreamThen::Hang,
    });
    let priced = "model_profiles: {answer: {model: gpt-6.1-terra}}\n";
    let mut mcp = Mcp::spawn(on_store(&fake, port, "", priced).env("MCP_LOG_FORMAT", "json"));
    let addr = listening(&mcp);
    let day = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 86_400;
    let spent = |port| {
        redis_integer(port, &format!("orm:s:alice:{day}"))
            + redis_integer(port, &format!("orm:s:alice:{}", day + 1))
    };
    assert_eq!(spent(port), 0);
    // The call asks for progress, so that its stream says when the server has seen the
    // search begin: cancelled only then.
    let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"fleet-cancelled"},"_meta":{"progressToken":"p"}}});
    let auth = format!("Bearer {ALICE_TOKEN}");
    let headers = [
        LEGACY[0],
        ("Authorization", auth.as_str()),
        ("Accept", "application/json, text/event-stream"),
    ];
    let mut calling = std::net::TcpStream::connect(addr).unwrap();
    calling.set_read_timeout(Some(PATIENCE)).unwrap();
    std::io::Write::write_all(
        &mut calling,
        &crate::http_client::post_bytes(addr, &call, &headers),
    )
    .unwrap();
    let mut seen = String::new();
    while !seen.contains(r#""message":"searching the web""#) {
        let mut chunk = [0u8; 4096];
        let n = std::io::Read::read(&mut calling, &mut chunk).unwrap();
        assert!(n > 0, "the stream ended before the search began: {seen}");
        seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
    }
    let mut c = HttpConn::open(addr);
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":7,"reason":"user"}});
    assert_eq!(post_with_token(&mut c, &cancel, ALICE_TOKEN).status, 202);
    waits_for("the cancelled call's spend in the store", || {
        spent(port) > 0
    });
    drop((c, calling));
    let log = mcp.terminate();
    let line = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["event"] == "call")
        .unwrap_or_else(|| panic!("no call record: {log}"));
    assert_eq!(line["outcome"], "cancelled", "{line}");
    assert_eq!(line["usage_estimated"], true, "{line}");
    assert_eq!(line["web_searches"], 1, "{line}");
    assert!(line["input_tokens"].as_u64().unwrap_or(0) > 0, "{line}");
    let cost = line["cost_usd"].as_f64().unwrap_or(0.0);
    assert!(cost > 0.0, "{line}");
    eprintln!(
        "cancelled mid-stream: charged ${cost} ({} input tokens estimated, {} search)",
        line["input_tokens"], line["web_searches"]
    );
    // The day's spend holds exactly what the record says (picodollars).
    let pico = spent(port) as f64;
    assert!((pico / 1e12 - cost).abs() < 1e-9, "{pico} vs {cost}");
}

/// Base64url without padding.
fn b64(text: &str) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A token signed by nobody, naming key `kid`.
pub(super) fn forged(kid: &str) -> String {
    let header = b64(&format!(r#"{{"alg":"RS256","kid":"{kid}"}}"#));
    format!("{header}.{}.{}", b64(r#"{"sub":"m"}"#), "A".repeat(342))
}

/// OAuth mode under eight concurrent 1 MiB bodies whose tokens name key ids nobody
/// published: each refused, and the server's peak memory stays under 64 MiB (nothing of
/// a caller nobody admitted is parsed).
pub fn unauthenticated_bodies_are_not_read_before_the_token() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = gated_openai();
    let opts = server_opts(&fake, port, &idp.issuer, "[]", "", "fleet-bodies");
    let mcp = Mcp::spawn(opts);
    let addr = listening(&mcp);
    // The keys are loaded: a real token passes.
    let token = idp.token("rs-client", &resource);
    let mut c = HttpConn::open(addr);
    let ok = super::oauth::call(&mut c, 1, &token).json();
    assert!(ok["result"]["structuredContent"].is_object(), "{ok}");
    let oauth_peak = peak_under_bodies(addr, mcp.pid(), |n| forged(&format!("forged-{n}")));
    eprintln!("peak RSS, OAuth mode, 8 unauthenticated 1 MiB bodies: {oauth_peak} kB");
    assert!(oauth_peak < 64 * 1024, "peak RSS {oauth_peak} kB");
    // The same bodies with a wrong static token, on a server without OAuth mode.
    let plain = Mcp::spawn(Opts::http(&fake.url).env("MCP_HTTP_TOKEN", STATIC));
    let plain_peak = peak_under_bodies(listening(&plain), plain.pid(), |n| format!("wrong-{n}"));
    eprintln!("peak RSS, static token, 8 unauthenticated 1 MiB bodies: {plain_peak} kB");
    assert!(plain_peak < 64 * 1024, "peak RSS {plain_peak} kB");
    assert_eq!(
        fake.requests().len(),
        1,
        "only the admitted call reached OpenAI"
    );
}

/// Sends eight 1 MiB bodies at once to `addr`, each with the token `token(n)`, and
/// waits for their refusals; the peak resident memory of process `pid` after, in kB.
fn peak_under_bodies(addr: std::net::SocketAddr, pid: u32, token: impl Fn(usize) -> String) -> u64 {
    // 1 MiB of small values: parsed, each is a node of its own (tens of bytes), so a body
    // read before its caller is admitted would take tens of MiB.
    let filler: Vec<Value> = vec![json!(0); 1 << 19];
    let senders: Vec<_> = (0..8)
        .map(|n| {
            let auth = format!("Bearer {}", token(n));
            let body = json!({"jsonrpc":"2.0","id":n,"method":"tools/call",
                "params":{"name":"answer","arguments":{"query": "q", "domains": filler}}});
            thread::spawn(move || {
                let mut c = HttpConn::open(addr);
                let headers = [
                    ("MCP-Protocol-Version", "2025-11-25"),
                    ("Authorization", auth.as_str()),
                ];
                c.post(&body, &headers).status
            })
        })
        .collect();
    for sender in senders {
        let status = sender.join().unwrap();
        assert!(status == 401 || status == 503, "{status}");
    }
    super::lifecycle::peak_rss_kib(pid).expect("the process's VmHWM")
}

/// `/ready` comes back with the identity provider by itself, with no traffic but probes:
/// an instance started while the provider is down is ready within 30 s of its return;
/// one whose provider goes away later stays ready (degraded) on the keys it has.
pub fn readiness_comes_back_with_the_identity_provider() {
    let port = free_port();
    let idp_port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let issuer = format!("http://127.0.0.1:{idp_port}");
    let fake = gated_openai();
    let more = "      wait_ms: 500\n";
    let mcp = Mcp::spawn(server_opts(&fake, port, &issuer, "[]", more, "fleet-ready"));
    let mut c = HttpConn::open(listening(&mcp));
    assert_eq!(c.get("/ready").status, 503);
    // The provider was down for longer than a refetch interval (300 ms); it comes back.
    waits_for("a failed key fetch", || {
        mcp.stderr().contains("its metadata could not be read")
    });
    let Some(idp) = Provider::start(idp_port, &resource) else {
        return;
    };
    let back = Instant::now();
    let took = ready_within(&mut c, back);
    eprintln!("ready {took:?} after the provider came back");
    let token = idp.token("rs-client", &resource);
    let ok = super::oauth::call(&mut c, 1, &token).json();
    assert!(ok["result"]["structuredContent"].is_object(), "{ok}");
    // Gone again: the keys in hand still serve; ready, and said to be degraded.
    drop(idp);
    // A token naming a key the set lacks makes the server look for new keys.
    let r = super::oauth::call(&mut c, 2, &forged("rotated-away"));
    assert!(r.status == 401 || r.status == 503, "{}", r.status);
    waits_for("a failed refetch", || {
        mcp.stderr().matches("could not be read").count() >= 2
    });
    let ready = c.get("/ready");
    assert_eq!(ready.status, 200);
    assert!(String::from_utf8_lossy(&ready.body).contains("degraded"));
    let again = super::oauth::call(&mut c, 3, &token).json();
    assert!(again["result"]["structuredContent"].is_object(), "{again}");
    let metrics = super::http::get_with_token(&mut c, "/metrics", STATIC);
    let text = String::from_utf8_lossy(&metrics.body);
    assert!(
        text.contains("openai_responses_mcp_identity_provider_up 0"),
        "{text}"
    );
    assert!(
        text.contains("openai_responses_mcp_identity_provider_keys_usable 1"),
        "{text}"
    );
    // Back on its port after more than a refetch interval, with new keys: no longer
    // degraded within 30 s, with nothing but probes, and its new tokens pass.
    let Some(idp) = Provider::start(idp_port, &resource) else {
        return;
    };
    let took = ready_within(&mut c, Instant::now());
    eprintln!("no longer degraded {took:?} after the provider came back");
    let token = idp.token("es-client", &resource);
    let ok = super::oauth::call(&mut c, 4, &token).json();
    assert!(ok["result"]["structuredContent"].is_object(), "{ok}");
}

/// Probes `/ready` (as a balancer does) until it is 200 and not degraded; how long after
/// `since` that was. At most 30 s.
fn ready_within(c: &mut HttpConn, since: Instant) -> Duration {
    loop {
        let ready = c.get("/ready");
        if ready.status == 200 && !String::from_utf8_lossy(&ready.body).contains("degraded") {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "not ready within 30 s of the provider's return"
        );
        thread::sleep(Duration::from_millis(100));
    }
}

/// An identity of 200 bytes owns its background tasks (it reads its own, another does
/// not), and what they cost is charged to it (its spend in its metrics).
pub fn a_long_identity_owns_its_background_tasks_and_their_cost() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let openai = crate::fake_openai::Background::new(
        &super::observability::answered(),
        Duration::from_millis(300),
    );
    let fake = openai.serve();
    let opts = server_opts(&fake, port, &idp.issuer, "[]", "", "fleet-long")
        .env("MCP_TASKS_SECRET", SECRET);
    let dir = temp_dir("fleet-long-config");
    // The same settings, with background tasks.
    let mut args = opts.args.clone();
    let at = args.iter().position(|a| a == "--config").unwrap() + 1;
    let config = std::fs::read_to_string(&args[at]).unwrap()
        + "tasks:\n  openai_background: true\n  poll_interval_ms: 100\n";
    let path = dir.join("config.yaml");
    std::fs::write(&path, config).unwrap();
    std::fs::copy(
        std::path::Path::new(&args[at]).with_file_name("clients.yaml"),
        dir.join("clients.yaml"),
    )
    .unwrap();
    args[at] = path.to_string_lossy().into_owned();
    let mcp = Mcp::spawn(Opts { args, ..opts });
    let mut c = HttpConn::open(listening(&mcp));
    let long = format!("long-client-{}", "x".repeat(184));
    let identity = format!("sub:{long}");
    assert_eq!(identity.len(), 200);
    let token = idp.token(&long, &resource);
    let other = idp.token("rs-client", &resource);
    let created = post_with_token(&mut c, &task_call(1, "fleet-long"), &token).json();
    let task = task_id_of(&created);
    let refused = post_with_token(&mut c, &task_request(2, "tasks/result", &task), &other).json();
    let message = error_message(&refused);
    assert!(
        message.contains("not one of this client's tasks"),
        "{refused}"
    );
    let result = post_with_token(&mut c, &task_request(3, "tasks/result", &task), &token).json();
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    let metrics = super::http::get_with_token(&mut c, "/metrics", STATIC);
    let text = String::from_utf8_lossy(&metrics.body).into_owned();
    let cost = text
        .lines()
        .find(|l| {
            l.starts_with("openai_responses_mcp_estimated_cost_usd_total{")
                && l.contains(&format!("client=\"{identity}\""))
        })
        .unwrap_or_else(|| panic!("no cost for the long identity: {text}"));
    let value: f64 = cost.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(value > 0.0, "{cost}");
}

/// OAuth mode's resource from a public URL written as the MCP URL, and `/metrics`
/// refused to an identity of the provider (it names others and their spend).
pub fn oauth_mode_reads_the_mcp_url_and_keeps_metrics_to_operators() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = gated_openai();
    let opts = server_opts(&fake, port, &idp.issuer, "[]", "", "fleet-mcp-url")
        .env("MCP_PUBLIC_URL", &resource);
    let mcp = Mcp::spawn(opts);
    let mut c = HttpConn::open(listening(&mcp));
    let doc = c.get("/.well-known/oauth-protected-resource/mcp").json();
    assert_eq!(doc["resource"], resource.as_str(), "{doc}");
    let token = idp.token("rs-client", &resource);
    let ok = super::oauth::call(&mut c, 1, &token).json();
    assert!(ok["result"]["structuredContent"].is_object(), "{ok}");
    let metrics = super::http::get_with_token(&mut c, "/metrics", &token);
    assert_eq!(metrics.status, 403);
    let operators = super::http::get_with_token(&mut c, "/metrics", STATIC);
    assert_eq!(operators.status, 200);
}
