//! Tasks backed by OpenAI background mode (`tasks.openai_background`): the task *is* a
//! stored OpenAI response. Creating one POSTs the request in background mode and answers
//! with a task id sealed over the response id, its creation time and ttl; `tasks/get`,
//! `tasks/result` and `tasks/cancel` read `GET /responses/{id}` and call `POST
//! /responses/{id}/cancel`. No state is needed to serve a task: any instance holding the
//! same key serves any task, also after a restart.
//!
//! Every upstream request is work of the call engine ([`Work`]): its attempts, deadlines,
//! retries (backoff, jitter, `Retry-After`), admission (a create takes a `max_inflight`
//! slot) and fitting to the model's limits are the answers' own. What is kept here is,
//! per response, the last state read, the requests waiting for the next one, and when the
//! next read may start: one per poll interval, whatever the reads' outcomes.
//!
//! ```text
//!   tasks/get ──stale?──▶ read ──engine──▶ Stored ──▶ remember ──▶ answer the waiters
//!      │ fresh, or a read in flight            │ transient failure: the last state;
//!      └──▶ answer from the last state          │ tasks/result waits for the next poll
//! ```

use super::routing::{Context, Dispatched, Job, Pending, ReplyTo, TaskStart};
use super::{after, Now, Server};
use crate::calls::timers::Timers;
use crate::calls::{CallKey, Planned, Refused, Report, Requester, Stored, StoredState, Work};
use crate::jsonrpc::{ErrorKind, Reply, Request, RequestId, RpcError};
use crate::mcp::failure::ToolFailure;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::openai::{FailureKind, RequestPlan, UpstreamFailure};
use crate::tasks::{BackgroundRef, Outcome, Status, Task};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Requests one response may hold waiting.
const MAX_WAITING: usize = 16;

/// The background backing's state. See the module docs.
///
/// Invariant: a live entry of `polls` is `(at, id)` with `responses[id].poll_at ==
/// Some(at)`; every response with waiters and no read in flight has a `poll_at`.
#[derive(Default)]
pub(super) struct Background {
    responses: BTreeMap<String, Response>,
    /// Response ids in the order first seen, for the cap (`tasks.max_tasks`).
    order: VecDeque<String>,
    /// When responses are read again for their waiters.
    polls: Timers<String>,
}

#[derive(Default)]
struct Response {
    /// The last state read.
    seen: Option<Seen>,
    /// A read is in the engine.
    reading: bool,
    /// The earliest the next read may start (one per poll interval).
    next_read: Option<Instant>,
    /// Requests waiting for the next state.
    waiting: Vec<Pending>,
    /// When the waiters get their next read.
    poll_at: Option<Instant>,
}

/// A response's last known state.
#[derive(Clone)]
struct Seen {
    status: Status,
    outcome: Option<Outcome>,
    updated: u64,
    read_at: Instant,
}

impl Background {
    fn response(&mut self, id: &str, cap: usize) -> &mut Response {
        if !self.responses.contains_key(id) {
            self.order.push_back(id.to_owned());
            self.evict_beyond(cap);
        }
        self.responses.entry(id.to_owned()).or_default()
    }

    /// Forgets the oldest idle responses beyond `cap` (those read or waited on stay).
    fn evict_beyond(&mut self, cap: usize) {
        let mut kept = VecDeque::new();
        while self.order.len() + kept.len() > cap {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            let busy = self
                .responses
                .get(&old)
                .is_some_and(|r| r.reading || !r.waiting.is_empty());
            if busy {
                kept.push_back(old);
            } else {
                self.responses.remove(&old);
            }
        }
        while let Some(id) = kept.pop_back() {
            self.order.push_front(id);
        }
    }

    /// Reads `id` again for its waiters at `at`.
    fn schedule_poll(&mut self, id: &str, at: Instant) {
        if let Some(r) = self.responses.get_mut(id) {
            if r.poll_at.is_none_or(|p| at < p) {
                r.poll_at = Some(at);
                self.polls.schedule(id.to_owned(), at);
            }
        }
    }

