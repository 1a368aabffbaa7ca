//! Tasks of this instance: a `tools/call` answered with a task handle at once (2025-11-25
//! when the request asks with `params.task`; 2026-07-28 when the client declares the
//! `io.modelcontextprotocol/tasks` extension), the call running as any call does, and
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `tasks/update` served from
//! the bounded store ([`crate::tasks`]).

use super::due::Due;
use super::emit::{Charge, DeskOut, Emit, IfRefused, Start, Starting};
use super::held::Held;
use crate::calls::{CallKey, Refused};
use crate::clients::ClientId;
use crate::io::{after, Now};
use crate::jsonrpc::{RequestId, RpcError};
use crate::mcp::shape::TaskError;
use crate::mcp::task_end::Ending;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::routing::{Call, Dispatched, ReplyTo, TaskStart, Ticket};
use crate::tasks::{Status, Unknown};
use crate::timers::Timers;
use serde_json::Value;
use std::time::Duration;

/// A `tasks/result` waiting for its task to end.
pub(crate) type Waiter = Ticket;

/// Tasks listed per page.
pub(super) const PAGE: usize = 50;
/// `tasks/result` requests one task may hold waiting: each is a request left open.
pub(super) const MAX_WAITERS: usize = 16;

/// The answer to a task-augmented call the engine refused: as the plain call's would be.
pub(super) fn task_refused(
    refused: Refused,
    request_id: &RequestId,
    version: ProtocolVersion,
) -> Result<serde_json::Value, RpcError> {
    match refused {
        Refused::Busy { running, queued } => {
            crate::mcp::failure::ToolFailure::Busy { running, queued }.reply(version)
        }
        // Task calls are keyed by their own numbers; kept for completeness.
        Refused::DuplicateId => Err(shape::duplicate_id(request_id)),
    }
}

/// See the module docs: this instance's tasks, the held windows, and the task whose
/// call is being started.
pub(super) struct Local {
    /// Tasks of this instance: `tools/call`s answered with a handle, their outcomes kept
    /// for their ttl.
    pub(super) tasks: crate::tasks::TaskStore<Waiter>,
    /// Modern task-augmented calls waiting a moment for their result before their task.
    pub(super) held: Held,
    /// The request whose task's call is being started, answered once the engine took it.
    starting: Option<(String, Ticket)>,
    settings: crate::settings::TaskSettings,
}

impl Local {
    /// No task yet; task numbers start at `first_task`.
    pub(super) fn new(settings: &crate::settings::TaskSettings, first_task: u64) -> Local {
        Local {
            tasks: crate::tasks::TaskStore::starting_at(settings.clone(), first_task),
            held: Held::default(),
            starting: None,
            settings: settings.clone(),
        }
    }

    /// The engine refused task `task_id`'s call: the task is dropped.
    pub(super) fn refused(&mut self, task_id: &str) {
        self.starting = None;
        self.tasks.discard(task_id);
    }

    /// The requests `gone` picks are no longer awaited: they wait no more, and the
    /// calls of the tasks their clients never heard of stop.
    pub(super) fn forget(&mut self, emit: &mut Emit, gone: impl Fn(&Ticket) -> bool + Copy) {
        // A `tasks/result` nobody awaits waits no more (and frees its slot).
        self.tasks.forget_waiters(gone);
        self.forget_held(emit, gone);
    }
    /// Creates a task of this instance living `ttl_ms` (default when `None`) for `call`,
    /// whose start it emits; answered in [`Desk::on_task_started`] or, refused, in
    /// [`Desk::on_refused`] as the plain call's would be.
    pub(super) fn start(
        &mut self,
        emit: &mut Emit,
        now: Now,
        asker: Ticket,
        start: TaskStart,
    ) -> Dispatched {
        let (request_id, version) = (asker.id.clone(), asker.reply_version());
        let task_id = match self.tasks.create(now, start.ttl_ms, asker.client) {
            Ok(task) => task.id.clone(),
            Err(full) => {
                // It never runs: its estimate is let go.
                let call = asker.call_of(true, start.reservation, start.arrival);
                emit.charge(Charge::Unhold(Box::new(call)));
                let error = TaskError::StoreFull { tasks: full.tasks }.error();
                return Dispatched::answer(request_id, Err(error));
            }
        };
        let caller = Call {
            ticket: asker.clone(),
            task: Some(task_id.clone()),
            reservation: start.reservation,
            arrival: start.arrival,
        };
        self.starting = Some((task_id.clone(), asker));
        emit.push(DeskOut::Start(Box::new(Start {
            work: Starting::Call {
                caller,
                progress: start.progress,
            },
            plan: start.plan,
            today: start.today,
            if_refused: IfRefused::Answer {
                id: request_id,
                version,
                task: Some(task_id),
            },
        })));
        Dispatched::Later
    }

