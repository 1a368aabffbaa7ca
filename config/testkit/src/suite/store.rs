//! Many instances, one service: two instances sharing their limits through a real Redis
//! (Debian's `redis-server`, which `.ci/test` installs) on a loopback port, a fresh one
//! per test, without persistence. A client's calls per minute hold whichever instance
//! gets the call; Redis stopped, calls are refused naming the store and `/ready` says so;
//! Redis started again, the instances serve again without a restart.

use super::http::waits_for;
use super::observability::answered as priced_answer;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;

pub(super) const CI_TOKEN: &str = "PLANTED-store-ci-token-0123456789";
pub(super) const ALICE_TOKEN: &str = "PLANTED-store-alice-token-0123456789";

/// A Redis on `port`, in the foreground; killed on drop (its folder removed unless it
/// keeps an append-only file for a next start).
pub(super) struct Redis {
    child: std::process::Child,
    /// The folder it was started in when it is its own (not the caller's), removed after
    /// it ends.
    _dir: Option<TempDir>,
}

impl Redis {
    /// Its process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Keeping nothing on disk.
    pub(super) fn start(binary: &std::path::Path, port: u16) -> Redis {
        let dir = temp_dir("redis");
        let mut redis = Redis::start_in(binary, port, &dir, false);
        redis._dir = Some(dir);
        redis
    }

    /// In `dir`, which the caller keeps; with `aof`, every write is in an append-only
    /// file there, synced at once.
    fn start_in(binary: &std::path::Path, port: u16, dir: &std::path::Path, aof: bool) -> Redis {
        let appendonly = if aof { "yes" } else { "no" };
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                appendonly,
                "--daemonize",
                "no",
            ])
            .args(["--appendfsync", "always"])
            .arg("--dir")
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start redis-server");
        let redis = Redis { child, _dir: None };
        // Ready once it answers PING.
        let start = Instant::now();
        loop {
            if ping(port) {
                return redis;
            }
            assert!(start.elapsed() < PATIENCE, "redis-server did not start");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One inline command to the Redis at `port`; its raw answer.
pub(super) fn redis_command(port: u16, command: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(format!("{command}\r\n").as_bytes()).unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The integer Redis on `port` holds at `key` (0 when none), by an inline `GET`.
pub(super) fn redis_integer(port: u16, key: &str) -> i64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.write_all(format!("GET {key}\r\n").as_bytes()).unwrap();
    let mut buf = [0u8; 128];
    let n = s.read(&mut buf).unwrap();
    // `$-1` (none) or `$<len>\r\n<digits>\r\n`.
    let text = String::from_utf8_lossy(&buf[..n]);
    text.lines()
        .nth(1)
        .and_then(|l| l.parse().ok())
        .unwrap_or(0)
}

/// An instance of the clients file `clients` sharing the Redis on `port`, with the task
/// secret every instance has and its wall clock frozen at 2026-11-26 23:58:10 UTC (so
/// that a test never crosses a minute); `None` without libfaketime.
fn named_instance(
    fake: &FakeOpenAi,
    port: u16,
    clients: &str,
    name: &str,
) -> Option<(Opts, Clock)> {
    named_instance_with(fake, port, (clients, ""), name)
}

/// [`named_instance`], its configuration followed by `yaml`.
fn named_instance_with(
    fake: &FakeOpenAi,
    port: u16,
    (clients, yaml): (&str, &str),
    name: &str,
) -> Option<(Opts, Clock)> {
    let config = format!(
        "server: {{http: {{clients_file: clients.yaml}}, store: {{url: \"redis://127.0.0.1:{port}/0\"}}}}\n{yaml}"
    );
    let dir = temp_dir(name);
    std::fs::write(dir.join("clients.yaml"), clients).unwrap();
    Opts::http(&fake.url)
        .config(&dir, &config)
        .env("MCP_TASKS_SECRET", "one-secret-for-every-instance-0123")
        .arg("--debug")
        .keeping(dir)
        .frozen_clock("2026-11-26 23:58:10")
}

/// Whether a Redis on `port` answers `PING` (inline command, RESP reply).
pub(super) fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && matches!(s.read(&mut buf), Ok(n) if buf[..n].starts_with(b"+PONG"))
}

