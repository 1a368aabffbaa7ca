//! Tasks served through the shared store (`server.store.url`), so that any instance
//! answers `tasks/*` for any task: the instance running a task's call writes its states
//! there ([`crate::store::tasks`]); `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel` are answered from what the store holds, on whichever instance they
//! arrive. Instances tell each other of ends and cancels through the store's channel
//! ([`crate::store::events`]): a cancel stops the call where it runs, an end wakes the
//! `tasks/result` requests waiting anywhere. Without a store none of this exists and the
//! local store ([`crate::tasks`]) answers, as before.

mod events;
mod lease;
mod replies;
mod waiting;

use super::due::Due;
use super::emit::Emit;
use super::local::Local;
use super::local::{Waiter, PAGE};
use crate::io::{after, Now};
use crate::jsonrpc::RpcError;
use crate::mcp::shape::TaskError;
use crate::mcp::Method;
use crate::routing::{Dispatched, Ticket};
use crate::store::tasks::{self as stored, StoredTask};
use crate::store::{StoreId, StoreOp, StoreTag};
use crate::tasks::{Status, Task, Unknown};
use crate::timers::Timers;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often a waiting `tasks/result` reads its task again when no event came (events
/// are lost while an instance's subscription is down).
const RECHECK: Duration = Duration::from_secs(2);

/// What waits for a store operation's answer.
enum TaskWait {
    /// A task's handle, sent once the store holds the task, so that whichever instance
    /// the client asks next finds it.
    Created {
        asker: Ticket,
        result: Result<Value, RpcError>,
        task_id: String,
        /// This instance was renewing its lease when it sent the put: a lapsed one means
        /// others may have ended its other tasks.
        leased: bool,
    },
    /// `tasks/get`, `tasks/result` or `tasks/cancel` of `task_id` from the client named
    /// `owner`.
    Request {
        asker: Ticket,
        method: Method,
        task_id: String,
        owner: String,
    },
    /// `tasks/list`.
    List { asker: Ticket },
    /// The store's word on the end of a task this instance ran.
    Finished { task_id: String },
    /// A read for the `tasks/result` requests waiting on `task_id`.
    Reread { task_id: String },
    /// The renewal of this instance's lease.
    Renewed,
    /// A read of `task_id`, which this instance runs, after a sign that another ended it
    /// (its end announced, or this instance's lease found lapsed).
    Own { task_id: String },
    /// Nothing (a publish, a cancel whose answer nobody needs).
    Nothing,
}

/// `tasks/result` requests waiting on one task.
struct Waiting {
    waiters: Vec<Waiter>,
    /// When to read it again without an event.
    next_check: Instant,
    /// A read is on its way.
    reading: bool,
}

/// See the module docs. The re-reads' deadlines and the lease's renewal are on the
/// desk's heap.
pub(crate) struct SharedTasks {
    /// Operations for the store, in order, each tagged as the tasks' own.
    ops: std::collections::VecDeque<(StoreId, StoreOp)>,
    /// The last operation's number.
    sent: u64,
    waits: BTreeMap<StoreId, TaskWait>,
    waiting: BTreeMap<String, Waiting>,
    /// This process's name in its tasks and its lease ([`stored::lease`]).
    holder: String,
    /// When the lease is renewed next, while this instance runs shared tasks.
    lease_due: Option<Instant>,
    /// The last renewal failed (said once, not every interval of an outage).
    lease_failing: bool,
    /// Tasks the store's answers showed ended as orphans, for the ledger to count.
    orphans: Vec<String>,
}

impl SharedTasks {
    /// Shared tasks of the process named `holder`.
    pub(crate) fn new(holder: String) -> SharedTasks {
        SharedTasks {
            ops: std::collections::VecDeque::new(),
            sent: 0,
            waits: BTreeMap::new(),
            waiting: BTreeMap::new(),
            holder,
            lease_due: None,
            lease_failing: false,
            orphans: Vec::new(),
        }
    }

    /// Queues `op`; `wait` gets its answer.
    fn send(&mut self, op: StoreOp, wait: TaskWait) {
        self.sent += 1;
        let id = StoreId {
            tag: StoreTag::Task,
            n: self.sent,
        };
        self.ops.push_back((id, op));
        self.waits.insert(id, wait);
    }

    /// The next operation for the store.
    pub(super) fn poll_op(&mut self) -> Option<(StoreId, StoreOp)> {
        self.ops.pop_front()
    }

    /// Whether the check of `task_id` at `at` is still due.
    pub(super) fn is_due(&self, at: Instant, task_id: &str) -> bool {
        self.waiting
            .get(task_id)
            .is_some_and(|w| !w.reading && w.next_check == at)
    }

    /// Tasks waited on.
    pub(super) fn waited(&self) -> usize {
        self.waiting.len()
    }

    /// When each waited-on task not being read is read again.
    pub(super) fn deadlines(&self) -> impl Iterator<Item = (Instant, &str)> {
        self.waiting
            .iter()
            .filter(|(_, w)| !w.reading)
            .map(|(id, w)| (w.next_check, id.as_str()))
    }

    /// Whether the exit waits for the store: a handle not yet sent, or the end of a task
    /// of this instance not yet acknowledged (a task left working would be answered by
    /// nobody until its lease lapsed).
    pub(super) fn holds_exit(&self) -> bool {
        self.waits
            .values()
            .any(|w| matches!(w, TaskWait::Created { .. } | TaskWait::Finished { .. }))
    }

    /// When the lease is renewed next.
    pub(super) fn lease_due(&self) -> Option<Instant> {
        self.lease_due
    }

    /// Notes a task an answer showed ended as an orphan by this read.
    fn noticed(&mut self, task: &StoredTask) {
        if task.orphaned {
            self.orphans.push(task.id.clone());
        }
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

/// A move of the shared backend: its state, with what it works with (this instance's
/// tasks, the desk's queue and deadlines, the bounds of what it writes).
pub(super) struct Shared<'a> {
    pub state: &'a mut SharedTasks,
    pub local: &'a mut Local,
    pub emit: &'a mut Emit,
    pub timers: &'a mut Timers<Due>,
    /// The longest task life, which bounds what the store keeps.
    pub max_ttl: Duration,
    /// Bytes an outcome may have and still be written to the store.
    pub max_message_bytes: usize,
}

impl Shared<'_> {
    /// A new task of the client named `owner`: written to the store at `now`, and
    /// `result` (its handle) answered to `asker` once it is there; this instance's lease
    /// is renewed from now on. Handed back, to be answered at once, if there is no such
    /// task.
    pub(super) fn share_new_task(
        &mut self,
        (task_id, now): (&str, Instant),
        answer: Option<(Ticket, Result<Value, RpcError>)>,
    ) -> Option<(Ticket, Result<Value, RpcError>)> {
        let shared = &mut *self.state;
        let Ok(task) = self.local.tasks.get(task_id) else {
            return answer;
        };
        let owner = self.emit.name(task.owner);
        let op = stored::put(
            task_id,
            (owner, &shared.holder),
            task.created,
            task.ttl,
            self.max_ttl,
        );
        let leased = shared.lease_due.is_some();
        if !leased {
            // The put holds the lease for a lapse; renewals keep it while tasks run.
            let at = after(now, stored::lease::RENEW);
            shared.lease_due = Some(at);
            self.timers.schedule(Due::Lease, at);
        }
        let wait = match answer {
            Some((asker, result)) => TaskWait::Created {
                asker,
                result,
                task_id: task_id.to_owned(),
                leased,
            },
            None => TaskWait::Nothing,
        };
        self.state.send(op, wait);
        None
    }

    /// A task this instance ran ended (finished, or stopped without an outcome): the
    /// store hears of it, and so does every instance waiting on it.
    pub(super) fn share_task_end(&mut self, task_id: &str) {
        let at = self.emit.unix;
        let op = match self.local.tasks.get(task_id) {
            Ok(task) if task.status == Status::Cancelled => {
                let why = task.message.clone().unwrap_or_default();
                stored::cancel(task_id, self.emit.name(task.owner), at, &why)
            }
            Ok(task) => {
                let max = self.max_message_bytes;
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
        self.state.send(op, wait);
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` of a task id this server sealed,
    /// from the client named `owner`, answered from the store.
    pub(super) fn shared_request(
        &mut self,
        now: Now,
        (asker, method): (Ticket, Method),
        task_id: String,
        owner: String,
    ) -> Dispatched {
        if !self.local.tasks.minted(&task_id) {
            let error = not_found(&task_id, Unknown::NotMinted);
            return Dispatched::answer(asker.id, Err(error));
        }
        let op = match method {
            Method::TasksCancel => {
                stored::cancel(&task_id, &owner, now.unix_secs, "cancelled by the client")
            }
            _ => stored::get(&task_id, now.unix_secs),
        };
        let wait = TaskWait::Request {
            asker,
            method,
            task_id,
            owner,
        };
        self.state.send(op, wait);
        Dispatched::Later
    }

    /// `tasks/list` of the tasks of the client named `owner`, from the store.
    pub(super) fn shared_list(
        &mut self,
        asker: Ticket,
        params: &serde_json::Map<String, Value>,
        owner: &str,
    ) -> Dispatched {
        let cursor = params.get("cursor").and_then(Value::as_str);
        if cursor.is_some_and(|c| !self.local.tasks.minted(c)) {
            return Dispatched::answer(asker.id, Err(TaskError::BadCursor.error()));
        }
        let op = stored::list(owner, cursor, PAGE, self.emit.unix);
        self.state.send(op, TaskWait::List { asker });
        Dispatched::Later
    }
}

fn not_found(task_id: &str, why: Unknown) -> RpcError {
    TaskError::NotFound { task_id, why }.error()
}
