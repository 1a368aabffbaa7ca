//! What the server's parts hand each other: where a reply goes, what handling a message
//! produced, and what each piece of the call engine's work carries back to route its end.
//! Plain data, so the parts that produce and consume it import it from here, not from
//! each other.

use crate::calls::{Planned, Requester};
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::jsonrpc::{Reply, RequestId, RpcError};
use crate::ledger::{Arrival, CallOf, Reservation, Transport};
use crate::mcp::{Method, ProgressToken, ProtocolVersion};
use crate::tasks::BackgroundRef;
use crate::tools::Tool;
use crate::trace_context::TraceParent;
use serde_json::Value;
use std::time::Instant;

/// Where a request's reply goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyTo {
    /// Straight to stdout as its own frame.
    Direct,
    /// Into a slot of a batch, written when the whole batch is answered.
    Batch { batch: u64, slot: usize },
    /// Back on an HTTP request's response.
    Exchange(ExchangeId),
}

impl ReplyTo {
    /// How the request came.
    pub(crate) fn transport(self) -> Transport {
        match self {
            ReplyTo::Direct | ReplyTo::Batch { .. } => Transport::Stdio,
            ReplyTo::Exchange(_) => Transport::Http,
        }
    }

    /// Whose id space the request's id belongs to.
    pub(crate) fn requester(self) -> Requester {
        match self {
            ReplyTo::Direct | ReplyTo::Batch { .. } => Requester::Stdio,
            ReplyTo::Exchange(x) => Requester::Exchange(x),
        }
    }
}

/// Whose requests a `notifications/cancelled` reaches: on stdio, stdio's; over HTTP, its
/// client's on any exchange (a cancel comes on its own request), on this replica or,
/// through the store, on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    Stdio,
    Client(ClientId),
}

impl Reach {
    /// The reach of a cancel from `from`, sent by `client`; none for internal work, which
    /// is never cancelled by a notification.
    pub(crate) fn of(from: Requester, client: ClientId) -> Option<Reach> {
        match from {
            Requester::Stdio => Some(Reach::Stdio),
            Requester::Exchange(_) => Some(Reach::Client(client)),
            Requester::Internal(_) => None,
        }
    }
}

/// A request as the server registered it on arrival ([`crate::server`]'s register): what
/// every part needs to answer it, count it and trace it. Each owner of a request still
/// waiting (a call, a parked reserve, a task's waiter) keeps its ticket beside its own
/// data; the reply leaves through the register, which answers each ticket once.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ticket {
    /// The register's number for it: the key it is answered under once.
    pub no: u64,
    pub id: RequestId,
    pub reply_to: ReplyTo,
    /// `mcp.method.name`.
    pub method: &'static str,
    /// The tool a `tools/call` names, when it names one.
    pub tool: Option<Tool>,
    /// The request's version (`None`: a stdio request before `initialize`, counted in
    /// the version the session has when it is answered).
    pub version: Option<ProtocolVersion>,
    /// Who asked.
    pub client: ClientId,
    /// When the request arrived.
    pub received: Instant,
    /// The caller's trace context (its `_meta`, else its HTTP header).
    pub trace: Option<TraceParent>,
    /// The request's span, when it is traced: ended when its answer leaves.
    pub span: Option<crate::spans::SpanStart>,
}

impl Ticket {
    /// The version its reply is shaped for.
    pub(crate) fn reply_version(&self) -> ProtocolVersion {
        self.version.unwrap_or(ProtocolVersion::LATEST_LEGACY)
    }

    /// Whether a cancel of request `id` that reaches `reach` names this request.
    pub(crate) fn named_by_cancel(&self, reach: Reach, id: &RequestId) -> bool {
        self.id == *id
            && match reach {
                Reach::Stdio => self.reply_to.requester() == Requester::Stdio,
                Reach::Client(client) => self.is_http_request_of(client),
            }
    }

    /// Whether this is an HTTP request of `client`, on any exchange.
    pub(crate) fn is_http_request_of(&self, client: ClientId) -> bool {
        matches!(self.reply_to, ReplyTo::Exchange(_)) && self.client == client
    }

    /// The call the ledger counts for this request, with what only the call knows. Only
    /// a `tools/call` naming a tool of ours becomes a call (any other is answered at
    /// once), so `tool` is always there.
    pub(crate) fn call_of(&self, task: bool, reservation: Reservation, arrival: Arrival) -> CallOf {
        CallOf {
            tool: self.tool.unwrap_or(Tool::Answer),
            version: self.reply_version(),
            transport: self.reply_to.transport(),
            client: self.client,
            task,
            trace: self.trace,
            reservation,
            arrival,
        }
    }
}