/// Calls `answer` as client ci on `c`; the reply.
fn call(c: &mut HttpConn, id: u64) -> Value {
    call_as(c, id, CI_TOKEN)
}

/// Calls `answer` as the client whose token is `token`; the reply.
pub(super) fn call_as(c: &mut HttpConn, id: u64, token: &str) -> Value {
    super::http::answer_with_token(c, id, token).json()
}

pub fn two_instances_share_limits_through_redis_and_outlive_its_outage() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let redis = Redis::start(&binary, port);
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 2\n  - name: alice\n    token_sha256: {}\n    spend_per_day_usd: 0.05\n",
        sha256_hex(CI_TOKEN),
        sha256_hex(ALICE_TOKEN)
    );
    // Both instances' wall clocks frozen in one minute: the test never crosses one.
    let instance = |name: &str| named_instance(&fake, port, &clients, name);
    let (Some((a_opts, _a_clock)), Some((b_opts, _b_clock))) = (instance("a"), instance("b"))
    else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let (a, b) = (Mcp::spawn(a_opts), Mcp::spawn(b_opts));
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));

    // Two calls per minute for ci, whichever instance takes them.
    for (c, id) in [(&mut ca, 1), (&mut cb, 2)] {
        let r = call(c, id);
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    for (c, id) in [(&mut ca, 3), (&mut cb, 4)] {
        let r = call(c, id);
        let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(
            (&details["refusal"], &details["scope"]),
            (&json!("limit_calls_per_minute"), &json!("client")),
            "{r}"
        );
        // When the minute the store counts in ends (the clocks are frozen at :10).
        assert_eq!(details["retryAfterSeconds"], 50, "{r}");
    }
    assert_eq!(fake.requests().len(), 2, "refused calls never reach OpenAI");

    // alice: $0.05 a day. Her first call, on a, costs $0.06025 and is admitted (the day's
    // spend was below the limit); once a has added it to the store, b refuses her next.
    let r = call_as(&mut ca, 10, ALICE_TOKEN);
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    // The store counts picodollars in the key of the UTC day (2026-11-26 is day 20783).
    let spent = "orm:s:alice:20783";
    waits_for("a's spend to reach the store", || {
        redis_integer(port, spent) > 0
    });
    assert_eq!(
        redis_integer(port, spent),
        60_250_000_000,
        "$0.06025 in picodollars"
    );
    let r = call_as(&mut cb, 11, ALICE_TOKEN);
    let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(
        (
            &details["refusal"],
            &details["scope"],
            &details["spent_usd"]
        ),
        (
            &json!("limit_spend_per_day"),
            &json!("client"),
            &json!(0.06025)
        ),
        "{r}"
    );
    assert_eq!(
        fake.requests().len(),
        3,
        "b never called OpenAI for alice's second call"
    );

    // The store goes away: calls are refused naming it, and /ready says so.
    drop(redis);
    let r = call(&mut ca, 5);
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("could not reach the store"), "{r}");
    let ready = ca.get("/ready");
    assert_eq!(ready.status, 503);
    assert!(
        String::from_utf8_lossy(&ready.body).contains("store unreachable"),
        "{}",
        String::from_utf8_lossy(&ready.body)
    );
    assert_eq!(fake.requests().len(), 3);

    // It comes back (empty: no persistence): served again, without a restart.
    let _redis = Redis::start(&binary, port);
    let start = Instant::now();
    while ca.get("/ready").status != 200 {
        assert!(
            start.elapsed() < PATIENCE,
            "instance a never saw the store again"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let r = call(&mut ca, 6);
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    let r = call(&mut cb, 7);
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    for log in [a.stderr(), b.stderr()] {
        assert!(
            !log.contains(CI_TOKEN) && !log.contains(ALICE_TOKEN) && !log.contains(PLANTED_KEY)
        );
    }
}

/// The store's password is never shown: not by `--show-config` (the URL's password is
/// `****`), not in the error a wrong URL gets; and a URL of another scheme is refused
/// saying which are taken.
pub fn the_store_password_is_never_shown_and_a_bad_url_says_why() {
    const SECRET: &str = "PLANTED-store-password-0123";
    let url = format!("redis://app:{SECRET}@127.0.0.1:6390/0");
    let out = super::config::run(&["--show-config"], &[("MCP_STORE_URL", &url)]);
    // --show-config writes to stderr (stdout carries MCP frames only).
    let shown = String::from_utf8_lossy(&out.stderr);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    assert!(out.status.success(), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(
        shown.contains("redis://app:****@127.0.0.1:6390/0"),
        "{shown}"
    );
    for (url, says) in [
        (
            format!("http://:{SECRET}@store:6380"),
            "a redis:// URL, or rediss:// for TLS",
        ),
        (format!("redis://:{SECRET}@store:notaport"), "redis://"),
    ] {
        let out = super::config::run(&["--stdio"], &[("MCP_STORE_URL", &url)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("server.store.url"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains(SECRET), "{stderr}");
    }
}

/// Two instances sharing a fresh Redis on `port` and one task secret, each with its own
/// answers from `fake`; `yaml` is added to the configuration.
fn task_instances(fake: &FakeOpenAi, port: u16, yaml: &str) -> (Mcp, Mcp) {
    let config = format!("server: {{store: {{url: \"redis://127.0.0.1:{port}/0\"}}}}\n{yaml}");
    let spawn = |name: &str| {
        Mcp::spawn(
            Opts::http(&fake.url)
                .temp_config(name, &config)
                .env("MCP_TASKS_SECRET", "one-secret-for-every-instance-0123")
                .arg("--debug"),
        )
    };
    (spawn("store-a"), spawn("store-b"))
}

/// A fake OpenAI that answers a query holding `slow` after 1.5 s, never answers one
/// holding `hang`, and answers others at once.
pub(super) fn gated_openai() -> FakeOpenAi {
    FakeOpenAi::start(|r, _| {
        let body = r.body.to_string();
        if body.contains("please-hang") {
            Action::Hang
        } else if body.contains("please-slow") {
            Action::json(200, &fixture("response-web-search.json"))
                .after(Duration::from_millis(1500))
        } else {
            Action::json(200, &fixture("response-web-search.json"))
        }
    })
}

pub(super) const LEGACY: [(&str, &str); 1] = [("MCP-Protocol-Version", "2025-11-25")];

pub(super) fn legacy(c: &mut HttpConn, m: &Value) -> Value {
    let reply = c.post(m, &LEGACY).json();
    check_reply("2025-11-25", m, &reply);
    reply
}

/// Waits until `n` instances listen on the store's channel: an instance serves before its
/// subscription is made, and an event published before it is not heard.
fn subscribed(port: u16, n: u32) {
    let command = format!(
        "PUBSUB NUMSUB {}",
        responses_mcp_core::store::events::CHANNEL
    );
    waits_for("every instance to subscribe to the store's channel", || {
        let answer = redis_command(port, &command);
        answer.lines().last().and_then(|l| l.strip_prefix(':')) == Some(&n.to_string())
    });
}

fn modern_post(c: &mut HttpConn, m: &Value) -> Value {
    let headers = crate::http_client::modern_headers(m);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let reply = c.post(m, &h).json();
    check_reply("2026-07-28", m, &reply);
    reply
}

fn with_tasks_extension(mut m: Value) -> Value {
    m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    m
}

pub(super) fn task_call(id: u64, query: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":query},"task":{}}})
}

/// The task id a task-augmented call's reply holds.
pub(super) fn task_id_of(created: &Value) -> String {
    let id = created["result"]["task"]["taskId"].as_str();
    id.unwrap_or_else(|| panic!("no task in {created}"))
        .to_owned()
}

pub(super) fn task_request(id: u64, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}})
}

/// A task created on one instance is read, listed, awaited and cancelled on the other, in
/// both eras; a cancel sent to the other instance stops the upstream request where the
/// call runs, and so does a `notifications/cancelled` of a plain call.
pub fn tasks_and_cancels_reach_across_instances_through_redis() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = gated_openai();
    let (a, b) = task_instances(&fake, port, "tasks: {answer_within_ms: 50}\n");
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    subscribed(port, 2);

    // Legacy: created on a, read, listed and awaited on b.
    let created = legacy(&mut ca, &task_call(1, "please-slow"));
    let id = task_id_of(&created);
    let got = legacy(&mut cb, &task_request(2, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "working", "{got}");
    let listed = legacy(
        &mut cb,
        &json!({"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{}}),
    );
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()], "{listed}");
    let result = legacy(&mut cb, &task_request(4, "tasks/result", &id));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    for c in [&mut ca, &mut cb] {
        let got = legacy(c, &task_request(5, "tasks/get", &id));
        assert_eq!(got["result"]["status"], "completed", "{got}");
    }

    // Modern: created on a (the call outlives the 50 ms window), polled to its result on b.
    let call = with_tasks_extension(modern(
        json!(10),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"please-slow modern"}}),
    ));
    let created = modern_post(&mut ca, &call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut polls = 11;
    let done = loop {
        let get = with_tasks_extension(modern(json!(polls), "tasks/get", json!({"taskId": id})));
        let got = modern_post(&mut cb, &get);
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        polls += 1;
        assert!(polls < 500, "the modern task never completed on b");
        thread::sleep(Duration::from_millis(50));
    };
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap()["used_search"],
        true
    );

    // Modern, cancelled on b while a runs it: a's upstream request stops, and b and a both
    // say cancelled.
    let closed = fake.closed().len();
    let requests = fake.requests().len();
    let call = with_tasks_extension(modern(
        json!(30),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"please-hang modern"}}),
    ));
    let created = modern_post(&mut ca, &call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    fake.wait_requests(requests + 1, PATIENCE);
    let cancel = with_tasks_extension(modern(json!(31), "tasks/cancel", json!({"taskId": id})));
    let cancelled = modern_post(&mut cb, &cancel);
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    waits_for("a's upstream request for the modern task to close", || {
        fake.closed().len() > closed
    });
    for (c, n) in [(&mut ca, 32), (&mut cb, 33)] {
        let get = with_tasks_extension(modern(json!(n), "tasks/get", json!({"taskId": id})));
        let got = modern_post(c, &get);
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    }

    // Legacy, cancelled on b while a runs it: a's upstream request stops, and a
    // tasks/result waiting on b hears of it.
    let closed = fake.closed().len();
    let requests = fake.requests().len();
    let created = legacy(&mut ca, &task_call(20, "please-hang"));
    let id = task_id_of(&created);
    fake.wait_requests(requests + 1, PATIENCE);
    let mut waiting = HttpConn::open(listening(&b));
    waiting.send_raw(&crate::http_client::post_bytes(
        listening(&b),
        &task_request(21, "tasks/result", &id),
        &LEGACY,
    ));
    let cancelled = legacy(&mut cb, &task_request(22, "tasks/cancel", &id));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    waits_for("a's upstream request to close", || {
        fake.closed().len() > closed
    });
    let heard = waiting.response().json();
    let message = heard["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("was cancelled"), "{heard}");
    let got = legacy(&mut ca, &task_request(23, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let again = legacy(&mut ca, &task_request(24, "tasks/cancel", &id));
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("already cancelled"),
        "{again}"
    );

    // A plain call running on a, cancelled by a notification that lands on b.
    let closed = fake.closed().len();
    let requests = fake.requests().len();
    let mut calling = HttpConn::open(listening(&a));
    let call = json!({"jsonrpc":"2.0","id":77,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"please-hang plain"}}});
    calling.send_raw(&crate::http_client::post_bytes(
        listening(&a),
        &call,
        &LEGACY,
    ));
    fake.wait_requests(requests + 1, PATIENCE);
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":77,"reason":"user"}});
    assert_eq!(cb.post(&cancel, &LEGACY).status, 202);
    waits_for("the plain call's upstream request to close", || {
        fake.closed().len() > closed
    });
    let ended = calling.response();
    assert!(
        ended.messages().iter().all(|m| m.get("id").is_none()),
        "no reply after a cancel: {ended:?}"
    );
}

