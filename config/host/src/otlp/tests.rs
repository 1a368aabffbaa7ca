use super::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue as Any, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, status, ResourceSpans, ScopeSpans, Status};
use prost::Message;
use std::time::{Duration, Instant};

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(Any { value: Some(value) }),
        ..KeyValue::default()
    }
}

/// What `opentelemetry-proto` holds for `spans` (as the exporter built before this
/// encoder), times counted in nanoseconds from `t0` at 1,000 s.
fn expected(
    resource: &[(String, String)],
    spans: &[Span],
    t0: Instant,
) -> ExportTraceServiceRequest {
    let nanos = |at: Instant| 1_000_000_000_000 + at.duration_since(t0).as_nanos() as u64;
    let spans = spans
        .iter()
        .map(|s| opentelemetry_proto::tonic::trace::v1::Span {
            trace_id: s.trace_id.to_vec(),
            span_id: s.span_id.to_vec(),
            parent_span_id: s.parent_id.map(|p| p.to_vec()).unwrap_or_default(),
            name: s.name.clone(),
            kind: match s.kind {
                SpanKind::Server => span::SpanKind::Server,
                SpanKind::Client => span::SpanKind::Client,
            } as i32,
            start_time_unix_nano: nanos(s.start),
            end_time_unix_nano: nanos(s.end),
            attributes: s
                .attributes
                .iter()
                .map(|(k, v)| {
                    kv(
                        k,
                        match v {
                            Value::Str(s) => any_value::Value::StringValue(s.clone()),
                            Value::Int(i) => any_value::Value::IntValue(*i),
                            Value::Float(f) => any_value::Value::DoubleValue(*f),
                        },
                    )
                })
                .collect(),
            status: Some(Status {
                code: if s.failed {
                    status::StatusCode::Error
                } else {
                    status::StatusCode::Unset
                } as i32,
                ..Status::default()
            }),
            ..Default::default()
        })
        .collect();
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: resource
                    .iter()
                    .map(|(k, v)| kv(k, any_value::Value::StringValue(v.clone())))
                    .collect(),
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "scope".into(),
                    version: "1.2.3".into(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

fn span(
    t0: Instant,
    name: &str,
    parent: Option<[u8; 8]>,
    attributes: Vec<(&'static str, Value)>,
    failed: bool,
) -> Span {
    Span {
        trace_id: [0xA5; 16],
        span_id: [7, 0, 0, 0, 0, 0, 0, 1],
        parent_id: parent,
        name: name.into(),
        kind: if parent.is_some() {
            SpanKind::Client
        } else {
            SpanKind::Server
        },
        start: t0 + Duration::from_micros(5),
        end: t0 + Duration::from_secs(90_000),
        attributes,
        failed,
    }
}

#[test]
fn what_it_writes_reads_back_as_the_official_messages_hold_it() {
    let t0 = Instant::now();
    let long = "x".repeat(300);
    let spans = vec![
        span(
            t0,
            "tools/call answer",
            None,
            vec![
                ("mcp.method.name", Value::Str("tools/call".into())),
                ("jsonrpc.request.id", Value::Str(String::new())),
                ("gen_ai.usage.input_tokens", Value::Int(0)),
                ("gen_ai.usage.output_tokens", Value::Int(1 << 40)),
                ("negative", Value::Int(-3)),
                ("openai_responses_mcp.cost_usd", Value::Float(0.0125)),
                ("zero", Value::Float(0.0)),
                ("long", Value::Str(long.clone())),
            ],
            false,
        ),
        span(
            t0,
            "POST",
            Some([9; 8]),
            vec![("error.type", Value::Str("timeout".into()))],
            true,
        ),
        span(t0, "", Some([1; 8]), Vec::new(), false),
    ];
    let resource = vec![
        ("service.name".to_owned(), "openai-responses-mcp".to_owned()),
        ("service.version".to_owned(), String::new()),
        ("k".to_owned(), long),
    ];
    let source = Source {
        resource: &resource,
        scope: ("scope", "1.2.3"),
    };
    let nanos = |at: Instant| 1_000_000_000_000 + at.duration_since(t0).as_nanos() as u64;
    let bytes = encode(&source, &spans, nanos);
    let want = expected(&resource, &spans, t0);
    assert_eq!(ExportTraceServiceRequest::decode(&bytes[..]).unwrap(), want);
    // Field for field as prost writes them, so even the lengths agree.
    assert_eq!(bytes, want.encode_to_vec());
    // No span: the resource and the scope alone.
    let empty = encode(&source, &[], nanos);
    assert_eq!(empty, expected(&resource, &[], t0).encode_to_vec());
}

#[test]
fn varints_take_as_many_bytes_as_their_value_needs() {
    for (v, n) in [
        (0u64, 1),
        (127, 1),
        (128, 2),
        (16_383, 2),
        (16_384, 3),
        (u64::MAX, 10),
    ] {
        let mut out = Vec::new();
        varint(&mut out, v);
        assert_eq!((out.len(), varint_len(v)), (n, n), "{v}");
    }
}
