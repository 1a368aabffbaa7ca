//! Streamed answers (`"stream": true`): the same answer as a whole reply, progress from
//! what the model does, failures inside the stream, a cut stream, the idle timeout, the
//! grace for the body's end, and cancellation mid-stream.

use crate::fixture;
use crate::io::*;
use crate::settings::*;
use crate::testing::Harness;
use crate::{Input, Output};
use serde_json::{json, Value};
use std::time::Duration;

fn streaming(config: ServerConfig) -> Harness {
    let mut h = Harness::new(ServerConfig {
        stream: true,
        ..config
    });
    h.init("2025-06-18");
    h
}

fn call(h: &mut Harness, id: u64, progress: bool) -> AttemptId {
    let mut params = json!({"name":"answer","arguments":{"query":"q"}});
    if progress {
        params["_meta"] = json!({"progressToken": "p"});
    }
    h.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}));
    let request = h.take_http().pop().expect("an attempt");
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_obfuscation"], false);
    request.attempt
}

fn reply_of(frames: &[Value], id: u64) -> Value {
    frames
        .iter()
        .find(|m| m["id"] == id)
        .cloned()
        .expect("a reply")
}

#[test]
fn a_streamed_answer_is_the_whole_replys_answer() {
    let sse = fixture("stream-web-search.sse");
    let completed = sse
        .split(|&b| b == b'\n')
        .filter_map(|l| l.strip_prefix(b"data: "))
        .find(|d| d.starts_with(br#"{"type":"response.completed""#))
        .map(|d| serde_json::from_slice::<Value>(d).unwrap()["response"].to_string())
        .unwrap();
    let mut h = streaming(Harness::keyed());
    let streamed = call(&mut h, 1, false);
    h.stream(streamed, &sse, 997, Duration::ZERO);
    let streamed = reply_of(&h.frames(), 1);
    let mut h = streaming(Harness::keyed());
    let whole = call(&mut h, 1, false);
    h.reply(whole, 200, completed.as_bytes(), &[]);
    let whole = reply_of(&h.frames(), 1);
    assert_eq!(streamed["result"]["content"], whole["result"]["content"]);
    assert_eq!(
        streamed["result"]["structuredContent"],
        whole["result"]["structuredContent"]
    );
    let usage = &streamed["result"]["_meta"]["com.github.openai-responses-mcp/usage"];
    assert_eq!(usage["input_tokens"], 31073);
    assert_eq!(usage["attempts"], 1);
    assert!(usage["response_id"].as_str().unwrap().starts_with("resp_"));
    assert_eq!(
        usage,
        &whole["result"]["_meta"]["com.github.openai-responses-mcp/usage"]
    );
}

#[test]
fn progress_says_what_the_model_does_a_few_times_a_second_at_most() {
    let mut h = streaming(Harness::keyed());
    let attempt = call(&mut h, 1, true);
    let start = h.now.instant;
    h.stream(
        attempt,
        &fixture("stream-web-search.sse"),
        512,
        Duration::from_millis(20),
    );
    let frames = h.frames();
    let progress: Vec<&Value> = frames
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    let messages: Vec<&str> = progress
        .iter()
        .map(|m| m["params"]["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.contains(&"searching: tech news today December 5 2025"),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.starts_with("reading ")),
        "{messages:?}"
    );
    assert!(messages.contains(&"writing the answer"), "{messages:?}");
    let counts: Vec<u64> = progress
        .iter()
        .map(|m| m["params"]["progress"].as_u64().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    let elapsed = h.now.instant - start;
    let most = 1 + elapsed.as_millis() / 250 + 1;
    assert!(
        (counts.len() as u128) <= most,
        "{} in {elapsed:?}",
        counts.len()
    );
    assert_eq!(frames.last().unwrap()["id"], 1, "the reply comes last");
}

#[test]
fn a_rate_limit_inside_the_stream_is_retried_like_a_429() {
    let mut h = streaming(Harness::keyed());
    let first = call(&mut h, 1, false);
    h.stream(
        first,
        &fixture("stream-response-failed-rate-limit.sse"),
        300,
        Duration::ZERO,
    );
    assert!(h.frames().is_empty(), "no reply yet: backing off");
    h.fire();
    let second = h.take_http().pop().expect("a retry").attempt;
    h.stream(
        second,
        &fixture("stream-with-keepalive.sse"),
        64,
        Duration::ZERO,
    );
    let reply = reply_of(&h.frames(), 1);
    assert!(reply.get("result").is_some(), "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["com.github.openai-responses-mcp/usage"]["attempts"],
        2
    );
}

#[test]
fn quota_inside_the_stream_is_not_retried() {
    let mut h = streaming(Harness::keyed());
    let attempt = call(&mut h, 1, false);
    h.stream(
        attempt,
        &fixture("stream-error-insufficient-quota.sse"),
        4096,
        Duration::ZERO,
    );
    let reply = reply_of(&h.frames(), 1);
    assert_eq!(reply["error"]["code"], -32050);
    assert_eq!(reply["error"]["data"]["code"], "insufficient_quota");
    assert!(h.take_http().is_empty());
}

#[test]
fn a_stream_cut_before_its_end_is_retried() {
    let sse = fixture("stream-web-search.sse");
    let mut h = streaming(Harness::keyed());
    let attempt = call(&mut h, 1, false);
    h.head(attempt, 200, &[("content-type", "text/event-stream")]);
    h.body(attempt, &sse[..sse.len() / 2]);
    h.end(attempt);
    assert!(h.frames().is_empty());
    h.fire();
    assert_eq!(h.take_http().len(), 1, "a second attempt");
}

#[test]
fn silence_for_the_idle_timeout_fails_the_attempt_and_bytes_keep_it_alive() {
    let mut h = streaming(ServerConfig {
        idle_timeout: Duration::from_secs(10),
        ..Harness::keyed()
    });
    let attempt = call(&mut h, 1, false);
    h.head(attempt, 200, &[("content-type", "text/event-stream")]);
    for _ in 0..5 {
        h.advance(Duration::from_secs(8));
        h.body(attempt, b": keepalive\n\n");
        h.feed(Input::Timeout);
    }
    assert!(
        !h.take_other().contains(&Output::Abort(attempt)),
        "bytes kept it alive"
    );
    h.advance(Duration::from_secs(9));
    h.feed(Input::Timeout);
    assert!(
        !h.take_other().contains(&Output::Abort(attempt)),
        "9 s of silence is fine"
    );
    h.advance(Duration::from_secs(1));
    h.feed(Input::Timeout);
    assert!(
        h.take_other().contains(&Output::Abort(attempt)),
        "10 s of silence ends it"
    );
}

#[test]
fn after_the_terminal_event_the_body_gets_a_second_to_end() {
    let sse = fixture("stream-with-keepalive.sse");
    let mut h = streaming(Harness::keyed());
    let attempt = call(&mut h, 1, false);
    h.head(attempt, 200, &[("content-type", "text/event-stream")]);
    h.body(attempt, &sse);
    assert!(h.frames().is_empty(), "the reply waits for the body's end");
    let before = h.now.instant;
    h.fire();
    assert!(h.now.instant - before <= Duration::from_secs(1));
    assert!(h.take_other().iter().any(|o| matches!(o, Output::Write(_))));
}

#[test]
fn cancel_mid_stream_aborts_and_nothing_more_is_written() {
    let sse = fixture("stream-web-search.sse");
    let mut h = streaming(Harness::keyed());
    let attempt = call(&mut h, 1, true);
    h.head(attempt, 200, &[("content-type", "text/event-stream")]);
    h.body(attempt, &sse[..4000]);
    h.frames();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    assert!(h.take_other().contains(&Output::Abort(attempt)));
    h.body(attempt, &sse[4000..]);
    h.end(attempt);
    assert!(h.frames().is_empty(), "nothing after a cancel");
}