/// A 2026-07-28 task call held on `a` (its window still open), cancelled by a
/// notification its client POSTs to `b`: `a`'s upstream request stops and `a` answers
/// nothing, as when the cancel lands on `a` itself.
pub fn a_held_task_call_cancelled_on_another_instance_stops_unanswered() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = gated_openai();
    let (a, b) = task_instances(&fake, port, "tasks: {answer_within_ms: 60000}\n");
    let mut cb = HttpConn::open(listening(&b));
    let mut calling = HttpConn::open(listening(&a));
    subscribed(port, 2);
    let call = with_tasks_extension(modern(
        json!(40),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"please-hang held"}}),
    ));
    let headers = crate::http_client::modern_headers(&call);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    calling.send_raw(&crate::http_client::post_bytes(listening(&a), &call, &h));
    fake.wait_requests(1, PATIENCE);
    let mut cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":40,"reason":"user"}});
    cancel["params"]["_meta"] = call["params"]["_meta"].clone();
    let headers = crate::http_client::modern_headers(&cancel);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(cb.post(&cancel, &h).status, 202);
    waits_for("a's upstream request for the held call to close", || {
        !fake.closed().is_empty()
    });
    let ended = calling.response();
    assert!(
        ended.messages().iter().all(|m| m.get("id").is_none()),
        "no reply after a cancel: {ended:?}"
    );
}