    /// Drops stale poll entries from the top, so the next deadline is a live one.
    fn settle(&mut self) {
        let responses = &self.responses;
        let live =
            |at: Instant, id: &String| responses.get(id).is_some_and(|r| r.poll_at == Some(at));
        self.polls.prune(live, responses.len(), || {
            responses
                .iter()
                .filter_map(|(id, r)| r.poll_at.map(|at| (at, id.clone())))
                .collect()
        });
    }

    /// The next poll.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.polls.peek().map(|(at, _)| at)
    }
}

impl Server {
    /// A task-augmented `tools/call` in background mode: creates the response for OpenAI
    /// to run and store; answered once OpenAI has given it its id.
    pub(super) fn start_background_task(
        &mut self,
        now: Now,
        request_id: RequestId,
        reply_to: ReplyTo,
        version: ProtocolVersion,
        start: TaskStart,
    ) -> Dispatched {
        let settings = &self.config.tasks;
        let ttl = start
            .ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(settings.default_ttl)
            .min(settings.max_ttl);
        let pending = Pending {
            reply_to,
            id: request_id.clone(),
            method: Method::ToolsCall,
            version,
            reference: None,
        };
        let job = Job::Create {
            pending,
            created: now.unix_secs,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
        };
        match self.start_job(now, job, Work::Create, start.plan, start.today) {
            Ok(()) => Dispatched::Pending,
            Err(refused) => Dispatched::answer(request_id, refusal(refused, version)),
        }
    }

    /// `tasks/*` for a background task `reference`.
    pub(super) fn on_background_task(
        &mut self,
        now: Now,
        request: Request,
        method: Method,
        reply_to: ReplyTo,
        version: ProtocolVersion,
        reference: BackgroundRef,
    ) -> Dispatched {
        let pending = Pending {
            reply_to,
            id: request.id,
            method: method.clone(),
            version,
            reference: Some(reference.clone()),
        };
        let id = reference.response_id.clone();
        let cap = self.config.tasks.max_tasks;
        let poll = self.config.tasks.poll_interval;
        let r = self.background.response(&id, cap);
        let seen = r.seen.clone();
        let terminal = seen.as_ref().is_some_and(|s| s.status.is_terminal());
        // Fresh: read (or created) within the poll interval, or the pace holds reads back.
        let fresh = seen
            .as_ref()
            .is_some_and(|s| now.instant < after(s.read_at, poll))
            || r.next_read.is_some_and(|at| now.instant < at);
        let reading = r.reading;
        let answered = match method {
            Method::TasksUpdate => Some(Ok(shape::complete(shape::empty_result(), version))),
            Method::TasksCancel => match &seen {
                Some(seen) if terminal => {
                    let view = self.view(&reference, seen);
                    Some(cancel_answer(&view, self.poll(), version))
                }
                _ => {
                    let job = Job::Cancel {
                        response_id: id.clone(),
                        pending: pending.clone(),
                    };
                    let plan = Planned::default();
                    let today = crate::date::Date::tokyo(now.unix_secs).to_string();
                    let started = self.start_job(now, job, Work::Cancel(id.clone()), plan, today);
                    started.err().map(|refused| refusal(refused, version))
                }
            },
            // The last state serves while it is fresh or a read is on its way; a task
            // that ended never changes.
            _ => match &seen {
                Some(seen) if terminal || (method == Method::TasksGet && (fresh || reading)) => {
                    let view = self.view(&reference, seen);
                    Some(answer_for(&pending, &view, self.poll()))
                }
                _ => self.wait_for_read(now, &id, pending.clone()).err().map(Err),
            },
        };
        self.background.settle();
        match answered {
            Some(answer) => Dispatched::answer(pending.id, answer),
            None => Dispatched::Pending,
        }
    }

    /// The client of exchange `x` left: its waiting requests wait no more.
    pub(super) fn forget_background_waiters(&mut self, x: crate::io::ExchangeId) {
        for r in self.background.responses.values_mut() {
            r.waiting.retain(|p| p.reply_to != ReplyTo::Exchange(x));
            if r.waiting.is_empty() {
                r.poll_at = None;
            }
        }
        self.background.settle();
    }

    /// Background polls that came due: their responses are read.
    pub(super) fn on_background_timeout(&mut self, now: Now) {
        for (at, id) in self.background.polls.take_due(now.instant) {
            let due = self
                .background
                .responses
                .get_mut(&id)
                .filter(|r| r.poll_at == Some(at));
            if let Some(r) = due {
                r.poll_at = None;
                self.read(now, &id);
            }
        }
        self.background.settle();
    }

