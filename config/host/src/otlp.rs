//! OTLP's `ExportTraceServiceRequest` written straight from the core's spans: protobuf by
//! hand, each message's length computed before it is written, one allocation a batch.
//! Building `opentelemetry-proto`'s messages first and encoding them with `prost` cost a
//! quarter of a call's instructions with traces on (a copy of every string and id, and
//! every nested message's length computed again at each level above it;
//! docs/benchmarks.md, issue 50). The field numbers are OTLP's
//! (`opentelemetry/proto/trace/v1/trace.proto`, `common/v1/common.proto`); a test reads the
//! bytes back with `opentelemetry-proto`. The helpers are inlined by hand: this crate is
//! built for size, and a call each for a byte or two was most of the encoder's cost.

use responses_mcp_core::spans::{Span, SpanKind, Value};

/// The wire types this encoder writes.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// What describes the spans' source: the resource's attributes and the scope.
pub struct Source<'a> {
    /// The resource's attributes (`service.name`, ...).
    pub resource: &'a [(String, String)],
    /// The instrumentation scope's name and version.
    pub scope: (&'a str, &'a str),
}

/// One `ExportTraceServiceRequest` holding `spans`, their times made Unix nanoseconds by
/// `nanos`.
pub fn encode(
    source: &Source,
    spans: &[Span],
    nanos: impl Fn(std::time::Instant) -> u64,
) -> Vec<u8> {
    let times: Vec<(u64, u64)> = spans
        .iter()
        .map(|s| (nanos(s.start), nanos(s.end)))
        .collect();
    let resource_len: usize = source
        .resource
        .iter()
        .map(|(k, v)| nested(key_value_len(k, any_value_len(&AnyValue::Str(v)))))
        .sum();
    let scope_len = bytes_len(source.scope.0.len()) + bytes_len(source.scope.1.len());
    let span_lens: Vec<usize> = spans
        .iter()
        .zip(&times)
        .map(|(s, t)| span_len(s, *t))
        .collect();
    let scope_spans_len = nested(scope_len) + span_lens.iter().map(|l| nested(*l)).sum::<usize>();
    let resource_spans_len = nested(resource_len) + nested(scope_spans_len);
    let mut out = Vec::with_capacity(nested(resource_spans_len));
    // ExportTraceServiceRequest.resource_spans (1)
    message(&mut out, 1, resource_spans_len);
    // ResourceSpans.resource (1): Resource.attributes (1)
    message(&mut out, 1, resource_len);
    for (key, value) in source.resource {
        key_value(&mut out, 1, key, &AnyValue::Str(value));
    }
    // ResourceSpans.scope_spans (2)
    message(&mut out, 2, scope_spans_len);
    // ScopeSpans.scope (1): InstrumentationScope.name (1), version (2)
    message(&mut out, 1, scope_len);
    bytes(&mut out, 1, source.scope.0.as_bytes());
    bytes(&mut out, 2, source.scope.1.as_bytes());
    // ScopeSpans.spans (2)
    for ((span, times), len) in spans.iter().zip(times).zip(span_lens) {
        message(&mut out, 2, len);
        write_span(&mut out, span, times);
    }
    out
}

/// An attribute's value as `AnyValue` holds it.
enum AnyValue<'a> {
    Str(&'a str),
    Int(i64),
    Float(f64),
}

impl<'a> From<&'a Value> for AnyValue<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Str(s) => AnyValue::Str(s),
            Value::Int(i) => AnyValue::Int(*i),
            Value::Float(f) => AnyValue::Float(*f),
        }
    }
}

/// `Span.kind`: `SPAN_KIND_SERVER` 2, `SPAN_KIND_CLIENT` 3.
fn kind(kind: SpanKind) -> u64 {
    match kind {
        SpanKind::Server => 2,
        SpanKind::Client => 3,
    }
}

