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
//!   task call, tasks/* ──── start / on_request ─▶ Local · Background · Shared
//!   engine took, refused ── on_task_started ────▶ answer or hold the task call
//!                           / on_refused
//!   call ended ─────────── call_ended ──────────▶ finish or drop the task
//!   background work ended ─ on_stored ──────────▶ the stored response's state
//!   store reply / event ── on_store ────────────▶ the waits it answers
//!   timer fired ────────── on_timeout ──────────▶ windows, expiry, polls, re-reads
//!   client left ────────── forget ──────────────▶ its waiters and held calls
//!                          poll_output() ◀────── replies, starts, cancels, charges
//!                          poll_op() ◀────────── store operations
//!                          poll_timeout() ◀───── next deadline
//! ```
//!
//! It is lent nothing: what it wants of its neighbours (a reply, work started or stopped
//! in the call engine, a count in the ledger) it emits as a [`DeskOut`], which the
//! server drains in order after each move; the engine's refusal of work comes back as an
//! input ([`Desk::on_refused`]), and a started task call's key too
//! ([`Desk::on_task_started`]). The clients' names come with the requests.
//!
//! | backend | chosen when | type, in |
//! |---|---|---|
//! | local | no store, or `tasks/update` | `Local`, [`local`] |
//! | background | `tasks.openai_background`, or a background id | `Background`, [`background`] |
//! | shared | a store is configured | `SharedTasks` and its move `Shared`, [`shared`] |

mod background;
mod deadlines;
mod due;
mod emit;
mod held;
mod local;
mod shared;

use crate::calls::{CallKey, Refused};
use crate::io::Now;
use crate::jsonrpc::{Request, RpcError};
use crate::mcp::shape::TaskError;
use crate::mcp::{Method, ProtocolVersion};
use crate::routing::{Dispatched, ReplyTo, TaskStart, Ticket};
use crate::settings::{ServerConfig, TaskSettings};
use crate::store::events::StoreEvent;
use crate::store::{StoreId, StoreOp, StoreReply};
use crate::timers::Timers;
use serde_json::Value;
use std::time::{Duration, Instant};

use due::Due;
use emit::Emit;
pub(crate) use emit::{Charge, DeskOut, IfRefused, Start, Starting};
use local::Local;
use shared::{Shared, SharedTasks};

/// What the store told the desk.
#[derive(Debug)]
pub(crate) enum FromStore {
    /// The answer to one of its operations, and how long it took.
    Reply(StoreId, StoreReply, Duration),
    /// An event on the store's channel.
    Event(StoreEvent),
    /// The store's channel is (again) subscribed.
    Subscribed,
}

/// See the module docs.
pub(crate) struct Desk {
    settings: TaskSettings,
    /// Bytes an outcome may have and still be written to the shared store.
    max_message_bytes: usize,
    /// Tasks of this instance, and the held windows.
    local: Local,
    /// Tasks backed by OpenAI background mode.
    background: background::Background,
    /// With a shared store: what waits for its answers.
    shared: Option<SharedTasks>,
    /// The held windows and the shared re-reads (the task store and the polls keep their
    /// own heaps, as sub-machines with tests of their own).
    timers: Timers<Due>,
    /// What the desk wants done, and the names of its tasks' clients.
    emit: Emit,
    /// The server is stopping the calls left at the end of its grace: their tasks fail,
    /// telling their clients to call again.
    stopping: bool,
}

impl Desk {
    /// A desk with no task yet. Task numbers start at `first_task`.
    pub(crate) fn new(config: &ServerConfig, first_task: u64) -> Desk {
        let settings = config.tasks.clone();
        Desk {
            local: Local::new(&settings, first_task),
            background: background::Background::new(config),
            settings,
            max_message_bytes: config.max_message_bytes,
            shared: config.store.map(|_| {
                // Drawn apart from the task numbers: a holder and an id say nothing of
                // each other, nor of the seed.
                let holder = crate::sha256::derive(config.jitter_seed, b"lease holder");
                SharedTasks::new(crate::store::tasks::lease::holder(holder))
            }),
            timers: Timers::default(),
            emit: Emit::default(),
            stopping: false,
        }
    }

    /// A task-augmented `tools/call` from the client named `name`: a background task
    /// when background mode is on, else a task of this instance (shared through the
    /// store when there is one).
    pub(crate) fn start(
        &mut self,
        now: Now,
        name: &str,
        ticket: Ticket,
        start: TaskStart,
    ) -> Dispatched {
        self.emit.unix = now.unix_secs;
        self.emit.learn(ticket.client, name);
        if self.settings.background {
            self.background.start(&mut self.emit, now, ticket, start)
        } else {
            self.local.start(&mut self.emit, now, ticket, start)
        }
    }

