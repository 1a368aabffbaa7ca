//! The endpoint: from a parsed HTTP request to either an answer now or an exchange for
//! the server, and from the server's [`ExchangeOut`](super::exchange::ExchangeOut)s to the
//! bytes of that exchange's response.
//!
//! `POST /mcp` carries one JSON-RPC message; `GET /health` says how the server is. The
//! checks run in the order that tells a client the most: path, access (`Host`, `Origin`,
//! token), method, media types, JSON, protocol version header, the 2026-07-28 mirrored
//! headers.

use super::access::{Access, Denied};
use super::exchange::{Asked, Caller, WayIn};
use super::headers;
use crate::clients::ClientId;
use crate::http::{ReplyHead, Request};
use crate::jsonrpc::{ErrorKind, RequestId, RpcError};
use crate::mcp::meta::MetaError;
use crate::mcp::{shape, ProtocolVersion};
use crate::oauth::{BearerToken, Challenge};
use serde_json::Value;

/// What to do with a request.
#[derive(Debug)]
pub enum Routed {
    /// Write this whole response.
    Respond(Vec<u8>),
    /// Answer with [`health`].
    Health,
    /// Answer with [`ready`].
    Ready,
    /// Hand `asked` to the server as an exchange, and write what it sends back through
    /// `response`.
    Exchange {
        /// A JSON-RPC message or a metrics scrape.
        asked: Asked,
        /// Turns the server's answer into response bytes.
        response: ExchangeResponse,
    },
}

/// Decides what `request` gets, all at once: the head's verdict, then its answer (the
/// id of a refused caller scanned from the body), the token to verify, or the message
/// to serve. A host that reads bodies as they come uses [`judge`], [`answer`] and
/// [`read`] instead, so that no body is held before its caller is admitted.
pub fn route(request: &Request, access: &Access) -> Routed {
    match judge(request, access, None) {
        Verdict::Answer(early) => {
            let mut scan = crate::jsonrpc::IdScan::new();
            scan.feed(&request.body);
            answer(request, early, scan.finish())
        }
        Verdict::Read {
            caller: Caller::Client(client),
            takes_stream,
            way,
        } => read(request, &|v| access.shown(v), takes_stream, (client, way)),
        Verdict::Read {
            caller: Caller::Bearer(token),
            takes_stream,
            ..
        } => verify(request, token, takes_stream),
    }
}

/// The answer a head decided, for `request` (whose body was skipped) and the `id` its
/// body held. A `HEAD` request gets the head `GET` would, never a body.
pub fn answer(request: &Request, early: Early, id: Option<RequestId>) -> Routed {
    let routed = match early {
        Early::Respond(bytes) => Routed::Respond(bytes),
        Early::Refused { head, error } => Routed::Respond(rpc_error(head, id, error)),
        Early::Health => Routed::Health,
        Early::Ready => Routed::Ready,
        Early::Metrics => Routed::Exchange {
            asked: Asked::Metrics,
            response: ExchangeResponse::new(request.keep_alive, false),
        },
    };
    head_only(request, routed)
}

/// The JSON-RPC message of an admitted `client`'s POST that came in `way`, read from its
/// whole body (see `exchange`); `shown` quotes the request's own values in errors.
pub fn read(
    request: &Request,
    shown: &dyn Fn(&str) -> String,
    takes_stream: bool,
    (client, way): (ClientId, WayIn),
) -> Routed {
    head_only(request, exchange(request, shown, takes_stream, client, way))
}

/// A `HEAD` request gets the head `GET` would, never a body (RFC 9110, 9.3.2): a client
/// reads the head's `Content-Length` as the size of a body that does not come, and
/// bytes after the head would be read as the next response.
fn head_only(request: &Request, routed: Routed) -> Routed {
    if request.method != "HEAD" {
        return routed;
    }
    match routed {
        Routed::Respond(mut bytes) => {
            bytes.truncate(crate::http::head_end(&bytes).unwrap_or(bytes.len()));
            Routed::Respond(bytes)
        }
        Routed::Exchange {
            asked,
            mut response,
        } => {
            response.head_only = true;
            Routed::Exchange { asked, response }
        }
        // They answer `HEAD` themselves.
        Routed::Health | Routed::Ready => routed,
    }
}

