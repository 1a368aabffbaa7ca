//! `tasks/result` requests waiting across instances for a task to end: woken by an
//! event, or by a check every [`RECHECK`](super::RECHECK).

use super::super::due::Due;
use super::super::local::{payload, Waiter, MAX_WAITERS};
use super::Shared;
use super::{not_found, TaskWait, Waiting, RECHECK};
use crate::io::{after, Now};
use crate::mcp::shape::TaskError;
use crate::routing::Ticket;
use crate::store::tasks::{self as stored, StoredTask};
use crate::tasks::{Status, Unknown};

impl Shared<'_> {
    /// `asker` waits for `task_id` to end.
    pub(super) fn wait_for(&mut self, now: Now, task_id: &str, asker: Ticket) {
        let shared = &mut *self.state;
        if !shared.waiting.contains_key(task_id) {
            let at = after(now.instant, RECHECK);
            let waiting = Waiting {
                waiters: Vec::new(),
                next_check: at,
                reading: false,
            };
            shared.waiting.insert(task_id.to_owned(), waiting);
            self.timers.schedule(Due::Recheck(task_id.to_owned()), at);
        }
        let Some(waiting) = shared.waiting.get_mut(task_id) else {
            return;
        };
        if waiting.waiters.len() >= MAX_WAITERS {
            let error = TaskError::TooManyWaiters {
                task_id,
                max: MAX_WAITERS,
            };
            self.emit.reply(asker, Err(error.error()));
            return;
        }
        waiting.waiters.push(asker);
    }

    /// Reads `task_id` again for its waiters, unless a read is on its way.
    pub(in crate::desk) fn reread(&mut self, task_id: &str) {
        let shared = &mut *self.state;
        let Some(waiting) = shared.waiting.get_mut(task_id) else {
            return;
        };
        if waiting.reading {
            return;
        }
        waiting.reading = true;
        // Its check waits for the read's answer.
        let wait = TaskWait::Reread {
            task_id: task_id.to_owned(),
        };
        self.state.send(stored::get(task_id, self.emit.unix), wait);
    }

    /// What a re-read found: an ended or vanished task answers its waiters.
    pub(super) fn on_reread(&mut self, now: Now, task_id: &str, task: Option<Option<StoredTask>>) {
        let shared = &mut *self.state;
        let Some(waiting) = shared.waiting.get_mut(task_id) else {
            return;
        };
        waiting.reading = false;
        let at = after(now.instant, RECHECK);
        waiting.next_check = at;
        self.timers.schedule(Due::Recheck(task_id.to_owned()), at);
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
            self.emit.reply(waiter, result.clone());
        }
    }

    /// Waiting requests whose client left (or cancelled them) wait no more; a task whose
    /// handle waited for the store's put stops, as a held one does: its client will
    /// never hear of it.
    pub(in crate::desk) fn forget_shared_waiters(&mut self, gone: impl Fn(&Waiter) -> bool) {
        let shared = &mut *self.state;
        for waiting in shared.waiting.values_mut() {
            waiting.waiters.retain(|w| !gone(w));
        }
        shared.waiting.retain(|_, w| !w.waiters.is_empty());
        for wait in shared.waits.values() {
            if let TaskWait::Created { asker, task_id, .. } = wait {
                let task = self.local.tasks.get(task_id).ok();
                let working = task.filter(|t| t.status == Status::Working);
                let call = working.and_then(|t| t.call.clone());
                if let Some(key) = call.filter(|_| gone(asker)) {
                    self.emit.cancel(key);
                }
            }
        }
    }

    /// Answers every waiting request: this instance exits, and the task runs on (a
    /// handle the store never acknowledged gets the stopped task's error).
    pub(in crate::desk) fn release_shared_waiters(&mut self) {
        let shared = &mut *self.state;
        let waiting = std::mem::take(&mut shared.waiting);
        let unanswered = std::mem::take(&mut shared.waits);
        for wait in unanswered.into_values() {
            match wait {
                super::TaskWait::Created { asker, .. } => {
                    self.emit
                        .reply(asker, Err(TaskError::InstanceStopped.error()));
                }
                super::TaskWait::Request { asker, task_id, .. } => {
                    let error = TaskError::WaitEnded { task_id: &task_id }.error();
                    self.emit.reply(asker, Err(error));
                }
                _ => {}
            }
        }
        for (task_id, waiting) in waiting {
            let error = TaskError::WaitEnded { task_id: &task_id }.error();
            for waiter in waiting.waiters {
                self.emit.reply(waiter, Err(error.clone()));
            }
        }
    }
}