    /// The engine finished work for `job`.
    pub(super) fn on_stored(
        &mut self,
        now: Now,
        job: Job,
        outcome: Result<Stored, UpstreamFailure>,
        retries: u32,
        report: &Report,
    ) {
        match job {
            Job::Create {
                pending,
                created,
                ttl_ms,
            } => {
                let answer = match outcome {
                    Ok(Stored {
                        id: Some(id),
                        state,
                    }) => {
                        let reference = BackgroundRef {
                            response_id: id.clone(),
                            created,
                            ttl_ms,
                        };
                        let seen = self.remember(now, &id, state, pending.version, report);
                        log::debug!("background task created for response {id}");
                        let view = self.view(&reference, &seen);
                        Ok(shape::create_task_result(
                            &view,
                            self.poll(),
                            pending.version,
                        ))
                    }
                    Ok(Stored { id: None, .. }) => {
                        let failure = UpstreamFailure::local(
                            FailureKind::InvalidResponse,
                            "OpenAI accepted the background request but gave no response id",
                        );
                        self.call_result(Err(failure), retries, report, pending.version)
                    }
                    Err(failure) => {
                        self.call_result(Err(failure), retries, report, pending.version)
                    }
                };
                self.answer(&pending, answer);
            }
            Job::Read { response_id } => {
                // The engine's last GET went out at most now: the next waits an interval.
                let next = after(now.instant, self.poll());
                if let Some(r) = self.background.responses.get_mut(&response_id) {
                    r.reading = false;
                    r.next_read = Some(r.next_read.map_or(next, |at| at.max(next)));
                }
                self.on_read(now, &response_id, outcome, report);
            }
            Job::Cancel {
                response_id,
                pending,
            } => {
                let seen = match outcome {
                    Ok(stored) => Ok(self.remember(
                        now,
                        &response_id,
                        stored.state,
                        ProtocolVersion::V2025_11_25,
                        report,
                    )),
                    Err(failure) if is_gone(&failure) => {
                        Ok(self.remember_gone(now, &response_id, report))
                    }
                    Err(failure) => Err(failure),
                };
                match (seen, pending.reference.clone()) {
                    (Ok(seen), Some(reference)) => {
                        let view = self.view(&reference, &seen);
                        let answer = cancel_answer(&view, self.poll(), pending.version);
                        self.answer(&pending, answer);
                        self.answer_background_waiters(now, &response_id, &seen);
                    }
                    (Err(failure), _) => {
                        let error = RpcError::new(
                            ErrorKind::UpstreamFailed,
                            format!(
                                "cancelling the task at OpenAI failed: {}; try tasks/cancel again in a moment",
                                failure.message
                            ),
                        );
                        self.answer(&pending, Err(error));
                    }
                    (Ok(_), None) => {}
                }
            }
        }
        self.background.settle();
    }

    /// A read of `response_id` ended.
    fn on_read(
        &mut self,
        now: Now,
        response_id: &str,
        outcome: Result<Stored, UpstreamFailure>,
        report: &Report,
    ) {
        let version = ProtocolVersion::V2025_11_25;
        let seen = match outcome {
            Ok(stored) => self.remember(now, response_id, stored.state, version, report),
            // OpenAI keeps stored responses for a limited time: the task ended.
            Err(failure) if is_gone(&failure) => self.remember_gone(now, response_id, report),
            Err(failure) => return self.read_failed(now, response_id, &failure),
        };
        self.answer_background_waiters(now, response_id, &seen);
    }

    /// A read failed for good (after the engine's retries): `tasks/get` gets the last
    /// state, or the failure; `tasks/result` waits for the next poll while reading again
    /// may help.
    fn read_failed(&mut self, now: Now, response_id: &str, failure: &UpstreamFailure) {
        let again =
            failure.kind.is_transient() || failure.status.is_some_and(|s| s == 429 || s >= 500);
        let seen = self
            .background
            .responses
            .get(response_id)
            .and_then(|r| r.seen.clone());
        self.settle_waiters(now, response_id, |server, pending| {
            if again && pending.method == Method::TasksResult {
                return None;
            }
            Some(match (&seen, &pending.reference) {
                (Some(seen), Some(reference)) if pending.method == Method::TasksGet => {
                    let view = server.view(reference, seen);
                    answer_for(pending, &view, server.poll())
                }
                _ => Err(RpcError::new(
                    ErrorKind::UpstreamFailed,
                    format!(
                        "reading the task from OpenAI failed: {}; poll again in a moment",
                        failure.message
                    ),
                )),
            })
        });
    }

