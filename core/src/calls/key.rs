//! A call's identity: who asked, and the client's request id.

use crate::io::ExchangeId;
use crate::jsonrpc::RequestId;
use std::fmt;

/// Who asked for a call. Request ids are unique per requester only: the stdio client
/// has one id space, and each HTTP request is its own (two HTTP clients may both use 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Requester {
    /// The client on stdin.
    Stdio,
    /// One HTTP request, whose response carries the reply.
    Exchange(ExchangeId),
    /// A task's work (its number): a call that answers into the task store, or work on a
    /// background task's stored response; never a reply to a request of its own.
    Task(u64),
}

/// A call's identity in the engine: its requester and the client's request id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallKey {
    /// Who asked.
    pub from: Requester,
    /// The client's id.
    pub id: RequestId,
}

impl From<RequestId> for CallKey {
    /// A call from the stdio client.
    fn from(id: RequestId) -> CallKey {
        CallKey {
            from: Requester::Stdio,
            id,
        }
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.from {
            Requester::Stdio => write!(f, "{}", self.id),
            Requester::Exchange(exchange) => write!(f, "{} (HTTP {exchange})", self.id),
            Requester::Task(n) => write!(f, "task call {n}"),
        }
    }
}
