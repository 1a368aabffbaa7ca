//! Tasks backed by OpenAI background mode (`tasks.openai_background`): the task *is* a
//! stored OpenAI response. Creating one POSTs the request in background mode and answers
//! with a task id sealed over the response id, its creation time and ttl; `tasks/get`,
//! `tasks/result` and `tasks/cancel` read `GET /responses/{id}` and call `POST
//! /responses/{id}/cancel`. No state is needed to serve a task: any instance holding the
//! same key serves any task, also after a restart.
//!
//! This file routes: every upstream request is work of the call engine ([`Work`]: its
//! attempts, retries with backoff and `Retry-After`, admission and fitting to the model's
//! limits are the answers' own), the poll schedule is [`Polls`] (the last state per
//! response, the waiters, one read per poll interval), and what is left here is turning
//! their answers into JSON-RPC replies.

use super::emit::{Charge, DeskOut, Emit, IfRefused, Start, Starting};
use crate::calls::{Planned, Refused, Report, Stored, StoredState, Work};
use crate::clients::ClientId;
use crate::io::Now;
use crate::jsonrpc::RpcError;
use crate::ledger::{CallOf, Reservation};
use crate::mcp::failure::ToolFailure;
use crate::mcp::shape::TaskError;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::openai::{FailureKind, UpstreamFailure};
use crate::routing::{BackgroundAsk, Dispatched, Job, TaskStart, Ticket};
use crate::tasks::background::{ReadEnd, Seen, Served, Want};
use crate::tasks::{BackgroundRef, Owner, Unknown};
use follow::{Followed, Follows};
use serde_json::Value;
use terms::Terms;

mod follow;
mod seen;
mod terms;

/// See the module docs: the background backend, its polls and the runs it follows.
pub(super) struct Background {
    /// The last state per response, the waiters, the polls.
    polls: crate::tasks::background::Polls<BackgroundAsk>,
    /// The background runs this instance started, followed until each is charged.
    follows: Follows,
    /// The settings, wording and prices its tasks are made on.
    terms: Terms,
}

impl Background {
    /// The background backend for `config`.
    pub(super) fn new(config: &crate::settings::ServerConfig) -> Background {
        let tasks = &config.tasks;
        Background {
            polls: crate::tasks::background::Polls::new(tasks.max_tasks, tasks.background_poll()),
            follows: Follows::default(),
            terms: Terms::new(config),
        }
    }