    /// Answers whoever waited on `response_id` with `seen`; a `tasks/result` on a task
    /// still working waits for the next poll.
    fn answer_background_waiters(&mut self, now: Now, response_id: &str, seen: &Seen) {
        self.settle_waiters(now, response_id, |server, pending| {
            if pending.method == Method::TasksResult && !seen.status.is_terminal() {
                return None;
            }
            let reference = pending.reference.as_ref()?;
            let view = server.view(reference, seen);
            Some(answer_for(pending, &view, server.poll()))
        });
    }

    /// Answers each request waiting on `response_id` as `answer` says; those it gives no
    /// answer keep waiting, and the response is read again for them at the next poll.
    fn settle_waiters(
        &mut self,
        now: Now,
        response_id: &str,
        answer: impl Fn(&Server, &Pending) -> Option<Result<Value, RpcError>>,
    ) {
        let Some(r) = self.background.responses.get_mut(response_id) else {
            return;
        };
        let waiting = std::mem::take(&mut r.waiting);
        let next = r.next_read;
        let mut still = Vec::new();
        for pending in waiting {
            match answer(self, &pending) {
                Some(reply) => self.answer(&pending, reply),
                None => still.push(pending),
            }
        }
        if !still.is_empty() {
            if let Some(r) = self.background.responses.get_mut(response_id) {
                r.waiting = still;
            }
            let at = next.unwrap_or_else(|| after(now.instant, self.poll()));
            self.background.schedule_poll(response_id, at);
        }
    }

    /// Parks `pending` until the response's next read; starts it when one may start.
    ///
    /// # Errors
    /// Too many requests already wait on the response.
    fn wait_for_read(&mut self, now: Now, id: &str, pending: Pending) -> Result<(), RpcError> {
        let cap = self.config.tasks.max_tasks;
        let r = self.background.response(id, cap);
        if r.waiting.len() >= MAX_WAITING {
            return Err(RpcError::new(
                ErrorKind::Overloaded,
                "too many requests are waiting on this task; poll tasks/get less often",
            ));
        }
        r.waiting.push(pending);
        self.read(now, id);
        Ok(())
    }

    /// Reads a response's state: now when the pace allows, else at the next allowed time.
    fn read(&mut self, now: Now, id: &str) {
        let cap = self.config.tasks.max_tasks;
        let poll = self.poll();
        let r = self.background.response(id, cap);
        if r.reading {
            return;
        }
        if let Some(at) = r.next_read.filter(|at| now.instant < *at) {
            self.background.schedule_poll(id, at);
            return;
        }
        r.reading = true;
        r.next_read = Some(after(now.instant, poll));
        log::debug!("reading background response {id}");
        // A stored answer without a model names the answer profile's.
        let model = self
            .config
            .profiles
            .for_tool(crate::tools::Tool::Answer)
            .map(|p| p.model.clone())
            .unwrap_or_default();
        let plan = Planned {
            plan: RequestPlan {
                model,
                ..RequestPlan::default()
            },
            adjustments: Vec::new(),
        };
        let today = crate::date::Date::tokyo(now.unix_secs).to_string();
        let job = Job::Read {
            response_id: id.to_owned(),
        };
        if self
            .start_job(now, job, Work::Read(id.to_owned()), plan, today)
            .is_err()
        {
            // Every fetch slot is taken: the waiters are served at the next poll.
            if let Some(r) = self.background.responses.get_mut(id) {
                r.reading = false;
            }
            self.background.schedule_poll(id, after(now.instant, poll));
        }
    }

    /// Hands `job` to the call engine under a task number of its own.
    fn start_job(
        &mut self,
        now: Now,
        job: Job,
        work: Work,
        plan: Planned,
        today: String,
    ) -> Result<(), Refused> {
        self.next_task_call += 1;
        let n = self.next_task_call;
        let key = CallKey {
            from: Requester::Task(n),
            id: RequestId::Int(n.to_string()),
        };
        let started =
            self.calls
                .start_stored(now, key, Context::Background(job), work, plan, today);
        self.drain_calls();
        started
    }

