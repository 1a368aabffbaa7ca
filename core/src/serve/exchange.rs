//! What passes between an HTTP exchange and the server: what a request asks once the
//! endpoint let it through, and what goes back on its response.

use crate::clients::ClientId;
use crate::mcp::ProtocolVersion;
use crate::oauth::BearerToken;

/// Who sent a request, as far as the endpoint can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// A static token's client (or the default one, when none is needed).
    Client(ClientId),
    /// In OAuth mode, a bearer token that is no static one: the server's gate verifies
    /// it before anything else.
    Bearer(BearerToken),
}

/// What an HTTP request asks the server, once the endpoint let it through.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    /// A JSON-RPC message POSTed to `/mcp` by a known client, with the protocol version
    /// its `MCP-Protocol-Version` header names (`None`: absent, or not a version).
    Rpc {
        /// The parsed body.
        message: serde_json::Value,
        /// The header's version; legacy requests are served in it, statelessly.
        version: Option<ProtocolVersion>,
        /// Who sent it: a static token's client, or an identity the gate verified.
        client: ClientId,
        /// The caller's W3C trace context from its `traceparent` header (an invalid one
        /// is dropped); `params._meta.traceparent` wins over it.
        trace: Option<crate::mcp::trace::TraceParent>,
    },
    /// `GET /metrics` with a static token (or none needed): the Prometheus text,
    /// answered with [`ExchangeOut::Metrics`].
    Metrics,
    /// OAuth mode: a POST to `/mcp` whose bearer token the server's gate has yet to
    /// verify. Its body is the bytes that came, not parsed until the caller is admitted
    /// ([`Post::admit`]): nothing is built for a caller nobody has admitted.
    Unverified {
        /// The token to verify.
        token: BearerToken,
        /// The request, unparsed.
        post: Post,
    },
}

/// A POST to `/mcp` held as it came (without its `Authorization` header, which the
/// token carries) until its caller is admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Post {
    pub(super) request: Box<crate::http::Request>,
    pub(super) takes_stream: bool,
}

impl Post {
    /// Bytes it holds, for the cap on what waits for the identity provider.
    pub fn bytes(&self) -> usize {
        let headers: usize = self
            .request
            .headers
            .iter()
            .map(|(n, v)| n.len() + v.len())
            .sum();
        self.request.body.len() + headers + self.request.target.len()
    }
}

impl ExchangeOut {
    /// Whether the exchange is over once this is written (progress and the word that a
    /// held request was admitted come before the reply).
    pub fn ends_exchange(&self) -> bool {
        !matches!(
            self,
            ExchangeOut::Notification(_) | ExchangeOut::Admitted { .. }
        )
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
    /// The request's bearer token was refused (401, 403) or could not be checked (503);
    /// the exchange is over.
    Refused(crate::oauth::Denial),
    /// An [`Asked::Unverified`] request was admitted and its body read: what the
    /// response needs to know of it before the reply (a 2026-07-28 request).
    Admitted {
        /// A 2026-07-28 request: some errors have their own HTTP status.
        modern: bool,
    },
    /// An [`Asked::Unverified`] request was admitted but its body is refused (not JSON,
    /// a version header that does not match): this whole response; the exchange is over.
    Whole(Vec<u8>),
}
