//! Tasks of this instance: a `tools/call` answered with a task handle at once (2025-11-25
//! when the request asks with `params.task`; 2026-07-28 when the client declares the
//! `io.modelcontextprotocol/tasks` extension), the call running as any call does, and
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `tasks/update` served from
//! the bounded store ([`crate::tasks`]).

use super::{Desk, DeskOut, Due, IfRefused, Start, Starting};
use crate::calls::{CallKey, Refused};
use crate::clients::ClientId;
use crate::io::Now;
use crate::jsonrpc::{RequestId, RpcError};
use crate::mcp::shape::TaskError;
use crate::mcp::task_end::Ending;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::routing::{Asker, Caller, Dispatched, ReplyTo, TaskStart};
use crate::tasks::{Status, Unknown};
use serde_json::Value;
use std::time::Duration;

/// A `tasks/result` waiting for its task to end.
pub(crate) type Waiter = Asker;

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

impl Desk {
    /// Creates a task of this instance living `ttl_ms` (default when `None`) for `call`,
    /// whose start it emits; answered in [`Desk::on_task_started`] or, refused, in
    /// [`Desk::on_refused`] as the plain call's would be.
    pub(super) fn start_local(
        &mut self,
        now: Now,
        (request_id, reply_to, version): (RequestId, ReplyTo, ProtocolVersion),
        start: TaskStart,
    ) -> Dispatched {
        let task_id = match self.tasks.create(now, start.ttl_ms, start.client) {
            Ok(task) => task.id.clone(),
            Err(full) => {
                let error = TaskError::StoreFull { tasks: full.tasks }.error();
                return Dispatched::answer(request_id, Err(error));
            }
        };
        let caller = Caller {
            id: request_id.clone(),
            reply_to,
            version,
            task: Some(task_id.clone()),
            tool: start.tool,
            trace: start.trace,
            client: start.client,
            received: now.instant,
            reserved_at: start.reserved_at,
            span: start.span,
            arrival: start.arrival,
        };
        let asker = Asker {
            id: request_id.clone(),
            reply_to,
            method: "tools/call",
            tool: Some(start.tool.name()),
            version,
            received: now.instant,
            span: start.span,
        };
        self.starting = Some((task_id.clone(), asker));
        self.emit.push(DeskOut::Start(Box::new(Start {
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
        Dispatched::Pending
    }

    /// The engine runs task `task_id`'s call as `key`: `asker` gets the task's handle, or,
    /// from a modern client, is held for the call's result a moment first.
    pub(super) fn started_local(
        &mut self,
        now: Now,
        task_id: &str,
        key: CallKey,
        asker: Asker,
    ) -> Dispatched {
        let poll = self.advertised_poll(now.unix_secs);
        let Ok(task) = self.tasks.get(task_id) else {
            return Dispatched::Pending;
        };
        task.call = Some(key);
        let owner = task.owner;
        // Never past the task's life: its handle must still serve when given.
        let window = self.settings.answer_within.min(task.ttl);
        let version = asker.version;
        if version.is_modern() && !window.is_zero() {
            // The client takes a result or a task: it gets the result if the call ends
            // within the window, else its task at the window's end.
            let until = now.instant + window;
            self.timers.schedule(Due::Window(task_id.to_owned()), until);
            self.held.hold(task_id.to_owned(), asker, until);
            return Dispatched::Pending;
        }
        let result = shape::create_task_result(task, poll, version);
        log::debug!("task {task_id} created");
        let owner = self.emit.name(owner).to_owned();
        match self.share_new_task((task_id, now.instant), &owner, Some((asker, Ok(result)))) {
            Some((asker, result)) => Dispatched::answer(asker.id, result),
            None => Dispatched::Pending,
        }
    }

    /// `tasks/*` (not `tasks/list`) of task `task_id` of this instance's store, asked
    /// by `client`.
    pub(super) fn local_request(
        &mut self,
        now: Now,
        (asker, method): (Asker, Method),
        task_id: &str,
        client: ClientId,
    ) -> Dispatched {
        let version = asker.version;
        let poll = self.poll_schedule();
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
                    return Dispatched::Pending;
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
            Method::TasksCancel => Ok(self.cancel_local(now, task_id, version)),
            other => Err(shape::method_not_found(other.as_str(), version)),
        };
        Dispatched::answer(asker.id, result)
    }

    /// `tasks/list`: a page of `client`'s tasks after the cursor.
    pub(super) fn list_local(
        &self,
        params: &serde_json::Map<String, Value>,
        version: ProtocolVersion,
        client: ClientId,
    ) -> Result<Value, RpcError> {
        let poll = self.poll_schedule();
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
    fn cancel_local(&mut self, now: Now, task_id: &str, version: ProtocolVersion) -> Value {
        let (call, waiters) = self
            .tasks
            .cancel(task_id, now.unix_secs, "cancelled by the client");
        if let Some(key) = call {
            self.emit.cancel(key);
        }
        self.answer_waiters(waiters, task_id, None);
        log::debug!("task {task_id} cancelled");
        let poll = self.poll_schedule();
        match self.tasks.get(task_id) {
            Ok(task) if !version.is_modern() => {
                shape::task_state(task, poll(task.created), version)
            }
            _ => shape::complete(shape::empty_result(), version),
        }
    }

    /// Records a task's call ending with `outcome`; answers whoever waited, and tells a
    /// stdio client of the change (2025-11-25).
    pub(super) fn finish_local(
        &mut self,
        task_id: &str,
        outcome: Result<Value, RpcError>,
        creator: (ReplyTo, ProtocolVersion),
    ) {
        if let Some(held) = self.held.release(task_id) {
            // Within the window: the result itself, as a plain call's; no task is left.
            self.prune_timers();
            self.tasks.discard(task_id);
            self.reply(held, outcome);
            return;
        }
        let ending = Ending::of(&outcome, creator.1);
        let waiters = self.tasks.finish(
            task_id,
            self.emit.unix,
            outcome,
            (ending.status, ending.message),
        );
        let outcome = self.tasks.get(task_id).ok().and_then(|t| t.outcome.clone());
        self.answer_waiters(waiters, task_id, outcome.as_ref());
        self.share_task_end(task_id);
        self.notify_task(task_id, creator);
    }

    /// A task's call ended without an outcome (cancelled, or stopped at shutdown).
    pub(super) fn drop_local(&mut self, task_id: &str, creator: (ReplyTo, ProtocolVersion)) {
        if let Some(held) = self.held.release(task_id) {
            self.prune_timers();
            self.tasks.discard(task_id);
            self.emit.push(DeskOut::Unanswered(held.reply_to));
            return;
        }
        if self
            .tasks
            .get(task_id)
            .is_ok_and(|t| t.status == Status::Failed)
        {
            // Ended by another instance (its lease had lapsed): nothing more to write.
            return;
        }
        let at = self.emit.unix;
        let (_, waiters) = self.tasks.cancel(task_id, at, "stopped before it finished");
        self.answer_waiters(waiters, task_id, None);
        self.share_task_end(task_id);
        self.notify_task(task_id, creator);
    }

    /// Answers the held calls whose window ended (at `now`) with their tasks.
    pub(super) fn release_held(&mut self, now: std::time::Instant, windows: Vec<(String, Asker)>) {
        let poll = self.poll_schedule();
        for (task_id, held) in windows {
            let Ok(task) = self.tasks.get(&task_id) else {
                continue;
            };
            let result = shape::create_task_result(task, poll(task.created), held.version);
            let owner = self.emit.name(task.owner).to_owned();
            log::debug!("task {task_id} created (its call outlived the answer window)");
            if let Some((held, result)) =
                self.share_new_task((&task_id, now), &owner, Some((held, Ok(result))))
            {
                self.reply(held, result);
            }
        }
    }

    /// The client of held calls left before hearing of their tasks: nobody can reach
    /// those tasks, so their calls stop.
    pub(super) fn forget_held(&mut self, reply_to: ReplyTo) {
        let released = self.held.release_all(reply_to);
        if !released.is_empty() {
            self.prune_timers();
        }
        for task_id in released {
            if let Ok(task) = self.tasks.get(&task_id) {
                if let Some(key) = task.call.take() {
                    self.emit.cancel(key);
                }
            }
            self.tasks.discard(&task_id);
        }
    }

    /// The poll interval to advertise for a task created at `created` (Unix seconds)
    /// as of the latest input.
    fn advertised_poll(&self, created: u64) -> Duration {
        (self.poll_schedule())(created)
    }

    /// The advertised poll interval by a task's creation time, as of the latest input.
    pub(super) fn poll_schedule(&self) -> impl Fn(u64) -> Duration {
        let (now, ceiling) = (self.emit.unix, self.settings.poll_interval);
        move |created| crate::tasks::poll_interval(now.saturating_sub(created), ceiling)
    }

    /// Drops the tasks whose ttl ran out, stopping their calls.
    pub(super) fn expire_local(&mut self, now: Now) {
        for expired in self.tasks.expire(now.instant) {
            log::debug!("task {} expired", expired.id);
            if let Some(key) = expired.call {
                self.emit.cancel(key);
            }
            let error = TaskError::NotFound {
                task_id: &expired.id,
                why: Unknown::Gone,
            }
            .error();
            for w in expired.waiters {
                self.reply(w, Err(error.clone()));
            }
        }
    }

    fn answer_waiters(
        &mut self,
        waiters: Vec<Waiter>,
        task_id: &str,
        outcome: Option<&crate::tasks::Outcome>,
    ) {
        for w in waiters {
            self.reply(w, payload(outcome, task_id));
        }
    }

    /// `notifications/tasks/status` to a 2025-11-25 client on stdio (over HTTP there is
    /// no stream left to carry it; clients poll).
    fn notify_task(&mut self, task_id: &str, (creator, version): (ReplyTo, ProtocolVersion)) {
        if !version.has_session_tasks() || matches!(creator, ReplyTo::Exchange(_)) {
            return;
        }
        let poll = self.poll_schedule();
        if let Ok(task) = self.tasks.get(task_id) {
            let note = shape::task_status_notification(task, poll(task.created), version);
            self.emit.push(DeskOut::Notify(note));
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
