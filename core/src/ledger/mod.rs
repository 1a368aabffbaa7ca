//! The ledger: what `/metrics`, the limits, the estimated spend and the call log say, kept
//! in one place so that they can never disagree.
//!
//! It is fed at two chokepoints of the server:
//!
//! ```text
//!   every reply as it is routed out ──▶ replied(op, took)     ──▶ operation histogram
//!   every end of a call              ──▶ refused(call, why)   ──▶ calls, refusals, record
//!                                        ended(call, end)     ──▶ calls, tokens, cost,
//!                                        background_ended(..)      spend, record
//! ```
//!
//! and asked once before each call (`Ledger::admit`). A background task ends when an
//! instance first reads its stored response as ended; the ledger counts that end once per
//! response id it has seen (a bounded memory of the latest ids).

mod record;

pub use record::{CallRecord, Transport, CALL_LOG_TARGET};

use crate::calls::Report;
use crate::clients::{ClientId, Exceeded, Limits};
use crate::mcp::trace::TraceParent;
use crate::mcp::ProtocolVersion;
use crate::metrics::{Gauges, Metrics, Operation};
use crate::openai::pricing::{Estimate, Prices};
use crate::openai::{Answer, FailureKind, UpstreamFailure, Usage};
use crate::outcome::{Outcome, Refusal};
use crate::settings::ServerConfig;
use crate::tools::Tool;
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

/// Background responses whose end this instance remembers having counted.
const COUNTED_IDS: usize = 4096;

/// A call as its metrics and record name it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallOf {
    pub tool: Tool,
    pub version: ProtocolVersion,
    pub transport: Transport,
    pub client: ClientId,
    /// It ran as a task.
    pub task: bool,
    /// The client's trace, which the record continues.
    pub trace: Option<TraceParent>,
}

/// How a call that reached the engine ended.
pub(crate) struct End<'a> {
    /// The model that answered, or the one that was to.
    pub model: &'a str,
    /// Why it failed, if it did.
    pub failure: Option<FailureKind>,
    /// What the engine measured.
    pub report: &'a Report,
    /// How long the call took: the engine's wall time, or a background task's life.
    pub took: Duration,
    /// Where it ran, which sets its price.
    pub lane: Lane,
}

/// Where a call ran upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// A plain request, answered as it ran.
    Direct,
    /// OpenAI's background mode, whose tokens cost the completion window's percent.
    Background,
}

/// See the module docs.
pub(crate) struct Ledger {
    metrics: Metrics,
    limits: Limits,
    clients: crate::clients::Clients,
    prices: Prices,
    /// What background tokens cost, in percent of the list price.
    background_percent: u64,
    /// The seed of span ids.
    seed: u64,
    /// Calls recorded so far: the counter behind each record's span id.
    spans: u64,
    /// Whether the host keeps a call log ([`ServerConfig::call_records`]).
    keep_records: bool,
    /// Records not yet handed out.
    records: VecDeque<CallRecord>,
    /// Background responses whose end was counted, oldest first.
    counted: VecDeque<String>,
    counted_set: BTreeSet<String>,
}

impl Ledger {
    /// An empty ledger for `config`'s limits, clients and prices.
    pub fn new(config: &ServerConfig) -> Ledger {
        Ledger {
            metrics: Metrics::default(),
            limits: Limits::new(config.instance_limit, config.clients.clone()),
            clients: config.clients.clone(),
            prices: config.prices.clone(),
            background_percent: config.tasks.background_price_percent(),
            seed: config.jitter_seed,
            spans: 0,
            keep_records: config.call_records,
            records: VecDeque::new(),
            counted: VecDeque::new(),
            counted_set: BTreeSet::new(),
        }
    }

    /// A reply left: one operation, which took `took` from its request's arrival.
    pub fn replied(&mut self, op: Operation, took: Duration) {
        self.metrics.operation(op, took);
    }

    /// Admits a call of `client` at `now` (Unix seconds) against the limits, and counts
    /// it, or says which limit refuses it.
    pub fn admit(&mut self, client: ClientId, now: u64) -> Result<(), Exceeded> {
        self.limits.admit(client, now)
    }

    /// A call was refused before any upstream request.
    pub fn refused(&mut self, call: &CallOf, why: Refusal, model: Option<&str>, now: u64) {
        self.metrics.refusal(why);
        let model = model.filter(|m| !m.is_empty()).map(str::to_owned);
        self.record(call, Outcome::Refused(why), now, |record| {
            record.model = model
        });
    }

