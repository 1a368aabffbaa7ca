//! What goes into the server and what comes out: events, HTTP attempts, actions.

use crate::openai::FailureKind;
use std::fmt;
use std::time::{Duration, Instant};

/// The time of an event: a monotonic instant for deadlines, and Unix seconds for dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    /// Monotonic time; deadlines are compared against it.
    pub instant: Instant,
    /// Wall-clock seconds since 1970-01-01 UTC; used for "today" in Asia/Tokyo.
    pub unix_secs: u64,
}

/// Identifies one HTTP attempt; never the client's request id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId(pub u64);

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// One HTTP request to the server's endpoint carrying one JSON-RPC message; its reply
/// (and the progress before it) goes back on that request's response. Chosen by the host,
/// unique among the exchanges it has open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExchangeId(pub u64);

impl fmt::Display for ExchangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}

/// What goes back on an exchange's response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExchangeOut {
    /// A notification about the request (progress), before its reply: the response
    /// becomes an event stream if it is not one yet.
    Notification(Vec<u8>),
    /// The reply (a JSON-RPC response); the exchange is over.
    Reply {
        /// The response, compact JSON.
        json: Vec<u8>,
        /// Its error code, when it is an error (the HTTP status can depend on it).
        error: Option<i32>,
        /// A limit refused the call: seconds until the client may ask again
        /// (`Retry-After`).
        retry_after_secs: Option<u64>,
    },
    /// The message was a notification or a response, and is accepted (HTTP 202).
    Accepted,
    /// The request ends without a reply (it was cancelled); the exchange is over.
    Ended,
    /// The answer to [`Asked::Metrics`]: the Prometheus text exposition; the exchange is
    /// over.
    Metrics(Vec<u8>),
}

/// An HTTP reply from upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Headers with lower-case names (only `retry-after*` are read).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// The head of an HTTP reply, which its body follows in pieces
/// ([`Input::HttpBody`], then [`Input::HttpEnd`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpHead {
    /// Status code.
    pub status: u16,
    /// Headers with lower-case names (`content-type` and `retry-after*` are read).
    pub headers: Vec<(String, String)>,
}

/// Why an attempt produced no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// Could not connect (DNS, refused, proxy). Retried.
    Connect,
    /// The connection broke or timed out mid-way. Retried.
    Io,
    /// TLS handshake or certificate failure. Not retried.
    Tls,
    /// The body was larger than the runtime accepts. Not retried.
    BodyTooLarge,
    /// The request could not be made at all (bad URL, bad proxy setting). Not retried.
    Invalid,
}

impl From<TransportErrorKind> for FailureKind {
    fn from(kind: TransportErrorKind) -> FailureKind {
        match kind {
            TransportErrorKind::Connect => FailureKind::Connect,
            TransportErrorKind::Io => FailureKind::Io,
            TransportErrorKind::Tls => FailureKind::Tls,
            TransportErrorKind::BodyTooLarge => FailureKind::BodyTooLarge,
            TransportErrorKind::Invalid => FailureKind::InvalidRequest,
        }
    }
}

/// A transport failure with a description that holds no secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    /// What kind of failure.
    pub kind: TransportErrorKind,
    /// A short description.
    pub detail: String,
}

/// An event for the server.
#[derive(Debug)]
#[non_exhaustive]
pub enum Input<'a> {
    /// Bytes read from stdin.
    Stdin(&'a [u8]),
    /// Stdin reached end of file.
    StdinClosed,
    /// An attempt got a whole reply.
    HttpReply(AttemptId, HttpReply),
    /// An attempt's reply head arrived (the way to deliver a streamed reply).
    HttpHead(AttemptId, HttpHead),
    /// Body bytes of an attempt's reply, as they arrive.
    HttpBody(AttemptId, &'a [u8]),
    /// An attempt's reply body ended.
    HttpEnd(AttemptId),
    /// An attempt failed without a reply.
    HttpFailed(AttemptId, TransportError),
    /// The deadline from [`Server::poll_timeout`](crate::Server::poll_timeout) has passed.
    Timeout,
    /// SIGINT/SIGTERM: abort everything and exit.
    Shutdown,
    /// SIGINT/SIGTERM while serving HTTP: take no new calls, let those in flight finish
    /// within the shutdown grace, then exit.
    Drain,
    /// Stdout is closed: nothing more can be said, so abort everything and exit.
    OutputClosed,
    /// An HTTP request for the server: a JSON-RPC message or a metrics scrape.
    Exchange {
        /// The exchange the answer goes back on.
        id: ExchangeId,
        /// What the request asks.
        asked: Asked,
    },
    /// The client of an exchange went away: its call is cancelled, nothing more is sent.
    ExchangeClosed(ExchangeId),
}

/// What an HTTP request asks the server, once the endpoint let it through.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    /// A JSON-RPC message POSTed to `/mcp`, with the protocol version its
    /// `MCP-Protocol-Version` header names (`None`: absent, or not a version).
    Rpc {
        /// The parsed body.
        message: serde_json::Value,
        /// The header's version; legacy requests are served in it, statelessly.
        version: Option<crate::mcp::ProtocolVersion>,
        /// Who sent it, by its bearer token.
        client: crate::clients::ClientId,
    },
    /// `GET /metrics`: the Prometheus text, answered with [`ExchangeOut::Metrics`].
    Metrics,
}

/// A request to send upstream. The runtime adds the credentials and the headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// Identifies the attempt in the completion.
    pub attempt: AttemptId,
    /// `POST` with the body, or `GET` (the body is then empty).
    pub method: HttpMethod,
    /// The target, such as `{base_url}/responses`.
    pub url: String,
    /// The JSON body.
    pub body: Vec<u8>,
}

/// The method of an upstream request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpMethod {
    /// `POST` with a JSON body: create a response, or cancel one.
    #[default]
    Post,
    /// `GET`: read a stored response.
    Get,
}

impl HttpMethod {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Post => "POST",
            HttpMethod::Get => "GET",
        }
    }
}

/// An action for the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Output {
    /// Write these bytes (one whole frame) to stdout and flush.
    Write(Vec<u8>),
    /// Start this HTTP attempt.
    Http(HttpRequest),
    /// Abort this attempt and close its connection; its completion will be ignored.
    Abort(AttemptId),
    /// Send this on an exchange's response.
    Exchange(ExchangeId, ExchangeOut),
    /// A call ended: its record, for the host's call log ([`crate::ledger`]).
    Record(crate::ledger::CallRecord),
    /// Exit the process with status 0.
    Exit,
}

/// Time after `now` by `d`, saturating instead of panicking.
pub(crate) fn after(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(86_400 * 365)))
        .unwrap_or(now)
}
