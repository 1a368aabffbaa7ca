//! This instance's lease on the shared tasks it runs ([`crate::store::tasks::lease`]):
//! renewed every few seconds while it runs any, in one operation whatever their number;
//! and what it does when another instance ended one of its tasks (its lease had lapsed:
//! the instance was frozen, or cut off from the store): the call stops, its answer
//! would be stored by nobody.

use super::super::due::Due;
use super::Shared;
use super::TaskWait;
use crate::io::{after, Now};
use crate::mcp::shape::TaskError;
use crate::store::tasks::{self as stored, lease, StoredTask};
use crate::store::StoreError;
use crate::tasks::Status;

impl Shared<'_> {
    /// The lease's renewal is due: renewed while this instance runs tasks, else let go
    /// (the next task's put takes it again).
    pub(in crate::desk) fn renew_lease(&mut self, now: Now) {
        let running = self.local.tasks.working().next().is_some();
        let shared = &mut *self.state;
        if !running {
            shared.lease_due = None;
            return;
        }
        let at = after(now.instant, lease::RENEW);
        shared.lease_due = Some(at);
        let op = lease::renew(&shared.holder);
        self.timers.schedule(Due::Lease, at);
        self.state.send(op, TaskWait::Renewed);
    }

    /// The store's answer to a renewal: a lease found lapsed means other instances may
    /// have ended this one's tasks, so each is read again.
    pub(super) fn on_renewed(&mut self, now: Now, rows: Result<Vec<Vec<String>>, StoreError>) {
        let renewed = rows.and_then(|rows| Ok(lease::renewed(&rows)?));
        let was_failing = std::mem::replace(&mut self.state.lease_failing, renewed.is_err());
        match renewed {
            Ok(true) => {}
            Ok(false) => {
                log::warn!(
                    "this instance's lease in the shared store had lapsed (the store did not hear from it for {} s): other instances may have ended its tasks as failed; reading them again",
                    lease::LAPSE.as_secs()
                );
                let ids: Vec<String> = self.local.tasks.working().map(str::to_owned).collect();
                for task_id in ids {
                    self.check_own(now, task_id);
                }
            }
            Err(why) if was_failing => log::debug!("the lease was not renewed again ({why})"),
            Err(why) => log::warn!(
                "this instance's lease in the shared store was not renewed ({why}); if the store stays away for {} s other instances end its tasks as failed",
                lease::LAPSE.as_secs()
            ),
        }
    }

    /// Reads task `task_id`, which this instance runs, to see whether another ended it.
    pub(super) fn check_own(&mut self, now: Now, task_id: String) {
        let op = stored::get(&task_id, now.unix_secs);
        self.state.send(op, TaskWait::Own { task_id });
    }

    /// What the store holds of a task this instance runs: when it ended elsewhere (or is
    /// gone), its call stops here and its local copy fails, so that nothing of it is
    /// written again and it no longer counts as working.
    pub(super) fn on_own_read(
        &mut self,
        now: Now,
        task_id: &str,
        read: Option<Option<StoredTask>>,
    ) {
        let ended_elsewhere = match read {
            None => false,
            Some(None) => true,
            Some(Some(task)) => task.status != Status::Working,
        };
        let Ok(task) = self.local.tasks.get(task_id) else {
            return;
        };
        if !ended_elsewhere || task.status != Status::Working {
            return;
        }
        let call = task.call.take();
        let error = TaskError::InstanceStopped.error();
        let message = Some(error.message.clone());
        let waiters = self.local.tasks.finish(
            task_id,
            now.unix_secs,
            Err(error),
            (Status::Failed, message),
        );
        if let Some(key) = call {
            self.emit.cancel(key);
        }
        for waiter in waiters {
            self.emit
                .reply(waiter, Err(TaskError::InstanceStopped.error()));
        }
        log::warn!("task {task_id} was ended by another instance while this one ran it (its lease had lapsed); its call is stopped");
    }
}
