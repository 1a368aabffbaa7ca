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
mod text;

use crate::openai::pricing::{Estimate, Picodollars};
use crate::openai::Usage;
pub use crate::outcome::{Outcome, Refusal};
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

/// What the server knows at scrape time, beyond the counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Calls running upstream.
    pub running: usize,
    /// Calls waiting for a slot.
    pub queued: usize,
    /// Tasks kept, by state name.
    pub tasks: Vec<(&'static str, usize)>,
    /// Upstream attempts ended, by how.
    pub attempts: Tally<AttemptEnd, u64>,
    /// Retries scheduled.
    pub retries: u64,
    /// OAuth mode: whether a verified key set is at hand, and whether the identity
    /// provider answered its last fetch.
    pub identity: Option<(bool, bool)>,
    /// Whether `/ready` would answer 200 now (a call can work).
    pub ready: bool,
    /// Unix seconds now: the UTC day whose spend is reported.
    pub now: u64,
    /// With traces on: spans dropped, whichever queue lost them (the core's to the
    /// host, the exporter's, or a failed export).
    pub spans_dropped: Option<u64>,
    /// With a shared store: whether it answers.
    pub store_up: Option<bool>,
    /// The spend limits per UTC day in US dollars: the instance's (`None`), and each
    /// named client's own under its metrics label.
    pub spend_limits: Vec<(Option<String>, crate::money::Picodollars)>,
}

impl Metrics {
    /// The whole exposition.
    pub fn render(&self, gauges: &Gauges) -> Vec<u8> {
        let mut out = Exposition::default();
        self.write_operations(&mut out);
        self.write_calls(&mut out, gauges);
        self.write_usage(&mut out);
        self.write_store(&mut out);
        health::write_identity(&mut out, gauges.identity);
        health::write_readiness(&mut out, gauges);
        self.write_today(&mut out, gauges.now);
        out.counter_family(
            &format!("{PREFIX}identity_header_ignored_total"),
            "Requests carrying the identity header (server.http.identity_header) from a peer that is not a trusted proxy (server.http.trusted_proxies): the header was ignored. Anything but 0 is a client trying to pass as someone else, or a proxy missing from the list.",
            #[allow(clippy::cast_precision_loss)]
            std::iter::once((Vec::new(), self.identity_headers_ignored as f64)),
        );
        if let Some(dropped) = gauges.spans_dropped {
            out.counter_family(
                &format!("{PREFIX}spans_dropped_total"),
                "Spans dropped before reaching the collector: a queue to the trace exporter was full, or an export failed or timed out (traces on).",
                #[allow(clippy::cast_precision_loss)]
                std::iter::once((Vec::new(), dropped as f64)),
            );
        }
        out.finish()
    }

    /// What each client spent today on this instance (0 for one that spent on an earlier
    /// day): summed over the instances, what the daily limits count.
    fn write_today(&self, out: &mut Exposition, now: u64) {
        if self.today.is_empty() {
            return;
        }
        let day = now / crate::clients::DAY;
        out.gauge_family(
            &format!("{PREFIX}spend_today_usd"),
            "Estimated spend of the current UTC day on this instance in US dollars, by client (sum over instances to compare with the daily limits).",
            self.today.iter().map(|(client, (on, spent))| {
                let usd = if *on == day { spent.usd() } else { 0.0 };
                (vec![("client", client.clone())], usd)
            }),
        );
    }

    /// The shared store's round trips and errors, once it was asked anything.
    fn write_store(&self, out: &mut Exposition) {
        let Some((times, errors)) = &self.store else {
            return;
        };
        let p = PREFIX;
        let name = format!("{p}store_round_trip_seconds");
        out.family(
            &name,
            "histogram",
            "Round trips to the shared store (server.store.url), failed ones included.",
        );
        out.histogram(&name, &[], times);
        out.counter_family(
            &format!("{p}store_errors_total"),
            "Store operations that failed: the store was unreachable or refused them.",
            std::iter::once((Vec::new(), *errors as f64)),
        );
        out.counter_family(
            &format!("{p}tasks_orphaned_total"),
            "Shared tasks this instance found working under a lapsed lease (the instance running them was lost or stopped past its grace) and ended as failed.",
            #[allow(clippy::cast_precision_loss)]
            std::iter::once((Vec::new(), self.tasks_orphaned as f64)),
        );
    }