    /// The engine runs task `task_id`'s call as `key`: `asker` is held for the call's
    /// result a moment (a modern client), or handed back with the task's handle.
    pub(super) fn started(
        &mut self,
        timers: &mut Timers<Due>,
        now: Now,
        (task_id, key): (&str, CallKey),
    ) -> Option<(Ticket, Result<Value, RpcError>)> {
        let (_, asker) = self.starting.take().filter(|(id, _)| id == task_id)?;
        let poll = (self.poll_schedule(now.unix_secs))(now.unix_secs);
        let task = self.tasks.get(task_id).ok()?;
        task.call = Some(key);
        // Never past the task's life: its handle must still serve when given.
        let window = self.settings.answer_within.min(task.ttl);
        let version = asker.reply_version();
        if version.is_modern() && !window.is_zero() {
            // The client takes a result or a task: it gets the result if the call ends
            // within the window, else its task at the window's end.
            let until = after(now.instant, window);
            timers.schedule(Due::Window(task_id.to_owned()), until);
            self.held.hold(task_id.to_owned(), asker, until);
            return None;
        }
        let result = shape::create_task_result(task, poll, version);
        log::debug!("task {task_id} created");
        Some((asker, Ok(result)))
    }

    /// `tasks/*` (not `tasks/list`) of task `task_id` of this instance's store, asked
    /// by `client`.
    pub(super) fn request(
        &mut self,
        emit: &mut Emit,
        now: Now,
        (asker, method): (Ticket, Method),
        task_id: &str,
        client: ClientId,
    ) -> Dispatched {
        let version = asker.reply_version();
        let poll = self.poll_schedule(emit.unix);
        let task = match self.tasks.get_for(task_id, client) {
            Ok(task) => task,
            Err(why) => {
                let error = TaskError::NotFound { task_id, why }.error();
                return Dispatched::answer(asker.id, Err(error));
            }
        };
        let result = match method {
            Method::TasksGet => Ok(shape::task_state(task, poll(task.created), version)),
            Method::TasksUpdate => Ok(shape::complete(shape::empty_result(), version)),
            Method::TasksResult => match task.status {
                Status::Working if task.waiters.len() >= MAX_WAITERS => {
                    let error = TaskError::TooManyWaiters {
                        task_id,
                        max: MAX_WAITERS,
                    };
                    Err(error.error())
                }
                Status::Working => {
                    task.waiters.push(asker);
                    return Dispatched::Later;
                }
                _ => payload(task.outcome.as_ref(), task_id),
            },
            Method::TasksCancel if task.status.is_terminal() => {
                if version.is_modern() {
                    Ok(shape::complete(shape::empty_result(), version))
                } else {
                    let error = TaskError::AlreadyEnded {
                        task_id,
                        status: task.status.as_str(),
                    };
                    Err(error.error())
                }
            }
            Method::TasksCancel => Ok(self.cancel_local(emit, now, task_id, version)),
            other => Err(shape::method_not_found(other.as_str(), version)),
        };
        Dispatched::answer(asker.id, result)
    }

    /// `tasks/list`: a page of `client`'s tasks after the cursor.
    pub(super) fn list(
        &self,
        unix: u64,
        params: &serde_json::Map<String, Value>,
        version: ProtocolVersion,
        client: ClientId,
    ) -> Result<Value, RpcError> {
        let poll = self.poll_schedule(unix);
        let cursor = params.get("cursor").and_then(Value::as_str);
        match self.tasks.page(cursor, PAGE, client) {
            Ok((page, next)) => {
                let tasks = page
                    .iter()
                    .map(|t| shape::task(t, poll(t.created), version))
                    .collect();
                Ok(shape::tasks_list_result(tasks, next))
            }
            Err(_) => Err(TaskError::BadCursor.error()),
        }
    }

    /// `tasks/cancel` of a working task: its call stops, its waiters hear it.
    fn cancel_local(
        &mut self,
        emit: &mut Emit,
        now: Now,
        task_id: &str,
        version: ProtocolVersion,
    ) -> Value {
        let (call, waiters) = self
            .tasks
            .cancel(task_id, now.unix_secs, "cancelled by the client");
        if let Some(key) = call {
            emit.cancel(key);
        }
        self.answer_waiters(emit, waiters, task_id, None);
        log::debug!("task {task_id} cancelled");
        let poll = self.poll_schedule(emit.unix);
        match self.tasks.get(task_id) {
            Ok(task) if !version.is_modern() => {
                shape::task_state(task, poll(task.created), version)
            }
            _ => shape::complete(shape::empty_result(), version),
        }
    }