    fn poll(&self) -> Duration {
        self.config.tasks.poll_interval
    }

    /// Records a response's state: its status, and the result a plain call returns for
    /// the same upstream response (shaped for `version`).
    fn remember(
        &mut self,
        now: Now,
        id: &str,
        state: StoredState,
        version: ProtocolVersion,
        report: &Report,
    ) -> Seen {
        let (status, outcome) = match state {
            StoredState::Working => (Status::Working, None),
            StoredState::Cancelled => (Status::Cancelled, None),
            StoredState::Ended(outcome, _) => {
                let result = self.call_result(outcome, 0, report, version);
                let outcome = Outcome::new(result);
                let status = if outcome.is_ok() {
                    Status::Completed
                } else {
                    Status::Failed
                };
                (status, Some(outcome))
            }
        };
        let seen = Seen {
            status,
            outcome,
            updated: now.unix_secs,
            read_at: now.instant,
        };
        let cap = self.config.tasks.max_tasks;
        self.background.response(id, cap).seen = Some(seen.clone());
        seen
    }

    /// Records that OpenAI no longer has the response: the task ended with a tool error
    /// that says so.
    fn remember_gone(&mut self, now: Now, id: &str, report: &Report) -> Seen {
        let failure = UpstreamFailure::local(
            FailureKind::Expired,
            "OpenAI no longer has this task's stored response (it keeps them for a limited time)",
        );
        let state = StoredState::Ended(Err(failure), Default::default());
        self.remember(now, id, state, ProtocolVersion::V2025_11_25, report)
    }

    fn answer(&mut self, pending: &Pending, answer: Result<Value, RpcError>) {
        let reply = match answer {
            Ok(result) => Reply::Success {
                id: pending.id.clone(),
                result,
            },
            Err(error) => Reply::Failure {
                id: Some(pending.id.clone()),
                error,
            },
        };
        self.route(pending.reply_to, Some(reply));
    }

    /// A task as the shapes want it, from its reference and its last known state.
    fn view(&self, reference: &BackgroundRef, seen: &Seen) -> Task<()> {
        let id = self.tasks.seal_background(reference);
        let ttl = Duration::from_millis(reference.ttl_ms);
        Task::view(
            id,
            (reference.created, seen.updated.max(reference.created)),
            ttl,
            seen.read_at,
            seen.status,
            seen.outcome.clone(),
        )
    }
}

/// Whether a failure says OpenAI no longer has the response.
fn is_gone(failure: &UpstreamFailure) -> bool {
    failure.status == Some(404)
}

/// The answer to a request the engine had no room for.
fn refusal(refused: Refused, version: ProtocolVersion) -> Result<Value, RpcError> {
    match refused {
        Refused::Busy { running, queued } => ToolFailure::Busy { running, queued }.reply(version),
        // Background work is keyed by its own numbers; kept for completeness.
        Refused::DuplicateId => Err(RpcError::new(
            ErrorKind::Overloaded,
            "the server is busy with this task's work; try again in a moment",
        )),
    }
}

/// `tasks/get` or `tasks/result` for a task in `view`.
fn answer_for(pending: &Pending, view: &Task<()>, poll: Duration) -> Result<Value, RpcError> {
    match pending.method {
        Method::TasksResult => super::tasks::payload(view.outcome.as_ref(), &view.id),
        _ => Ok(shape::task_state(view, poll, pending.version)),
    }
}

/// `tasks/cancel`'s answer once the task is in `view`.
fn cancel_answer(
    view: &Task<()>,
    poll: Duration,
    version: ProtocolVersion,
) -> Result<Value, RpcError> {
    if version.is_modern() {
        return Ok(shape::complete(shape::empty_result(), version));
    }
    if view.status == Status::Cancelled {
        return Ok(shape::task_state(view, poll, version));
    }
    Err(RpcError::new(
        ErrorKind::InvalidParams,
        format!(
            "task {} is already {} and cannot be cancelled",
            view.id,
            view.status.as_str()
        ),
    ))
}
