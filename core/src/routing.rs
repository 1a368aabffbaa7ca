//! What the server's parts hand each other: where a reply goes, what handling a message
//! produced, and what each piece of the call engine's work carries back to route its end.
//! Plain data, so the parts that produce and consume it import it from here, not from
//! each other.

use crate::calls::{Planned, Requester};
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::jsonrpc::{Reply, RequestId, RpcError};
use crate::ledger::{Arrival, CallOf, Transport};
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

/// A request whose reply leaves later (a held task call, a parked `tasks/result`, a
/// background task's read), and what the reply is counted with: its id, where it goes,
/// the operation's labels and when it arrived. Every such reply leaves through
/// `Server::reply_late`, which routes it and counts it once with its real duration.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Asker {
    pub id: RequestId,
    pub reply_to: ReplyTo,
    /// `mcp.method.name`.
    pub method: &'static str,
    /// `gen_ai.tool.name`, for a `tools/call`.
    pub tool: Option<&'static str>,
    /// The request's version: the reply's shape and `mcp.protocol.version`.
    pub version: ProtocolVersion,
    /// When the request arrived.
    pub received: Instant,
    /// The request's span, when it is traced: ended when the reply leaves.
    pub span: Option<crate::spans::SpanStart>,
}

impl Asker {
    /// The operation its `reply` completes, for the ledger.
    pub(crate) fn operation(&self, reply: &Reply) -> crate::metrics::Operation {
        crate::metrics::Operation {
            method: self.method,
            tool: self.tool,
            error: error_type(reply),
            transport: self.reply_to.transport().network(),
            version: self.version.as_str(),
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
    /// The reply will come later (a tools/call in flight).
    Pending,
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
    Call(Caller),
    /// Work on a background task's stored response.
    Background(Job),
    /// A lookup of this model at the provider.
    Lookup(String),
    /// A fetch of the identity provider's metadata or keys (OAuth mode).
    Identity,
}

/// What the server attaches to each call, to answer it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Caller {
    pub id: RequestId,
    pub reply_to: ReplyTo,
    pub version: ProtocolVersion,
    /// The task the call works for: its outcome goes to the store, not to `reply_to`.
    pub task: Option<String>,
    /// The tool called, for the call's log line.
    pub tool: Tool,
    /// The client's trace, which the call's log line continues.
    pub trace: Option<TraceParent>,
    /// Who called: the log line, the metrics and the spend name it.
    pub client: ClientId,
    /// When the request arrived.
    pub received: Instant,
    /// When the shared store counted the call, Unix seconds.
    pub reserved_at: Option<u64>,
    /// The request's span, when it is traced: the parent of the call's attempts.
    pub span: Option<crate::spans::SpanStart>,
    /// The application, address and credential it came with.
    pub arrival: Arrival,
}

impl Caller {
    /// The call as the ledger names it.
    pub(crate) fn call_of(&self) -> CallOf {
        CallOf {
            tool: self.tool,
            version: self.version,
            transport: self.reply_to.transport(),
            client: self.client,
            task: self.task.is_some(),
            trace: self.trace,
            reserved_at: self.reserved_at,
            arrival: self.arrival.clone(),
        }
    }

    /// The request, whose reply the call's end is.
    pub(crate) fn asker(&self) -> Asker {
        Asker {
            id: self.id.clone(),
            reply_to: self.reply_to,
            method: "tools/call",
            tool: Some(self.tool.name()),
            version: self.version,
            received: self.received,
            span: self.span,
        }
    }
}

/// What a piece of the engine's work on a stored response is for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Job {
    /// The create of a task-augmented `tools/call`, answered with the task.
    Create {
        pending: Pending,
        created: u64,
        ttl_ms: u64,
        /// The call, as its end is counted.
        call: CallOf,
    },
    /// A read of a response's state, for whoever waits on it (the first of them, whose
    /// reference says what the task's end is counted under).
    Read {
        response_id: String,
        waiter: Option<Pending>,
    },
    /// A cancel, for this request.
    Cancel {
        response_id: String,
        pending: Pending,
    },
}

impl Job {
    /// The span of the request the work is for, when it is traced.
    pub(crate) fn span(&self) -> Option<crate::spans::SpanStart> {
        match self {
            Job::Create { pending, .. } | Job::Cancel { pending, .. } => pending.asker.span,
            Job::Read { waiter, .. } => waiter.as_ref().and_then(|w| w.asker.span),
        }
    }
}

/// A request waiting for an upstream answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pending {
    pub asker: Asker,
    pub method: Method,
    pub reference: Option<BackgroundRef>,
    /// The client that asked (for a background task's end, the client it is charged
    /// to: its id binds only a digest of the name, checked when the request came).
    pub client: ClientId,
}

/// What `start_task` needs of the call besides who asked.
pub(crate) struct TaskStart {
    pub ttl_ms: Option<u64>,
    pub plan: Planned,
    pub progress: Option<ProgressToken>,
    pub today: String,
    pub tool: Tool,
    pub trace: Option<TraceParent>,
    pub client: ClientId,
    /// When the shared store counted the call, Unix seconds.
    pub reserved_at: Option<u64>,
    /// The request's span, when it is traced.
    pub span: Option<crate::spans::SpanStart>,
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
