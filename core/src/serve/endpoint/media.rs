//! What an admitted caller's POST must be before its body is read: a POST, of JSON, to a
//! client that takes JSON or an event stream.

use super::response::rpc_error;
use crate::http::{ReplyHead, Request};
use crate::jsonrpc::{ErrorKind, RpcError};
use crate::serve::access::Access;

/// Whether an admitted caller's request is a POST of JSON whose reply it can take: then
/// whether it takes an event stream; else the whole refusal (405, 415, 406).
pub(super) fn posted_json(request: &Request, access: &Access) -> Result<bool, Vec<u8>> {
    let keep_alive = request.keep_alive;
    let refuse = |status: u16, message: &str| {
        let error = RpcError::new(ErrorKind::InvalidRequest, message);
        rpc_error(ReplyHead::new(status, keep_alive), None, error)
    };
    if request.method != "POST" {
        let head = ReplyHead::new(405, keep_alive).header("allow", "POST");
        let message = format!(
            "{} is not served: send each JSON-RPC message as a POST (this server keeps no sessions and opens no standalone streams)",
            access.shown(&request.method)
        );
        let error = RpcError::new(ErrorKind::InvalidRequest, message);
        return Err(rpc_error(head, None, error));
    }
    let json_body = request
        .header("content-type")
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return Err(refuse(
            415,
            "the body must be JSON: send Content-Type: application/json",
        ));
    }
    let (takes_json, takes_stream) = accepts(request.header("accept"));
    if !takes_json && !takes_stream {
        return Err(refuse(
            406,
            "the reply is application/json or text/event-stream: accept at least one",
        ));
    }
    Ok(takes_stream)
}

/// Whether an `Accept` value takes JSON, and an event stream. No header takes JSON only.
pub(super) fn accepts(accept: Option<&str>) -> (bool, bool) {
    let Some(accept) = accept else {
        return (true, false);
    };
    let mut takes = (false, false);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if refused {
            continue;
        }
        match media.as_str() {
            "*/*" => takes = (true, true),
            "application/*" | "application/json" => takes.0 = true,
            "text/*" | "text/event-stream" => takes.1 = true,
            _ => {}
        }
    }
    takes
}
