//! The whole responses a connection writes before it closes: beyond the connection limit,
//! to bytes that are no request, and when a request ran out of time.

use crate::http::{ReplyHead, RequestError};
use crate::jsonrpc::{ErrorKind, RpcError};

/// The whole answer to a connection beyond the open-connection limit: 503 with
/// `Retry-After`, then close.
pub fn too_many_connections(retry_after_secs: u32) -> Vec<u8> {
    let error = RpcError::new(
        ErrorKind::Overloaded,
        format!("the server has as many open connections as it takes: retry in {retry_after_secs} s, or reuse a kept-alive connection"),
    );
    ReplyHead::new(503, false)
        .header("content-type", "application/json")
        .header("retry-after", retry_after_secs.to_string())
        .with_body(&error.envelope(None))
}

/// The answer to bytes that are not a request this server reads; the connection closes.
pub(super) fn refusal(e: &RequestError) -> Vec<u8> {
    plain(e.status(), &e.to_string())
}

/// A closing response with a JSON-RPC error (no id) saying `message`.
pub(super) fn plain(status: u16, message: &str) -> Vec<u8> {
    let error = RpcError::new(ErrorKind::InvalidRequest, message);
    ReplyHead::new(status, false)
        .header("content-type", "application/json")
        .with_body(&error.envelope(None))
}