    /// The OpenTelemetry MCP operation histogram.
    fn write_operations(&self, out: &mut Exposition) {
        out.family(
            "mcp_server_operation_duration_seconds",
            "histogram",
            "MCP request duration as observed on the server, from its receipt until its result is sent.",
        );
        for (op, h) in &self.operations {
            let error = op.error.map(|e| match e {
                ErrorType::Tool => "tool_error".to_owned(),
                ErrorType::Rpc(code) => code.to_string(),
            });
            let mut labels = vec![("mcp_method_name", op.method.to_owned())];
            if let Some(tool) = op.tool {
                labels.push(("gen_ai_tool_name", tool.to_owned()));
            }
            if let Some(error) = error {
                labels.push(("error_type", error));
            }
            labels.push(("network_transport", op.transport.to_owned()));
            labels.push(("mcp_protocol_version", op.version.to_owned()));
            out.histogram("mcp_server_operation_duration_seconds", &labels, h);
        }
    }

    /// Calls, refusals, upstream attempts and what runs and waits now.
    fn write_calls(&self, out: &mut Exposition, gauges: &Gauges) {
        let p = PREFIX;
        out.counter_family(
            &format!("{p}calls_total"),
            "tools/call requests that ended, by tool, client and outcome (ok, upstream_<kind>, refused_<why>).",
            self.calls.iter().map(|((tool, client, outcome), n)| {
                let labels = vec![
                    ("tool", (*tool).to_owned()),
                    ("client", client.clone()),
                    ("outcome", outcome.label()),
                ];
                (labels, *n as f64)
            }),
        );
        out.counter_family(
            &format!("{p}refusals_total"),
            "Calls refused before any upstream request, by reason.",
            self.refusals
                .iter()
                .map(|(why, n)| (vec![("reason", why.label().to_owned())], *n as f64)),
        );
        out.counter_family(
            &format!("{p}upstream_attempts_total"),
            "Upstream attempts that ended, by HTTP status (or none) and transport failure.",
            gauges.attempts.iter().map(|(end, n)| {
                let labels = match end {
                    AttemptEnd::Status(s) => {
                        vec![("status", s.to_string()), ("failure", String::new())]
                    }
                    AttemptEnd::Transport(kind) => {
                        vec![
                            ("status", "none".to_owned()),
                            ("failure", (*kind).to_owned()),
                        ]
                    }
                };
                (labels, *n as f64)
            }),
        );
        out.counter_family(
            &format!("{p}upstream_retries_total"),
            "Upstream attempts repeated after a failure that may pass.",
            std::iter::once((Vec::new(), gauges.retries as f64)),
        );
        out.gauge_family(
            &format!("{p}calls_in_flight"),
            "Calls running upstream now.",
            std::iter::once((Vec::new(), gauges.running as f64)),
        );
        out.gauge_family(
            &format!("{p}calls_queued"),
            "Calls waiting for a slot now.",
            std::iter::once((Vec::new(), gauges.queued as f64)),
        );
        out.gauge_family(
            &format!("{p}tasks"),
            "Tasks kept in this instance's memory, by state.",
            gauges
                .tasks
                .iter()
                .map(|(state, n)| (vec![("state", (*state).to_owned())], *n as f64)),
        );
    }

    /// Tokens, web searches and estimated cost.
    fn write_usage(&self, out: &mut Exposition) {
        let p = PREFIX;
        let kinds = ["input", "cached_input", "output", "reasoning"];
        out.counter_family(
            &format!("{p}tokens_total"),
            "Tokens OpenAI reported, by model and kind (cached_input and reasoning are parts of input and output).",
            self.usage.iter().flat_map(|(model, counts)| {
                kinds.iter().zip(counts).map(move |(kind, n)| {
                    (vec![("model", model.clone()), ("kind", (*kind).to_owned())], *n as f64)
                })
            }),
        );
        out.counter_family(
            &format!("{p}web_searches_total"),
            "Web search calls the model made, by model.",
            self.usage
                .iter()
                .map(|(model, counts)| (vec![("model", model.clone())], counts[4] as f64)),
        );
        out.counter_family(
            &format!("{p}estimated_cost_usd_total"),
            "Estimated cost of the calls in US dollars, by model and client (see pricing.*).",
            self.cost.iter().map(|((model, client), usd)| {
                (
                    vec![("model", model.clone()), ("client", client.clone())],
                    usd.usd(),
                )
            }),
        );
    }
}

/// The prefix of our own metric names.
const PREFIX: &str = "openai_responses_mcp_";

#[cfg(test)]
mod tests;