    /// Records a task's call ending with `outcome`; answers whoever waited, and tells a
    /// stdio client of the change (2025-11-25). Whether a task ended (the store hears).
    pub(super) fn finish(
        &mut self,
        emit: &mut Emit,
        task_id: &str,
        outcome: Result<Value, RpcError>,
        creator: (ReplyTo, ProtocolVersion),
    ) -> bool {
        if let Some(held) = self.held.release(task_id) {
            // Within the window: the result itself, as a plain call's; no task is left.
            self.tasks.discard(task_id);
            emit.reply(held, outcome);
            return false;
        }
        let ending = Ending::of(&outcome, creator.1);
        let waiters =
            self.tasks
                .finish(task_id, emit.unix, outcome, (ending.status, ending.message));
        let outcome = self.tasks.get(task_id).ok().and_then(|t| t.outcome.clone());
        self.answer_waiters(emit, waiters, task_id, outcome.as_ref());
        self.notify_task(emit, task_id, creator);
        true
    }

    /// A task's call ended without an outcome (cancelled, or stopped at shutdown).
    /// Whether a task ended (the store hears).
    pub(super) fn drop(
        &mut self,
        emit: &mut Emit,
        task_id: &str,
        creator: (ReplyTo, ProtocolVersion),
    ) -> bool {
        if let Some(held) = self.held.release(task_id) {
            self.tasks.discard(task_id);
            emit.push(DeskOut::Unanswered(held));
            return false;
        }
        if self
            .tasks
            .get(task_id)
            .is_ok_and(|t| t.status == Status::Failed)
        {
            // Ended by another instance (its lease had lapsed): nothing more to write.
            return false;
        }
        let at = emit.unix;
        let (_, waiters) = self.tasks.cancel(task_id, at, "stopped before it finished");
        self.answer_waiters(emit, waiters, task_id, None);
        self.notify_task(emit, task_id, creator);
        true
    }

    /// The held calls whose window ended, each with its task's handle.
    pub(super) fn release_held(
        &mut self,
        unix: u64,
        windows: Vec<(String, Ticket)>,
    ) -> Vec<(String, Ticket, Result<Value, RpcError>)> {
        let poll = self.poll_schedule(unix);
        let mut handed = Vec::new();
        for (task_id, held) in windows {
            let Ok(task) = self.tasks.get(&task_id) else {
                continue;
            };
            let result = shape::create_task_result(task, poll(task.created), held.reply_version());
            log::debug!("task {task_id} created (its call outlived the answer window)");
            handed.push((task_id, held, Ok(result)));
        }
        handed
    }

    /// Held calls nobody awaits (their client left, or cancelled them, before hearing
    /// of their tasks): nobody can reach those tasks, so their calls stop.
    fn forget_held(&mut self, emit: &mut Emit, gone: impl Fn(&Ticket) -> bool) {
        for task_id in self.held.release_all(gone) {
            if let Ok(task) = self.tasks.get(&task_id) {
                if let Some(key) = task.call.take() {
                    emit.cancel(key);
                }
            }
            self.tasks.discard(&task_id);
        }
    }

    /// The advertised poll interval by a task's creation time, as of the latest input.
    pub(super) fn poll_schedule(&self, now: u64) -> impl Fn(u64) -> Duration {
        let ceiling = self.settings.poll_interval;
        move |created| crate::tasks::poll_interval(now.saturating_sub(created), ceiling)
    }

    /// Drops the tasks whose ttl ran out, stopping their calls.
    pub(super) fn expire(&mut self, emit: &mut Emit, now: Now) {
        for expired in self.tasks.expire(now.instant) {
            log::debug!("task {} expired", expired.id);
            if let Some(key) = expired.call {
                emit.cancel(key);
            }
            let error = TaskError::NotFound {
                task_id: &expired.id,
                why: Unknown::Gone,
            }
            .error();
            for w in expired.waiters {
                emit.reply(w, Err(error.clone()));
            }
        }
    }

    fn answer_waiters(
        &mut self,
        emit: &mut Emit,
        waiters: Vec<Waiter>,
        task_id: &str,
        outcome: Option<&crate::tasks::Outcome>,
    ) {
        for w in waiters {
            emit.reply(w, payload(outcome, task_id));
        }
    }

    /// `notifications/tasks/status` to a 2025-11-25 client on stdio (over HTTP there is
    /// no stream left to carry it; clients poll).
    fn notify_task(
        &mut self,
        emit: &mut Emit,
        task_id: &str,
        (creator, version): (ReplyTo, ProtocolVersion),
    ) {
        if !version.has_session_tasks() || matches!(creator, ReplyTo::Exchange(_)) {
            return;
        }
        let poll = self.poll_schedule(emit.unix);
        if let Ok(task) = self.tasks.get(task_id) {
            let note = shape::task_status_notification(task, poll(task.created), version);
            emit.push(DeskOut::Notify(note));
        }
    }
}

/// What `tasks/result` returns for a task that ended with `outcome` (`None`: cancelled).
pub(super) fn payload(
    outcome: Option<&crate::tasks::Outcome>,
    task_id: &str,
) -> Result<Value, RpcError> {
    match outcome.map(crate::tasks::Outcome::get) {
        Some(Ok(result)) => Ok(shape::task_payload(&result, task_id)),
        Some(Err(error)) => Err(error),
        None => Err(TaskError::CancelledWithoutResult { task_id }.error()),
    }
}