    /// The engine took task `task_id`'s call as `key`: the request that asked for it is
    /// answered with its task (once the store holds it, when there is one), or held for
    /// a moment for its result.
    pub(crate) fn on_task_started(&mut self, now: Now, task_id: &str, key: CallKey) -> Dispatched {
        let handed = self.local.started(&mut self.timers, now, (task_id, key));
        match handed.and_then(|answer| self.share_new(now.instant, task_id, answer)) {
            Some((asker, result)) => Dispatched::answer(asker.id, result),
            None => Dispatched::Later,
        }
    }

    /// The engine had no room for work the desk emitted: the answer to the request being
    /// handled, if the work was its.
    pub(crate) fn on_refused(
        &mut self,
        now: Now,
        if_refused: IfRefused,
        refused: Refused,
    ) -> Option<Dispatched> {
        match if_refused {
            IfRefused::Answer { id, version, task } => {
                let answer = match task {
                    Some(task_id) => {
                        self.local.refused(&task_id);
                        local::task_refused(refused, &id, version)
                    }
                    None => background::refusal(refused, version),
                };
                Some(Dispatched::answer(id, answer))
            }
            IfRefused::ReadLater(id) => {
                self.background.read_refused(now, &id);
                None
            }
        }
    }

    /// `tasks/*` in `version` (2025-11-25 sessions and requests, or 2026-07-28 requests)
    /// from `client`, named `name`, who sees only the tasks it created: routed to the
    /// backend its id names (a background id, the shared store, or this instance's
    /// store).
    pub(crate) fn on_request(
        &mut self,
        now: Now,
        name: &str,
        request: Request,
        method: Method,
        asker: Ticket,
    ) -> Dispatched {
        let (client, version) = (asker.client, asker.reply_version());
        self.emit.unix = now.unix_secs;
        self.emit.learn(client, name);
        let params = &request.params;
        if method == Method::TasksList {
            return match shared(self) {
                Some(mut shared) => shared.shared_list(asker, params, name),
                None => {
                    let page = self.local.list(now.unix_secs, params, version, client);
                    Dispatched::answer(request.id, page)
                }
            };
        }
        let task_id = match params.get("taskId") {
            Some(Value::String(id)) => id.clone(),
            _ => {
                let error = TaskError::MissingId {
                    method: method.as_str(),
                };
                return Dispatched::answer(request.id, Err(error.error()));
            }
        };
        if let Ok(reference) = self.local.tasks.open_background(&task_id) {
            let of = (reference, task_id.as_str(), client);
            return self
                .background
                .request(&mut self.emit, now, (asker, method), of);
        }
        if method != Method::TasksUpdate {
            if let Some(mut shared) = shared(self) {
                return shared.shared_request(now, (asker, method), task_id, name.to_owned());
            }
        }
        let emit = &mut self.emit;
        self.local
            .request(emit, now, (asker, method), &task_id, client)
    }

    /// The engine finished background work for `job`.
    pub(crate) fn on_stored(
        &mut self,
        now: Now,
        job: crate::routing::Job,
        outcome: Result<crate::calls::Stored, crate::openai::UpstreamFailure>,
        (retries, report): (u32, &crate::calls::Report),
    ) {
        let emit = &mut self.emit;
        self.background
            .on_stored(emit, now, job, outcome, retries, report);
    }

    /// The call of task `task_id` ended: with `outcome` (`None`: stopped without one).
    /// A 2025-11-25 stdio client hears of the change when `notify`.
    pub(crate) fn call_ended(
        &mut self,
        unix: u64,
        task_id: &str,
        outcome: Option<Result<Value, RpcError>>,
        creator: (ReplyTo, ProtocolVersion),
    ) {
        self.emit.unix = unix;
        // A call stopped at the end of the grace: its task fails, and says why.
        let outcome = if self.stopping {
            Some(Err(TaskError::InstanceStopped.error()))
        } else {
            outcome
        };
        let emit = &mut self.emit;
        let ended = match outcome {
            Some(outcome) => self.local.finish(emit, task_id, outcome, creator),
            None => self.local.drop(emit, task_id, creator),
        };
        if let Some(mut shared) = shared(self).filter(|_| ended) {
            shared.share_task_end(task_id);
        }
        self.prune_timers();
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
        if let Some(mut shared) = shared(self) {
            shared.release_shared_waiters();
        }
        self.prune_timers();
    }

