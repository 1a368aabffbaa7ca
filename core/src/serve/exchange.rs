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

/// The credential a request was admitted with, as its call line names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Credential {
    /// None was needed (a loopback endpoint without a token), or stdio.
    #[default]
    None,
    /// The single bearer token (`server.http.token_env`).
    StaticToken,
    /// A named client's token (`server.http.clients_file`).
    ClientsFile,
    /// A token the identity provider issued (OAuth mode).
    OAuth,
    /// The gateway's credential (a client marked `gateway: true`, or the single token
    /// when there is no clients file), from a trusted proxy that named the user in the
    /// identity header.
    Gateway,
}

impl Credential {
    /// The call log's `credential`.
    pub fn name(self) -> &'static str {
        match self {
            Credential::None => "none",
            Credential::StaticToken => "token",
            Credential::ClientsFile => "clients_file",
            Credential::OAuth => "oauth",
            Credential::Gateway => "gateway",
        }
    }
}

/// How an HTTP request came in, as far as its head tells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WayIn {
    /// The credential it was admitted with (never [`Credential::Gateway`]: the server
    /// says that, once it has honoured an identity).
    pub credential: Credential,
    /// The client's address: the peer's, or through a trusted proxy the one it forwarded.
    pub remote: Option<std::net::IpAddr>,
    /// The user a trusted proxy named in the identity header (or what is wrong with
    /// the header): the request is theirs (or refused) if its credential is the
    /// gateway's, else the header is ignored (and counted).
    pub identity: Option<crate::serve::gateway::Claim>,
    /// An identity header came from a peer that is not trusted, and was ignored.
    pub header_ignored: bool,
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
        trace: Option<crate::trace_context::TraceParent>,
        /// How it came in: the credential, the address, a gateway's identity.
        way: WayIn,
    },
    /// `GET /metrics` with a static token (or none needed): the Prometheus text,
    /// answered with [`ExchangeOut::Metrics`].
    Metrics,
    /// OAuth mode: a POST to `/mcp` whose bearer token the server's gate has yet to
    /// verify, asked before any byte of its body is read: nothing of a caller nobody
    /// admitted is held or built. Answered with [`ExchangeOut::Verified`] (the
    /// connection then reads the body and asks again as that client) or a refusal.
    Token(BearerToken),
}

impl ExchangeOut {
    /// Whether the exchange is over once this is written (progress comes before the
    /// reply).
    pub fn ends_exchange(&self) -> bool {
        !matches!(self, ExchangeOut::Notification(_))
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
    /// The request's bearer token was refused (401, 403) or could not be checked (503),
    /// or the gateway named its user in a malformed header (400); the exchange is over.
    Refused(crate::oauth::Denial),
    /// An [`Asked::Token`] was verified: its request is this client's, and its body is
    /// read now; the exchange is over.
    Verified(ClientId),
}
