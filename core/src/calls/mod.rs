//! The call engine: `tools/call` from admission to outcome, with attempts, timeouts,
//! retries with backoff, cancellation, queueing and progress. A sub-machine with its own
//! API: the [`Server`](crate::server::Server) feeds it and drains its [`CallEvent`]s in
//! one place; it knows nothing of MCP JSON, batches or framing.
//!
//! ```text
//!            start
//!               │ slot free?──no──▶ Queued ──slot frees──┐
//!               ▼                                        │
//!   ┌──────▶ Running(attempt, deadline) ◀────────────────┘
//!   │           │ reply / failure / deadline
//!   │           ├─ answer or permanent failure ──▶ Finished, removed
//!   │           ├─ param refused ──▶ Running (new attempt, inside the model's limits)
//!   │           └─ transient, retries left ──▶ Backoff(until)
//!   └──────────────────────────────────────────────┘ (until passes)
//! ```
//! A cancel removes the call from any state ([`CallEvent::Dropped`]); it never finishes.
//!
//! Methods follow the crate's naming: `handle_*` for input, `poll_*` for output, plain
//! verbs for commands. Time always comes in as `now`.

mod call;
mod ending;
mod events;
mod incoming;
mod plan;
mod progress;
mod recover;
pub mod retry;
mod settings;
mod step;
mod work;

use crate::io::{AttemptId, Now};
pub use crate::io::{CallKey, Requester};
use crate::jsonrpc::RequestId;
use crate::mcp::ProgressToken;
use crate::metrics::AttemptEnd;
use crate::openai::UpstreamFailure;
pub use crate::openai::{ModelSource, Report, Upstream};
use crate::timers::Timers;
use call::{Call, CallState, Progress};
pub use events::{AttemptTrace, CallEvent, Planned, Refused};
pub use plan::Ask;
use plan::ModelLimits;
use retry::Jitter;
pub use settings::Settings;
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

pub use call::CallId;
pub use work::{Stored, StoredState, Work, MAX_FETCHES, MAX_IDENTITY_FETCHES};

/// The call engine. `C` is what the owner attaches to each call to route its outcome.
///
/// Invariants, checked by [`CallEngine::check`] in debug builds after every input:
/// - `by_request` and `calls` hold the same calls, each under its own request id;
/// - `by_attempt` maps exactly the `Running` calls' attempts to them;
/// - `slots` counts the calls whose work takes a slot and that left the queue: a slot is
///   held from the first attempt to the end, backoffs included, so retries never run
///   beyond `max_inflight`;
/// - `fetches` counts the calls that take no slot (reads, cancels, lookups, identity
///   fetches), `identity_fetches` those of them fetching for the identity provider;
/// - `queue` holds exactly the `Queued` calls, each once, oldest first;
/// - `timers` holds a live entry for every deadline of every call (stale extra entries
///   allowed), and its top is live after [`Timers::prune`](crate::timers::Timers::prune).
pub struct CallEngine<C> {
    settings: Settings,
    calls: BTreeMap<CallId, Call<C>>,
    by_request: BTreeMap<CallKey, CallId>,
    by_attempt: BTreeMap<AttemptId, CallId>,
    /// Calls holding a `max_inflight` slot (see the invariants).
    slots: usize,
    /// Reads and cancels in the engine (they take no slot).
    fetches: usize,
    /// Of `fetches`, those of the identity provider's documents (their own room).
    identity_fetches: usize,
    queue: VecDeque<CallId>,
    timers: Timers<CallId>,
    limits: ModelLimits,
    jitter: Jitter,
    next_call: CallId,
    next_attempt: u64,
    /// The number of the last internal work's key ([`Requester::Internal`]).
    next_internal: u64,
    events: VecDeque<CallEvent<C>>,
    /// The time of the latest input, for reports of calls ended without one.
    last_now: Option<Instant>,
    /// Attempts ended, by status or transport failure, for the metrics.
    attempt_ends: crate::metrics::Tally<AttemptEnd, u64>,
    /// Retries scheduled, for the metrics.
    retries: u64,
}

impl<C> CallEngine<C> {
    /// Upstream attempts ended so far, by status or transport failure, and the retries
    /// scheduled, for the metrics.
    pub fn attempt_counts(&self) -> (&crate::metrics::Tally<AttemptEnd, u64>, u64) {
        (&self.attempt_ends, self.retries)
    }
}

impl<C: Clone> CallEngine<C> {
    /// An engine with no calls; `seed` drives the backoff jitter.
    pub fn new(settings: Settings, seed: u64) -> Self {
        CallEngine {
            settings,
            calls: BTreeMap::new(),
            by_request: BTreeMap::new(),
            by_attempt: BTreeMap::new(),
            slots: 0,
            fetches: 0,
            identity_fetches: 0,
            queue: VecDeque::new(),
            timers: Timers::default(),
            limits: ModelLimits::default(),
            jitter: Jitter::new(seed),
            next_call: 0,
            next_attempt: 0,
            next_internal: 0,
            events: VecDeque::new(),
            last_now: None,
            attempt_ends: Vec::new(),
            retries: 0,
        }
    }

