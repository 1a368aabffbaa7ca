//! What instances tell each other about tasks on the store's channel: this instance's
//! calls stopped by cancels from elsewhere, waiting requests woken, cancels passed on.

use super::Shared;
use super::TaskWait;
use crate::io::Now;
use crate::mcp::shape::TaskError;
use crate::store::events::{self, StoreEvent};
use crate::tasks::Status;

impl Shared<'_> {
    /// Stops the call of task `task_id` when this instance runs it and, with `owner`,
    /// when its task is that client's (an event names the owner the store compared: a
    /// call of another client's is never stopped by it).
    pub(super) fn cancel_local_task(
        &mut self,
        now: Now,
        task_id: &str,
        (owner, why): (Option<&str>, &str),
    ) {
        let stoppable = self.local.tasks.get(task_id).is_ok_and(|t| {
            t.status == Status::Working && owner.is_none_or(|o| self.emit.name(t.owner) == o)
        });
        if !stoppable {
            return;
        }
        let (call, waiters) = self.local.tasks.cancel(task_id, now.unix_secs, why);
        if let Some(key) = call {
            self.emit.cancel(key);
        }
        for waiter in waiters {
            let error = TaskError::CancelledWithoutResult { task_id }.error();
            self.emit.reply(waiter, Err(error));
        }
        log::debug!("task {task_id} cancelled through the shared store");
    }

    /// A task's event on the store's channel: its end, or a cancel (a request's cancel is
    /// the server's, whose calls it stops).
    pub(crate) fn on_store_event(&mut self, now: Now, event: StoreEvent) {
        self.emit.unix = now.unix_secs;
        match event {
            StoreEvent::Ended(task_id) => {
                // Another instance ended a task this one still runs: its lease lapsed.
                let running = self.local.tasks.get(&task_id).is_ok_and(|t| {
                    t.status == Status::Working && !self.local.held.contains(&task_id)
                });
                if running {
                    self.check_own(now, task_id.clone());
                }
                self.reread(&task_id);
            }
            StoreEvent::Cancel { task_id, owner } => {
                let why = (Some(owner.as_str()), "cancelled by the client");
                self.cancel_local_task(now, &task_id, why);
                self.reread(&task_id);
            }
            StoreEvent::Request { .. } => {}
        }
    }

    /// The store's channel is (again) subscribed: events may have been missed, so every
    /// waited-on task is read again.
    pub(crate) fn on_store_subscribed(&mut self) {
        let ids: Vec<String> = self.state.waiting.keys().cloned().collect();
        for task_id in ids {
            self.reread(&task_id);
        }
    }

    /// Tells the other instances `event` (a request's cancel, one of which may run the
    /// call). Nothing without a store.
    pub(crate) fn publish(&mut self, event: &StoreEvent) {
        self.state.send(events::publish(event), TaskWait::Nothing);
    }
}