    /// Time passed: held windows end, tasks expire, shared tasks are read again and
    /// background responses polled.
    pub(crate) fn on_timeout(&mut self, now: Now) {
        self.emit.unix = now.unix_secs;
        let mut windows = Vec::new();
        let mut rechecks = Vec::new();
        let mut renew = false;
        for (at, due) in self.timers.take_due(now.instant) {
            match due {
                Due::Window(task_id) => {
                    if let Some(request) = self.local.held.release_at(&task_id, at) {
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
        if let Some(mut shared) = shared(self).filter(|_| renew) {
            shared.renew_lease(now);
        }
        self.prune_timers();
        // A window that ends with its task's life answers with the task first.
        for (task_id, held, result) in self.local.release_held(now.unix_secs, windows) {
            if let Some((held, result)) = self.share_new(now.instant, &task_id, (held, result)) {
                self.emit.reply(held, result);
            }
        }
        self.local.expire(&mut self.emit, now);
        if let Some(mut shared) = shared(self) {
            rechecks.iter().for_each(|task_id| shared.reread(task_id));
        }
        self.background.on_timeout(&mut self.emit, now);
        self.prune_timers();
    }

    /// The requests `gone` picks are no longer awaited (their client went away, or
    /// cancelled them; the server closed their tickets): they wait no more, and the
    /// calls of the tasks their clients never heard of stop.
    pub(crate) fn forget(&mut self, gone: impl Fn(&Ticket) -> bool + Copy) {
        self.background.forget(gone);
        if let Some(mut shared) = shared(self) {
            shared.forget_shared_waiters(gone);
        }
        self.local.forget(&mut self.emit, gone);
        self.prune_timers();
    }

    /// What the store told the desk.
    pub(crate) fn on_store(&mut self, now: Now, told: FromStore) {
        if !matches!(told, FromStore::Subscribed) {
            self.emit.unix = now.unix_secs;
        }
        if let Some(mut shared) = shared(self) {
            match told {
                FromStore::Reply(id, reply, took) => shared.on_store_reply(now, id, (reply, took)),
                FromStore::Event(event) => shared.on_store_event(now, event),
                FromStore::Subscribed => shared.on_store_subscribed(),
            }
        }
        self.prune_timers();
    }

    /// Tells the other instances `event` (a request's cancel, one of which may run the
    /// call). Nothing without a store.
    pub(crate) fn publish(&mut self, event: &StoreEvent) {
        if let Some(mut shared) = shared(self) {
            shared.publish(event);
        }
    }

    /// The next thing to do, in order.
    pub(crate) fn poll_output(&mut self) -> Option<DeskOut> {
        self.emit.pop()
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
            deadlines::live_deadlines(&self.local.held, self.shared.as_ref())
                .into_iter()
                .map(|(at, _)| at)
                .min(),
            "the desk's heap is out of step with its windows and re-reads"
        );
        [
            own,
            self.local.tasks.poll_timeout(),
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

    /// This instance's tasks (working or finished) by status, for the metrics.
    pub(crate) fn count_by_status(&self) -> Vec<(&'static str, usize)> {
        self.local.tasks.count_by_status()
    }

    /// Tasks of this instance, working or finished.
    pub(crate) fn len(&self) -> usize {
        self.local.tasks.len()
    }

    /// Calls `add` with every client a task of this desk belongs to, or a background run
    /// it follows is charged to (requests waiting here are the register's to name).
    pub(crate) fn clients_held(&self, add: &mut dyn FnMut(crate::clients::ClientId)) {
        self.local.tasks.owners().for_each(&mut *add);
        self.background.clients().for_each(add);
    }

    /// `client`'s id was forgotten by the roster (it held nothing here): its name too.
    pub(crate) fn forget_client(&mut self, client: crate::clients::ClientId) {
        self.emit.forget(client);
    }

    /// Whether task `task_id`'s call is held (its client still waits on the request).
    pub(crate) fn is_held(&self, task_id: &str) -> bool {
        self.local.held.contains(task_id)
    }

    /// A new task's handle: written to the store first when there is one (answered once
    /// it is there), else handed back to be answered now.
    fn share_new(
        &mut self,
        now: Instant,
        task_id: &str,
        answer: (Ticket, Result<Value, RpcError>),
    ) -> Option<(Ticket, Result<Value, RpcError>)> {
        match shared(self) {
            Some(mut shared) => shared.share_new_task((task_id, now), Some(answer)),
            None => Some(answer),
        }
    }

    /// Drops the deadlines no longer due from the top of the heap. Done at the end of
    /// each move.
    fn prune_timers(&mut self) {
        let shared = self.shared.as_ref();
        deadlines::prune(&mut self.timers, &self.local.held, shared);
    }
}

/// The shared backend's move on `desk`, when there is a store.
fn shared(desk: &mut Desk) -> Option<Shared<'_>> {
    Some(Shared {
        state: desk.shared.as_mut()?,
        local: &mut desk.local,
        emit: &mut desk.emit,
        timers: &mut desk.timers,
        max_ttl: desk.settings.max_ttl,
        max_message_bytes: desk.max_message_bytes,
    })
}

#[cfg(test)]
mod tests;
