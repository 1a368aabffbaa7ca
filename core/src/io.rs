//! The primitives every part shares: the time of an event, the ids of attempts, exchanges
//! and requests, and an upstream attempt's request, reply and failure. What the server
//! takes and gives as a whole is [`crate::server`]'s `io` ([`crate::Input`],
//! [`crate::Output`]).

use crate::jsonrpc::RequestId;
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
/// (`Input::HttpBody`, then `Input::HttpEnd`).
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

/// A transport failure with a description that holds no secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    /// What kind of failure.
    pub kind: TransportErrorKind,
    /// A short description.
    pub detail: String,
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
    /// Whom it is for: only the provider gets its credentials.
    pub to: Destination,
}

/// Whom an upstream request is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Destination {
    /// The model provider (OpenAI or another): the request carries its credentials and
    /// headers.
    #[default]
    Provider,
    /// OAuth mode's identity provider: a plain `GET`, no credentials of any kind.
    IdentityProvider,
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

/// Time after `now` by `d`, saturating instead of panicking.
pub(crate) fn after(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(86_400 * 365)))
        .unwrap_or(now)
}

/// Who asked for a call. Request ids are unique per requester only: the stdio client
/// has one id space, and each HTTP request is its own (two HTTP clients may both use 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Requester {
    /// The client on stdin.
    Stdio,
    /// One HTTP request, whose response carries the reply.
    Exchange(ExchangeId),
    /// The server's own work (the engine's number for it): a task's call, work on a
    /// background task's stored response, a model lookup, an identity provider's fetch;
    /// never a reply to a request of its own.
    Internal(u64),
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
            Requester::Internal(n) => write!(f, "internal work {n}"),
        }
    }
}
