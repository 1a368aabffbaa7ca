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
mod incoming;
mod plan;
pub mod retry;
mod step;
pub(crate) mod timers;
mod work;

use crate::io::{AttemptId, ExchangeId, HttpRequest, Now};
use crate::jsonrpc::RequestId;
use crate::mcp::ProgressToken;
use crate::openai::{Adjustment, Answer, RequestPlan, UpstreamFailure};
use crate::settings::ServerConfig;
use call::{Call, CallState, Progress};
pub use plan::Ask;
use plan::ModelLimits;
use retry::Jitter;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};
use timers::{CallId, Timers};
pub use work::{Stored, StoredState, Work, MAX_FETCHES};

/// Who asked for a call. Request ids are unique per requester only: the stdio client
/// has one id space, and each HTTP request is its own (two HTTP clients may both use 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Requester {
    /// The client on stdin.
    Stdio,
    /// One HTTP request, whose response carries the reply.
    Exchange(ExchangeId),
    /// A task's work (its number): a call that answers into the task store, or work on a
    /// background task's stored response; never a reply to a request of its own.
    Task(u64),
}

/// A call's identity in the engine: its requester and the client's request id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallKey {
    /// Who asked.
    pub from: Requester,
    /// The client's id.
    pub id: RequestId,
}

impl From<RequestId> for CallKey {
    /// A call from the stdio client.
    fn from(id: RequestId) -> CallKey {
        CallKey {
            from: Requester::Stdio,
            id,
        }
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.from {
            Requester::Stdio => write!(f, "{}", self.id),
            Requester::Exchange(exchange) => write!(f, "{} (HTTP {exchange})", self.id),
            Requester::Task(n) => write!(f, "task call {n}"),
        }
    }
}

/// What the engine asks of its owner.
#[derive(Debug, PartialEq)]
pub enum CallEvent<C> {
    /// Start this HTTP attempt.
    Send(HttpRequest),
    /// Abort this attempt; its completion will be ignored.
    Abort(AttemptId),
    /// Tell the client how the call is doing (`progress` strictly increases per call).
    Progress {
        /// The call's context.
        context: C,
        /// The client's token.
        token: ProgressToken,
        /// The count so far.
        progress: u64,
        /// What the call is doing.
        message: String,
    },
    /// The call ended with an answer or a failure.
    Finished {
        /// The call's context.
        context: C,
        /// The answer, or why there is none.
        outcome: Result<Answer, UpstreamFailure>,
        /// Retries used.
        retries: u32,
        /// What the call used.
        report: Report,
    },
    /// Work on a stored response ended: what the reply said of it, or why there is none.
    Stored {
        /// The call's context.
        context: C,
        /// The response as read, or the failure.
        outcome: Result<Stored, UpstreamFailure>,
        /// Retries used.
        retries: u32,
        /// What the call used.
        report: Report,
    },
    /// The call ended without an outcome (cancelled, or aborted silently).
    Dropped {
        /// The call's context.
        context: C,
    },
}

/// A call's request, and what was changed in it to fit the model's known limits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Planned {
    /// What every attempt sends.
    pub plan: RequestPlan,
    /// The changes, for the usage `_meta`.
    pub adjustments: Vec<Adjustment>,
}

/// Which model a call asked for, and which setting named it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelSource {
    /// The model id.
    pub model: String,
    /// Such as `model_profiles.answer.model`.
    pub setting: &'static str,
}

impl ModelSource {
    fn of(plan: RequestPlan) -> ModelSource {
        ModelSource {
            model: plan.model,
            setting: plan.model_setting,
        }
    }
}

/// What a finished call used: the upstream's usage (when it said), attempts, wall time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Tokens, searches and the response id, from the answer.
    pub usage: Option<crate::openai::Usage>,
    /// What was changed to fit the model's limits (known before, or learned from a 400).
    pub adjustments: Vec<Adjustment>,
    /// The model called and the setting it came from, for advice (empty when not known).
    pub model: ModelSource,
    /// Attempts made.
    pub attempts: u32,
    /// From admission to the outcome.
    pub wall: Duration,
}

/// Why a call was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// A call with the same request id is in flight.
    DuplicateId,
    /// Every slot and the whole queue are taken.
    Busy {
        /// Calls running.
        running: usize,
        /// Calls queued.
        queued: usize,
    },
}

/// The engine's fixed settings, from the server configuration.
pub struct Settings {
    pub max_inflight: usize,
    pub max_queue: usize,
    pub timeout: Duration,
    pub max_retries: u32,
    pub progress_interval: Duration,
    pub max_citations: usize,
    /// `{base_url}/responses`.
    pub url: String,
    /// The instructions, encoded once as a JSON string for every request body.
    pub instructions_json: Vec<u8>,
    /// Ask for answers as event streams.
    pub stream: bool,
    /// An attempt that receives no byte for this long fails.
    pub idle_timeout: Duration,
    /// Least wait before a read or cancel of a stored response is retried (the tasks'
    /// poll interval), so a response is fetched at most once per interval.
    pub fetch_pace: Duration,
}

