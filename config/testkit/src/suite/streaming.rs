//! Streamed answers end to end: a fake OpenAI that streams (chunked, slow, with
//! keepalives, cut mid-stream, failing mid-stream with a rate limit), the same answer as a
//! whole reply, progress from what the model does, and cancellation mid-stream.

use crate::fake_openai::{completed_response, Action, FakeOpenAi, StreamThen};
use crate::*;

/// A server with streaming on (and whatever else `yaml` says).
/// Its folder (with its configuration and log) lasts as long as it does.
fn spawn_streaming(fake: &FakeOpenAi, yaml: &str) -> (Mcp, PathBuf) {
    let dir = temp_dir("stream");
    let path = dir.to_path_buf();
    let yaml = format!("responses: {{stream: true}}\n{yaml}");
    let opts = Opts::upstream(&fake.url).config(&dir, &yaml);
    let mut mcp = Mcp::spawn(opts.arg("--debug").keeping(dir));
    mcp.initialize("2025-06-18");
    (mcp, path)
}

fn sse(name: &str) -> Vec<u8> {
    fixture(name)
}

pub fn a_streamed_answer_equals_the_whole_answer() {
    let stream = sse("stream-web-search.sse");
    let whole_body = completed_response(&stream);
    let streaming = FakeOpenAi::start({
        let stream = stream.clone();
        move |_, _| Action::stream(&stream, 1500, Duration::ZERO)
    });
    let (mut mcp, dir) = spawn_streaming(&streaming, "");
    let streamed = mcp.call(1, "answer", json!({"query":"q"}));
    let sent = &streaming.requests()[0].body;
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_obfuscation"], false);

    let whole = FakeOpenAi::fixed(200, whole_body);
    let mut plain = Mcp::spawn(Opts::upstream(&whole.url));
    plain.initialize("2025-06-18");
    let read_whole = plain.call(1, "answer", json!({"query":"q"}));
    assert_eq!(
        streamed["result"]["content"],
        read_whole["result"]["content"]
    );
    assert_eq!(
        streamed["result"]["structuredContent"],
        read_whole["result"]["structuredContent"]
    );
    let usage = &streamed["result"]["_meta"]["com.github.openai-responses-mcp/usage"];
    assert_eq!(usage["input_tokens"], 31073);
    assert!(usage["web_searches"].as_u64().unwrap() >= 2);

    // The debug log: one line for the attempt with its event count and time to first
    // byte, and nothing of the answer itself.
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    let line = log
        .lines()
        .find(|l| l.contains("stream complete"))
        .unwrap_or_else(|| panic!("no per-attempt line in:\n{log}"));
    let events: u64 = line
        .split(": ")
        .nth(2)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no event count in {line}"));
    assert!(events > 10, "{line}");
    assert!(line.contains("first byte after "), "{line}");
    let text = streamed["result"]["structuredContent"]["answer"]
        .as_str()
        .unwrap();
    let excerpt: String = text.chars().take(40).collect();
    assert!(!log.contains(&excerpt), "the answer leaked into the log");
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_slow_stream_with_keepalives_reports_progress_then_answers() {
    let stream = sse("stream-web-search.sse");
    let fake =
        // 1 KB every 20 ms: the 87 KB answer takes about 1.7 s, as a slow answer does.
        FakeOpenAi::start(move |_, _| Action::stream(&stream, 1000, Duration::from_millis(20)));
    let (mut mcp, dir) = spawn_streaming(&fake, "");
    mcp.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":"p"}}}));
    let mut progress = Vec::new();
    let reply = loop {
        let m = mcp.recv();
        if m["method"] == "notifications/progress" {
            progress.push(m);
        } else {
            break m;
        }
    };
    assert_eq!(reply["id"], 1);
    assert!(reply.get("result").is_some(), "{reply}");
    let counts: Vec<u64> = progress
        .iter()
        .map(|m| m["params"]["progress"].as_u64().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    let messages: Vec<&str> = progress
        .iter()
        .filter_map(|m| m["params"]["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.starts_with("searching: ")),
        "{messages:?}"
    );
    assert!(messages.contains(&"writing the answer"), "{messages:?}");
    mcp.expect_silence(Duration::from_millis(300));
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_rate_limit_inside_the_stream_is_retried_then_answered() {
    let failed = sse("stream-response-failed-rate-limit.sse");
    let ok = sse("stream-with-keepalive.sse");
    let fake = FakeOpenAi::start(move |_, i| match i {
        0 => Action::stream(&failed, 500, Duration::ZERO),
        _ => Action::stream(&ok, 500, Duration::ZERO),
    });
    let (mut mcp, dir) = spawn_streaming(&fake, "");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert!(reply.get("result").is_some(), "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["com.github.openai-responses-mcp/usage"]["attempts"],
        2
    );
    assert_eq!(fake.requests().len(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_stream_cut_mid_way_is_retried_on_a_new_connection() {
    let stream = sse("stream-web-search.sse");
    let half = stream[..stream.len() / 2].to_vec();
    let fake = FakeOpenAi::start(move |_, i| match i {
        0 => Action::Stream {
            body: half.clone(),
            size: 4096,
            interval: Duration::ZERO,
            then: StreamThen::Cut,
        },
        _ => Action::stream(&stream, 4096, Duration::ZERO),
    });
    let (mut mcp, dir) = spawn_streaming(&fake, "");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(answer_of(&reply)["used_search"], true, "{reply}");
    assert_eq!(fake.requests().len(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

pub fn quota_inside_the_stream_is_reported_at_once() {
    let quota = sse("stream-error-insufficient-quota.sse");
    let fake = FakeOpenAi::start(move |_, _| Action::stream(&quota, 4096, Duration::ZERO));
    let (mut mcp, dir) = spawn_streaming(&fake, "");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    assert_eq!(reply["error"]["data"]["code"], "insufficient_quota");
    assert_eq!(fake.requests().len(), 1, "not retried");
    let _ = std::fs::remove_dir_all(dir);
}

pub fn cancel_mid_stream_closes_the_connection_at_once() {
    let stream = sse("stream-web-search.sse");
    let first_part = stream[..6000].to_vec();
    let fake = FakeOpenAi::start(move |_, _| Action::Stream {
        body: first_part.clone(),
        size: 1000,
        interval: Duration::ZERO,
        then: StreamThen::Hang,
    });
    let (mut mcp, dir) = spawn_streaming(&fake, "");
    mcp.send(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}));
    fake.wait_requests(1, PATIENCE);
    thread::sleep(Duration::from_millis(200)); // the stream is under way
    let sent = Instant::now();
    mcp.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    while fake.closed().is_empty() && sent.elapsed() < PATIENCE {
        thread::sleep(Duration::from_millis(2));
    }
    let closed = fake.closed();
    assert_eq!(closed.len(), 1);
    let after = closed[0].1.saturating_duration_since(sent);
    assert!(
        after < Duration::from_millis(100),
        "closed {after:?} after the cancel"
    );
    mcp.expect_silence(Duration::from_millis(300));
    let _ = std::fs::remove_dir_all(dir);
}

pub fn streamed_calls_keep_the_connection_alive() {
    let stream = sse("stream-with-keepalive.sse");
    let fake = FakeOpenAi::start(move |_, _| Action::stream(&stream, 700, Duration::ZERO));
    // No model lookup: its own connection could be the one a later call reuses.
    let (mut mcp, dir) = spawn_streaming(&fake, "openai: {model_lookups: false}\n");
    for id in 1..=3 {
        let reply = mcp.call(id, "answer", json!({"query":"q"}));
        assert!(reply.get("result").is_some(), "{reply}");
    }
    assert_eq!(
        fake.connections(),
        1,
        "one connection for three streamed calls"
    );
    let _ = std::fs::remove_dir_all(dir);
}
