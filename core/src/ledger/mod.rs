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
//! and asked once before each call (`Ledger::admit`). A background run is charged its
//! estimate when OpenAI takes it on (`background_started`: a hold, so that admission
//! counts the runs still going) and settled when an instance first reads it ended,
//! cancelled or gone (`background_ended`: the hold given back, what OpenAI reported
//! charged, or the estimate when it reported nothing), once per response id (a bounded
//! memory of the latest ids here, a claim in the store across instances; with a store,
//! a run nobody claimed a minute after its task's end is swept by the next admission,
//! charged its hold). Estimates come from what calls of the same profile cost lately
//! (`recent.rs`).

mod background;
mod call;
mod holds;
mod recent;
mod record;
mod shared;

pub(crate) use call::{CallOf, End, Lane};
pub(crate) use holds::MAX_HELD;
pub use record::{Arrival, CallRecord, Transport, CALL_LOG_TARGET};
pub(crate) use shared::{CallAdmission, Reserved};

use crate::calls::Report;
use crate::clients::{ClientId, Clients, Limits};
use crate::metrics::{Gauges, Metrics, Operation};
use crate::openai::pricing::{Estimate, Prices};
use crate::openai::{Answer, UpstreamFailure, Usage};
use crate::outcome::{Outcome, Refusal};
use crate::settings::ServerConfig;
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

/// Background responses whose end this instance remembers having counted.
const COUNTED_IDS: usize = 4096;

/// What `usage` on `model` costs in `lane`, at `prices` with background tokens at
/// `percent` of the list price (pure: the desk prices a background end with it too).
pub(crate) fn price(
    (prices, percent): (&Prices, u64),
    model: &str,
    usage: Option<&Usage>,
    lane: Lane,
) -> Estimate {
    let none = Usage::default();
    let estimate = prices.estimate(model, usage.unwrap_or(&none));
    match lane {
        Lane::Direct => estimate,
        Lane::Background => estimate.tokens_at_percent(percent),
    }
}

/// See the module docs.
pub(crate) struct Ledger {
    metrics: Metrics,
    limits: Limits,
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
    /// The background runs this instance started and charged a hold for.
    holds: holds::Holds,
    /// What each profile's calls cost lately, for the estimates.
    recent: recent::Recent,
    /// Tasks are OpenAI background runs (`tasks.openai_background`): a store is swept.
    background: bool,
    /// The limits' counts shared through a store, when there is one.
    shared: Option<shared::Shared>,
}

impl Ledger {
    /// An empty ledger for `config`'s limits and prices.
    pub fn new(config: &ServerConfig) -> Ledger {
        Ledger {
            metrics: Metrics::default(),
            limits: Limits::new(config.instance_limit),
            prices: config.prices.clone(),
            background_percent: config.tasks.background_price_percent(),
            seed: crate::sha256::derive(config.jitter_seed, b"span ids"),
            spans: 0,
            keep_records: config.call_records,
            records: VecDeque::new(),
            counted: VecDeque::new(),
            counted_set: BTreeSet::new(),
            holds: holds::Holds::default(),
            recent: recent::Recent::default(),
            background: config.tasks.background,
            shared: config.store.map(|s| shared::Shared::new(s.on_unavailable)),
        }
    }

    /// A reply left: one operation, which took `took` from its request's arrival.
    pub fn replied(&mut self, op: Operation, took: Duration) {
        self.metrics.operation(op, took);
    }

    /// Admits a call of `client` at `now` (Unix seconds) against the limits and counts
    /// it, or says which limit refuses it; with a shared store, asks it.
    pub fn admit(&mut self, clients: &Clients, client: ClientId, now: u64) -> CallAdmission {
        self.sweep(now);
        let Some(shared) = &mut self.shared else {
            let limit = clients.limit(client);
            return match self.limits.admit(client, limit, now) {
                Ok(()) => CallAdmission::Admitted,
                Err(exceeded) => CallAdmission::Refused(exceeded),
            };
        };
        let limits = (clients.limit(client), self.limits.instance());
        let op = crate::store::reserve(clients.name(client), limits, now);
        let id = shared.send(op);
        shared.asked.insert(
            id,
            shared::Asked {
                client,
                limits,
                now,
            },
        );
        CallAdmission::Asked(id)
    }

