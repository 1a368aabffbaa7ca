//! Tasks served through the shared store (`server.store.url`), so that any instance
//! answers `tasks/*` for any task: the instance running a task's call writes its states
//! there ([`crate::store::tasks`]); `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel` are answered from what the store holds, on whichever instance they
//! arrive. Instances tell each other of ends and cancels through the store's channel
//! ([`crate::store::events`]): a cancel stops the call where it runs, an end wakes the
//! `tasks/result` requests waiting anywhere. Without a store none of this exists and the
//! local store ([`crate::tasks`]) answers, as before.

use super::routing::Asker;
use super::tasks::{payload, Waiter, MAX_WAITERS, PAGE};
use super::{Now, Server};
use crate::clients::ClientId;
use crate::jsonrpc::{RequestId, RpcError};
use crate::mcp::shape::{self, TaskError};
use crate::mcp::Method;
use crate::store::events::{self, StoreEvent};
use crate::store::tasks::{self as stored, Finished, StoredTask};
use crate::store::{StoreId, StoreOp, StoreReply};
use crate::tasks::{Status, Task, Unknown};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often a waiting `tasks/result` reads its task again when no event came (events
/// are lost while an instance's subscription is down).
const RECHECK: Duration = Duration::from_secs(2);

/// What waits for a store operation's answer.
pub(super) enum TaskWait {
    /// A task's handle, sent once the store holds the task, so that whichever instance
    /// the client asks next finds it.
    Created {
        asker: Asker,
        result: Result<Value, RpcError>,
    },
    /// `tasks/get`, `tasks/result` or `tasks/cancel` of `task_id` from the client named
    /// `owner`.
    Request {
        asker: Asker,
        method: Method,
        task_id: String,
        owner: String,
    },
    /// `tasks/list`.
    List { asker: Asker },
    /// The store's word on the end of a task this instance ran.
    Finished { task_id: String },
    /// A read for the `tasks/result` requests waiting on `task_id`.
    Reread { task_id: String },
    /// Nothing (a publish, a cancel whose answer nobody needs).
    Nothing,
}

/// `tasks/result` requests waiting on one task.
pub(super) struct Waiting {
    waiters: Vec<Waiter>,
    /// When to read it again without an event.
    next_check: Instant,
    /// A read is on its way.
    reading: bool,
}

/// See the module docs.
#[derive(Default)]
pub(super) struct SharedTasks {
    waits: BTreeMap<StoreId, TaskWait>,
    waiting: BTreeMap<String, Waiting>,
}

impl SharedTasks {
    /// The next re-read of a waited-on task.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.waiting
            .values()
            .filter(|w| !w.reading)
            .map(|w| w.next_check)
            .min()
    }

    /// Whether an answer is owed to a request (a handle not yet sent holds the exit).
    pub(super) fn owes_replies(&self) -> bool {
        self.waits
            .values()
            .any(|w| matches!(w, TaskWait::Created { .. }))
    }
}

/// The task the store holds as the shape functions take it.
fn view(task: StoredTask, now: Instant) -> Task<Waiter> {
    Task::view(
        task.id,
        (task.created, task.updated),
        task.ttl,
        now,
        (task.status, task.message),
        task.outcome,
    )
}

impl Server {
    /// Whether tasks live in the shared store.
    pub(super) fn tasks_shared(&self) -> bool {
        self.shared_tasks.is_some()
    }

    /// Sends `op` to the store; `wait` gets its answer. False without a store.
    fn ask_tasks_store(&mut self, op: StoreOp, wait: TaskWait) -> bool {
        let Some(shared) = &mut self.shared_tasks else {
            return false;
        };
        match self.ledger.ask_store(op) {
            Some(id) => {
                shared.waits.insert(id, wait);
                true
            }
            None => false,
        }
    }

    /// A new task of `client`: written to the store, and `result` (its handle) answered
    /// to `asker` once it is there. False without a store (answer at once).
    pub(super) fn share_new_task(
        &mut self,
        task_id: &str,
        client: ClientId,
        answer: Option<(Asker, Result<Value, RpcError>)>,
    ) -> Option<(Asker, Result<Value, RpcError>)> {
        if !self.tasks_shared() {
            return answer;
        }
        let Ok(task) = self.tasks.get(task_id) else {
            return answer;
        };
        let owner = self.config.clients.name(client);
        let op = stored::put(
            task_id,
            owner,
            task.created,
            task.ttl,
            self.config.tasks.max_ttl,
        );
        let wait = match answer {
            Some((asker, result)) => TaskWait::Created { asker, result },
            None => TaskWait::Nothing,
        };
        self.ask_tasks_store(op, wait);
        None
    }

