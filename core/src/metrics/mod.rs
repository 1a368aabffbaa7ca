//! What `GET /metrics` reports, in the Prometheus text exposition format (0.0.4).
//!
//! The MCP figures follow the OpenTelemetry MCP semantic conventions
//! (`open-telemetry/semantic-conventions-genai`, `docs/gen-ai/mcp.md`, status Development;
//! the version read on 2026-11-26, the same as the `mcpconv` package of semantic
//! conventions v1.39.0): `mcp.server.operation.duration`, a histogram in seconds with the
//! recommended boundaries [`DURATION_BOUNDS`], labelled `mcp.method.name`,
//! `gen_ai.tool.name`, `error.type` (`tool_error` for a result with `isError`, the
//! JSON-RPC error code otherwise), `network.transport` (`pipe` for stdio, `tcp` for HTTP)
//! and `mcp.protocol.version`; dots become underscores and the unit a `_seconds` suffix,
//! as OpenTelemetry's Prometheus exporter names them. The others are ours, prefixed
//! `openai_responses_mcp_`.
//!
//! Every label value comes from a closed set (method and tool names, outcomes, statuses)
//! or is capped ([`MAX_MODELS`] models, the rest counted as `_OTHER`): no query, id or
//! other unbounded text becomes a series.

mod health;
mod render;
mod text;

use crate::openai::pricing::{Estimate, Picodollars};
use crate::openai::Usage;
pub use crate::outcome::{Outcome, Refusal};
pub use render::Gauges;
use std::time::Duration;
pub use text::Exposition;

/// The boundaries the conventions recommend for MCP durations, in seconds.
pub const DURATION_BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Distinct model names kept as label values; later ones are counted as `_OTHER` (the
/// model names come from upstream replies).
pub const MAX_MODELS: usize = 32;

/// The label value of everything past a cap, as OpenTelemetry spells it.
pub const OTHER: &str = "_OTHER";

/// A histogram over [`DURATION_BOUNDS`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Observations at or below each bound (not cumulative; summed when written).
    buckets: [u64; DURATION_BOUNDS.len()],
    /// Observations above the last bound.
    over: u64,
    sum: f64,
    count: u64,
}

impl Histogram {
    /// Counts one observation of `seconds`.
    pub fn observe(&mut self, seconds: f64) {
        match DURATION_BOUNDS.iter().position(|&b| seconds <= b) {
            Some(i) => self.buckets[i] += 1,
            None => self.over += 1,
        }
        self.sum += seconds;
        self.count += 1;
    }
}

/// The labels of one `mcp.server.operation.duration` series.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// `mcp.method.name` (a known method, or `_OTHER`).
    pub method: &'static str,
    /// `gen_ai.tool.name`, for `tools/call` of a known tool.
    pub tool: Option<&'static str>,
    /// `error.type`, when the operation failed.
    pub error: Option<ErrorType>,
    /// `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
    /// `mcp.protocol.version` (empty before one is negotiated).
    pub version: &'static str,
}

/// `error.type` of a failed operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// A tool result with `isError: true`.
    Tool,
    /// A JSON-RPC error, by code.
    Rpc(i32),
    /// No reply: the client cancelled the request or went away.
    Cancelled,
}

/// One upstream attempt's end, as `openai_responses_mcp_upstream_attempts_total` labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptEnd {
    /// A reply with this HTTP status.
    Status(u16),
    /// No reply: the transport failure's kind (`timeout`, `connect`, `tls`, …).
    Transport(&'static str),
}

/// Values by key, in the order keys first came: the sets are small (bounded labels), so
/// a scan beats a map, and one small generic keeps the binary small.
pub type Tally<K, V> = Vec<(K, V)>;

/// The value of `key` in `tally`, added as the default when new.
pub fn entry<K: PartialEq, V: Default>(tally: &mut Tally<K, V>, key: K) -> &mut V {
    let i = match tally.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            tally.push((key, V::default()));
            tally.len() - 1
        }
    };
    &mut tally[i].1
}

/// The value of the key `is` picks, added (made by `make`) as the default when new: no
/// key is built for a lookup that finds one.
pub fn entry_by<K, V: Default>(
    tally: &mut Tally<K, V>,
    is: impl Fn(&K) -> bool,
    make: impl FnOnce() -> K,
) -> &mut V {
    let i = match tally.iter().position(|(k, _)| is(k)) {
        Some(i) => i,
        None => {
            tally.push((make(), V::default()));
            tally.len() - 1
        }
    };
    &mut tally[i].1
}