/// What handling one message produced.
pub(crate) enum Dispatched {
    /// A reply, available now.
    Reply(Reply),
    /// A reply now to a call a limit refused: the client may ask again in
    /// `retry_after_secs` (over HTTP, the `Retry-After` header says so).
    Refused { reply: Reply, retry_after_secs: u64 },
    /// Nothing to send (a notification or an ignored response).
    Nothing,
    /// A successful reply already sent (written from a cache): counted, nothing to send.
    Sent,
    /// The reply will come later (a tools/call in flight): its ticket stays open.
    Later,
}

impl Dispatched {
    /// The reply to request `id`: its result or its error.
    pub(crate) fn answer(id: RequestId, result: Result<Value, RpcError>) -> Dispatched {
        Dispatched::Reply(Reply::to(id, result))
    }
}

/// What the server attaches to each piece of the engine's work, to route its end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Context {
    /// A `tools/call`, answered to its request or into its task.
    Call(Call),
    /// Work on a background task's stored response.
    Background(Job),
    /// A lookup of this model at the provider.
    Lookup(String),
    /// A fetch of the identity provider's metadata or keys (OAuth mode).
    Identity,
}

/// What the server attaches to each call, beside its request's ticket.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    pub ticket: Ticket,
    /// The task the call works for: its outcome goes to the store, not to the ticket.
    pub task: Option<String>,
    /// Its held estimate, and whether the shared store counted it.
    pub reservation: Reservation,
    /// The application, address and credential it came with.
    pub arrival: Arrival,
}

impl Call {
    /// The call as the ledger names it.
    pub(crate) fn call_of(&self) -> CallOf {
        let arrival = self.arrival.clone();
        (self.ticket).call_of(self.task.is_some(), self.reservation, arrival)
    }
}

/// What a piece of the engine's work on a stored response is for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Job {
    /// The create of a task-augmented `tools/call`, answered with the task.
    Create {
        pending: BackgroundAsk,
        created: u64,
        ttl_ms: u64,
        /// The call, as its end is counted.
        call: CallOf,
        /// Set by the server when the create ends, if its request is no longer open (its
        /// client cancelled it or left): nobody will hear of the task, so its run is
        /// cancelled at OpenAI as soon as it exists, and charged for what it used.
        unheard: bool,
    },
    /// A read of a response's state, for whoever waits on it (the first of them, whose
    /// reference says what the task's end is counted under).
    Read {
        response_id: String,
        waiter: Option<BackgroundAsk>,
    },
    /// A cancel, for this request.
    Cancel {
        response_id: String,
        pending: BackgroundAsk,
    },
}

impl Job {
    /// The span of the request the work is for, when it is traced.
    pub(crate) fn span(&self) -> Option<crate::spans::SpanStart> {
        match self {
            Job::Create { pending, .. } | Job::Cancel { pending, .. } => pending.ticket.span,
            Job::Read { waiter, .. } => waiter.as_ref().and_then(|w| w.ticket.span),
        }
    }
}

/// A request waiting for OpenAI's answer on a background task.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BackgroundAsk {
    pub ticket: Ticket,
    pub method: Method,
    pub reference: Option<BackgroundRef>,
    /// The client that asked (for a background task's end, the client it is charged
    /// to: its id binds only a digest of the name, checked when the request came).
    pub client: ClientId,
}

/// What the desk needs to start a task besides the call's ticket.
pub(crate) struct TaskStart {
    pub ttl_ms: Option<u64>,
    pub plan: Planned,
    pub progress: Option<ProgressToken>,
    pub today: String,
    /// Its held estimate, and whether the shared store counted it.
    pub reservation: Reservation,
    /// The application, address and credential it came with.
    pub arrival: Arrival,
}

/// `error.type` of an answered request: the JSON-RPC code of an error, `tool_error` for
/// a tool result with `isError`, none for a success.
pub(crate) fn error_type(reply: &crate::jsonrpc::Reply) -> Option<crate::metrics::ErrorType> {
    match reply {
        crate::jsonrpc::Reply::Failure { error, .. } => {
            Some(crate::metrics::ErrorType::Rpc(error.code))
        }
        crate::jsonrpc::Reply::Success { result, .. } => {
            crate::mcp::task_end::is_tool_error(result).then_some(crate::metrics::ErrorType::Tool)
        }
    }
}