    /// What `usage` on `model` cost in `lane`.
    pub fn cost(&self, model: &str, usage: Option<&Usage>, lane: Lane) -> Estimate {
        let none = Usage::default();
        let estimate = self.prices.estimate(model, usage.unwrap_or(&none));
        match lane {
            Lane::Direct => estimate,
            Lane::Background => estimate.tokens_at_percent(self.background_percent),
        }
    }

    /// A call ended upstream at `now`: counted, priced, spent against its client's limit
    /// and recorded. Returns its cost, for its result's `_meta`.
    pub fn ended(&mut self, call: &CallOf, end: &End<'_>, now: u64) -> Estimate {
        let usage = end.report.usage.as_ref();
        let cost = self.cost(end.model, usage, end.lane);
        if let Some(usage) = usage {
            let client = self.clients.name(call.client);
            self.metrics.usage(end.model, client, usage, &cost);
            if let Some(spent) = cost.total() {
                self.limits.spend(call.client, now, spent);
            }
        }
        let outcome = end.failure.map_or(Outcome::Ok, Outcome::Upstream);
        self.record(call, outcome, now, |record| {
            record.duration = end.took;
            record.attempts = end.report.attempts;
            record.upstream_status = end.report.upstream.status;
            record.model = Some(end.model).filter(|m| !m.is_empty()).map(str::to_owned);
            record.usage = usage.cloned();
            record.cost = usage.and(cost.total());
            record.request_id = end.report.upstream.request_id.clone();
        });
        cost
    }

    /// A call the engine ran for a request ended with `outcome` at `now`: [`Ledger::ended`]
    /// at the list price.
    pub fn call_ended(
        &mut self,
        call: &CallOf,
        outcome: &Result<Answer, UpstreamFailure>,
        report: &Report,
        now: u64,
    ) -> Estimate {
        let (model, failure) = match outcome {
            Ok(answer) => (answer.model.as_str(), None),
            Err(failure) => (report.model.model.as_str(), Some(failure.kind)),
        };
        let end = End {
            model,
            failure,
            report,
            took: report.wall,
            lane: Lane::Direct,
        };
        self.ended(call, &end, now)
    }

    /// A background task's stored response `response_id` was read as ended: counted as
    /// [`Ledger::ended`] the first time this instance sees it, and only priced after.
    pub fn background_ended(
        &mut self,
        response_id: &str,
        call: &CallOf,
        end: &End<'_>,
        now: u64,
    ) -> Estimate {
        if self.counted_set.contains(response_id) {
            return self.cost(end.model, end.report.usage.as_ref(), end.lane);
        }
        if self.counted.len() == COUNTED_IDS {
            if let Some(oldest) = self.counted.pop_front() {
                self.counted_set.remove(&oldest);
            }
        }
        self.counted.push_back(response_id.to_owned());
        self.counted_set.insert(response_id.to_owned());
        self.ended(call, end, now)
    }

    /// The Prometheus text: the counters, and `gauges` as of now.
    pub fn render(&self, gauges: &Gauges) -> Vec<u8> {
        self.metrics.render(gauges)
    }

    /// The next call record, in the order calls ended.
    pub fn poll_record(&mut self) -> Option<CallRecord> {
        self.records.pop_front()
    }

    /// Counts the call under its outcome and, when the host keeps a call log, queues its
    /// record (what `fill` adds to what every record says) with a span of its own.
    fn record(
        &mut self,
        call: &CallOf,
        outcome: Outcome,
        now: u64,
        fill: impl FnOnce(&mut CallRecord),
    ) {
        let client = self.clients.name(call.client);
        self.metrics.call(call.tool.name(), client, outcome);
        if !self.keep_records {
            return;
        }
        self.spans = self.spans.wrapping_add(1);
        let span = record::span_id(self.seed, self.spans);
        let mut record = CallRecord {
            unix_secs: now,
            tool: call.tool,
            version: call.version,
            transport: call.transport,
            client: client.to_owned(),
            task: call.task,
            outcome,
            duration: Duration::ZERO,
            attempts: 0,
            upstream_status: None,
            model: None,
            usage: None,
            cost: None,
            request_id: None,
            trace: call.trace.map(|t| (t, span)),
        };
        fill(&mut record);
        self.records.push_back(record);
    }
}

#[cfg(test)]
mod tests;