impl Settings {
    /// The engine's part of `config`.
    pub fn from_config(config: &ServerConfig) -> Self {
        // Serialising a string cannot fail.
        #[allow(clippy::expect_used)]
        let instructions_json =
            serde_json::to_vec(&config.instructions).expect("a string is always valid JSON");
        Settings {
            max_inflight: config.max_inflight,
            max_queue: config.max_queue,
            timeout: config.timeout,
            max_retries: config.max_retries,
            progress_interval: config.progress_interval,
            max_citations: config.max_citations,
            url: format!("{}/responses", config.base_url.trim_end_matches('/')),
            instructions_json,
            stream: config.stream,
            idle_timeout: config.idle_timeout,
            fetch_pace: config.tasks.poll_interval,
        }
    }
}

/// The call engine. `C` is what the owner attaches to each call to route its outcome.
///
/// Invariants, checked by [`CallEngine::check`] in debug builds after every input:
/// - `by_request` and `calls` hold the same calls, each under its own request id;
/// - `by_attempt` maps exactly the `Running` calls' attempts to them;
/// - `slots` counts the calls whose work takes a slot and that left the queue: a slot is
///   held from the first attempt to the end, backoffs included, so retries never run
///   beyond `max_inflight`;
/// - `fetches` counts the calls whose work is a read or cancel;
/// - `queue` holds exactly the `Queued` calls, each once, oldest first;
/// - `timers` holds a live entry for every deadline of every call (stale extra entries
///   allowed), and its top is live after [`Timers::prune`](timers::Timers::prune).
pub struct CallEngine<C> {
    settings: Settings,
    calls: BTreeMap<CallId, Call<C>>,
    by_request: BTreeMap<CallKey, CallId>,
    by_attempt: BTreeMap<AttemptId, CallId>,
    /// Calls holding a `max_inflight` slot (see the invariants).
    slots: usize,
    /// Reads and cancels in the engine (they take no slot).
    fetches: usize,
    queue: VecDeque<CallId>,
    timers: Timers,
    limits: ModelLimits,
    jitter: Jitter,
    next_call: CallId,
    next_attempt: u64,
    events: VecDeque<CallEvent<C>>,
    /// The time of the latest input, for reports of calls ended without one.
    last_now: Option<Instant>,
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
            queue: VecDeque::new(),
            timers: Timers::default(),
            limits: ModelLimits::default(),
            jitter: Jitter::new(seed),
            next_call: 0,
            next_attempt: 0,
            events: VecDeque::new(),
            last_now: None,
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

    /// The calls of HTTP requests whose client id is `id` (a cancel sent on another
    /// connection names only the id).
    pub fn exchanges_with_id(&self, id: &RequestId) -> Vec<CallKey> {
        self.by_request
            .keys()
            .filter(|k| &k.id == id && matches!(k.from, Requester::Exchange(_)))
            .cloned()
            .collect()
    }

    /// Whether no work at all is in flight or queued.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The request a call sends and what was changed to fit the model's known limits;
    /// see [`ModelLimits::plan`].
    pub fn plan(&self, ask: &Ask<'_>) -> Planned {
        let (mut plan, adjustments) = self.limits.plan(ask);
        plan.stream = self.settings.stream;
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

    /// Admits work on a stored response: a create (with its plan, sent in background
    /// mode) takes a slot like an answer; a read or cancel starts at once, at most
    /// [`MAX_FETCHES`] of them. `model` in the plan of a read names the model an answer
    /// without one is attributed to. Its end is a [`CallEvent::Stored`].
    ///
    /// # Errors
    /// [`Refused`] when the id is in use or there is no room.
    pub fn start_stored(
        &mut self,
        now: Now,
        key: CallKey,
        context: C,
        work: Work,
        mut planned: Planned,
        access_date: String,
    ) -> Result<(), Refused> {
        planned.plan.background = work == Work::Create;
        planned.plan.stream = false;
        let work = match work {
            // An answer is not stored; as a create it would not be read back.
            Work::Answer => Work::Create,
            other => other,
        };
        self.admit(now, key, context, (work, planned), None, access_date)
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
        let busy = if work.takes_slot() {
            running >= self.settings.max_inflight && self.queue.len() >= self.settings.max_queue
        } else {
            self.fetches >= MAX_FETCHES
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
            self.events.push_back(CallEvent::Dropped {
                context: call.context,
            });
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
                None => CallEvent::Dropped {
                    context: call.context,
                },
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
