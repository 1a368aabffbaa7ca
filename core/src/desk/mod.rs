//! The desk: every task, whichever backend keeps it, in one sub-machine.
//!
//! A task-augmented `tools/call` and the `tasks/*` requests come here from the server; the
//! desk picks the backend from the settings and the sealed id, and keeps all of their
//! state: the local store ([`crate::tasks::TaskStore`]), background mode's polls
//! ([`crate::tasks::background::Polls`]), the shared store's waits, the held answer
//! windows and their deadlines.
//!
//! ```text
//!   Server                                        Desk
//!   ──────                                        ────
//!   task call, tasks/* ──── start / on_request ─▶ local · background · shared
//!   call ended ─────────── call_ended ──────────▶ finish or drop the task
//!   background work ended ─ on_stored ──────────▶ the stored response's state
//!   store reply / event ── on_store_reply/event ▶ the waits it answers
//!   timer fired ────────── on_timeout ──────────▶ windows, expiry, polls, re-reads
//!   client left ────────── forget ──────────────▶ its waiters and held calls
//!                          poll_output() ◀────── replies, ends, notifications
//!                          poll_op() ◀────────── store operations
//!                          poll_timeout() ◀───── next deadline
//! ```
//!
//! What the desk needs of its neighbours at once (starting or stopping a call in the
//! engine, a cost the ledger counts, a client's name) it is lent as a [`Floor`] for the
//! one move; what it answers, it queues, and the server routes it in one place.
//!
//! | backend | chosen when | file |
//! |---|---|---|
//! | local | no store, or `tasks/update` | [`local`] |
//! | background | `tasks.openai_background`, or a background id | [`background`] |
//! | shared | a store is configured | [`shared`] |

mod background;
mod held;
mod local;
mod shared;

use crate::calls::CallEngine;
use crate::clients::ClientId;
use crate::io::{ExchangeId, Now};
use crate::jsonrpc::{Request, RpcError};
use crate::ledger::Ledger;
use crate::mcp::failure::Wording;
use crate::mcp::shape::TaskError;
use crate::mcp::{Method, ProtocolVersion};
use crate::routing::{Asker, Context, Dispatched, ReplyTo, TaskStart};
use crate::settings::{ServerConfig, TaskSettings};
use crate::store::{StoreId, StoreOp};
use crate::timers::Timers;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Instant;

pub(crate) use local::Waiter;
pub(crate) use shared::SharedTasks;

/// What the desk hands back to the server, in order.
#[derive(Debug)]
pub(crate) enum DeskOut {
    /// The late reply to a request (counted once, with how long it waited).
    Reply(Asker, Result<Value, RpcError>),
    /// A request that ends without a reply (a held call whose call was stopped).
    Unanswered(ReplyTo),
    /// A notification frame for the stdio client (`notifications/tasks/status`).
    Notify(Value),
}

/// The neighbours a desk move may use at once: the engine that runs calls, and the ledger
/// that counts them and names their clients.
pub(crate) struct Floor<'a> {
    pub calls: &'a mut CallEngine<Context>,
    pub ledger: &'a mut Ledger,
}

/// A deadline the desk keeps: a held call's window, a shared task's re-read, or the
/// renewal of this instance's lease on its shared tasks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Window(String),
    Recheck(String),
    Lease,
}

/// See the module docs.
pub(crate) struct Desk {
    settings: TaskSettings,
    wording: Wording,
    /// Bytes an outcome may have and still be written to the shared store.
    max_message_bytes: usize,
    /// The answer profile's model, named for a stored response read without one.
    answer_model: String,
    /// Tasks of this instance: `tools/call`s answered with a handle, their outcomes kept
    /// for their ttl.
    tasks: crate::tasks::TaskStore<Waiter>,
    /// Tasks backed by OpenAI background mode: the last state per response, waiters, polls.
    background: crate::tasks::background::Polls<crate::routing::Pending>,
    /// The background runs this instance started, followed until each is charged.
    follows: background::Follows,
    /// Modern task-augmented calls waiting a moment for their result before their task.
    held: held::Held,
    /// With a shared store: what waits for its answers.
    shared: Option<SharedTasks>,
    /// The held windows and the shared re-reads (the task store and the polls keep their
    /// own heaps, as sub-machines with tests of their own).
    timers: Timers<Due>,
    out: VecDeque<DeskOut>,
    /// The wall-clock time of the latest input, Unix seconds.
    latest_unix: u64,
    /// The server is stopping the calls left at the end of its grace: their tasks fail,
    /// telling their clients to call again.
    stopping: bool,
}

