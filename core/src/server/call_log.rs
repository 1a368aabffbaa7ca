//! The line each finished `tools/call` leaves in the log: what a platform team greps,
//! ships to its log store and joins to its traces. One JSON object, logged at info level
//! under [`CALL_LOG_TARGET`], which the runtimes print as it is with `--log-format json`.
//!
//! What it holds is bounded and harmless: names, counts, durations, ids OpenAI gave, the
//! client's trace. Never the query, the answer, a key or a token.

use super::routing::ReplyTo;
use crate::calls::Report;
use crate::mcp::trace::{Hex, TraceParent};
use crate::mcp::ProtocolVersion;
use crate::openai::pricing::Estimate;
use crate::tools::Tool;
use serde::Serialize;

/// The `log` target of the per-call lines.
pub const CALL_LOG_TARGET: &str = "responses_mcp_core::call";

/// How a call ended, as the log line and the metrics name it: `ok`, or a short reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An answer.
    Ok,
    /// The upstream call failed: its kind (`http_error`, `timeout`, …).
    Upstream(&'static str),
    /// Refused before any upstream request: why (`busy`, `draining`, `no_api_key`, …).
    Refused(&'static str),
}

impl Outcome {
    /// The label: `ok`, `upstream_<kind>` or `refused_<why>`.
    pub fn label(self) -> String {
        match self {
            Outcome::Ok => "ok".into(),
            Outcome::Upstream(kind) => format!("upstream_{kind}"),
            Outcome::Refused(why) => format!("refused_{why}"),
        }
    }
}

/// Everything one line says, gathered where the call ends.
pub(super) struct CallLine<'a> {
    pub unix_secs: u64,
    pub tool: Tool,
    pub version: ProtocolVersion,
    pub reply_to: ReplyTo,
    pub client: &'a str,
    pub task: bool,
    pub outcome: Outcome,
    pub report: Option<&'a Report>,
    pub model: Option<&'a str>,
    pub cost: Option<&'a Estimate>,
    pub trace: Option<(TraceParent, [u8; 8])>,
}

#[derive(Serialize)]
struct Line<'a> {
    time: String,
    event: &'static str,
    tool: &'static str,
    era: &'static str,
    protocol_version: &'static str,
    transport: &'static str,
    client: &'a str,
    task: bool,
    outcome: String,
    duration_ms: u64,
    attempts: u32,
    upstream_status: Option<u16>,
    model: Option<&'a str>,
    input_tokens: u64,
    cached_input_tokens: u64,
    cache_write_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
    web_searches: u32,
    cost_usd: Option<f64>,
    response_id: Option<&'a str>,
    request_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    span_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_span_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    traceparent: Option<String>,
}

impl CallLine<'_> {
    /// Logs the line (nothing is built unless info is enabled for the target).
    pub(super) fn emit(&self) {
        if !log::log_enabled!(target: CALL_LOG_TARGET, log::Level::Info) {
            return;
        }
        let usage = self.report.and_then(|r| r.usage.as_ref());
        let line = Line {
            time: crate::date::iso_utc(self.unix_secs),
            event: "call",
            tool: self.tool.name(),
            era: if self.version.is_modern() {
                "modern"
            } else {
                "legacy"
            },
            protocol_version: self.version.as_str(),
            transport: match self.reply_to {
                ReplyTo::Exchange(_) => "http",
                ReplyTo::Direct | ReplyTo::Batch { .. } => "stdio",
            },
            client: self.client,
            task: self.task,
            outcome: self.outcome.label(),
            duration_ms: self
                .report
                .map_or(0, |r| u64::try_from(r.wall.as_millis()).unwrap_or(u64::MAX)),
            attempts: self.report.map_or(0, |r| r.attempts),
            upstream_status: self.report.and_then(|r| r.upstream.status),
            model: self.model,
            input_tokens: usage.map_or(0, |u| u.input_tokens),
            cached_input_tokens: usage.map_or(0, |u| u.cached_input_tokens),
            cache_write_tokens: usage.map_or(0, |u| u.cache_write_tokens),
            output_tokens: usage.map_or(0, |u| u.output_tokens),
            reasoning_tokens: usage.map_or(0, |u| u.reasoning_tokens),
            web_searches: usage.map_or(0, |u| u.web_searches),
            cost_usd: self
                .cost
                .and_then(Estimate::total)
                .map(crate::openai::pricing::Picodollars::usd),
            response_id: usage.and_then(|u| u.response_id.as_deref()),
            request_id: self.report.and_then(|r| r.upstream.request_id.as_deref()),
            trace_id: self.trace.map(|(t, _)| Hex(&t.trace_id).to_string()),
            span_id: self.trace.map(|(_, span)| Hex(&span).to_string()),
            parent_span_id: self.trace.map(|(t, _)| Hex(&t.parent_id).to_string()),
            traceparent: self.trace.map(|(t, span)| t.child(span).to_string()),
        };
        match serde_json::to_string(&line) {
            Ok(text) => log::info!(target: CALL_LOG_TARGET, "{text}"),
            Err(e) => log::warn!("the call's log line did not serialise: {e}"),
        }
    }
}

/// A span id for the next call: a 64-bit mix of the server's seed and a counter
/// (splitmix64), never zero, as W3C requires.
pub(super) fn span_id(seed: u64, counter: u64) -> [u8; 8] {
    let mut z = seed.wrapping_add(counter.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z == 0 {
        z = 1;
    }
    z.to_be_bytes()
}
