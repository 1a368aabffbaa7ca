//! What the store answered to a task's operation: the request's reply, or the wait it
//! becomes.

use super::super::emit::Charge;
use super::super::local::payload;
use super::Shared;
use super::{not_found, view, TaskWait};
use crate::io::Now;
use crate::jsonrpc::RpcError;
use crate::mcp::shape::{self, TaskError};
use crate::mcp::Method;
use crate::routing::Ticket;
use crate::store::tasks::{self as stored, Cancelled, Finished, StoredTask, Written};
use crate::store::{StoreError, StoreId, StoreReply};
use crate::tasks::{Status, Unknown};
use serde_json::Value;
use std::time::Duration;

impl Shared<'_> {
    /// The store answered operation `id`, a task's.
    pub(crate) fn on_store_reply(
        &mut self,
        now: Now,
        id: StoreId,
        (reply, took): (StoreReply, Duration),
    ) {
        self.emit.unix = now.unix_secs;
        let Some(wait) = self.state.waits.remove(&id) else {
            return;
        };
        let failed = matches!(reply, StoreReply::Unavailable(_));
        self.emit.charge(Charge::StoreObserved { took, failed });
        let rows = match reply {
            StoreReply::Rows(rows) => Ok(rows),
            StoreReply::Done => Ok(Vec::new()),
            StoreReply::Unavailable(why) => Err(StoreError::Unavailable(why)),
            StoreReply::Reserve { .. } => Err(StoreError::Mismatched),
        };
        match wait {
            TaskWait::Nothing => {}
            TaskWait::Created {
                asker,
                result,
                task_id,
                leased,
            } => {
                let lapsed = self.on_task_written(now, (asker, result), &task_id, rows);
                if leased && lapsed {
                    self.on_renewed(now, Ok(vec![vec!["lapsed".to_owned()]]));
                }
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
            } => {
                let of = (task_id.as_str(), owner.as_str());
                self.answer_task_request(now, (asker, method), of, rows);
            }
            TaskWait::List { asker } => self.answer_task_list(now, asker, rows),
            TaskWait::Reread { task_id } => {
                let task = self.read_noticing(rows);
                self.on_reread(now, &task_id, task);
            }
            TaskWait::Renewed => self.on_renewed(now, rows),
            TaskWait::Own { task_id } => {
                let task = self.read_noticing(rows);
                self.on_own_read(now, &task_id, task);
            }
        }
        let orphans = std::mem::take(&mut self.state.orphans);
        for task_id in orphans {
            self.emit.charge(Charge::Orphaned);
            log::warn!(
                target: crate::ledger::CALL_LOG_TARGET,
                "task {task_id} orphaned: the instance running it stopped renewing its lease in the shared store (it was lost, or shut down past its grace); ended as failed, its client is told to call the tool again"
            );
        }
    }

    /// A read's task (`None`: the store did not answer readably; `Some(None)`: it does
    /// not hold the task), noting an orphan the read ended.
    fn read_noticing(
        &mut self,
        rows: Result<Vec<Vec<String>>, StoreError>,
    ) -> Option<Option<StoredTask>> {
        let task = rows.ok().and_then(|rows| stored::read(&rows).ok())?;
        if let Some(task) = &task {
            self.state.noticed(task);
        }
        Some(task)
    }

    /// The store's answer to a new task's put: its handle is answered, unless the store
    /// holds a task of that id already (then the call stops, and the client is told).
    /// Whether the put found this instance's lease lapsed.
    fn on_task_written(
        &mut self,
        now: Now,
        (asker, result): (Ticket, Result<Value, RpcError>),
        task_id: &str,
        rows: Result<Vec<Vec<String>>, StoreError>,
    ) -> bool {
        match rows.and_then(|rows| Ok(stored::written(&rows)?)) {
            Ok(Written::Taken) => {
                // Never reached with ids from the random source; if it is, the task that
                // holds the id keeps it, and this call stops unanswered by it.
                log::error!(
                    "the shared store holds a task {task_id} already: this call's task is dropped"
                );
                self.cancel_local_task(now, task_id, (None, "its id was taken"));
                self.local.tasks.discard(task_id);
                let error = TaskError::IdTaken { task_id }.error();
                self.emit.reply(asker, Err(error));
                false
            }
            Ok(Written::Put { held }) => {
                self.emit.reply(asker, result);
                !held
            }
            Err(why) => {
                log::warn!(
                    "a new task is not in the shared store ({why}): only this instance serves it"
                );
                self.emit.reply(asker, result);
                false
            }
        }
    }

    /// `tasks/list` answered with the page the store gave.
    fn answer_task_list(
        &mut self,
        now: Now,
        asker: Ticket,
        rows: Result<Vec<Vec<String>>, StoreError>,
    ) {
        let result = match rows.and_then(|rows| Ok(stored::page(&rows)?)) {
            Err(cause) => Err(TaskError::StoreFailed {
                cause: &cause.to_string(),
            }
            .error()),
            Ok(None) => Err(TaskError::BadCursor.error()),
            Ok(Some((tasks, next))) => {
                tasks.iter().for_each(|t| self.state.noticed(t));
                let poll = self.local.poll_schedule(self.emit.unix);
                let version = asker.reply_version();
                let tasks = tasks
                    .into_iter()
                    .map(|t| {
                        let created = t.created;
                        shape::task(&view(t, now.instant), poll(created), version)
                    })
                    .collect();
                Ok(shape::tasks_list_result(tasks, next))
            }
        };
        self.emit.reply(asker, result);
    }

    /// Answers a task request with what the store said of the task.
    fn answer_task_request(
        &mut self,
        now: Now,
        (asker, method): (Ticket, Method),
        (task_id, owner): (&str, &str),
        rows: Result<Vec<Vec<String>>, StoreError>,
    ) {
        let read = rows.and_then(|rows| match method {
            Method::TasksCancel => Ok(stored::cancelled(&rows)?),
            _ => Ok(stored::read(&rows)?
                .map_or(Cancelled::Missing, |t| Cancelled::Task(Box::new(t), false))),
        });
        let (task, changed) = match read {
            Err(cause) => {
                let cause = cause.to_string();
                let error = TaskError::StoreFailed { cause: &cause }.error();
                return self.emit.reply(asker, Err(error));
            }
            Ok(Cancelled::Missing) => {
                return self
                    .emit
                    .reply(asker, Err(not_found(task_id, Unknown::Gone)))
            }
            Ok(Cancelled::Foreign) => {
                return self
                    .emit
                    .reply(asker, Err(not_found(task_id, Unknown::Foreign)));
            }
            Ok(Cancelled::Task(task, _)) if task.owner != owner || task.id != task_id => {
                return self
                    .emit
                    .reply(asker, Err(not_found(task_id, Unknown::Foreign)));
            }
            Ok(Cancelled::Task(task, changed)) => (*task, changed),
        };
        self.state.noticed(&task);
        let version = asker.reply_version();
        let poll = (self.local.poll_schedule(self.emit.unix))(task.created);
        let result = match method {
            Method::TasksResult if task.status == Status::Working => {
                return self.wait_for(now, task_id, asker);
            }
            Method::TasksResult => payload(task.outcome.as_ref(), task_id),
            Method::TasksCancel if changed => {
                // Where the call runs, the event stops it; here at once.
                let why = (Some(owner), "cancelled by the client");
                self.cancel_local_task(now, task_id, why);
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
        self.emit.reply(asker, result);
    }
}