impl Desk {
    /// A desk with no task yet. Task numbers start at `first_task`.
    pub(crate) fn new(config: &ServerConfig, first_task: u64) -> Desk {
        let settings = config.tasks.clone();
        Desk {
            tasks: crate::tasks::TaskStore::starting_at(settings.clone(), first_task),
            background: crate::tasks::background::Polls::new(
                settings.max_tasks,
                settings.background_poll(),
            ),
            follows: background::Follows::default(),
            settings,
            wording: Wording::new(config),
            max_message_bytes: config.max_message_bytes,
            answer_model: config
                .profiles
                .for_tool(crate::tools::Tool::Answer)
                .map(|p| p.model.clone())
                .unwrap_or_default(),
            held: held::Held::default(),
            shared: config.store.map(|_| {
                // Not the task numbers' seed: a holder says nothing of the ids.
                let seed = config.jitter_seed.rotate_left(43) ^ 0x9e37_79b9_7f4a_7c15;
                SharedTasks::new(crate::store::tasks::lease::holder(seed))
            }),
            timers: Timers::default(),
            out: VecDeque::new(),
            latest_unix: 0,
            stopping: false,
        }
    }

    /// A task-augmented `tools/call`: a background task when background mode is on, else
    /// a task of this instance (shared through the store when there is one).
    pub(crate) fn start(
        &mut self,
        now: Now,
        floor: Floor<'_>,
        asked: (crate::jsonrpc::RequestId, ReplyTo, ProtocolVersion),
        start: TaskStart,
    ) -> Dispatched {
        self.latest_unix = now.unix_secs;
        if self.settings.background {
            self.start_background(now, floor, asked, start)
        } else {
            self.start_local(now, floor, asked, start)
        }
    }

    /// `tasks/*` in `version` (2025-11-25 sessions and requests, or 2026-07-28 requests)
    /// from `client`, who sees only the tasks it created: routed to the backend its id
    /// names (a background id, the shared store, or this instance's store).
    pub(crate) fn on_request(
        &mut self,
        now: Now,
        floor: Floor<'_>,
        request: Request,
        method: Method,
        (reply_to, client, version): (ReplyTo, ClientId, ProtocolVersion),
        span: Option<crate::spans::SpanStart>,
    ) -> Dispatched {
        self.latest_unix = now.unix_secs;
        let asker = Asker {
            id: request.id.clone(),
            reply_to,
            method: method.label(),
            tool: None,
            version,
            received: now.instant,
            span,
        };
        if method == Method::TasksList && self.shared.is_some() {
            return self.shared_list(asker, &request.params, floor.ledger.clients().name(client));
        }
        if method == Method::TasksList {
            let result = self.list_local(&request.params, version, client);
            return Dispatched::answer(request.id, result);
        }
        let task_id = match request.params.get("taskId") {
            Some(Value::String(id)) => id.clone(),
            _ => {
                let error = TaskError::MissingId {
                    method: method.as_str(),
                };
                return Dispatched::answer(request.id, Err(error.error()));
            }
        };
        if let Ok(reference) = self.tasks.open_background(&task_id) {
            let of = (reference, task_id.as_str(), client);
            return self.background_request(now, floor, (asker, method), of);
        }
        if self.shared.is_some() && method != Method::TasksUpdate {
            let owner = floor.ledger.clients().name(client).to_owned();
            return self.shared_request(now, (asker, method), task_id, owner);
        }
        self.local_request(now, floor, (asker, method), &task_id, client)
    }

    /// The call of task `task_id` ended: with `outcome` (`None`: stopped without one).
    /// A 2025-11-25 stdio client hears of the change when `notify`.
    pub(crate) fn call_ended(
        &mut self,
        unix: u64,
        task_id: &str,
        outcome: Option<Result<Value, RpcError>>,
        clients: &crate::clients::Clients,
        creator: (ReplyTo, ProtocolVersion),
    ) {
        self.latest_unix = unix;
        // A call stopped at the end of the grace: its task fails, and says why.
        let outcome = if self.stopping {
            Some(Err(TaskError::InstanceStopped.error()))
        } else {
            outcome
        };
        match outcome {
            Some(outcome) => self.finish_local(task_id, outcome, clients, creator),
            None => self.drop_local(task_id, clients, creator),
        }
    }

    /// The server stops the calls still running at the end of its grace: their tasks
    /// end as failed ([`TaskError::InstanceStopped`]), in the store too.
    pub(crate) fn stopping(&mut self) {
        self.stopping = true;
    }

    /// The server exits: the `tasks/result` requests waiting here on other instances'
    /// tasks are answered, so that their clients ask again elsewhere, and a handle the
    /// store never acknowledged is answered with the stopped task's error.
    pub(crate) fn exiting(&mut self) {
        self.release_shared_waiters();
    }