    /// The store answered operation `id` with `reply` after `took`: counted, and for a
    /// reserve, what it decided. `wanted`: whether the call still waits for it; a call
    /// that does not (its client left) is given back if the store counted it.
    pub fn store_answered(
        &mut self,
        clients: &mut Clients,
        id: crate::store::StoreId,
        reply: crate::store::StoreReply,
        took: Duration,
        wanted: bool,
    ) -> Option<Reserved> {
        use crate::store::StoreReply;
        self.store_observed(took, matches!(reply, StoreReply::Unavailable(_)));
        let shared = self.shared.as_mut()?;
        if let Some(claim) = shared.claims.remove(&id) {
            self.claim_answered(clients, &claim, &reply);
            return None;
        }
        if let Some(now) = shared.sweeps.remove(&id) {
            self.swept(clients, &reply, now);
            return None;
        }
        let asked = shared.asked.remove(&id)?;
        if !wanted {
            if matches!(reply, StoreReply::Reserve { reached: 0, .. }) {
                let client = clients.name(asked.client);
                shared.send(crate::store::release(client, asked.now));
            }
            return None;
        }
        Some(match reply {
            StoreReply::Reserve { reached, value } => {
                match crate::store::reserved(reached, value, asked.limits, asked.now) {
                    Ok(Ok(())) => Reserved::Admitted { counted: true },
                    Ok(Err(exceeded)) => Reserved::Refused(exceeded),
                    Err(why) => shared.without_store(asked.limits, why.to_string()),
                }
            }
            StoreReply::Unavailable(why) => shared.without_store(asked.limits, why),
            StoreReply::Done | StoreReply::Rows(_) => {
                let why = "the store answered a reserve as if it were another operation".to_owned();
                shared.without_store(asked.limits, why)
            }
        })
    }

    /// The store answered an operation after `took`, or `failed`: counted, and the
    /// store's health follows it.
    pub fn store_observed(&mut self, took: Duration, failed: bool) {
        if let Some(shared) = &mut self.shared {
            self.metrics.store(took, failed);
            shared.up = !failed;
        }
    }

    /// A shared task a read of this instance ended as an orphan.
    pub fn task_orphaned(&mut self) {
        self.metrics.task_orphaned();
    }

    /// The runtime's look at the store: whether it answers now.
    pub fn store_health(&mut self, up: bool) {
        if let Some(shared) = &mut self.shared {
            shared.up = up;
        }
    }

    /// Counts a request whose identity header was ignored (its peer is not trusted).
    pub fn identity_header_ignored(&mut self) {
        self.metrics.identity_header_ignored();
    }

    /// Whether there is a store and it does not answer.
    pub fn store_down(&self) -> bool {
        self.shared.as_ref().is_some_and(|s| !s.up)
    }

    /// The next operation for the store.
    pub fn poll_store_op(&mut self) -> Option<(crate::store::StoreId, crate::store::StoreOp)> {
        self.shared.as_mut()?.ops.pop_front()
    }

    /// A call was refused before any upstream request.
    pub fn refused(
        &mut self,
        clients: &Clients,
        call: &CallOf,
        why: Refusal,
        model: Option<&str>,
        now: u64,
    ) {
        self.metrics.refusal(why);
        let model = model.filter(|m| !m.is_empty()).map(str::to_owned);
        self.record(clients, call, Outcome::Refused(why), now, |record| {
            record.model = model
        });
    }

    /// What `usage` on `model` cost in `lane`.
    pub fn cost(&self, model: &str, usage: Option<&Usage>, lane: Lane) -> Estimate {
        price((&self.prices, self.background_percent), model, usage, lane)
    }

    /// A call ended upstream at `now`: counted, priced, spent against its client's limit
    /// and recorded. Returns its cost, for its result's `_meta`.
    pub fn ended(&mut self, clients: &Clients, call: &CallOf, end: &End<'_>, now: u64) -> Estimate {
        self.ended_as(clients, call, end, now, true)
    }

    /// [`Ledger::ended`]; `charge`: whether its cost is spent now (a swept run's was,
    /// as its hold).
    fn ended_as(
        &mut self,
        clients: &Clients,
        call: &CallOf,
        end: &End<'_>,
        now: u64,
        charge: bool,
    ) -> Estimate {
        let usage = end.report.usage.as_ref();
        let estimated = end.report.estimated;
        let cost = self.cost(end.model, usage, end.lane);
        let client = clients.name(call.client);
        if let Some(usage) = usage {
            if !estimated {
                let label = clients.label(call.client);
                self.metrics.usage(end.model, label, usage, &cost);
                if let Some(total) = cost.total() {
                    self.recent.observe(call.tool, total, usage);
                }
            }
            if let Some(spent) = cost.total().filter(|_| charge) {
                self.spend(clients, call.client, spent, now);
            }
        } else if let (Some(shared), Some(at), Some(_)) =
            (&mut self.shared, call.reserved_at, end.failure)
        {
            // Failed before OpenAI reported any use: the call is given back.
            shared.send(crate::store::release(client, at));
        }
        let outcome = match end.failure {
            _ if end.cancelled => Outcome::Cancelled,
            Some(failure) => Outcome::Upstream(failure),
            None => Outcome::Ok,
        };
        self.record(clients, call, outcome, now, |record| {
            record.duration = end.took;
            record.attempts = end.report.attempts;
            record.upstream_status = end.report.upstream.status;
            record.model = Some(end.model).filter(|m| !m.is_empty()).map(str::to_owned);
            record.usage = usage.cloned();
            record.cost = usage.and(cost.total());
            record.usage_estimated = estimated;
            record.request_id = end.report.upstream.request_id.clone();
        });
        cost
    }