/// Judges a request by its head: path, access (`Host`, `Origin`, token, a gateway's
/// identity), method, media types. Nothing here reads the body. `peer` is the address
/// the connection comes from, which decides whether its gateway headers are believed.
pub fn judge(request: &Request, access: &Access, peer: Option<std::net::IpAddr>) -> Verdict {
    let keep_alive = request.keep_alive;
    let path = request.path();
    let respond = |bytes: Vec<u8>| Verdict::Answer(Early::Respond(bytes));
    if path == HEALTH_PATH || path == READY_PATH {
        return match request.method.as_str() {
            "GET" | "HEAD" if path == READY_PATH => Verdict::Answer(Early::Ready),
            "GET" | "HEAD" => Verdict::Answer(Early::Health),
            _ => respond(
                ReplyHead::new(405, keep_alive)
                    .header("allow", "GET")
                    .with_body(b""),
            ),
        };
    }
    let refuse = |status: u16, error: RpcError| {
        respond(rpc_error(ReplyHead::new(status, keep_alive), None, error))
    };
    if is_oauth_path(path) {
        return respond(match &access.oauth {
            Some(door) => oauth_path(request, door),
            None => no_oauth(keep_alive),
        });
    }
    if path == METRICS_PATH {
        return metrics(request, access);
    }
    if path != MCP_PATH || !access.mcp {
        let message = format!(
            "there is no MCP endpoint at {}; it is at {MCP_PATH}",
            access.shown(path)
        );
        return refuse(404, RpcError::new(ErrorKind::InvalidRequest, message));
    }
    let caller = match access.check(request) {
        Ok(caller) => caller,
        Err(denied) => return Verdict::Answer(refused(request, access, denied)),
    };
    // A credential passed: only now may a trusted proxy name the user, and the server
    // honours the name only if that credential is the gateway's.
    let forwarded = access.gateway.read(request, peer);
    let way = WayIn {
        credential: access.credential(&caller),
        remote: forwarded.remote,
        identity: forwarded.identity,
        header_ignored: forwarded.ignored,
    };
    match posted_json(request, access) {
        Ok(takes_stream) => Verdict::Read {
            caller,
            takes_stream,
            way,
        },
        Err(refusal) => respond(refusal),
    }
}

/// A POST whose bearer token the server's gate must verify before its body is read: the
/// exchange that asks it. Its end ([`super::exchange::ExchangeOut::Verified`], or a
/// refusal) comes before any byte of the body is taken in.
pub fn verify(request: &Request, token: BearerToken, takes_stream: bool) -> Routed {
    let mut response = ExchangeResponse::new(request.keep_alive, takes_stream);
    response.head_only = request.method == "HEAD";
    Routed::Exchange {
        asked: Asked::Token(token),
        response,
    }
}

/// A request the access rules refused: 403, or 401 with the challenge RFC 6750 (section
/// 3) asks for: no credentials get the bare challenge, a wrong token the `invalid_token`
/// error.
fn refused(request: &Request, access: &Access, denied: Denied) -> Early {
    let mut head = ReplyHead::new(denied.status(), request.keep_alive);
    if let Denied::Token(missing) = denied {
        // OAuth mode: the challenge MCP clients follow to the protected resource's
        // metadata (RFC 9728, 5.1).
        let challenge = match (&access.oauth, missing) {
            (Some(door), true) => door.challenge.clone(),
            (Some(door), false) => door.invalid.clone(),
            (None, true) => Challenge::Missing.header(None),
            (None, false) => Challenge::NOT_VALID.header(None),
        };
        head = head.header("www-authenticate", challenge);
    }
    let error = RpcError::new(ErrorKind::InvalidRequest, denied.to_string());
    Early::Refused { head, error }
}