/// Everything counted since the start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    operations: Tally<Operation, Histogram>,
    /// Input, cached input, output and reasoning tokens and web searches, by model.
    usage: Tally<String, [u64; 5]>,
    /// Estimated cost by model and client.
    cost: Tally<(String, String), Picodollars>,
    /// Calls refused before any upstream request, by reason.
    refusals: Tally<Refusal, u64>,
    /// Calls that ended, by tool, client and outcome.
    calls: Tally<(&'static str, String, Outcome), u64>,
    /// The shared store's answers: how long each took, and how many failed.
    store: Option<(Histogram, u64)>,
    /// Shared tasks this instance's reads found orphaned and ended.
    tasks_orphaned: u64,
    /// Estimated spend by client on the UTC day it was last counted (the day's number
    /// since the epoch), as the daily limits count it.
    today: Tally<String, (u64, Picodollars)>,
    /// Requests whose identity header came from a peer that is not a trusted proxy.
    identity_headers_ignored: u64,
}

impl Metrics {
    /// Counts a request whose identity header was ignored: its peer is not trusted.
    pub fn identity_header_ignored(&mut self) {
        self.identity_headers_ignored = self.identity_headers_ignored.saturating_add(1);
    }

    /// Counts an operation that took `took`.
    pub fn operation(&mut self, op: Operation, took: Duration) {
        entry(&mut self.operations, op).observe(took.as_secs_f64());
    }

    /// Counts a finished call of `tool` by `client` with `outcome`.
    pub fn call(&mut self, tool: &'static str, client: &str, outcome: Outcome) {
        *entry_by(
            &mut self.calls,
            |(t, c, o)| *t == tool && c == client && *o == outcome,
            || (tool, client.to_owned(), outcome),
        ) += 1;
    }

    /// `amount` spent by `client` at `now` (Unix seconds), on that UTC day.
    pub fn spent_today(&mut self, client: &str, now: u64, amount: Picodollars) {
        let day = now / crate::clients::DAY;
        let spent = entry_by(&mut self.today, |c| c == client, || client.to_owned());
        if spent.0 != day {
            *spent = (day, Picodollars::default());
        }
        spent.1 = spent.1.plus(amount);
    }

    /// `amount` counted for `client` at `at` given back (a background run's hold settled
    /// at its end); nothing once that UTC day is over here.
    pub fn unspent_today(&mut self, client: &str, at: u64, amount: Picodollars) {
        let day = at / crate::clients::DAY;
        if let Some((_, spent)) = self.today.iter_mut().find(|(c, _)| c == client) {
            if spent.0 == day {
                spent.1 = spent.1.minus(amount);
            }
        }
    }

    /// Counts a store operation that took `took`, and whether it failed.
    pub fn store(&mut self, took: Duration, failed: bool) {
        let (times, errors) = self.store.get_or_insert_with(Default::default);
        times.observe(took.as_secs_f64());
        *errors += u64::from(failed);
    }

    /// Counts a shared task a read of this instance ended as an orphan.
    pub fn task_orphaned(&mut self) {
        self.tasks_orphaned += 1;
    }

    /// Counts a refusal.
    pub fn refusal(&mut self, reason: Refusal) {
        *entry(&mut self.refusals, reason) += 1;
    }

    /// Counts what a call used and cost, on `model`, for `client`.
    pub fn usage(&mut self, model: &str, client: &str, usage: &Usage, cost: &Estimate) {
        let model = self.model_label(model);
        let counts = entry_by(&mut self.usage, |m| m == model, || model.to_owned());
        let add = [
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens,
            u64::from(usage.web_searches),
        ];
        for (total, n) in counts.iter_mut().zip(add) {
            *total = total.saturating_add(n);
        }
        if let Some(usd) = cost.total() {
            let total = entry_by(
                &mut self.cost,
                |(m, c)| m == model && c == client,
                || (model.to_owned(), client.to_owned()),
            );
            *total = total.plus(usd);
        }
    }

    /// `model` if it is among the first [`MAX_MODELS`] seen, else [`OTHER`].
    fn model_label<'a>(&self, model: &'a str) -> &'a str {
        if self.usage.len() < MAX_MODELS || self.usage.iter().any(|(m, _)| m == model) {
            model
        } else {
            OTHER
        }
    }
}

/// The prefix of our own metric names.
const PREFIX: &str = "openai_responses_mcp_";

#[cfg(test)]
mod tests;