    /// A call stopped before its answer (cancelled, or its client left) after its request
    /// reached OpenAI: charged what `spent` says it used (OpenAI's report or, when OpenAI
    /// had not said, the estimate [`recent`] makes: the profile's median recent call,
    /// never below the input sent and the searches begun) against its client's spend, as
    /// any call is, so that a spend cap cannot be bypassed by cancelling just before each
    /// answer; counted and recorded as `cancelled`. Never given back.
    pub fn cancelled(&mut self, clients: &Clients, call: &CallOf, spent: &Report, now: u64) {
        let estimate = spent
            .usage
            .as_ref()
            .filter(|_| spent.estimated)
            .map(|known| self.recent.estimate(call.tool, known));
        let usage = estimate.as_ref().or(spent.usage.as_ref());
        let model = spent.model.model.as_str();
        let cost = self.cost(model, usage, Lane::Direct);
        if let (Some(usage), false) = (usage, spent.estimated) {
            let label = clients.label(call.client);
            self.metrics.usage(model, label, usage, &cost);
        }
        if let Some(amount) = cost.total().filter(|a| a.0 > 0) {
            self.spend(clients, call.client, amount, now);
        }
        self.record(clients, call, Outcome::Cancelled, now, |record| {
            record.duration = spent.wall;
            record.attempts = spent.attempts;
            record.upstream_status = spent.upstream.status;
            record.model = Some(model).filter(|m| !m.is_empty()).map(str::to_owned);
            record.usage = usage.cloned();
            record.cost = cost.total();
            record.usage_estimated = spent.estimated;
            record.request_id = spent.upstream.request_id.clone();
        });
    }

    /// `amount` spent by `client` at `now`: against its day, in the store when there is
    /// one (so that every instance sees it), else here.
    fn spend(
        &mut self,
        clients: &Clients,
        client: ClientId,
        amount: crate::money::Picodollars,
        now: u64,
    ) {
        self.metrics.spent_today(clients.label(client), now, amount);
        match &mut self.shared {
            Some(shared) => {
                let name = clients.name(client);
                shared.send(crate::store::spend(name, amount, now));
            }
            None => self.limits.spend(client, now, amount),
        }
    }

    /// A call the engine ran for a request ended with `outcome` at `now`: [`Ledger::ended`]
    /// at the list price.
    pub fn call_ended(
        &mut self,
        clients: &Clients,
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
            cancelled: false,
        };
        self.ended(clients, call, &end, now)
    }

    /// The Prometheus text: the counters, and `gauges` as of now (with the spend limits
    /// the ledger keeps and those of `clients`).
    pub fn render(&self, clients: &Clients, gauges: Gauges) -> Vec<u8> {
        let instance = self.limits.instance().spend_per_day.map(|l| (None, l));
        let clients = clients.iter().filter_map(|(id, client)| {
            let limit = client.limit.spend_per_day?;
            Some((Some(clients.label(id).to_owned()), limit))
        });
        let gauges = Gauges {
            spend_limits: instance.into_iter().chain(clients).collect(),
            ..gauges
        };
        self.metrics.render(&gauges)
    }

    /// The next call record, in the order calls ended.
    pub fn poll_record(&mut self) -> Option<CallRecord> {
        self.records.pop_front()
    }

    /// Counts the call under its outcome and, when the host keeps a call log, queues its
    /// record (what `fill` adds to what every record says) with a span of its own.
    fn record(
        &mut self,
        clients: &Clients,
        call: &CallOf,
        outcome: Outcome,
        now: u64,
        fill: impl FnOnce(&mut CallRecord),
    ) {
        let client = clients.name(call.client);
        self.metrics
            .call(call.tool.name(), clients.label(call.client), outcome);
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
            usage_estimated: false,
            request_id: None,
            trace: call.trace.map(|t| (t, span)),
            arrival: Box::new(call.arrival.clone()),
        };
        fill(&mut record);
        self.records.push_back(record);
    }
}

#[cfg(test)]
mod tests;
