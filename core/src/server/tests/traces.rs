//! Spans as the server makes them (`crate::spans`): one per request, continuing the
//! caller's trace, with a child per upstream attempt, and none at all when traces are off.

use crate::fixture;
use crate::settings::ServerConfig;
use crate::spans::{Span, SpanKind, Value};
use crate::testing::Harness;
use crate::trace_context::Sampler;
use crate::Output;
use serde_json::json;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn traced() -> Harness {
    let config = ServerConfig {
        traces: Some(Sampler::AlwaysOn),
        ..Harness::keyed()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h
}

fn spans(h: &mut Harness) -> Vec<Span> {
    h.take_other()
        .into_iter()
        .filter_map(|o| match o {
            Output::Span(span) => Some(span),
            _ => None,
        })
        .collect()
}

fn attribute<'a>(span: &'a Span, name: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

#[test]
fn a_retried_call_continues_the_callers_trace_with_a_span_per_attempt() {
    let mut h = traced();
    let init = spans(&mut h);
    assert_eq!(init.len(), 1, "initialize has its span: {init:?}");
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"PLANTED-question"},
        "_meta":{"traceparent": TRACEPARENT}}}),
    );
    let first = h.take_http().pop().unwrap();
    h.reply(
        first.attempt,
        500,
        &fixture("error-500-server-error.json"),
        &[],
    );
    h.fire();
    let second = h.take_http().pop().unwrap();
    h.reply(
        second.attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    assert_eq!(h.frames().len(), 1);
    let spans = spans(&mut h);
    let server: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind == SpanKind::Server)
        .collect();
    let client: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind == SpanKind::Client)
        .collect();
    assert_eq!((server.len(), client.len()), (1, 2), "{spans:?}");
    let call = server[0];
    assert_eq!(call.name, "tools/call answer");
    assert_eq!(hex(&call.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(
        call.parent_id.map(|p| hex(&p)).as_deref(),
        Some("00f067aa0ba902b7")
    );
    assert_eq!(
        attribute(call, "mcp.method.name"),
        Some(&Value::Str("tools/call".into()))
    );
    assert_eq!(
        attribute(call, "jsonrpc.request.id"),
        Some(&Value::Str("1".into()))
    );
    assert_eq!(
        attribute(call, "gen_ai.tool.name"),
        Some(&Value::Str("answer".into()))
    );
    assert_eq!(
        attribute(call, "network.transport"),
        Some(&Value::Str("pipe".into()))
    );
    assert!(
        attribute(call, "gen_ai.usage.input_tokens").is_some(),
        "{call:?}"
    );
    assert!(attribute(call, "error.type").is_none());
    for attempt in &client {
        assert_eq!(
            (attempt.trace_id, attempt.parent_id),
            (call.trace_id, Some(call.span_id))
        );
        assert_eq!(attempt.name, "POST");
        assert!(attempt.start >= call.start && attempt.end <= call.end);
    }
    assert_eq!(
        attribute(client[0], "http.response.status_code"),
        Some(&Value::Int(500))
    );
    assert_eq!(
        attribute(client[0], "error.type"),
        Some(&Value::Str("500".into()))
    );
    assert!(client[0].failed && !client[1].failed);
    assert_eq!(
        attribute(client[1], "http.request.resend_count"),
        Some(&Value::Int(1))
    );
    assert_eq!(
        attribute(client[1], "server.address"),
        Some(&Value::Str("api.openai.com".into()))
    );
    assert_eq!(attribute(client[1], "server.port"), Some(&Value::Int(443)));
    // Never the question.
    assert!(!format!("{spans:?}").contains("PLANTED"));
}

#[test]
fn a_refused_call_is_a_failed_span_without_attempts_and_off_makes_none() {
    let mut h = traced();
    spans(&mut h);
    h.send(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":""}}}),
    );
    let spans = spans(&mut h);
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert!(spans[0].failed);
    assert_eq!(spans[0].parent_id, None, "a trace of its own");
    assert!(attribute(&spans[0], "error.type").is_some());
    let mut off = Harness::ready("2025-11-25");
    off.call(1, "answer", json!({"query":"q"}));
    assert!(
        off.take_other()
            .iter()
            .all(|o| !matches!(o, Output::Span(_))),
        "traces off: no span"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_shared_store_round_trip_is_a_child_of_the_call_it_admits() {
    use crate::settings::{OnUnavailable, StoreSettings};
    use crate::store::{StoreOp, StoreReply};
    let config = ServerConfig {
        traces: Some(Sampler::AlwaysOn),
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        instance_limit: crate::clients::Limit {
            calls_per_minute: Some(10),
            spend_per_day: None,
        },
        ..Harness::keyed()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    spans(&mut h);
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"_meta":{"traceparent": TRACEPARENT}}}),
    );
    let reserve = h
        .take_other()
        .into_iter()
        .find_map(|o| match o {
            Output::Store(id, StoreOp::Reserve { .. }) => Some(id),
            _ => None,
        })
        .unwrap();
    h.advance(std::time::Duration::from_millis(3));
    let took = std::time::Duration::from_millis(3);
    let reply = StoreReply::Reserve {
        reached: 0,
        value: 0,
        held: 0,
    };
    h.feed(crate::Input::StoreReply {
        id: reserve,
        reply,
        took,
    });
    let attempt = h.take_http().remove(0).attempt;
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let spans = spans(&mut h);
    let call = spans.iter().find(|s| s.kind == SpanKind::Server).unwrap();
    let trip = spans.iter().find(|s| s.name == "EVAL").unwrap();
    assert_eq!(
        (trip.trace_id, trip.parent_id),
        (call.trace_id, Some(call.span_id))
    );
    assert_eq!(trip.end - trip.start, took);
    assert_eq!(
        attribute(trip, "db.system.name"),
        Some(&Value::Str("redis".into()))
    );
    assert!(!trip.failed);
}

/// `spans_dropped_total` is one count: the core's queue to the host and the host's
/// exporter (its queue, a failed or timed-out export) both add to it.
#[test]
fn spans_the_exporter_dropped_are_counted_with_the_cores() {
    let mut h = traced();
    let dropped = |h: &Harness| {
        let text = String::from_utf8(h.server.metrics_text()).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("openai_responses_mcp_spans_dropped_total "))
            .map(str::to_owned)
    };
    assert_eq!(dropped(&h).as_deref(), Some("0"));
    h.feed(crate::Input::SpansDropped(3));
    h.feed(crate::Input::SpansDropped(4));
    assert_eq!(dropped(&h).as_deref(), Some("7"));
    // The core's own drops: beyond its queue, while the host takes none.
    for _ in 0..crate::spans::MAX_QUEUED + 2 {
        h.server.tracer.end(Span {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_id: None,
            name: "x".into(),
            kind: SpanKind::Server,
            start: h.now.instant,
            end: h.now.instant,
            attributes: Vec::new(),
            failed: false,
        });
    }
    assert_eq!(dropped(&h).as_deref(), Some("9"));
}