/// `Status.code`: `STATUS_CODE_ERROR` 2, else `STATUS_CODE_UNSET` 0 (not written).
fn status_len(failed: bool) -> usize {
    if failed {
        2
    } else {
        0
    }
}

fn span_len(span: &Span, (start, end): (u64, u64)) -> usize {
    let parent = span.parent_id.map_or(0, |p| bytes_len(p.len()));
    bytes_len(span.trace_id.len())
        + bytes_len(span.span_id.len())
        + parent
        + bytes_len(span.name.len())
        + 1
        + varint_len(kind(span.kind))
        + fixed64_len(start)
        + fixed64_len(end)
        + span
            .attributes
            .iter()
            .map(|(k, v)| nested(key_value_len(k, any_value_len(&v.into()))))
            .sum::<usize>()
        + nested(status_len(span.failed))
}

/// A span's fields in field order: ids (1, 2, 4), name (5), kind (6), times (7, 8),
/// attributes (9), status (15).
fn write_span(out: &mut Vec<u8>, span: &Span, (start, end): (u64, u64)) {
    bytes(out, 1, &span.trace_id);
    bytes(out, 2, &span.span_id);
    if let Some(parent) = &span.parent_id {
        bytes(out, 4, parent);
    }
    bytes(out, 5, span.name.as_bytes());
    key(out, 6, VARINT);
    varint(out, kind(span.kind));
    fixed64(out, 7, start);
    fixed64(out, 8, end);
    for (name, value) in &span.attributes {
        key_value(out, 9, name, &value.into());
    }
    message(out, 15, status_len(span.failed));
    if span.failed {
        key(out, 3, VARINT);
        varint(out, 2);
    }
}

/// `AnyValue`'s one field: `string_value` (1), `int_value` (3), `double_value` (4),
/// written even when zero or empty (a `oneof`).
fn any_value_len(value: &AnyValue) -> usize {
    match value {
        AnyValue::Str(s) => nested(s.len()),
        // An int64 is its two's complement as a varint.
        AnyValue::Int(i) => 1 + varint_len(*i as u64),
        AnyValue::Float(_) => 1 + 8,
    }
}

fn key_value_len(key: &str, value_len: usize) -> usize {
    bytes_len(key.len()) + nested(value_len)
}

/// A `KeyValue` as field `field`: `key` (1), `value` (2).
fn key_value(out: &mut Vec<u8>, field: u32, name: &str, value: &AnyValue) {
    let value_len = any_value_len(value);
    message(out, field, key_value_len(name, value_len));
    bytes(out, 1, name.as_bytes());
    message(out, 2, value_len);
    match value {
        AnyValue::Str(s) => {
            key(out, 1, LEN);
            varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        AnyValue::Int(i) => {
            key(out, 3, VARINT);
            varint(out, *i as u64);
        }
        AnyValue::Float(f) => {
            key(out, 4, FIXED64);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
    }
}

/// A length-delimited field of `len` bytes, always written: its key (one byte: every
/// field number here is below 16), its length, then it.
#[inline(always)]
fn nested(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// A length-delimited field of `len` bytes, nothing when empty (proto3 leaves defaults out).
#[inline(always)]
fn bytes_len(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        nested(len)
    }
}

#[inline(always)]
fn fixed64_len(v: u64) -> usize {
    if v == 0 {
        0
    } else {
        1 + 8
    }
}

#[inline(always)]
fn varint_len(v: u64) -> usize {
    // 7 bits a byte; at least one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline(always)]
fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

#[inline(always)]
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A nested message's key and length; its fields follow.
#[inline(always)]
fn message(out: &mut Vec<u8>, field: u32, len: usize) {
    key(out, field, LEN);
    varint(out, len as u64);
}

/// A length-delimited field, left out when empty.
#[inline(always)]
fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    message(out, field, data.len());
    out.extend_from_slice(data);
}

#[inline(always)]
fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    if v == 0 {
        return;
    }
    key(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests;
