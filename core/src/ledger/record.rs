//! The record each finished `tools/call` leaves: what a platform team greps, ships to its
//! log store and joins to its traces. The core hands it out as data
//! ([`crate::Poll::Record`]); the runtimes write it as one JSON line, at info level under
//! [`CALL_LOG_TARGET`], printed as it is with `--log-format json`.
//!
//! What it holds is bounded and harmless: names, counts, durations, ids OpenAI gave, the
//! client's trace. Never the query, the answer, a key or a token.

use crate::mcp::ProtocolVersion;
use crate::openai::pricing::Picodollars;
use crate::openai::Usage;
use crate::outcome::Outcome;
use crate::serve::exchange::Credential;
use crate::tools::Tool;
use crate::trace_context::{Hex, TraceParent};
use serde::Serialize;
use std::time::Duration;

/// The `log` target of the per-call lines.
pub const CALL_LOG_TARGET: &str = "responses_mcp_core::call";

/// How a request reached the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Standard input and output.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl Transport {
    /// `network.transport`, as the MCP semantic conventions name it: `pipe` or `tcp`.
    pub fn network(self) -> &'static str {
        match self {
            Transport::Stdio => "pipe",
            Transport::Http => "tcp",
        }
    }

    /// The call log's `transport`: `stdio` or `http`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// Where a call came from, as its log line says: the application calling, its address
/// and the credential it was admitted with. Bounded: an application's name and version
/// are cut to `MAX_APP` (64) characters (they are the client's own words).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// `clientInfo.name`, from `initialize` (stdio) or a 2026-07-28 request's `_meta`.
    pub app: Option<String>,
    /// `clientInfo.version`, likewise.
    pub app_version: Option<String>,
    /// The client's address (HTTP): the peer's, or the one a trusted proxy forwarded.
    pub remote: Option<std::net::IpAddr>,
    /// How it was admitted.
    pub credential: Credential,
}

/// Most characters of an application's name or version a log line keeps.
pub const MAX_APP: usize = 64;

impl Arrival {
    /// `clientInfo` (an MCP `Implementation`) as the arrival's application: its name and
    /// version when they are strings, cut to `MAX_APP` characters, control characters
    /// dropped.
    pub fn with_app(mut self, info: Option<&serde_json::Value>) -> Arrival {
        let field = |key: &str| {
            info.and_then(|i| i.get(key))
                .and_then(serde_json::Value::as_str)
                .map(|s| {
                    s.chars()
                        .filter(|c| !c.is_control())
                        .take(MAX_APP)
                        .collect::<String>()
                })
        };
        self.app = field("name");
        self.app_version = field("version");
        self
    }
}

/// One finished call, as its log line says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// When it ended, Unix seconds.
    pub unix_secs: u64,
    /// The tool called.
    pub tool: Tool,
    /// The request's protocol version.
    pub version: ProtocolVersion,
    /// How the request came.
    pub transport: Transport,
    /// The client's name.
    pub client: String,
    /// Whether it ran as a task.
    pub task: bool,
    /// How it ended.
    pub outcome: Outcome,
    /// From admission to its end (a background task: from its creation).
    pub duration: Duration,
    /// Upstream attempts made.
    pub attempts: u32,
    /// The last upstream reply's status.
    pub upstream_status: Option<u16>,
    /// The model that answered, or the one that was to.
    pub model: Option<String>,
    /// What OpenAI reported the call used.
    pub usage: Option<Usage>,
    /// The estimated cost, when the model has a price.
    pub cost: Option<Picodollars>,
    /// The usage is this server's estimate (a cancelled call OpenAI had not yet
    /// reported), not OpenAI's.
    pub usage_estimated: bool,
    /// OpenAI's request id of the last reply.
    pub request_id: Option<String>,
    /// The client's trace and this call's span in it.
    pub trace: Option<(TraceParent, [u8; 8])>,
    /// The application, address and credential it came with (boxed: the record travels
    /// in an output enum whose other variants are small).
    pub arrival: Box<Arrival>,
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
    app: Option<&'a str>,
    app_version: Option<&'a str>,
    remote: Option<String>,
    credential: &'static str,
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
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    usage_estimated: bool,
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

impl CallRecord {
    /// The record as one line of compact JSON.
    pub fn to_json(&self) -> String {
        let usage = self.usage.as_ref();
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
            transport: self.transport.name(),
            client: &self.client,
            app: self.arrival.app.as_deref(),
            app_version: self.arrival.app_version.as_deref(),
            remote: self.arrival.remote.map(|a| a.to_string()),
            credential: self.arrival.credential.name(),
            task: self.task,
            outcome: self.outcome.label(),
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            attempts: self.attempts,
            upstream_status: self.upstream_status,
            model: self.model.as_deref(),
            input_tokens: usage.map_or(0, |u| u.input_tokens),
            cached_input_tokens: usage.map_or(0, |u| u.cached_input_tokens),
            cache_write_tokens: usage.map_or(0, |u| u.cache_write_tokens),
            output_tokens: usage.map_or(0, |u| u.output_tokens),
            reasoning_tokens: usage.map_or(0, |u| u.reasoning_tokens),
            web_searches: usage.map_or(0, |u| u.web_searches),
            cost_usd: self.cost.map(Picodollars::usd),
            usage_estimated: self.usage_estimated,
            response_id: usage.and_then(|u| u.response_id.as_deref()),
            request_id: self.request_id.as_deref(),
            trace_id: self.trace.map(|(t, _)| Hex(&t.trace_id).to_string()),
            span_id: self.trace.map(|(_, span)| Hex(&span).to_string()),
            parent_span_id: self.trace.map(|(t, _)| Hex(&t.parent_id).to_string()),
            traceparent: self.trace.map(|(t, span)| t.child(span).to_string()),
        };
        // Strings, numbers and options of them always serialise.
        serde_json::to_string(&line).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn the_line_names_the_application_the_address_and_the_way_in() {
        let long = "x".repeat(MAX_APP + 10);
        let info = json!({"name": format!("app\u{1b}[31m{long}"), "version": 7});
        let arrival = Arrival {
            remote: Some("203.0.113.7".parse().unwrap()),
            credential: Credential::Gateway,
            ..Arrival::default()
        }
        .with_app(Some(&info));
        let app = arrival.app.clone().unwrap();
        assert_eq!(app.chars().count(), MAX_APP);
        assert!(!app.contains('\u{1b}'), "control characters dropped: {app}");
        assert_eq!(arrival.app_version, None, "a version that is no string");
        let record = CallRecord {
            unix_secs: 0,
            tool: Tool::Answer,
            version: ProtocolVersion::V2025_11_25,
            transport: Transport::Http,
            client: "x-forwarded-user:alice".into(),
            task: false,
            outcome: Outcome::Ok,
            duration: Duration::ZERO,
            attempts: 1,
            upstream_status: None,
            model: None,
            usage: None,
            cost: None,
            usage_estimated: false,
            request_id: None,
            trace: None,
            arrival: Box::new(arrival),
        };
        let line: Value = serde_json::from_str(&record.to_json()).unwrap();
        assert_eq!(line["app"], json!(app));
        assert_eq!(line["app_version"], Value::Null);
        assert_eq!(line["remote"], "203.0.113.7");
        assert_eq!(line["credential"], "gateway");
        let stdio: Value = serde_json::from_str(
            &CallRecord {
                arrival: Box::default(),
                ..record
            }
            .to_json(),
        )
        .unwrap();
        assert_eq!(
            (&stdio["remote"], &stdio["credential"]),
            (&Value::Null, &json!("none"))
        );
    }
}