    /// The clients its followed runs are charged to.
    pub(super) fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.follows.clients()
    }

    /// When the polls are due next.
    pub(super) fn poll_timeout(&self) -> Option<std::time::Instant> {
        self.polls.poll_timeout()
    }

    /// Time passed: the reads due are emitted.
    pub(super) fn on_timeout(&mut self, emit: &mut Emit, now: Now) {
        self.polls.handle_timeout(now.instant);
        self.start_reads(emit, now);
    }

    /// A read of `id` the engine had no room for: its waiters are served at the next poll.
    pub(super) fn read_refused(&mut self, now: Now, id: &str) {
        self.polls.read_refused(now.instant, id);
    }

    /// Requests whose client left wait no more.
    pub(super) fn forget(&mut self, gone: impl Fn(&Ticket) -> bool) {
        self.polls.forget(|p: &BackgroundAsk| gone(&p.ticket));
    }

    /// A task-augmented `tools/call` in background mode: creates the response for OpenAI
    /// to run and store; answered once OpenAI has given it its id.
    pub(super) fn start(
        &mut self,
        emit: &mut Emit,
        now: Now,
        ticket: Ticket,
        start: TaskStart,
    ) -> Dispatched {
        let (request_id, version) = (ticket.id.clone(), ticket.reply_version());
        let (plan, ttl) = self.terms.create(start.ttl_ms, start.plan);
        let call = ticket.call_of(true, start.reservation, start.arrival.clone());
        let pending = BackgroundAsk {
            client: ticket.client,
            ticket,
            method: Method::ToolsCall,
            reference: None,
        };
        let job = Job::Create {
            pending,
            created: now.unix_secs,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            call,
            unheard: false,
        };
        let if_refused = IfRefused::Answer {
            id: request_id,
            version,
            task: None,
        };
        self.start_job(emit, (job, Work::Create), plan, start.today, if_refused);
        Dispatched::Later
    }

    /// `tasks/*` of a background task `reference`: refused when it has ended its life or
    /// is another client's, else served from OpenAI's stored response.
    pub(super) fn request(
        &mut self,
        emit: &mut Emit,
        now: Now,
        (asker, method): (Ticket, Method),
        (reference, task_id, client): (BackgroundRef, &str, ClientId),
    ) -> Dispatched {
        let end = reference.created.saturating_add(reference.ttl_ms / 1000);
        let why = if now.unix_secs > end {
            Some(Unknown::Gone)
        } else if !reference.client_may_see(emit.name(client)) {
            Some(Unknown::Foreign)
        } else {
            None
        };
        if let Some(why) = why {
            let error = TaskError::NotFound { task_id, why };
            return Dispatched::answer(asker.id, Err(error.error()));
        }
        let version = asker.reply_version();
        let id = reference.response_id.clone();
        let pending = BackgroundAsk {
            ticket: asker,
            method: method.clone(),
            reference: Some(reference),
            client,
        };
        let want = match method {
            Method::TasksUpdate => {
                let done = Ok(shape::complete(shape::empty_result(), version));
                return Dispatched::answer(pending.ticket.id, done);
            }
            Method::TasksCancel => return self.cancel_background(emit, now, id, pending),
            Method::TasksResult => Want::End,
            _ => Want::State,
        };
        let served = self.polls.handle_request(now.instant, &id, pending, want);
        self.start_reads(emit, now);
        match served {
            Served::Answer(pending, seen) => {
                let answer = self.terms.answer_with(&pending, &seen);
                Dispatched::answer(pending.ticket.id, answer)
            }
            Served::Parked => Dispatched::Later,
            Served::TooMany(pending) => {
                let task_id = pending
                    .reference
                    .as_ref()
                    .map(|r| self.terms.seal(r))
                    .unwrap_or_default();
                let max = crate::tasks::background::MAX_WAITING;
                let error = TaskError::TooManyWaiters {
                    task_id: &task_id,
                    max,
                };
                Dispatched::answer(pending.ticket.id, Err(error.error()))
            }
        }
    }

    /// `tasks/cancel`: answered from an ended state, else after OpenAI's cancel.
    fn cancel_background(
        &mut self,
        emit: &mut Emit,
        now: Now,
        id: String,
        pending: BackgroundAsk,
    ) -> Dispatched {
        let ended = self
            .polls
            .seen(&id)
            .filter(|s| s.status.is_terminal())
            .cloned();
        if let (Some(seen), Some(reference)) = (ended, &pending.reference) {
            let view = self
                .terms
                .view(reference, &seen, pending.ticket.reply_version());
            let answer = shape::cancel_answer(
                &view,
                self.terms.settings.background_poll(),
                pending.ticket.reply_version(),
            );
            return Dispatched::answer(pending.ticket.id, answer);
        }
        let (request_id, version) = (pending.ticket.id.clone(), pending.ticket.reply_version());
        let job = Job::Cancel {
            response_id: id.clone(),
            pending,
        };
        let today = crate::date::Date::tokyo(now.unix_secs).to_string();
        let plan = self.terms.read_plan();
        let if_refused = IfRefused::Answer {
            id: request_id,
            version,
            task: None,
        };
        self.start_job(emit, (job, Work::Cancel(id)), plan, today, if_refused);
        Dispatched::Later
    }

    /// The engine finished work for `job`.
    pub(super) fn on_stored(
        &mut self,
        emit: &mut Emit,
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
                call,
                unheard,
            } => {
                let of = (pending, (created, ttl_ms), call, unheard);
                self.on_created(emit, now, of, outcome, (retries, report));
            }
            Job::Read {
                response_id,
                waiter,
            } => {
                let waiter = waiter.as_ref();
                self.on_read(emit, now, &response_id, outcome, (report, waiter));
                self.start_reads(emit, now);
            }
            Job::Cancel {
                response_id,
                pending,
            } => self.on_cancelled(emit, now, &response_id, pending, (outcome, report)),
        }
    }

    /// A background create ended: the call is answered with its task, or with why
    /// there is none. A run nobody will hear of (`unheard`) is cancelled at once.
    fn on_created(
        &mut self,
        emit: &mut Emit,
        now: Now,
        (pending, (created, ttl_ms), call, unheard): (BackgroundAsk, (u64, u64), CallOf, bool),
        outcome: Result<Stored, UpstreamFailure>,
        (retries, report): (u32, &Report),
    ) {
        let answer = match outcome {
            Ok(Stored {
                id: Some(id),
                state,
            }) => {
                let reference = BackgroundRef {
                    response_id: id.clone(),
                    created,
                    ttl_ms,
                    tool: call.tool,
                    owner: Owner::named(emit.name(call.client)),
                };
                let counted = BackgroundAsk {
                    reference: Some(reference.clone()),
                    ..pending.clone()
                };
                let version = pending.ticket.reply_version();
                let working = state == StoredState::Working;
                let seen = self.seen_of(emit, now, &id, state, (version, report), Some(&counted));
                // Its count was spent: only the held estimate goes on with the run.
                let call = CallOf {
                    reservation: Reservation {
                        counted_at: None,
                        ..call.reservation
                    },
                    ..call
                };
                if !working {
                    // Ended at once: its end was counted above, its hold is let go.
                    emit.charge(Charge::Unhold(Box::new(call.clone())));
                }
                if working {
                    let followed = Followed {
                        reference: reference.clone(),
                        call,
                        model: report.model.model.clone(),
                    };
                    let to = (&mut *emit, &mut self.polls);
                    self.follows.start(to, now, followed, report);
                    if unheard {
                        log::debug!("cancelling background response {id}: its request went away");
                        let _ = self.cancel_background(emit, now, id.clone(), counted.clone());
                    }
                }
                self.settled(emit, now, &id, seen.clone());
                log::debug!("background task created for response {id}");
                let view = self.terms.view(&reference, &seen, version);
                let poll = self.terms.settings.background_poll();
                Ok(shape::create_task_result(&view, poll, version))
            }
            Ok(Stored { id: None, .. }) => {
                let failure = UpstreamFailure::local(
                    FailureKind::InvalidResponse,
                    "OpenAI accepted the background request but gave no response id",
                );
                self.terms
                    .create_failed(emit, &call, failure, (retries, report))
            }
            Err(failure) => self
                .terms
                .create_failed(emit, &call, failure, (retries, report)),
        };
        emit.reply(pending.ticket, answer);
    }

    /// A cancel of `response_id` ended: the request that asked is told the task's state.
    fn on_cancelled(
        &mut self,
        emit: &mut Emit,
        now: Now,
        response_id: &str,
        pending: BackgroundAsk,
        (outcome, report): (Result<Stored, UpstreamFailure>, &Report),
    ) {
        let waiter = Some(&pending);
        let seen = match outcome {
            Ok(stored) => {
                let version = ProtocolVersion::V2025_11_25;
                let of = (version, report);
                self.seen_of(emit, now, response_id, stored.state, of, waiter)
            }
            Err(failure) if is_gone(&failure) => self.gone(emit, now, response_id, report, waiter),
            Err(failure) => {
                let cause = &failure.message;
                let error = TaskError::CancelFailed { cause }.error();
                return emit.reply(pending.ticket, Err(error));
            }
        };
        self.settled(emit, now, response_id, seen.clone());
        self.after_follow_read(emit, now, response_id);
        if let Some(reference) = &pending.reference {
            let view = self
                .terms
                .view(reference, &seen, pending.ticket.reply_version());
            let poll = self.terms.settings.background_poll();
            let answer = shape::cancel_answer(&view, poll, pending.ticket.reply_version());
            emit.reply(pending.ticket, answer);
        }
    }

    /// A read of `response_id` ended: whoever waited gets the state, the last state, or
    /// the failure.
    fn on_read(
        &mut self,
        emit: &mut Emit,
        now: Now,
        response_id: &str,
        outcome: Result<Stored, UpstreamFailure>,
        (report, waiter): (&Report, Option<&BackgroundAsk>),
    ) {
        let version = ProtocolVersion::V2025_11_25;
        let (end, failure) = match outcome {
            Ok(stored) => {
                let of = (version, report);
                let seen = self.seen_of(emit, now, response_id, stored.state, of, waiter);
                (ReadEnd::State(seen), None)
            }
            // OpenAI keeps stored responses for a limited time: the task ended.
            Err(failure) if is_gone(&failure) => {
                let seen = self.gone(emit, now, response_id, report, waiter);
                (ReadEnd::State(seen), None)
            }
            Err(failure) => {
                let again = failure.kind.is_transient()
                    || failure.status.is_some_and(|s| s == 429 || s >= 500);
                (ReadEnd::Failed { again }, Some(failure))
            }
        };
        for (pending, seen) in self.polls.handle_read(now.instant, response_id, end) {
            let answer = match (&seen, &failure) {
                (Some(seen), _) => self.terms.answer_with(&pending, seen),
                (None, failure) => {
                    let cause = failure.as_ref().map_or("no answer", |f| f.message.as_str());
                    Err(TaskError::ReadFailed { cause }.error())
                }
            };
            emit.reply(pending.ticket.clone(), answer);
        }
        self.after_follow_read(emit, now, response_id);
    }

    /// Records a state learned outside a read and answers whoever waited for it.
    fn settled(&mut self, emit: &mut Emit, now: Now, id: &str, seen: Seen) {
        for (pending, seen) in self.polls.handle_state(now.instant, id, seen) {
            let answer = self.terms.answer_with(&pending, &seen);
            emit.reply(pending.ticket.clone(), answer);
        }
    }

    /// Starts the reads the poll schedule asks for.
    fn start_reads(&mut self, emit: &mut Emit, now: Now) {
        while let Some(id) = self.polls.poll_read() {
            log::debug!("reading background response {id}");
            let plan = self.terms.read_plan();
            let today = crate::date::Date::tokyo(now.unix_secs).to_string();
            let job = Job::Read {
                response_id: id.clone(),
                waiter: self.polls.first_waiter(&id).cloned(),
            };
            let work = Work::Read(id.clone());
            self.start_job(emit, (job, work), plan, today, IfRefused::ReadLater(id));
        }
    }

    /// After a state of `response_id` was learned: a followed run that outlived its
    /// task's life is charged as expired and given up.
    fn after_follow_read(&mut self, emit: &mut Emit, now: Now, response_id: &str) {
        if let Some((state, report)) = self.follows.outlived(&self.polls, now, response_id) {
            let version = ProtocolVersion::V2025_11_25;
            let _ = self.seen_of(emit, now, response_id, state, (version, &report), None);
            self.follows.give_up(&mut self.polls, response_id);
        }
    }

    /// Emits `job`'s start under a task number of its own.
    fn start_job(
        &mut self,
        emit: &mut Emit,
        (job, work): (Job, Work),
        plan: Planned,
        today: String,
        if_refused: IfRefused,
    ) {
        emit.push(DeskOut::Start(Box::new(Start {
            work: Starting::Stored { job, work },
            plan,
            today,
            if_refused,
        })));
    }
}

/// Whether a failure says OpenAI no longer has the response.
fn is_gone(failure: &UpstreamFailure) -> bool {
    failure.status == Some(404)
}

/// The answer to a request the engine had no room for.
pub(super) fn refusal(refused: Refused, version: ProtocolVersion) -> Result<Value, RpcError> {
    match refused {
        Refused::Busy { running, queued } => ToolFailure::Busy { running, queued }.reply(version),
        // Background work is keyed by its own numbers; kept for completeness.
        Refused::DuplicateId => Err(TaskError::WorkBusy.error()),
    }
}
