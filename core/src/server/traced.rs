//! The spans the server makes ([`crate::spans`]), named and described as the OpenTelemetry
//! conventions say: the MCP ones for a request (`mcp.method.name`, `gen_ai.tool.name`,
//! `error.type`, …), the HTTP client ones for an upstream attempt, the database ones for
//! a store round trip. Plain functions of what the server already knows; no secret or
//! content goes into an attribute.
//!
//! Sources, read 2026-11-28: the MCP conventions (`open-telemetry/semantic-conventions-genai`,
//! `docs/gen-ai/mcp.md` and `model/mcp/spans.yaml`, status Development: span name
//! `{mcp.method.name} {target}`, `_meta` propagation), the HTTP client span and the
//! database span conventions of `open-telemetry/semantic-conventions`.

use crate::calls::AttemptTrace;
use crate::jsonrpc::RequestId;
use crate::metrics::{ErrorType, Operation};
use crate::routing::Context;
use crate::spans::{Span, SpanKind, SpanStart, Tracer, Value};
use std::time::Instant;

/// The span of a request answered at `end`, as `op` describes its reply; `extra` adds
/// what a call used.
pub(super) fn request(
    start: &SpanStart,
    (op, id): (&Operation, &RequestId),
    end: Instant,
    extra: Vec<(&'static str, Value)>,
) -> Span {
    let name = match op.tool {
        Some(tool) => format!("{} {tool}", op.method),
        None => op.method.to_owned(),
    };
    let mut attributes = vec![
        ("mcp.method.name", Value::Str(op.method.to_owned())),
        ("jsonrpc.request.id", request_id(id)),
    ];
    if let Some(tool) = op.tool {
        attributes.push(("gen_ai.tool.name", Value::Str(tool.to_owned())));
        attributes.push(("gen_ai.operation.name", Value::Str("execute_tool".into())));
    }
    if !op.version.is_empty() {
        attributes.push(("mcp.protocol.version", Value::Str(op.version.to_owned())));
    }
    attributes.push(("network.transport", Value::Str(op.transport.to_owned())));
    if let Some(error) = op.error {
        let error = match error {
            ErrorType::Tool => "tool_error".to_owned(),
            ErrorType::Rpc(code) => code.to_string(),
            ErrorType::Cancelled => "cancelled".to_owned(),
        };
        attributes.push(("error.type", Value::Str(error)));
    }
    attributes.extend(extra);
    start.ended(
        (name, SpanKind::Server),
        end,
        attributes,
        op.error.is_some(),
    )
}

/// `jsonrpc.request.id`: the id as the client sent it, cut at 64 bytes (the client picks
/// it, and a span is no place for a megabyte).
fn request_id(id: &RequestId) -> Value {
    let text = match id {
        RequestId::Int(text) | RequestId::Str(text) => text.as_str(),
    };
    let mut end = text.len().min(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Value::Str(text[..end].to_owned())
}

/// What a finished call used, for its request's span: the models, the tokens, the web
/// searches and the estimated cost.
pub(super) fn call_usage(
    outcome: &Result<crate::openai::Answer, crate::openai::UpstreamFailure>,
    report: &crate::openai::Report,
    cost: &crate::openai::pricing::Estimate,
) -> Vec<(&'static str, Value)> {
    let mut attributes = Vec::new();
    if !report.model.model.is_empty() {
        let model = Value::Str(report.model.model.clone());
        attributes.push(("gen_ai.request.model", model));
    }
    if let Ok(answer) = outcome {
        attributes.push(("gen_ai.response.model", Value::Str(answer.model.clone())));
    }
    if let Some(usage) = &report.usage {
        let count = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        attributes.push(("gen_ai.usage.input_tokens", count(usage.input_tokens)));
        attributes.push(("gen_ai.usage.output_tokens", count(usage.output_tokens)));
        let searches = u64::from(usage.web_searches);
        attributes.push(("openai_responses_mcp.web_searches", count(searches)));
    }
    if let Some(total) = cost.total() {
        attributes.push(("openai_responses_mcp.cost_usd", Value::Float(total.usd())));
    }
    attributes.push((
        "openai_responses_mcp.attempts",
        Value::Int(i64::from(report.attempts)),
    ));
    attributes
}

/// The span of one upstream attempt, a child of `parent`.
pub(super) fn attempt(span: &SpanStart, attempt: &AttemptTrace) -> Span {
    let method = attempt.method.as_str();
    let mut attributes = vec![("http.request.method", Value::Str(method.into()))];
    if let Some((host, port)) = crate::http::host_and_port(&attempt.url) {
        attributes.push(("server.address", Value::Str(host.to_owned())));
        attributes.push(("server.port", Value::Int(i64::from(port))));
    }
    if let Some(status) = attempt.status {
        attributes.push(("http.response.status_code", Value::Int(i64::from(status))));
    }
    if attempt.resend > 0 {
        let resend = Value::Int(i64::from(attempt.resend));
        attributes.push(("http.request.resend_count", resend));
    }
    let error = match (attempt.failure, attempt.status) {
        (Some(failure), _) => Some(failure.to_owned()),
        (None, Some(status)) if status >= 400 => Some(status.to_string()),
        _ => None,
    };
    let failed = error.is_some();
    if let Some(error) = error {
        attributes.push(("error.type", Value::Str(error)));
    }
    let name = (method.to_owned(), SpanKind::Client);
    SpanStart {
        start: attempt.started,
        ..*span
    }
    .ended(name, attempt.ended, attributes, failed)
}

/// Ends the span of an upstream `attempt` made for `context`: a call's attempts continue
/// its request's trace; the identity provider's fetches serve every request, so each is
/// a trace of its own. Model lookups are not traced.
pub(super) fn attempted(tracer: &mut Tracer, context: &Context, attempt: &AttemptTrace) {
    let parent = match context {
        Context::Call(call) => call.ticket.span,
        Context::Background(job) => job.span(),
        Context::Identity | Context::Lookup(_) => None,
    };
    let span = match (parent, context) {
        (Some(parent), _) => Some(tracer.child(&parent, attempt.started)),
        (None, Context::Identity) => tracer.begin(None, attempt.started),
        (None, _) => None,
    };
    if let Some(span) = span {
        tracer.end(self::attempt(&span, attempt));
    }
}

/// The span of a round trip to the shared store for a call's admission.
pub(super) fn store_round_trip(span: &SpanStart, end: Instant, failed: bool) -> Span {
    let attributes = vec![
        ("db.system.name", Value::Str("redis".into())),
        ("db.operation.name", Value::Str("EVAL".into())),
    ];
    span.ended(("EVAL".into(), SpanKind::Client), end, attributes, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_is_its_text_cut_at_64_bytes_on_a_character() {
        let of = |id: RequestId| match request_id(&id) {
            Value::Str(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(of(RequestId::Int("42".into())), "42");
        assert_eq!(of(RequestId::Str("a\"b".into())), "a\"b");
        // 63 ASCII bytes, then a two-byte character across the 64th: cut before it.
        let long = format!("{}é{}", "x".repeat(63), "y".repeat(1000));
        assert_eq!(of(RequestId::Str(long)), "x".repeat(63));
    }
}