    /// Calls (answers and creates) in flight or queued; reads and cancels do not count.
    pub fn len(&self) -> usize {
        self.calls.len() - self.fetches
    }

    /// Calls waiting for a slot.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// What the caller attached to each piece of work in flight or queued.
    pub fn contexts(&self) -> impl Iterator<Item = &C> {
        self.calls.values().map(|call| &call.context)
    }

    /// Whether a call with `key` is in flight or queued.
    pub fn contains(&self, key: &CallKey) -> bool {
        self.by_request.contains_key(key)
    }

    /// The calls `from` asked for.
    pub fn keys_from(&self, from: Requester) -> Vec<CallKey> {
        self.by_request
            .keys()
            .filter(|k| k.from == from)
            .cloned()
            .collect()
    }

    /// The calls of HTTP requests whose client id is `id` and whose context `of` accepts
    /// (a cancel sent on another connection names only the id; `of` says whose calls it
    /// may reach).
    pub fn exchanges_with_id(&self, id: &RequestId, of: impl Fn(&C) -> bool) -> Vec<CallKey> {
        self.by_request
            .iter()
            .filter(|(k, _)| &k.id == id && matches!(k.from, Requester::Exchange(_)))
            .filter(|(_, call)| self.calls.get(call).is_some_and(|c| of(&c.context)))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Whether no answer or create is in flight or queued (reads, cancels and lookups
    /// aside).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The request a call sends and what was changed to fit the model's known limits;
    /// see [`ModelLimits::plan`].
    pub fn plan(&self, ask: &Ask<'_>) -> Planned {
        let (mut plan, adjustments) = self.limits.plan(ask);
        // Only OpenAI's event stream is known; other services answer in one body.
        plan.stream = self.settings.stream && plan.api.streams();
        Planned { plan, adjustments }
    }

    /// Admits an answer: starts its first attempt, or queues it when every slot is taken.
    ///
    /// # Errors
    /// [`Refused`] when the id is in use or there is no room.
    pub fn start(
        &mut self,
        now: Now,
        key: CallKey,
        context: C,
        planned: Planned,
        progress: Option<ProgressToken>,
        access_date: String,
    ) -> Result<(), Refused> {
        self.admit(
            now,
            key,
            context,
            (Work::Answer, planned),
            progress,
            access_date,
        )
    }

    /// Admits the server's own work under a key of the engine's ([`Requester::Internal`]):
    /// a create of a stored response (with its plan, sent in background mode) takes a
    /// slot like an answer; a read or cancel, a model lookup or an identity fetch starts
    /// at once, at most [`MAX_FETCHES`] of them. `model` in the plan of a read names the
    /// model an answer without one is attributed to. Its end is the event its work
    /// names ([`CallEvent::Stored`], `ModelDate`, `Fetched`).
    ///
    /// # Errors
    /// [`Refused`] when the id is in use or there is no room.
    pub fn start_internal(
        &mut self,
        now: Now,
        context: C,
        work: Work,
        mut planned: Planned,
        access_date: String,
    ) -> Result<(), Refused> {
        planned.plan.background = work == Work::Create;
        planned.plan.stream = false;
        let key = self.mint();
        self.admit(now, key, context, (work, planned), None, access_date)
    }

    /// Admits an answer that works for a task rather than for a request: under a key of
    /// its own, which it returns (for a cancel to name).
    ///
    /// # Errors
    /// [`Refused`] when there is no room.
    pub fn start_for_task(
        &mut self,
        now: Now,
        context: C,
        planned: Planned,
        progress: Option<ProgressToken>,
        access_date: String,
    ) -> Result<CallKey, Refused> {
        let key = self.mint();
        let work = (Work::Answer, planned);
        self.admit(now, key.clone(), context, work, progress, access_date)?;
        Ok(key)
    }

    /// The key of the next internal work: a number of the engine's, never a client's id.
    fn mint(&mut self) -> CallKey {
        self.next_internal += 1;
        let n = self.next_internal;
        CallKey {
            from: Requester::Internal(n),
            id: RequestId::Int(n.to_string()),
        }
    }

    /// Whether a new call would be refused as busy: every slot taken, the queue full.
    pub fn is_full(&self) -> bool {
        self.slots >= self.settings.max_inflight && self.queue.len() >= self.settings.max_queue
    }

    fn admit(
        &mut self,
        now: Now,
        key: CallKey,
        context: C,
        (work, planned): (Work, Planned),
        progress: Option<ProgressToken>,
        access_date: String,
    ) -> Result<(), Refused> {
        let Planned { plan, adjustments } = planned;
        self.last_now = Some(now.instant);
        if self.by_request.contains_key(&key) {
            return Err(Refused::DuplicateId);
        }
        let running = self.slots;
        let busy = match &work {
            work if work.takes_slot() => self.is_full(),
            Work::Fetch(_) => self.identity_fetches >= MAX_IDENTITY_FETCHES,
            _ => self.fetches - self.identity_fetches >= MAX_FETCHES,
        };
        if busy {
            return Err(Refused::Busy {
                running,
                queued: self.queue.len(),
            });
        }
        let id = self.next_call;
        self.next_call += 1;
        let progress = progress.map(|token| Progress {
            token,
            sent: 0,
            next_at: now.instant,
            message: String::new(),
            last_sent: None,
            queued: VecDeque::new(),
        });
        if let Some(p) = &progress {
            self.timers.schedule(id, p.next_at);
        }
        let takes_slot = work.takes_slot();
        if !takes_slot {
            self.fetches += 1;
        }
        if matches!(work, Work::Fetch(_)) {
            self.identity_fetches += 1;
        }
        self.by_request.insert(key.clone(), id);
        self.calls.insert(
            id,
            Call {
                key,
                context,
                work,
                plan,
                adjustments,
                drift_retries: 0,
                retries: 0,
                attempts: 0,
                access_date,
                state: CallState::Queued,
                progress,
                incoming: None,
                last_byte: now.instant,
                admitted: now.instant,
                upstream: Upstream::default(),
                sent_bytes: 0,
                traced: None,
            },
        );
        if !takes_slot || running < self.settings.max_inflight {
            self.start_attempt(now, id);
        } else {
            self.queue.push_back(id);
            self.set_progress(now, id, "waiting for a free slot".into());
        }
        self.settle();
        Ok(())
    }

    /// Cancels the call with `key`: it ends with [`CallEvent::Dropped`]. Returns whether
    /// there was one.
    pub fn cancel(&mut self, now: Now, key: &CallKey) -> bool {
        self.last_now = Some(now.instant);
        let Some(&id) = self.by_request.get(key) else {
            return false;
        };
        if let Some(call) = self.remove(id) {
            let event = self.dropped(call);
            self.events.push_back(event);
        }
        self.start_queued(now);
        self.settle();
        true
    }

    /// Ends every call: with `failure` as its outcome when given, dropped otherwise.
    pub fn abort_all(&mut self, failure: Option<UpstreamFailure>) {
        let ids: Vec<CallId> = self.calls.keys().copied().collect();
        for id in ids {
            let Some(call) = self.remove(id) else {
                continue;
            };
            let event = match &failure {
                Some(f) => self.ended(call, call::Ending::Failed(f.clone())),
                None => self.dropped(call),
            };
            self.events.push_back(event);
        }
        self.settle();
    }

    /// The soonest deadline of any call.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let next = self.timers.peek().map(|(at, _)| at);
        debug_assert_eq!(
            next,
            self.calls.values().flat_map(Call::deadlines).min(),
            "the timer heap is out of step with the calls"
        );
        next
    }

    /// The next thing the engine asks for.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<CallEvent<C>> {
        self.events.pop_front()
    }