/// A POST that passed the access and content checks: its JSON-RPC message, with its
/// version header checked against the body (and, for 2026-07-28, its `_meta` and
/// mirrored headers), becomes an exchange; anything wrong is refused with 400.
fn exchange(
    request: &Request,
    shown: &dyn Fn(&str) -> String,
    takes_stream: bool,
    client: ClientId,
    way: WayIn,
) -> Routed {
    let keep_alive = request.keep_alive;
    let refuse = |status: u16, error: RpcError| {
        Routed::Respond(rpc_error(ReplyHead::new(status, keep_alive), None, error))
    };
    // Weighed before it is built: an admitted caller still may not make the server
    // build a million values (the refusal names the request by its bounded id).
    if let Err(heavy) = crate::jsonrpc::weigh(&request.body) {
        let mut scan = crate::jsonrpc::IdScan::new();
        scan.feed(&request.body);
        let error = RpcError::new(ErrorKind::InvalidRequest, heavy.to_string());
        let head = ReplyHead::new(400, keep_alive);
        return Routed::Respond(rpc_error(head, scan.finish(), error));
    }
    let message: Value = match serde_json::from_slice(&request.body) {
        Ok(message) => message,
        Err(e) => {
            return refuse(
                400,
                RpcError::new(ErrorKind::Parse, format!("parse error: {e}")),
            )
        }
    };
    let id = message.get("id").and_then(RequestId::from_value);
    let (version, modern) = match versions(request, &message, shown) {
        Ok(versions) => versions,
        Err(error) => {
            return Routed::Respond(rpc_error(ReplyHead::new(400, keep_alive), id, error))
        }
    };
    Routed::Exchange {
        asked: Asked::Rpc {
            message,
            version,
            client,
            trace: request
                .header("traceparent")
                .and_then(|v| crate::trace_context::TraceParent::parse(v.trim()).ok()),
            way,
        },
        response: ExchangeResponse {
            modern,
            ..ExchangeResponse::new(keep_alive, takes_stream)
        },
    }
}

/// The version a message's header names and whether it is modern (by its header or its
/// body), after the checks that tie its headers to its body; else the error to refuse it
/// with (400).
fn versions(
    request: &Request,
    message: &Value,
    shown: &dyn Fn(&str) -> String,
) -> Result<(Option<ProtocolVersion>, bool), RpcError> {
    let named = request.header("mcp-protocol-version");
    let version = match named {
        None => None,
        Some(named) => Some(ProtocolVersion::parse(named).ok_or_else(|| {
            shape::meta_error(&MetaError::Unsupported {
                requested: named.to_owned(),
            })
        })?),
    };
    let declared = headers::declared_version(message);
    let modern = declared.is_some() || version.is_some_and(ProtocolVersion::is_modern);
    // A body naming another version than the header is a mismatch first of all.
    if let (Some(header), Some(Value::String(body))) = (named, declared) {
        if header.trim() != body {
            let message = format!("Header mismatch: MCP-Protocol-Version header value {} does not match body value {}", shown(header), shown(body));
            return Err(RpcError::new(ErrorKind::HeaderMismatch, message));
        }
    }
    if modern {
        // A modern request whose `_meta` is incomplete is refused as such (-32602)
        // before its headers are compared with a body that cannot answer them.
        modern_meta(message).map_err(|e| shape::meta_error(&e))?;
        headers::check(&request.headers, message)
            .map_err(|mismatch| RpcError::new(ErrorKind::HeaderMismatch, mismatch.to_string()))?;
    }
    Ok((version, modern))
}

/// Checks the `_meta` of a request sent as 2026-07-28 (by its header or its body);
/// notifications and responses carry none to check.
fn modern_meta(message: &Value) -> Result<(), MetaError> {
    if message.get("method").is_none() || message.get("id").is_none() {
        return Ok(());
    }
    let empty = serde_json::Map::new();
    let params = message
        .get("params")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    match crate::mcp::era_of(params)? {
        crate::mcp::Era::Modern(_) => Ok(()),
        crate::mcp::Era::Legacy => Err(MetaError::MissingVersion),
    }
}

#[path = "endpoint/discovery.rs"]
mod discovery;
#[path = "endpoint/health.rs"]
mod health;
#[path = "endpoint/media.rs"]
mod media;
#[path = "endpoint/metrics.rs"]
mod metrics;
#[path = "endpoint/paths.rs"]
mod paths;
#[path = "endpoint/response.rs"]
mod response;
#[path = "endpoint/verdict.rs"]
mod verdict;

pub use discovery::NO_OAUTH;
use discovery::{is_oauth_path, no_oauth, oauth_path};
use media::posted_json;
use metrics::metrics;

pub use health::{health, ready, Health};
pub use paths::{HEALTH_PATH, MCP_PATH, METRICS_PATH, READY_PATH};
use response::rpc_error;
pub use response::{ExchangeResponse, METRICS_CONTENT_TYPE};
pub use verdict::{Early, Verdict};

#[cfg(test)]
#[path = "endpoint/tests.rs"]
mod tests;
