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
mod flights;
mod holds;
mod kept;
mod recent;
mod record;
mod roster;
mod shared;

pub(crate) use call::{CallOf, End, Lane, Reservation};
pub use flights::HoldId;
pub(crate) use holds::MAX_HELD;
pub use recent::{FIRST_CALL_INPUT_TOKENS, FIRST_CALL_OUTPUT_TOKENS};
pub use record::{Arrival, CallRecord, Transport, CALL_LOG_TARGET};
pub(crate) use shared::{CallAdmission, Reserved};

use crate::calls::Report;
use crate::clients::{ClientId, Clients, Limits};
use crate::metrics::{Gauges, Metrics, Operation};
use crate::money::Picodollars;
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
    /// What each client's calls of each profile cost lately, for the estimates.
    recent: recent::Recent,
    /// The estimates held for calls in flight.
    flights: flights::Flights,
    /// What forgotten identities had used in their windows, until they return.
    kept: kept::Kept,
    /// Each tool's profile's `max_output_tokens`, by tool: its first-call bound's.
    max_output: [Option<u64>; crate::tools::ALL_TOOLS.len()],
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
            flights: flights::Flights::new(crate::clients::DAY),
            kept: kept::Kept::default(),
            max_output: crate::tools::ALL_TOOLS
                .map(|tool| (config.profiles.for_tool(tool)).and_then(|p| p.max_output_tokens)),
            background: config.tasks.background,
            shared: (config.store)
                .map(|s| shared::Shared::new(s.on_unavailable, config.jitter_seed)),
        }
    }

    /// A reply left: one operation, which took `took` from its request's arrival.
    pub fn replied(&mut self, op: Operation, took: Duration) {
        self.metrics.operation(op, took);
    }

    /// Admits `call` at `now` (Unix seconds) against the limits, holding its estimate
    /// (`profile`: what it will run with) until it ends, or says which limit refuses it;
    /// with a shared store, asks it.
    pub fn admit(
        &mut self,
        clients: &Clients,
        call: &CallOf,
        profile: Option<&crate::settings::Profile>,
        now: u64,
    ) -> CallAdmission {
        self.sweep(now);
        self.lapse(now);
        let client = call.client;
        let estimate = self.estimate(clients, call, profile);
        let Some(shared) = &mut self.shared else {
            // A returning identity takes back what it had used in its windows.
            if let Some(counts) = self.kept.take(clients.name(client)) {
                self.limits.restore(client, counts);
            }
            let limit = clients.limit(client);
            return match self.limits.admit(client, limit, now, estimate) {
                Ok(()) => {
                    let hold = self.hold(client, None, estimate, now);
                    CallAdmission::Admitted(Reservation {
                        counted_at: None,
                        hold,
                    })
                }
                Err(exceeded) => CallAdmission::Refused(exceeded),
            };
        };
        let limits = (clients.limit(client), self.limits.instance());
        let hold = shared.hold_name();
        let held = (estimate, &hold);
        let op = crate::store::reserve(clients.name(client), limits, now, held);
        let id = shared.send(op);
        shared.asked.insert(
            id,
            shared::Asked {
                client,
                limits,
                now,
                estimate,
                hold,
            },
        );
        CallAdmission::Asked(id)
    }

    /// What `call` is estimated to cost before it runs: its client's median recent call
    /// of the profile, never below the first-call bound, at `profile`'s model's list
    /// price (nothing for a model without a price, or when no spend cap applies to it).
    fn estimate(
        &mut self,
        clients: &Clients,
        call: &CallOf,
        profile: Option<&crate::settings::Profile>,
    ) -> Picodollars {
        let capped = |limit: crate::clients::Limit| limit.spend_per_day.is_some();
        if !capped(clients.limit(call.client)) && !capped(self.limits.instance()) {
            // No cap for it to fill: nothing to hold.
            return Picodollars(0);
        }
        let Some(profile) = profile else {
            return Picodollars(0);
        };
        // Never below the first-call bound: a client cannot train its own estimate down
        // with cheap calls, then pass a burst of dear ones.
        let bound = recent::first_call(profile.max_output_tokens);
        let name = clients.name(call.client);
        let usage = (self.recent).estimate(name, call.tool, &bound, &bound);
        self.cost(&profile.model, Some(&usage), Lane::Direct)
            .total()
            .unwrap_or(Picodollars(0))
    }

    /// Holds `amount` for a call of `client` admitted at `now` (`store`: held in the
    /// store, under the client's name and the hold's); none for a call estimated at
    /// nothing.
    fn hold(
        &mut self,
        client: ClientId,
        store: Option<(String, crate::store::HoldName)>,
        amount: Picodollars,
        now: u64,
    ) -> Option<HoldId> {
        if amount.0 == 0 {
            return None;
        }
        let (id, dropped) = self.flights.hold(client, store, amount, now);
        if let Some(flight) = dropped {
            self.give_back(&flight);
        }
        Some(id)
    }

    /// The first-call bound of `tool`: what a call of a client with no history of the
    /// profile is estimated at.
    fn bound(&self, tool: crate::tools::Tool) -> Usage {
        let max_output = self.max_output.get(tool.index()).copied().flatten();
        recent::first_call(max_output)
    }

    /// Lets go of the estimate `call` holds, if it still holds one: its end is counted
    /// (or nothing will be), so the estimate no longer stands for it.
    pub fn unhold(&mut self, call: &CallOf) {
        self.let_go(call.reservation.hold);
    }

    /// Lets go of hold `id`, if it is still held.
    pub fn let_go(&mut self, id: Option<HoldId>) {
        if let Some(flight) = id.and_then(|id| self.flights.take(id)) {
            self.give_back(&flight);
        }
    }

    /// Lets go of the holds older than a day: a path that never ended its call (a bug)
    /// holds its client back for a day at most, as a killed replica's holds do.
    fn lapse(&mut self, now: u64) {
        for flight in self.flights.lapsed(now) {
            self.give_back(&flight);
        }
    }

    /// Gives `flight`'s estimate back, here or in the store.
    fn give_back(&mut self, flight: &flights::Flight) {
        match (&flight.store, &mut self.shared) {
            (Some((name, hold)), Some(shared)) => {
                shared.send(crate::store::unhold(name, hold, flight.at));
            }
            _ => self.limits.unhold(flight.client, flight.amount),
        }
    }

    /// When this instance next tells the store it is alive: while it holds anything
    /// there ([`Ledger::keep_alive`]).
    pub fn poll_timeout(&self) -> Option<std::time::Instant> {
        self.shared.as_ref().and_then(|s| s.alive_due)
    }

    /// Keeps this instance's holds in the store standing at `now`: while it holds any,
    /// it says it is alive every [`crate::store::HOLDS_RENEW`] (a killed replica's holds
    /// lapse within [`crate::store::HOLDS_RENEW`] three times over); when it holds none,
    /// it stops.
    pub fn keep_alive(&mut self, now: crate::io::Now) {
        let Some(shared) = &mut self.shared else {
            return;
        };
        let holding = self.flights.in_store();
        match (holding, shared.alive_due) {
            (false, _) => shared.alive_due = None,
            // The reserve that made the first hold said so itself.
            (true, None) => shared.alive_due = Some(now.instant + crate::store::HOLDS_RENEW),
            (true, Some(due)) if due <= now.instant => {
                let op = crate::store::alive(shared.holder());
                shared.send(op);
                shared.alive_due = Some(now.instant + crate::store::HOLDS_RENEW);
            }
            (true, Some(_)) => {}
        }
    }

    /// What calls in flight hold, and how many hold it.
    #[cfg(test)]
    pub fn held(&self) -> (Picodollars, usize) {
        (self.flights.total(), self.flights.len())
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
                if asked.estimate.0 > 0 {
                    shared.send(crate::store::unhold(client, &asked.hold, asked.now));
                }
            }
            return None;
        }
        let decided = match reply {
            StoreReply::Reserve {
                reached,
                value,
                held,
            } => match crate::store::reserved((reached, value, held), asked.limits, asked.now) {
                Ok(Ok(())) => None,
                Ok(Err(exceeded)) => Some(Reserved::Refused(exceeded)),
                Err(why) => Some(shared.without_store(asked.limits, why.to_string())),
            },
            StoreReply::Unavailable(why) => Some(shared.without_store(asked.limits, why)),
            StoreReply::Done | StoreReply::Rows(_) => {
                let why = "the store answered a reserve as if it were another operation".to_owned();
                Some(shared.without_store(asked.limits, why))
            }
        };
        if let Some(decided) = decided {
            return Some(decided);
        }
        // The store counted the call and holds its estimate: this instance lets it go.
        let store = (clients.name(asked.client).to_owned(), asked.hold);
        let hold = self.hold(asked.client, Some(store), asked.estimate, asked.now);
        Some(Reserved::Admitted(Reservation {
            counted_at: Some(asked.now),
            hold,
        }))
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
        self.unhold(call);
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
        self.unhold(call);
        let usage = end.report.usage.as_ref();
        let estimated = end.report.estimated;
        let cost = self.cost(end.model, usage, end.lane);
        let client = clients.name(call.client);
        if let Some(usage) = usage {
            if !estimated {
                let label = clients.label(call.client);
                self.metrics.usage(end.model, label, usage, &cost);
                if let Some(total) = cost.total() {
                    self.recent.observe(client, call.tool, total, usage);
                }
            }
            if let Some(spent) = cost.total().filter(|_| charge) {
                self.spend(clients, call.client, spent, now);
            }
        } else if let (Some(shared), Some(at), Some(_)) =
            (&mut self.shared, call.reservation.counted_at, end.failure)
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
    /// had not said, the estimate [`recent`] makes from its own client's recent calls of
    /// the profile, else the first-call bound, never below the input sent and the
    /// searches begun) against its client's spend, as any call is, so that a spend cap
    /// cannot be bypassed by cancelling just before each answer; counted and recorded as
    /// `cancelled`. Never given back.
    pub fn cancelled(&mut self, clients: &Clients, call: &CallOf, spent: &Report, now: u64) {
        self.unhold(call);
        let name = clients.name(call.client);
        let bound = self.bound(call.tool);
        let estimate = spent
            .usage
            .as_ref()
            .filter(|_| spent.estimated)
            .map(|known| self.recent.estimate(name, call.tool, known, &bound));
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