    /// Drops stale timers and checks the invariants; every public input ends with it.
    fn settle(&mut self) {
        let calls = &self.calls;
        self.timers.prune(
            |at, id| {
                calls
                    .get(id)
                    .is_some_and(|c| c.deadlines().any(|d| d == at))
            },
            calls.len(),
            || {
                calls
                    .iter()
                    .flat_map(|(id, c)| c.timer_entries(*id))
                    .collect()
            },
        );
        #[cfg(debug_assertions)]
        self.check();
    }

    /// Asserts the invariants listed on the type.
    #[cfg(debug_assertions)]
    fn check(&self) {
        assert_eq!(self.by_request.len(), self.calls.len());
        for (rid, id) in &self.by_request {
            assert_eq!(self.calls.get(id).map(|c| &c.key), Some(rid));
        }
        let running = self
            .calls
            .values()
            .filter(|c| matches!(c.state, CallState::Running { .. }))
            .count();
        assert_eq!(running, self.by_attempt.len());
        let slots = self
            .calls
            .values()
            .filter(|c| c.work.takes_slot() && c.state != CallState::Queued)
            .count();
        assert_eq!(slots, self.slots);
        let fetches = self.calls.values().filter(|c| !c.work.takes_slot()).count();
        assert_eq!(fetches, self.fetches);
        let identity = self
            .calls
            .values()
            .filter(|c| matches!(c.work, Work::Fetch(_)))
            .count();
        assert_eq!(identity, self.identity_fetches);
        for (attempt, id) in &self.by_attempt {
            let state = self.calls.get(id).map(|c| c.state);
            assert!(matches!(state, Some(CallState::Running { attempt: a, .. }) if a == *attempt));
        }
        let queued = self
            .calls
            .values()
            .filter(|c| c.state == CallState::Queued)
            .count();
        assert_eq!(queued, self.queue.len());
        for id in &self.queue {
            assert_eq!(self.calls.get(id).map(|c| c.state), Some(CallState::Queued));
        }
    }
}

#[cfg(test)]
mod tests;