    /// A task this instance ran ended (`outcome` `None`: stopped without one): the store
    /// hears of it, and so does every instance waiting on it.
    pub(super) fn share_task_end(&mut self, task_id: &str) {
        if !self.tasks_shared() {
            return;
        }
        let at = self.latest_unix();
        let op = match self.tasks.get(task_id) {
            Ok(task) if task.status == Status::Cancelled => {
                let why = task.message.clone().unwrap_or_default();
                stored::cancel(task_id, at, &why)
            }
            Ok(task) => {
                let max = self.config.max_message_bytes;
                let mut status = task.status;
                let outcome = task.outcome.as_ref().map(|o| {
                    let kept = o.stored();
                    if kept.len() <= max {
                        return kept;
                    }
                    // Bounded like any reply: what is too big to send is not kept.
                    status = Status::Failed;
                    let error = TaskError::ResultTooLarge {
                        bytes: kept.len(),
                        max,
                    };
                    crate::tasks::Outcome::new(Err(error.error())).stored()
                });
                stored::finish(task_id, at, (status, task.message.as_deref()), outcome)
            }
            Err(_) => return,
        };
        let wait = TaskWait::Finished {
            task_id: task_id.to_owned(),
        };
        self.ask_tasks_store(op, wait);
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` of a task id this server sealed,
    /// answered from the store.
    pub(super) fn shared_task_request(
        &mut self,
        now: Now,
        (asker, method): (Asker, Method),
        task_id: String,
        client: ClientId,
    ) -> super::routing::Dispatched {
        if !self.tasks.minted(&task_id) {
            let why = Unknown::NotMinted;
            let error = TaskError::NotFound {
                task_id: &task_id,
                why,
            };
            return super::routing::Dispatched::answer(asker.id, Err(error.error()));
        }
        let op = match method {
            Method::TasksCancel => {
                stored::cancel(&task_id, now.unix_secs, "cancelled by the client")
            }
            _ => stored::get(&task_id),
        };
        let owner = self.config.clients.name(client).to_owned();
        let wait = TaskWait::Request {
            asker,
            method,
            task_id,
            owner,
        };
        self.ask_tasks_store(op, wait);
        super::routing::Dispatched::Pending
    }

    /// `tasks/list` of `client`'s tasks, from the store.
    pub(super) fn shared_task_list(
        &mut self,
        asker: Asker,
        params: &serde_json::Map<String, Value>,
        client: ClientId,
    ) -> super::routing::Dispatched {
        let cursor = params.get("cursor").and_then(Value::as_str);
        if cursor.is_some_and(|c| !self.tasks.minted(c)) {
            return super::routing::Dispatched::answer(asker.id, Err(TaskError::BadCursor.error()));
        }
        let op = stored::list(self.config.clients.name(client), cursor, PAGE);
        self.ask_tasks_store(op, TaskWait::List { asker });
        super::routing::Dispatched::Pending
    }

    /// Whether operation `id` was a task's (or an event's).
    pub(super) fn is_task_op(&self, id: StoreId) -> bool {
        self.shared_tasks
            .as_ref()
            .is_some_and(|s| s.waits.contains_key(&id))
    }

    /// The store answered operation `id`, a task's.
    pub(super) fn on_task_store_reply(
        &mut self,
        now: Now,
        id: StoreId,
        reply: StoreReply,
        took: Duration,
    ) {
        let Some(wait) = self.shared_tasks.as_mut().and_then(|s| s.waits.remove(&id)) else {
            return;
        };
        let failed = matches!(reply, StoreReply::Unavailable(_));
        self.ledger.store_observed(took, failed);
        let rows = match reply {
            StoreReply::Rows(rows) => Ok(rows),
            StoreReply::Done => Ok(Vec::new()),
            StoreReply::Unavailable(why) => Err(why),
            StoreReply::Reserve { .. } | StoreReply::Claimed(_) => {
                Err("the store answered a task's operation as another one".into())
            }
        };
        match wait {
            TaskWait::Nothing => {}
            TaskWait::Created { asker, result } => {
                if let Err(why) = &rows {
                    log::warn!("a new task is not in the shared store ({why}): only this instance serves it");
                }
                self.reply_late(asker, result);
            }
            TaskWait::Finished { task_id } => match rows.map(|r| stored::finished(&r)) {
                Ok(Ok(Finished::Won | Finished::Missing)) => {}
                Ok(Ok(Finished::Lost)) => {
                    log::debug!("task {task_id} was cancelled elsewhere before its call ended")
                }
                Ok(Err(e)) => log::warn!("the end of task {task_id} was not recorded: {e}"),
                Err(why) => log::warn!(
                    "the end of task {task_id} was not recorded in the shared store ({why}): other instances see it working until it expires"
                ),
            },
            TaskWait::Request {
                asker,
                method,
                task_id,
                owner,
            } => self.answer_task_request(now, (asker, method), &task_id, &owner, rows),
            TaskWait::List { asker } => {
                let result = match rows {
                    Err(cause) => Err(TaskError::StoreFailed { cause: &cause }.error()),
                    Ok(rows) => match stored::page(&rows) {
                        Err(e) => Err(TaskError::StoreFailed {
                            cause: &e.to_string(),
                        }
                        .error()),
                        Ok(None) => Err(TaskError::BadCursor.error()),
                        Ok(Some((tasks, next))) => {
                            let poll = self.poll_schedule();
                            let version = asker.version;
                            let tasks = tasks
                                .into_iter()
                                .map(|t| {
                                    let created = t.created;
                                    shape::task(&view(t, now.instant), poll(created), version)
                                })
                                .collect();
                            Ok(shape::tasks_list_result(tasks, next))
                        }
                    },
                };
                self.reply_late(asker, result);
            }
            TaskWait::Reread { task_id } => {
                let task = rows.ok().and_then(|rows| stored::read(&rows).ok());
                self.on_reread(now, &task_id, task);
            }
        }
    }

    /// Answers a task request with what the store said of the task.
    fn answer_task_request(
        &mut self,
        now: Now,
        (asker, method): (Asker, Method),
        task_id: &str,
        owner: &str,
        rows: Result<Vec<Vec<String>>, String>,
    ) {
        let read = rows.and_then(|rows| match method {
            Method::TasksCancel => stored::cancelled(&rows).map_err(|e| e.to_string()),
            _ => stored::read(&rows)
                .map(|t| t.map(|t| (t, false)))
                .map_err(|e| e.to_string()),
        });
        let (task, changed) = match read {
            Err(cause) => {
                let error = TaskError::StoreFailed { cause: &cause }.error();
                return self.reply_late(asker, Err(error));
            }
            Ok(None) => return self.reply_late(asker, Err(not_found(task_id, Unknown::Gone))),
            Ok(Some((task, _))) if task.owner != owner || task.id != task_id => {
                return self.reply_late(asker, Err(not_found(task_id, Unknown::Foreign)));
            }
            Ok(Some(found)) => found,
        };
        let version = asker.version;
        let poll = (self.poll_schedule())(task.created);
        let result = match method {
            Method::TasksResult if task.status == Status::Working => {
                return self.wait_for(now, task_id, asker);
            }
            Method::TasksResult => payload(task.outcome.as_ref(), task_id),
            Method::TasksCancel if changed => {
                // Where the call runs, the event stops it; here at once.
                self.cancel_local_task(now, task_id, "cancelled by the client");
                if version.is_modern() {
                    Ok(shape::complete(shape::empty_result(), version))
                } else {
                    Ok(shape::task_state(&view(task, now.instant), poll, version))
                }
            }
            Method::TasksCancel if version.is_modern() => {
                Ok(shape::complete(shape::empty_result(), version))
            }
            Method::TasksCancel => Err(TaskError::AlreadyEnded {
                task_id,
                status: task.status.as_str(),
            }
            .error()),
            _ => Ok(shape::task_state(&view(task, now.instant), poll, version)),
        };
        self.reply_late(asker, result);
    }

    /// `asker` waits for `task_id` to end.
    fn wait_for(&mut self, now: Now, task_id: &str, asker: Asker) {
        let Some(shared) = &mut self.shared_tasks else {
            return;
        };
        let waiting = shared
            .waiting
            .entry(task_id.to_owned())
            .or_insert_with(|| Waiting {
                waiters: Vec::new(),
                next_check: now.instant + RECHECK,
                reading: false,
            });
        if waiting.waiters.len() >= MAX_WAITERS {
            let error = TaskError::TooManyWaiters {
                task_id,
                max: MAX_WAITERS,
            };
            self.reply_late(asker, Err(error.error()));
            return;
        }
        waiting.waiters.push(asker);
    }

    /// Reads `task_id` again for its waiters, unless a read is on its way.
    fn reread(&mut self, task_id: &str) {
        let Some(waiting) = self
            .shared_tasks
            .as_mut()
            .and_then(|s| s.waiting.get_mut(task_id))
        else {
            return;
        };
        if waiting.reading {
            return;
        }
        waiting.reading = true;
        let wait = TaskWait::Reread {
            task_id: task_id.to_owned(),
        };
        self.ask_tasks_store(stored::get(task_id), wait);
    }

    /// What a re-read found: an ended or vanished task answers its waiters.
    fn on_reread(&mut self, now: Now, task_id: &str, task: Option<Option<StoredTask>>) {
        let Some(shared) = &mut self.shared_tasks else {
            return;
        };
        let Some(waiting) = shared.waiting.get_mut(task_id) else {
            return;
        };
        waiting.reading = false;
        waiting.next_check = now.instant + RECHECK;
        let result = match task {
            // The store did not answer: asked again at the next check.
            None => return,
            Some(Some(task)) if task.status == Status::Working => return,
            Some(Some(task)) => payload(task.outcome.as_ref(), task_id),
            Some(None) => Err(not_found(task_id, Unknown::Gone)),
        };
        let waiters = shared
            .waiting
            .remove(task_id)
            .map(|w| w.waiters)
            .unwrap_or_default();
        for waiter in waiters {
            self.reply_late(waiter, result.clone());
        }
    }

    /// Reads again the waited-on tasks whose check is due.
    pub(super) fn recheck_waiting(&mut self, now: Now) {
        let due: Vec<String> = self.shared_tasks.as_ref().map_or_else(Vec::new, |s| {
            s.waiting
                .iter()
                .filter(|(_, w)| !w.reading && w.next_check <= now.instant)
                .map(|(id, _)| id.clone())
                .collect()
        });
        for task_id in due {
            self.reread(&task_id);
        }
    }

    /// Waiting requests whose client left wait no more.
    pub(super) fn forget_shared_waiters(&mut self, gone: impl Fn(&Waiter) -> bool) {
        if let Some(shared) = &mut self.shared_tasks {
            for waiting in shared.waiting.values_mut() {
                waiting.waiters.retain(|w| !gone(w));
            }
            shared.waiting.retain(|_, w| !w.waiters.is_empty());
        }
    }

    /// Stops the call of task `task_id` when this instance runs it.
    fn cancel_local_task(&mut self, now: Now, task_id: &str, why: &str) {
        let working = self
            .tasks
            .get(task_id)
            .is_ok_and(|t| t.status == Status::Working);
        if !working {
            return;
        }
        let (call, waiters) = self.tasks.cancel(task_id, now.unix_secs, why);
        if let Some(key) = call {
            self.calls.cancel(now, &key);
        }
        for waiter in waiters {
            let error = TaskError::CancelledWithoutResult { task_id }.error();
            self.reply_late(waiter, Err(error));
        }
        log::debug!("task {task_id} cancelled through the shared store");
    }

    /// A message on the store's channel.
    pub(super) fn on_store_event(&mut self, now: Now, message: &str) {
        match StoreEvent::parse(message) {
            Some(StoreEvent::Ended(task_id)) => self.reread(&task_id),
            Some(StoreEvent::Cancel(task_id)) => {
                self.cancel_local_task(now, &task_id, "cancelled by the client");
                self.reread(&task_id);
            }
            Some(StoreEvent::Request { client, id }) => {
                // Only a client this instance knows by that very name.
                let known = self.config.clients.find(&client);
                if self.config.clients.name(known) != client {
                    return;
                }
                let client = known;
                let keys = self.exchange_calls(&id, client);
                for key in &keys {
                    if self.calls.cancel(now, key) {
                        log::debug!("cancelled requestId={id} through the shared store");
                    }
                }
                self.drain_calls();
            }
            None => log::trace!("ignoring a message on the store's channel"),
        }
    }

    /// The store's channel is (again) subscribed: events may have been missed, so every
    /// waited-on task is read again.
    pub(super) fn on_store_subscribed(&mut self) {
        let ids: Vec<String> = self
            .shared_tasks
            .as_ref()
            .map_or_else(Vec::new, |s| s.waiting.keys().cloned().collect());
        for task_id in ids {
            self.reread(&task_id);
        }
    }

    /// `notifications/cancelled` of request `id` from `client` reaches the other
    /// instances, one of which may run the call.
    pub(super) fn publish_request_cancel(&mut self, client: ClientId, id: &RequestId) {
        if !self.tasks_shared() {
            return;
        }
        let event = StoreEvent::Request {
            client: self.config.clients.name(client).to_owned(),
            id: id.clone(),
        };
        self.ask_tasks_store(events::publish(&event), TaskWait::Nothing);
    }

    /// The calls of HTTP requests of `client` with request id `id`.
    pub(super) fn exchange_calls(
        &self,
        id: &RequestId,
        client: ClientId,
    ) -> Vec<crate::calls::CallKey> {
        self.calls.exchanges_with_id(id, |context| {
            matches!(context, super::routing::Context::Call(caller) if caller.client == client)
        })
    }
}

fn not_found(task_id: &str, why: Unknown) -> RpcError {
    TaskError::NotFound { task_id, why }.error()
}
