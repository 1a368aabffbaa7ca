//! What the desk asks of its neighbours, as values: a reply, a notification, work to
//! start in the call engine (whose refusal comes back through
//! [`Desk::on_refused`](super::Desk::on_refused)), a call to stop, and what the ledger
//! counts. The desk is lent neither the engine nor the ledger; the server drains these in
//! order after each move, in one place.

use crate::calls::{CallKey, Planned, Work};
use crate::clients::ClientId;
use crate::jsonrpc::{RequestId, RpcError};
use crate::ledger::{CallOf, End, Lane};
use crate::mcp::{ProgressToken, ProtocolVersion};
use crate::openai::{FailureKind, Report, Usage};
use crate::routing::{Call, Job, Ticket};
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

/// What the desk hands back to the server, in order.
#[derive(Debug)]
pub(crate) enum DeskOut {
    /// The late reply to a request (counted once, with how long it waited).
    Reply(Ticket, Result<Value, RpcError>),
    /// A request that ends without a reply (a held call whose call was stopped).
    Unanswered(Ticket),
    /// A notification frame for the stdio client (`notifications/tasks/status`).
    Notify(Value),
    /// Work for the call engine; a refusal goes back to [`super::Desk::on_refused`].
    Start(Box<Start>),
    /// Stop this call in the engine (its end comes back as any call's does).
    Cancel(CallKey),
    /// Something the ledger counts.
    Charge(Charge),
}

/// Work the desk wants started.
#[derive(Debug)]
pub(crate) struct Start {
    pub work: Starting,
    pub plan: Planned,
    /// The access date the request is planned for.
    pub today: String,
    /// What the desk does if the engine has no room for it.
    pub if_refused: IfRefused,
}

impl Start {
    /// The estimate the call behind this work holds since its admission, if any: let go
    /// when the engine has no room for it.
    pub(crate) fn hold(&self) -> Option<crate::ledger::HoldId> {
        match &self.work {
            Starting::Call { caller, .. } => caller.reservation.hold,
            Starting::Stored {
                job: crate::routing::Job::Create { call, .. },
                ..
            } => call.reservation.hold,
            Starting::Stored { .. } => None,
        }
    }
}

/// The two kinds of work the desk starts.
#[derive(Debug)]
pub(crate) enum Starting {
    /// A task's `tools/call`, run as any call is; its key goes back through
    /// [`super::Desk::on_task_started`].
    Call {
        caller: Call,
        progress: Option<ProgressToken>,
    },
    /// Work on a stored response (background mode): create, read or cancel it.
    Stored { job: Job, work: Work },
}

/// What a refusal of the engine means for the desk.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum IfRefused {
    /// The request being handled is answered with the engine's refusal; for a task's
    /// call, its task is dropped first.
    Answer {
        id: RequestId,
        version: ProtocolVersion,
        task: Option<String>,
    },
    /// A read of a background response: its waiters are served at the next poll.
    ReadLater(String),
}

/// What the ledger counts, with what it needs to count it.
#[derive(Debug, PartialEq)]
pub(crate) enum Charge {
    /// A store operation of the tasks answered after `took` (`failed`: unavailable).
    StoreObserved { took: Duration, failed: bool },
    /// A task the store ended as an orphan.
    Orphaned,
    /// A background run OpenAI took on: held its estimate until it ends.
    Held(Box<Held>),
    /// A call ended at a time (Unix seconds): a background create that failed.
    Ended(Box<(CallOf, RunEnd, u64)>),
    /// A background run (its response id) read as ended at a time: counted once, its
    /// hold given back.
    Settled(Box<(String, CallOf, RunEnd, u64)>),
    /// A call whose end was counted otherwise: the estimate held since its admission
    /// is let go.
    Unhold(Box<CallOf>),
}

/// A background run's hold ([`crate::ledger::Ledger::background_started`]).
#[derive(Debug, PartialEq)]
pub(crate) struct Held {
    pub response_id: String,
    /// When its task's life ends, Unix seconds.
    pub ends: u64,
    pub call: CallOf,
    pub model: String,
    /// What the create sent, as the engine estimated it.
    pub sent: Option<Usage>,
    /// When OpenAI took it on, Unix seconds.
    pub at: u64,
}

/// [`End`], owned, so that it can wait in the queue.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunEnd {
    pub model: String,
    pub failure: Option<FailureKind>,
    pub report: Report,
    pub took: Duration,
    pub lane: Lane,
    pub cancelled: bool,
}

impl RunEnd {
    /// As the ledger takes it.
    pub(crate) fn as_end(&self) -> End<'_> {
        End {
            model: &self.model,
            failure: self.failure,
            report: &self.report,
            took: self.took,
            lane: self.lane,
            cancelled: self.cancelled,
        }
    }
}

/// The desk's queue of what it wants done, and the names of the clients whose tasks it
/// keeps (learned with each request, so that the desk never reads the server's roster).
#[derive(Debug, Default)]
pub(crate) struct Emit {
    out: VecDeque<DeskOut>,
    /// Sorted by client: one entry per client or identity that asked of the desk. A
    /// sorted `Vec` looks up as a map does, for a fraction of a map's code.
    names: Vec<(ClientId, String)>,
    /// The wall-clock time of the latest input, Unix seconds.
    pub unix: u64,
}

impl Emit {
    /// Queues `out`.
    pub fn push(&mut self, out: DeskOut) {
        self.out.push_back(out);
    }

    /// Queues a late reply.
    pub fn reply(&mut self, asker: Ticket, result: Result<Value, RpcError>) {
        self.push(DeskOut::Reply(asker, result));
    }

    /// Queues a charge.
    pub fn charge(&mut self, charge: Charge) {
        self.push(DeskOut::Charge(charge));
    }

    /// Queues a stop of `key`'s call.
    pub fn cancel(&mut self, key: CallKey) {
        self.push(DeskOut::Cancel(key));
    }

    /// The next thing to do.
    pub fn pop(&mut self) -> Option<DeskOut> {
        self.out.pop_front()
    }

    /// Notes that `client` is named `name`.
    pub fn learn(&mut self, client: ClientId, name: &str) {
        match self.names.binary_search_by_key(&client, |(id, _)| *id) {
            Ok(i) if self.names[i].1 == name => {}
            Ok(i) => self.names[i].1 = name.to_owned(),
            Err(i) => self.names.insert(i, (client, name.to_owned())),
        }
    }

    /// Forgets the name of `client`: its id was forgotten, and may name another.
    pub fn forget(&mut self, client: ClientId) {
        if let Ok(i) = self.names.binary_search_by_key(&client, |(id, _)| *id) {
            self.names.remove(i);
        }
    }

    /// The name of `client` (empty when never learned: no task of its is kept here).
    pub fn name(&self, client: ClientId) -> &str {
        match self.names.binary_search_by_key(&client, |(id, _)| *id) {
            Ok(i) => &self.names[i].1,
            Err(_) => "",
        }
    }
}