/// Redis restarted with its append-only file keeps finished tasks: a task that ended
/// before the restart is read after it, on the other instance.
pub fn finished_tasks_outlive_a_store_restart_with_aof() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let dir = temp_dir("redis-aof");
    let redis = Redis::start_in(&binary, port, &dir, true);
    let fake = gated_openai();
    let (a, b) = task_instances(&fake, port, "");
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    let created = legacy(&mut ca, &task_call(1, "quick"));
    let id = task_id_of(&created);
    let result = legacy(&mut ca, &task_request(2, "tasks/result", &id));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    drop(redis);
    let _redis = Redis::start_in(&binary, port, &dir, true);
    let start = Instant::now();
    let got = loop {
        let got = legacy(&mut cb, &task_request(3, "tasks/get", &id));
        if got.get("result").is_some() {
            break got;
        }
        // Until b's connection to the store is made again.
        assert!(start.elapsed() < PATIENCE, "{got}");
        thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(got["result"]["status"], "completed", "{got}");
    let result = legacy(&mut cb, &task_request(4, "tasks/result", &id));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The deployment form: two instances behind nginx round-robin, one client connection
/// whose requests nginx alternates between them. Client ci (2 calls a minute) is refused
/// its third and fourth calls, whichever instance gets them; client ops creates tasks on
/// one instance and reads, awaits, lists and cancels them through whichever nginx picks.
pub fn behind_nginx_limits_and_tasks_hold_across_instances() {
    const OPS_TOKEN: &str = "PLANTED-store-ops-token-0123456789";
    let (Some(redis_binary), Some(nginx_binary)) =
        (system_program("redis-server"), system_program("nginx"))
    else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&redis_binary, port);
    let fake = gated_openai();
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 2\n  - name: ops\n    token_sha256: {}\n",
        sha256_hex(CI_TOKEN),
        sha256_hex(OPS_TOKEN)
    );
    let instance = |name: &str| named_instance(&fake, port, &clients, name);
    let (Some((a_opts, _a_clock)), Some((b_opts, _b_clock))) = (instance("na"), instance("nb"))
    else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let (a, b) = (Mcp::spawn(a_opts), Mcp::spawn(b_opts));
    let proxy_port = free_port();
    let _nginx =
        super::scale_out::Nginx::start(&nginx_binary, proxy_port, &[listening(&a), listening(&b)]);
    let proxy: std::net::SocketAddr = format!("127.0.0.1:{proxy_port}").parse().unwrap();
    waits_for("nginx to listen", || {
        std::net::TcpStream::connect(proxy).is_ok()
    });
    let mut c = HttpConn::open(proxy);

    for id in 1..=2 {
        let r = call(&mut c, id);
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    for id in 3..=4 {
        let r = call(&mut c, id);
        let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(details["refusal"], "limit_calls_per_minute", "{r}");
    }

    let auth = format!("Bearer {OPS_TOKEN}");
    let ops = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    let mut post = |m: &Value| {
        let reply = c.post(m, &ops).json();
        check_reply("2025-11-25", m, &reply);
        reply
    };
    let created = post(&task_call(10, "please-slow"));
    let slow = task_id_of(&created);
    let got = post(&task_request(11, "tasks/get", &slow));
    assert_eq!(got["result"]["status"], "working", "{got}");
    let result = post(&task_request(12, "tasks/result", &slow));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    let requests = fake.requests().len();
    let closed = fake.closed().len();
    let created = post(&task_call(13, "please-hang"));
    let hung = task_id_of(&created);
    fake.wait_requests(requests + 1, PATIENCE);
    let cancelled = post(&task_request(14, "tasks/cancel", &hung));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    waits_for("the hung call's upstream request to close", || {
        fake.closed().len() > closed
    });
    let listed = post(&json!({"jsonrpc":"2.0","id":15,"method":"tasks/list","params":{}}));
    // Listed by creation second; two created in one second on two instances in either
    // order.
    let mut statuses: Vec<(&str, &str)> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["taskId"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    statuses.sort_unstable();
    let mut expected = [(slow.as_str(), "completed"), (hung.as_str(), "cancelled")];
    expected.sort_unstable();
    assert_eq!(statuses, expected, "{listed}");
    // Each instance served part of it, and ci's tasks are not ops's.
    let (log_a, log_b) = (a.stderr(), b.stderr());
    assert!(
        log_a.contains("POST /mcp") || log_a.contains("tools/call"),
        "a served nothing:\n{log_a}"
    );
    assert!(
        log_b.contains("POST /mcp") || log_b.contains("tools/call"),
        "b served nothing:\n{log_b}"
    );
    for log in [log_a, log_b] {
        assert!(!log.contains(CI_TOKEN) && !log.contains(OPS_TOKEN) && !log.contains(PLANTED_KEY));
    }
}

/// A `rediss://` store is reached over TLS with the upstream's roots: trusting the CA of
/// `openai.ca_file` (`SSL_CERT_FILE`), an instance keeps its tasks there; trusting only
/// the built-in roots, it refuses the store's certificate and says the store is
/// unreachable.
pub fn a_rediss_store_is_reached_over_tls_with_the_upstream_roots() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let dir = temp_dir("redis-tls");
    let ca = crate::tls::TestCa::new();
    let (cert, key) = ca.leaf_pem();
    for (name, text) in [("ca.pem", ca.pem()), ("cert.pem", &cert), ("key.pem", &key)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let port = free_port();
    let file = |name: &str| dir.join(name).display().to_string();
    let child = Command::new(&binary)
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args([
            "--tls-cert-file",
            &file("cert.pem"),
            "--tls-key-file",
            &file("key.pem"),
        ])
        .args([
            "--tls-ca-cert-file",
            &file("ca.pem"),
            "--tls-auth-clients",
            "no",
        ])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start redis-server");
    let _redis = Redis { child, _dir: None };
    waits_for("redis-server to listen for TLS", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let fake = gated_openai();
    let config = format!("server: {{store: {{url: \"rediss://127.0.0.1:{port}/0\"}}}}\n");
    let spawn = |trust: Option<&str>| {
        let mut opts = Opts::http(&fake.url)
            .temp_config("store-tls", &config)
            .env("MCP_TASKS_SECRET", "one-secret-for-every-instance-0123");
        if let Some(ca) = trust {
            opts = opts.env("SSL_CERT_FILE", ca);
        }
        Mcp::spawn(opts)
    };
    let trusting = spawn(Some(&file("ca.pem")));
    let mut c = HttpConn::open(listening(&trusting));
    let created = legacy(&mut c, &task_call(1, "quick"));
    let id = task_id_of(&created);
    let result = legacy(&mut c, &task_request(2, "tasks/result", &id));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    assert_eq!(c.get("/ready").status, 200);

    let distrusting = spawn(None);
    let mut c = HttpConn::open(listening(&distrusting));
    let got = legacy(&mut c, &task_request(3, "tasks/get", &id));
    let message = got["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("shared store"), "{got}");
    let ready = c.get("/ready");
    assert_eq!(ready.status, 503);
    assert!(String::from_utf8_lossy(&ready.body).contains("store unreachable"));
    assert!(
        distrusting.stderr().contains("certificate") || message.contains("certificate"),
        "the certificate is named: {message}\n{}",
        distrusting.stderr()
    );
}

/// A background task outlives its replica: two replicas on one Redis, replica a
/// SIGKILLed a second into two 4 s runs it started; `tasks/result` of one on b returns
/// OpenAI's stored answer, `tasks/cancel` of the other on b stops it, and each run is
/// charged once in the shared day: a's holds, counted from their start, given back by
/// b's claims; b's charges what OpenAI reported, or for the cancelled run (of which
/// OpenAI reports nothing) the estimate a's hold made.
pub fn a_killed_replicas_background_task_is_answered_by_another_and_charged_once() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let openai =
        crate::fake_openai::Background::new(&priced_answer(), Duration::from_millis(4_000));
    let fake = openai.serve();
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n",
        sha256_hex(CI_TOKEN)
    );
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100, answer_within_ms: 0}\n";
    let instance = |name: &str| named_instance_with(&fake, port, (&clients, yaml), name);
    let (Some((a_opts, _a_clock)), Some((b_opts, _b_clock))) = (instance("bg-a"), instance("bg-b"))
    else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let json_logs = |o: Opts| o.arg("--log-format").arg("json");
    let (mut a, b) = (Mcp::spawn(json_logs(a_opts)), Mcp::spawn(json_logs(b_opts)));
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    // The runs count against ci's day from their start, in the store every replica reads
    // (the clocks are frozen on 2026-11-26, day 20783).
    let spent = "orm:s:ci:20783";
    let started = Instant::now();
    let mut holds = Vec::new();
    let mut tasks = Vec::new();
    for id in [1, 2] {
        let created =
            super::http::post_with_token(&mut ca, &task_call(id, "killed"), CI_TOKEN).json();
        tasks.push(task_id_of(&created));
        let before: i64 = holds.iter().sum();
        waits_for("a's hold to reach the store", || {
            redis_integer(port, spent) > before
        });
        holds.push(redis_integer(port, spent) - before);
    }
    let (answered, cancelled) = (&tasks[0], &tasks[1]);
    // A second into the runs, a dies as an out-of-memory kill would end it.
    thread::sleep(Duration::from_secs(1).saturating_sub(started.elapsed()));
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &a.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    a.wait_exit(PATIENCE);
    let cancel = task_request(2, "tasks/cancel", cancelled);
    let state = super::http::post_with_token(&mut cb, &cancel, CI_TOKEN).json();
    assert_eq!(state["result"]["status"], "cancelled", "{state}");
    let result = task_request(3, "tasks/result", answered);
    let result = super::http::post_with_token(&mut cb, &result, CI_TOKEN).json();
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    // b charged each end, once. Its lines leave once the store granted b the claims,
    // which may be just after the answers.
    let task_lines = || -> Vec<Value> {
        b.stderr()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["event"] == "call" && l["task"] == true)
            .collect()
    };
    waits_for("b's lines of the runs", || task_lines().len() >= 2);
    let lines = task_lines();
    let line = |outcome: &str| {
        let of: Vec<&Value> = lines.iter().filter(|l| l["outcome"] == outcome).collect();
        assert_eq!(of.len(), 1, "one {outcome} line on b: {lines:?}");
        of[0].clone()
    };
    let (ok, stopped) = (line("ok"), line("cancelled"));
    // OpenAI's figures at the built-in prices: $0.06025.
    let cost = ok["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - 0.06025).abs() < 1e-9, "{ok}");
    // The cancelled run: the estimate a made when it started, not b's own.
    assert_eq!(stopped["usage_estimated"], true, "{stopped}");
    #[allow(clippy::cast_precision_loss)]
    let held_usd = holds[1] as f64 / 1e12;
    let estimated = stopped["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (estimated - held_usd).abs() < 1e-9,
        "{stopped} vs {holds:?}"
    );
    let charged = 60_250_000_000 + holds[1];
    assert_ne!(
        holds[0], 60_250_000_000,
        "a hold is an estimate, not the charge"
    );
    let start = Instant::now();
    while redis_integer(port, spent) != charged && start.elapsed() < PATIENCE {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        redis_integer(port, spent),
        charged,
        "each run charged once (a's holds were {holds:?})"
    );
    eprintln!("a's holds: {holds:?} picodollars; the day after b's claims: {charged}");
    // A second read of the ended task on b charges nothing more.
    let again = task_request(4, "tasks/result", answered);
    let again = super::http::post_with_token(&mut cb, &again, CI_TOKEN).json();
    assert_eq!(answer_of(&again)["used_search"], true, "{again}");
    assert_eq!(redis_integer(port, spent), charged);
    assert_eq!(task_lines().len(), 2);
}

