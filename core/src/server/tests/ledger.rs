//! Every reply counted once in `mcp.server.operation.duration`, where it leaves and with
//! its real duration: replies answered at once, replies written from a cache, and replies
//! that leave later (a parked `tasks/result`, a held 2026-07-28 task call).

use crate::fixture;
use crate::testing::Harness;
use serde_json::json;
use std::time::Duration;

/// The `_count` and `_sum` of the operation series of `method` in `h`'s `/metrics` text
/// (summed over the other labels).
fn counted(h: &Harness, method: &str) -> (f64, f64) {
    let text = String::from_utf8(h.server.metrics_text()).unwrap_or_default();
    let label = format!("mcp_method_name=\"{method}\"");
    let sum_of = |suffix: &str| {
        text.lines()
            .filter(|l| {
                l.starts_with(&format!("mcp_server_operation_duration_seconds{suffix}{{"))
                    && l.contains(&label)
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    (sum_of("_count"), sum_of("_sum"))
}

#[test]
fn tools_list_is_counted_each_time_it_is_answered() {
    let mut h = Harness::ready("2025-11-25");
    for id in 1..=3 {
        let r = h.request(json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}));
        assert!(r["result"]["tools"].is_array(), "{r}");
    }
    assert_eq!(counted(&h, "tools/list").0, 3.0);
}

#[test]
fn a_parked_tasks_result_is_counted_once_with_how_long_it_waited() {
    let mut h = Harness::ready("2025-11-25");
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}}),
    );
    let id = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let attempt = h.take_http()[0].attempt;
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":id}}));
    assert_eq!(counted(&h, "tasks/result").0, 0.0, "not answered yet");
    h.advance(Duration::from_secs(3));
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames().iter().any(|m| m["id"] == 2));
    let (count, sum) = counted(&h, "tasks/result");
    assert_eq!(count, 1.0);
    assert!((3.0..3.1).contains(&sum), "waited {sum} s");
}

#[test]
fn a_held_modern_task_call_is_counted_once_when_it_is_answered() {
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::from_secs(5);
    let mut h = Harness::new(config);
    let call = |id: u64| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":"q"},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                     "io.modelcontextprotocol/clientCapabilities":
                         {"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})
    };
    // Answered with its result within the window.
    h.send(call(1));
    let attempt = h.take_http()[0].attempt;
    h.advance(Duration::from_secs(2));
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames().iter().any(|m| m["id"] == 1));
    let (count, sum) = counted(&h, "tools/call");
    assert_eq!(count, 1.0);
    assert!((2.0..2.1).contains(&sum), "took {sum} s");
    // Answered with its task when the window ends.
    h.send(call(2));
    h.take_http();
    h.advance(Duration::from_secs(5));
    h.feed(crate::Input::Timeout);
    assert!(h.frames().iter().any(|m| m["id"] == 2));
    let (count, sum) = counted(&h, "tools/call");
    assert_eq!(count, 2.0);
    assert!((7.0..7.2).contains(&sum), "took {sum} s in all");
}

/// A background task's end is counted once, by the read that first sees it ended: one
/// record with its tokens and cost, and its spend against the limits.
#[test]
fn a_background_task_is_counted_once_when_first_read_as_ended() {
    use crate::ledger::CallRecord;
    use crate::outcome::{Outcome, Refusal};
    let mut config = Harness::keyed();
    config.tasks.background = true;
    config.instance_limit.spend_per_day = Some(crate::openai::pricing::Picodollars(1));
    let poll = config.tasks.poll_interval;
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer_quick","arguments":{"query":"q"},"task":{"ttl":60_000}}}),
    );
    let post = h.take_http().remove(0);
    let queued = json!({"id":"resp_1","object":"response","status":"queued","output":[]});
    h.reply(post.attempt, 200, queued.to_string().as_bytes(), &[]);
    let created = h.frames().remove(0);
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        h.take_records().is_empty(),
        "a task that runs has not ended"
    );
    h.advance(poll);
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":id}}));
    let read = h.take_http().remove(0);
    let mut done: serde_json::Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
    done["id"] = "resp_1".into();
    done["model"] = "gpt-6.1-terra".into();
    h.reply(read.attempt, 200, done.to_string().as_bytes(), &[]);
    assert!(h.frames().iter().any(|m| m["id"] == 2));
    // Read again, from this instance's memory: not counted again.
    h.advance(poll);
    let again =
        h.request(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":id}}));
    assert_eq!(again["result"]["status"], "completed", "{again}");
    let records: Vec<CallRecord> = h.take_records();
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(
        (record.tool, record.task, record.outcome),
        (crate::tools::Tool::AnswerQuick, true, Outcome::Ok)
    );
    let tokens = done["usage"]["input_tokens"].as_u64();
    assert_eq!(record.usage.as_ref().map(|u| u.input_tokens), tokens);
    assert!(record.cost.is_some_and(|c| c.0 > 0), "{record:?}");
    assert_eq!(record.duration, poll, "from its creation to its end");
    // Its spend took the day's limit: the next call is refused before any request.
    h.request(
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"}}}),
    );
    assert!(h.take_http().is_empty());
    let refused = h.take_records();
    assert_eq!(
        refused.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [Outcome::Refused(Refusal::SpendPerDay)]
    );
}

/// A background create that fails is a call that ended: counted and recorded once.
#[test]
fn a_failed_background_create_is_counted_as_the_call_it_was() {
    use crate::outcome::Outcome;
    let mut config = Harness::keyed();
    config.tasks.background = true;
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}}),
    );
    let post = h.take_http().remove(0);
    let refused = json!({"error":{"message":"Invalid model","type":"invalid_request_error"}});
    h.reply(post.attempt, 400, refused.to_string().as_bytes(), &[]);
    assert_eq!(h.frames().len(), 1);
    let outcomes: Vec<_> = h.take_records().iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Upstream(crate::openai::FailureKind::HttpError)]
    );
}
