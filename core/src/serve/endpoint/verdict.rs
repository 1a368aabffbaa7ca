//! What a request's head decides before its body is read: read it, or answer now.

use crate::http::ReplyHead;
use crate::jsonrpc::RpcError;
use crate::serve::exchange::{Caller, WayIn};

/// What a request's head decides, before any of its body is read.
#[derive(Debug)]
pub enum Verdict {
    /// Read the body: the request goes on as `caller` (a bearer token is verified by
    /// the server's gate first, its body still unread).
    Read {
        /// Who sent it, as far as the head tells.
        caller: Caller,
        /// The reply may be an event stream.
        takes_stream: bool,
        /// How it came in.
        way: WayIn,
    },
    /// The body is not needed: it is skipped as it comes, then this is the answer.
    Answer(Early),
}

/// An answer decided by the head alone.
#[derive(Debug)]
pub enum Early {
    /// This whole response.
    Respond(Vec<u8>),
    /// A caller the access rules refused, answered with the id of its request when the
    /// body, skipped as it came, held a bounded one ([`crate::jsonrpc::IdScan`]).
    Refused {
        /// The status and challenge.
        head: ReplyHead,
        /// Why.
        error: RpcError,
    },
    /// `GET /health`.
    Health,
    /// `GET /ready`.
    Ready,
    /// `GET /metrics` by a caller allowed to read them.
    Metrics,
}