/// A background run nobody reads, whose replica died before its end: a minute after its
/// task's life ended, the next call the other replica admits sweeps it from the store,
/// and it is charged once, the estimate its hold made (the hold stays in the day as the
/// charge), with its line on the sweeper. The other replica's wall clock is moved past
/// that minute instead of waiting for it.
pub fn a_run_nobody_reads_after_its_replica_died_is_swept_and_charged_once() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let openai =
        crate::fake_openai::Background::new(&priced_answer(), Duration::from_millis(4_000));
    // Plain calls are answered at once; background ones are stored and run 4 s.
    let fake = FakeOpenAi::start(move |r, _| {
        let create = r.method == "POST" && r.path.ends_with("/responses");
        if create && r.body["background"] != true {
            Action::json(200, &priced_answer())
        } else {
            openai.answer_for(r)
        }
    });
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n",
        sha256_hex(CI_TOKEN)
    );
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let instance = |name: &str| named_instance_with(&fake, port, (&clients, yaml), name);
    let (Some((a_opts, _a_clock)), Some((b_opts, b_clock))) =
        (instance("sweep-a"), instance("sweep-b"))
    else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let json_logs = |o: Opts| o.arg("--log-format").arg("json");
    let (mut a, b) = (Mcp::spawn(json_logs(a_opts)), Mcp::spawn(json_logs(b_opts)));
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    // b's first call, before the run: its sweep finds nothing.
    let first = call(&mut cb, 1);
    assert!(first["result"]["structuredContent"].is_object(), "{first}");
    let spent = "orm:s:ci:20783";
    // $0.06025 at the built-in prices, in the day once b's spend reached the store.
    let answered = 60_250_000_000;
    waits_for("the call's spend to reach the store", || {
        redis_integer(port, spent) == answered
    });
    // A task that lives 2 s; its run, 4 s.
    let mut m = task_call(2, "swept");
    m["params"]["task"] = json!({"ttl": 2_000});
    let created = super::http::post_with_token(&mut ca, &m, CI_TOKEN).json();
    task_id_of(&created);
    waits_for("a's hold to reach the store", || {
        redis_integer(port, spent) > answered
    });
    let held = redis_integer(port, spent) - answered;
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &a.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    a.wait_exit(PATIENCE);
    // A minute and more after the task's end (the clocks stood at 23:58:10), b's next
    // call sweeps the run.
    b_clock.set("2026-11-26 23:59:30");
    let next = call(&mut cb, 3);
    assert!(next["result"]["structuredContent"].is_object(), "{next}");
    let task_lines = || -> Vec<Value> {
        b.stderr()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["event"] == "call" && l["task"] == true)
            .collect()
    };
    waits_for("b's line of the swept run", || !task_lines().is_empty());
    let lines = task_lines();
    let [line] = lines.as_slice() else {
        panic!("one line on b: {lines:?}");
    };
    assert_eq!(
        (&line["client"], &line["outcome"], &line["usage_estimated"]),
        (&json!("ci"), &json!("upstream_expired"), &json!(true)),
        "{line}"
    );
    #[allow(clippy::cast_precision_loss)]
    let held_usd = held as f64 / 1e12;
    let cost = line["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - held_usd).abs() < 1e-9, "{line} vs {held}");
    // The day: two answered calls (the second's spend lands just after its answer) and
    // the run's hold, once.
    let day = 2 * answered + held;
    let start = Instant::now();
    while redis_integer(port, spent) != day && start.elapsed() < PATIENCE {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(redis_integer(port, spent), day, "the hold was {held}");
    eprintln!("swept: charged its hold of {held} picodollars");
}