    /// Time passed: held windows end, tasks expire, shared tasks are read again and
    /// background responses polled.
    pub(crate) fn on_timeout(&mut self, now: Now, floor: Floor<'_>) {
        self.latest_unix = now.unix_secs;
        let mut windows = Vec::new();
        let mut rechecks = Vec::new();
        let mut renew = false;
        for (at, due) in self.timers.take_due(now.instant) {
            match due {
                Due::Window(task_id) => {
                    if let Some(request) = self.held.release_at(&task_id, at) {
                        windows.push((task_id, request));
                    }
                }
                Due::Recheck(task_id) => {
                    if self.shared.as_ref().is_some_and(|s| s.is_due(at, &task_id)) {
                        rechecks.push(task_id);
                    }
                }
                Due::Lease => {
                    renew |= self
                        .shared
                        .as_ref()
                        .is_some_and(|s| s.lease_due() == Some(at));
                }
            }
        }
        if renew {
            self.renew_lease(now);
        }
        self.prune_timers();
        // A window that ends with its task's life answers with the task first.
        self.release_held(now.instant, windows, floor.ledger.clients());
        self.expire_local(now, floor.calls);
        for task_id in rechecks {
            self.reread(&task_id);
        }
        self.background.handle_timeout(now.instant);
        self.start_reads(now, floor.calls);
    }

    /// The client of exchange `x` went away: its waiting requests wait no more, and the
    /// calls of the tasks it never heard of stop.
    pub(crate) fn forget(&mut self, now: Now, calls: &mut CallEngine<Context>, x: ExchangeId) {
        let gone = |w: &Asker| w.reply_to == ReplyTo::Exchange(x);
        // A `tasks/result` whose client left waits no more (and frees its slot).
        self.tasks.forget_waiters(gone);
        self.background
            .forget(|p: &crate::routing::Pending| gone(&p.asker));
        self.forget_shared_waiters(gone);
        self.forget_held(now, calls, ReplyTo::Exchange(x));
    }

    /// The next thing to send, in order.
    pub(crate) fn poll_output(&mut self) -> Option<DeskOut> {
        self.out.pop_front()
    }

    /// The next operation for the shared store.
    pub(crate) fn poll_op(&mut self) -> Option<(StoreId, StoreOp)> {
        self.shared.as_mut()?.poll_op()
    }

    /// When to call `on_timeout` next.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        let own = self.timers.peek().map(|(at, _)| at);
        debug_assert_eq!(
            own,
            self.live_deadlines().into_iter().map(|(at, _)| at).min(),
            "the desk's heap is out of step with its windows and re-reads"
        );
        [
            own,
            self.tasks.poll_timeout(),
            self.background.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the exit waits for the shared store: a handle not yet sent, or a task's
    /// end not yet acknowledged.
    pub(crate) fn holds_exit(&self) -> bool {
        self.shared.as_ref().is_some_and(SharedTasks::holds_exit)
    }

    /// Tasks of this instance, working or finished.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Tasks of this instance by status, for the metrics.
    pub(crate) fn count_by_status(&self) -> Vec<(&'static str, usize)> {
        self.tasks.count_by_status()
    }

    /// Whether task `task_id`'s call is held (its client still waits on the request).
    pub(crate) fn is_held(&self, task_id: &str) -> bool {
        self.held.contains(task_id)
    }

    /// Queues a late reply.
    fn reply(&mut self, asker: Asker, result: Result<Value, RpcError>) {
        self.out.push_back(DeskOut::Reply(asker, result));
    }

    /// Every deadline still due: the held windows and the re-reads not on their way.
    fn live_deadlines(&self) -> Vec<(Instant, Due)> {
        let windows = self
            .held
            .deadlines()
            .map(|(at, id)| (at, Due::Window(id.to_owned())));
        let checks = self
            .shared
            .iter()
            .flat_map(SharedTasks::deadlines)
            .map(|(at, id)| (at, Due::Recheck(id.to_owned())));
        let lease = self
            .shared
            .as_ref()
            .and_then(SharedTasks::lease_due)
            .map(|at| (at, Due::Lease));
        windows.chain(checks).chain(lease).collect()
    }

    /// Drops the deadlines no longer due from the top of the heap (a released window, a
    /// task no longer waited on, a re-read on its way), so that none wakes the server for
    /// nothing.
    fn prune_timers(&mut self) {
        let (held, shared) = (&self.held, &self.shared);
        let live = held.len()
            + shared
                .as_ref()
                .map_or(0, |s| s.waited() + usize::from(s.lease_due().is_some()));
        let is_live = |at: Instant, due: &Due| match due {
            Due::Window(id) => held.until(id) == Some(at),
            Due::Recheck(id) => shared.as_ref().is_some_and(|s| s.is_due(at, id)),
            Due::Lease => shared.as_ref().is_some_and(|s| s.lease_due() == Some(at)),
        };
        let mut timers = std::mem::take(&mut self.timers);
        timers.prune(is_live, live, || self.live_deadlines());
        self.timers = timers;
    }
}
