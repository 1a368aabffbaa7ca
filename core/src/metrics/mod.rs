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

mod gauges;
mod health;
mod histogram;
mod render;
mod tally;
mod text;

use crate::openai::pricing::{Estimate, Picodollars};
use crate::openai::Usage;
pub use crate::outcome::{Outcome, Refusal};
pub use gauges::{AttemptEnd, Gauges};
pub use histogram::{Histogram, DURATION_BOUNDS};
use std::time::Duration;
pub use tally::{entry, entry_by, Tally};
pub use text::Exposition;

/// Distinct model names kept as label values; later ones are counted as `_OTHER` (the
/// model names come from upstream replies).
pub const MAX_MODELS: usize = 32;

/// The label value of everything past a cap, as OpenTelemetry spells it.
pub const OTHER: &str = "_OTHER";

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
    /// Requests whose identity header was ignored: from a peer that is not a trusted
    /// proxy, or beside a credential that is not the gateway's.
    identity_headers_ignored: u64,
}

impl Metrics {
    /// Counts a request whose identity header was ignored: its peer is not trusted, or
    /// its credential is not the gateway's.
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
