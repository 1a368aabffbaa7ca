//! The register of requests: every request is answered once, counted once in
//! `mcp.server.operation.duration` and its span ended once, on each path its answer takes
//! (at once, late after the upstream reply, refused, in a batch, never because its client
//! left or cancelled it, and as a task).

use super::*;
use crate::fixture;
use crate::spans::{SpanKind, Value as Attr};
use crate::testing::Harness;
use crate::trace_context::Sampler;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// What left for each request id since the last look.
#[derive(Debug, Default)]
struct Tally {
    /// Replies, on stdout (a batch's entries one by one) or an exchange.
    replies: BTreeMap<String, usize>,
    /// Server spans ended.
    spans: BTreeMap<String, usize>,
}

/// A keyed, traced server.
fn traced(config: ServerConfig) -> Harness {
    Harness::new(ServerConfig {
        traces: Some(Sampler::AlwaysOn),
        ..config
    })
}

/// The requests counted so far, over every label.
fn counted(h: &Harness) -> f64 {
    let text = String::from_utf8(h.server.metrics_text()).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("mcp_server_operation_duration_seconds_count{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Takes every output since the last look and tallies it by request id.
fn tally(h: &mut Harness) -> Tally {
    let mut t = Tally::default();
    let reply = |m: &Value, t: &mut Tally| {
        if m.get("result").is_some() || m.get("error").is_some() {
            *t.replies.entry(id_text(&m["id"])).or_default() += 1;
        }
    };
    for frame in h.frames() {
        match &frame {
            Value::Array(entries) => entries.iter().for_each(|m| reply(m, &mut t)),
            m => reply(m, &mut t),
        }
    }
    for out in h.take_other() {
        match out {
            Output::Exchange(_, ExchangeOut::Reply { json, .. }) => {
                let m: Value = serde_json::from_slice(&json).unwrap_or_default();
                reply(&m, &mut t);
            }
            Output::Span(span) if span.kind == SpanKind::Server => {
                let id = span
                    .attributes
                    .iter()
                    .find(|(n, _)| *n == "jsonrpc.request.id")
                    .map(|(_, v)| match v {
                        Attr::Str(s) => s.clone(),
                        other => format!("{other:?}"),
                    })
                    .unwrap_or_default();
                *t.spans.entry(id).or_default() += 1;
            }
            _ => {}
        }
    }
    t
}

/// Asserts that `answered` were replied to once each and `silent` not at all, that each
/// of both had its span ended once, and that `before` grew by one per request.
fn once(h: &mut Harness, before: f64, answered: &[&str], silent: &[&str]) {
    let t = tally(h);
    for id in answered {
        assert_eq!(t.replies.get(*id), Some(&1), "{id} answered once: {t:?}");
    }
    for id in silent {
        assert_eq!(t.replies.get(*id), None, "{id} never answered: {t:?}");
    }
    for id in answered.iter().chain(silent) {
        assert_eq!(t.spans.get(*id), Some(&1), "{id}'s span ended once: {t:?}");
    }
    let requests = (answered.len() + silent.len()) as f64;
    assert_eq!(counted(h) - before, requests, "counted once each: {t:?}");
    assert_eq!(h.server.register.len(), 0, "no ticket is left open");
}

fn call(id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"}}})
}

fn modern_task_call(id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":
                     {"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})
}

fn post(h: &mut Harness, x: u64, message: Value) {
    h.post_as(x, crate::clients::ClientId::DEFAULT, None, message);
}

fn answer_upstream(h: &mut Harness) {
    for request in h.take_http() {
        h.reply(
            request.attempt,
            200,
            &fixture("response-no-search.json"),
            &[],
        );
    }
}

#[test]
fn immediate_replies_are_answered_counted_and_traced_once() {
    let mut h = traced(Harness::keyed());
    let before = counted(&h);
    h.send(json!({"jsonrpc":"2.0","id":"early","method":"ping"}));
    h.send(json!({"jsonrpc":"2.0","id":"init","method":"initialize",
        "params":{"protocolVersion":"2025-06-18"}}));
    h.send(json!({"jsonrpc":"2.0","id":"list","method":"tools/list"}));
    h.send(json!({"jsonrpc":"2.0","id":"nope","method":"nope"}));
    once(&mut h, before, &["early", "init", "list", "nope"], &[]);
    let before = counted(&h);
    post(
        &mut h,
        1,
        json!({"jsonrpc":"2.0","id":"http-list","method":"tools/list"}),
    );
    once(&mut h, before, &["http-list"], &[]);
}

#[test]
fn a_call_answered_after_the_upstream_reply_is_answered_counted_and_traced_once() {
    let mut h = traced(Harness::keyed());
    h.init("2025-06-18");
    tally(&mut h);
    let before = counted(&h);
    h.send(call("late"));
    post(&mut h, 2, call("http-late"));
    h.advance(Duration::from_secs(1));
    answer_upstream(&mut h);
    once(&mut h, before, &["late", "http-late"], &[]);
}

#[test]
fn refused_calls_are_answered_counted_and_traced_once() {
    // No key: refused before the call engine; a limit: refused after admission.
    let mut h = traced(ServerConfig::default());
    h.init("2025-06-18");
    tally(&mut h);
    let before = counted(&h);
    h.send(call("no-key"));
    once(&mut h, before, &["no-key"], &[]);
    let mut config = Harness::keyed();
    config.instance_limit.calls_per_minute = Some(1);
    let mut h = traced(config);
    h.init("2025-06-18");
    tally(&mut h);
    let before = counted(&h);
    h.send(call("admitted"));
    h.send(call("limited"));
    post(&mut h, 3, call("http-limited"));
    answer_upstream(&mut h);
    once(
        &mut h,
        before,
        &["admitted", "limited", "http-limited"],
        &[],
    );
}

#[test]
fn a_batchs_entries_are_answered_counted_and_traced_once() {
    let mut h = traced(Harness::keyed());
    h.init("2025-03-26");
    tally(&mut h);
    let before = counted(&h);
    h.send(json!([
        {"jsonrpc":"2.0","id":"b-ping","method":"ping"},
        call("b-call"),
        {"jsonrpc":"2.0","id":"b-list","method":"tools/list"},
        {"jsonrpc":"2.0","id":"b-nope","method":"nope"}
    ]));
    assert!(h.frames().is_empty(), "the batch waits for its call");
    answer_upstream(&mut h);
    once(
        &mut h,
        before,
        &["b-ping", "b-call", "b-list", "b-nope"],
        &[],
    );
}

#[test]
fn a_request_whose_client_left_or_cancelled_it_is_counted_and_traced_once_unanswered() {
    let mut h = traced(Harness::keyed());
    h.init("2025-06-18");
    tally(&mut h);
    let before = counted(&h);
    // Over HTTP: the client goes away before the upstream reply.
    post(&mut h, 4, call("gone"));
    h.feed(Input::ExchangeClosed(ExchangeId(4)));
    // On stdio: the client cancels it.
    h.send(call("cancelled"));
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":"cancelled"}}));
    answer_upstream(&mut h);
    once(&mut h, before, &[], &["gone", "cancelled"]);
    // A held modern task call whose client leaves before its window ends.
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::from_secs(5);
    let mut h = traced(config);
    let before = counted(&h);
    post(&mut h, 5, modern_task_call("held-gone"));
    h.feed(Input::ExchangeClosed(ExchangeId(5)));
    answer_upstream(&mut h);
    once(&mut h, before, &[], &["held-gone"]);
}

#[test]
fn task_calls_and_their_reads_are_answered_counted_and_traced_once() {
    let mut h = traced(Harness::keyed());
    h.init("2025-11-25");
    tally(&mut h);
    let before = counted(&h);
    let r = h.request(
        json!({"jsonrpc":"2.0","id":"task","method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}}),
    );
    let task = r["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    h.send(
        json!({"jsonrpc":"2.0","id":"result","method":"tasks/result",
        "params":{"taskId":task}}),
    );
    answer_upstream(&mut h);
    h.send(json!({"jsonrpc":"2.0","id":"get","method":"tasks/get","params":{"taskId":task}}));
    // `task` was answered by `request` above, so it is not in the tally.
    let t = tally(&mut h);
    assert_eq!(t.replies.get("result"), Some(&1), "{t:?}");
    assert_eq!(t.replies.get("get"), Some(&1), "{t:?}");
    for id in ["task", "result", "get"] {
        assert_eq!(t.spans.get(id), Some(&1), "{id}'s span ended once: {t:?}");
    }
    assert_eq!(counted(&h) - before, 3.0);
    // Held modern calls: one answered with its result within the window, one with its
    // task when the window ends.
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::from_secs(5);
    let mut h = traced(config);
    let before = counted(&h);
    h.send(modern_task_call("held"));
    answer_upstream(&mut h);
    h.send(modern_task_call("held-long"));
    h.take_http();
    h.advance(Duration::from_secs(5));
    h.feed(Input::Timeout);
    once(&mut h, before, &["held", "held-long"], &[]);
}

fn cancel(id: &str) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})
}

#[test]
fn a_held_task_call_its_client_cancels_is_never_answered_and_its_call_stops() {
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::from_secs(5);
    let mut h = traced(config);
    let before = counted(&h);
    // On stdio, answered upstream after the cancel; over HTTP, its window ends after it.
    h.send(modern_task_call("held"));
    post(&mut h, 6, modern_task_call("http-held"));
    let attempts = h.take_http();
    h.send(cancel("held"));
    post(&mut h, 7, cancel("http-held"));
    assert_eq!(attempts.len(), 2);
    assert_eq!(h.server.calls_in_flight(), 0, "their calls stop");
    h.reply(
        attempts[0].attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    h.advance(Duration::from_secs(6));
    h.feed(Input::Timeout);
    once(&mut h, before, &[], &["held", "http-held"]);
    assert_eq!(h.server.task_count(), 0, "nobody can reach their tasks");
}

#[test]
fn a_tasks_result_its_client_cancels_is_never_answered_and_gives_up_its_place() {
    let mut h = traced(Harness::keyed());
    h.init("2025-11-25");
    let r = h.request(
        json!({"jsonrpc":"2.0","id":"task","method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}}),
    );
    let task = r["result"]["task"]["taskId"].as_str().unwrap_or_default();
    let result = |id: &str| json!({"jsonrpc":"2.0","id":id,"method":"tasks/result","params":{"taskId":task}});
    let upstream = h.take_http();
    tally(&mut h);
    let before = counted(&h);
    // Sixteen wait, the most one task holds; cancelled, they make room for others.
    let ids: Vec<String> = (0..16).map(|n| format!("r{n}")).collect();
    for id in &ids {
        h.send(result(id));
        h.send(cancel(id));
    }
    h.send(result("kept"));
    for request in upstream {
        h.reply(
            request.attempt,
            200,
            &fixture("response-no-search.json"),
            &[],
        );
    }
    let silent: Vec<&str> = ids.iter().map(String::as_str).collect();
    once(&mut h, before, &["kept"], &silent);
}

#[test]
fn a_request_refused_for_its_meta_is_answered_counted_and_traced_once() {
    let mut h = traced(Harness::keyed());
    let before = counted(&h);
    let bad = |id: &str| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2099-01-01",
            "io.modelcontextprotocol/clientCapabilities":{}}}})
    };
    h.send(bad("stdio-meta"));
    post(&mut h, 8, bad("http-meta"));
    once(&mut h, before, &["stdio-meta", "http-meta"], &[]);
}

#[test]
fn a_held_task_call_cancelled_on_another_instance_is_never_answered_and_its_call_stops() {
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::from_secs(5);
    let mut h = traced(config);
    let before = counted(&h);
    post(&mut h, 6, modern_task_call("http-held"));
    assert_eq!(h.take_http().len(), 1);
    // Its client POSTed the cancel to another instance, which published it.
    let id = crate::jsonrpc::RequestId::Str("http-held".into());
    let client = crate::clients::DEFAULT_NAME.to_owned();
    let event = crate::store::events::StoreEvent::Request { client, id }.to_string();
    h.feed(Input::StoreEvent(&event));
    assert_eq!(h.server.calls_in_flight(), 0, "its call stops");
    h.advance(Duration::from_secs(6));
    h.feed(Input::Timeout);
    once(&mut h, before, &[], &["http-held"]);
    assert_eq!(h.server.task_count(), 0, "nobody can reach its task");
}
