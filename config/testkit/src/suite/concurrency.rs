//! Cancellation, concurrency and shutdown under pressure (cancellation issue).

use crate::fake_openai::{self, Action, FakeOpenAi};
use crate::*;

/// A server configured by `yaml` and pointed at `fake`.
/// Its folder (with its configuration and log) lasts as long as it does.
fn spawn_with(fake: &FakeOpenAi, yaml: &str) -> (Mcp, PathBuf) {
    let dir = temp_dir("conc");
    let path = dir.to_path_buf();
    let opts = Opts::upstream(&fake.url).config(&dir, yaml);
    let mut mcp = Mcp::spawn(opts.arg("--debug").keeping(dir));
    mcp.initialize("2025-06-18");
    (mcp, path)
}

/// A completed Responses body whose answer names the query it was asked.
fn echo_answer(r: &fake_openai::Recorded) -> Vec<u8> {
    let query = r.body["input"]
        .as_str()
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
        .to_owned();
    serde_json::to_vec(&json!({"model":"gpt-5-mini","status":"completed","output":[
        {"type":"message","content":[{"type":"output_text","text":format!("answer to {query}"),"annotations":[]}]}]}))
    .unwrap()
}

fn call_message(id: u64, query: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"answer","arguments":{"query":query}}})
}

fn cancel_message(id: u64) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id,"reason":"user pressed stop"}})
}

pub fn cancel_closes_the_upstream_connection_and_suppresses_the_reply() {
    let fake = FakeOpenAi::start(|r, i| {
        if i == 0 {
            Action::Hang
        } else {
            Action::json(200, &echo_answer(r))
        }
    });
    let (mut mcp, dir) = spawn_with(&fake, "request: {timeout_ms: 60000}\n");
    mcp.send(&call_message(1, "slow"));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let sent = Instant::now();
    mcp.send(&cancel_message(1));
    while fake.closed().is_empty() && sent.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(1));
    }
    let closed = fake.closed();
    assert_eq!(closed.len(), 1, "the connection was closed");
    let took = closed[0].1.duration_since(sent);
    assert!(took < Duration::from_millis(100), "closed after {took:?}");
    mcp.expect_silence(Duration::from_millis(300));
    let reply = mcp.call(2, "answer", json!({"query":"next"}));
    assert_eq!(answer_of(&reply)["answer"], "answer to next");
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    assert!(
        log.contains("cancelled requestId=1 reason=\"user pressed stop\""),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn cancel_during_backoff_stops_further_attempts() {
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(429, &fixture("error-429-rate-limit-exceeded.json"))
            .with_header("retry-after", "1")
    });
    let (mut mcp, dir) = spawn_with(&fake, "request: {max_retries: 3}\n");
    mcp.send(&call_message(1, "q"));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    thread::sleep(Duration::from_millis(100));
    mcp.send(&cancel_message(1));
    mcp.expect_silence(Duration::from_millis(1500));
    assert_eq!(fake.requests().len(), 1, "no attempt after the cancel");
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))["result"],
        json!({})
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn two_hundred_concurrent_calls_each_answered_once_within_the_cap() {
    let fake = FakeOpenAi::start(|r, i| {
        Action::json(200, &echo_answer(r)).after(Duration::from_millis((i % 7) as u64 * 4))
    });
    let (mut mcp, dir) = spawn_with(&fake, "server: {max_inflight: 4}\n");
    for id in 1..=200u64 {
        mcp.send(&call_message(id, &format!("q{id}")));
    }
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let reply = mcp.recv();
        let id = reply["id"].as_u64().unwrap();
        assert!(seen.insert(id), "id {id} answered twice");
        assert_eq!(
            answer_of(&reply)["answer"],
            format!("answer to q{id}"),
            "reply matches its query"
        );
    }
    assert_eq!(seen.len(), 200);
    mcp.expect_silence(Duration::from_millis(200));
    assert!(
        fake.max_in_flight() <= 4,
        "saw {} at once",
        fake.max_in_flight()
    );
    assert_eq!(fake.requests().len(), 200);
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_duplicate_in_flight_id_is_refused_and_the_first_call_completes() {
    let fake = FakeOpenAi::start(|r, _| {
        Action::json(200, &echo_answer(r)).after(Duration::from_millis(300))
    });
    let (mut mcp, dir) = spawn_with(&fake, "{}\n");
    mcp.send(&call_message(1, "first"));
    let dup = mcp.request(call_message(1, "second"));
    assert_eq!(dup["error"]["code"], -32600);
    assert_eq!(answer_of(&mcp.recv())["answer"], "answer to first");
    let _ = std::fs::remove_dir_all(dir);
}

pub fn eof_lets_calls_in_flight_finish_then_exits_zero() {
    let fake = FakeOpenAi::start(|r, _| {
        Action::json(200, &echo_answer(r)).after(Duration::from_millis(300))
    });
    let (mut mcp, dir) = spawn_with(&fake, "{}\n");
    for id in 1..=3 {
        mcp.send(&call_message(id, &format!("q{id}")));
    }
    mcp.close_stdin();
    let mut ids: Vec<u64> = (0..3).map(|_| mcp.recv()["id"].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert!(mcp.wait_exit(PATIENCE).success());
    let _ = std::fs::remove_dir_all(dir);
}

pub fn sigterm_aborts_calls_and_exits_zero_promptly() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let (mut mcp, dir) = spawn_with(&fake, "{}\n");
    mcp.send(&call_message(1, "q"));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-TERM", &mcp.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = mcp.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "exit took {:?}",
        sent.elapsed()
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn progress_notifications_increase_and_stop_before_the_reply() {
    let fake = FakeOpenAi::start(|r, _| {
        Action::json(200, &echo_answer(r)).after(Duration::from_millis(700))
    });
    let (mut mcp, dir) = spawn_with(&fake, "server: {progress_interval_ms: 100}\n");
    mcp.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":"tok-1"}}}));
    let mut progress = Vec::new();
    loop {
        let m = mcp.recv();
        if m.get("id").is_some() {
            assert!(m.get("result").is_some(), "{m}");
            break;
        }
        assert_eq!(m["method"], "notifications/progress");
        assert_eq!(m["params"]["progressToken"], "tok-1");
        assert!(m["params"]["message"].is_string());
        progress.push(m["params"]["progress"].as_f64().unwrap());
    }
    assert!(progress.len() >= 3, "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    mcp.expect_silence(Duration::from_millis(400));
    let _ = std::fs::remove_dir_all(dir);
}
