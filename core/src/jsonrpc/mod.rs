//! JSON-RPC 2.0 envelopes: reading what the client sent, writing replies.
//!
//! Incoming messages are parsed into a [`serde_json::Value`] first and then classified,
//! so that every way a message can be wrong gets its own error with the id echoed when it
//! could be read.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

mod id;
mod id_scan;
mod weight;
pub use id::RequestId;
pub use id_scan::{IdScan, MAX_ID};
pub use weight::{weigh, TooHeavy, MAX_DEPTH, MAX_VALUES};

/// Every kind of error this server answers with. [`ErrorKind::code`] is the one place
/// that maps them to wire codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Invalid JSON, or a frame that cannot be read.
    Parse,
    /// Not a valid request object, or not valid now.
    InvalidRequest,
    /// Unknown method.
    MethodNotFound,
    /// Bad params.
    InvalidParams,
    /// Tool arguments failed validation (spec Appendix B).
    InvalidArguments,
    /// The OpenAI call failed after retries, or could not be made (spec Appendix B).
    UpstreamFailed,
    /// The server cannot take more work right now.
    Overloaded,
    /// A required model profile is missing (spec Appendix B).
    MissingProfile,
    /// A modern request's protocol version is not served (2026-07-28).
    UnsupportedProtocolVersion,
    /// Over HTTP, a 2026-07-28 request's mirrored headers are missing, malformed or say
    /// something other than its body.
    HeaderMismatch,
    /// A 2026-07-28 request needs a client capability its `_meta` does not declare.
    MissingClientCapability,
}

impl ErrorKind {
    /// The JSON-RPC error code.
    pub const fn code(self) -> i32 {
        match self {
            ErrorKind::Parse => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::InvalidArguments => -32001,
            ErrorKind::UpstreamFailed => -32050,
            ErrorKind::Overloaded => -32051,
            ErrorKind::MissingProfile => -32052,
            ErrorKind::UnsupportedProtocolVersion => -32022,
            ErrorKind::HeaderMismatch => -32020,
            ErrorKind::MissingClientCapability => -32021,
        }
    }
}

/// The wire codes, by name, for tests and hosts that match on replies.
pub mod code {
    use super::ErrorKind;
    /// Invalid JSON.
    pub const PARSE_ERROR: i32 = ErrorKind::Parse.code();
    /// Not a valid request object.
    pub const INVALID_REQUEST: i32 = ErrorKind::InvalidRequest.code();
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i32 = ErrorKind::MethodNotFound.code();
    /// Bad params.
    pub const INVALID_PARAMS: i32 = ErrorKind::InvalidParams.code();
    /// Tool arguments failed validation.
    pub const INVALID_ARGUMENTS: i32 = ErrorKind::InvalidArguments.code();
    /// The OpenAI call failed.
    pub const UPSTREAM_FAILED: i32 = ErrorKind::UpstreamFailed.code();
    /// The server cannot take more work right now.
    pub const OVERLOADED: i32 = ErrorKind::Overloaded.code();
    /// A required model profile is missing.
    pub const MISSING_PROFILE: i32 = ErrorKind::MissingProfile.code();
    /// A modern request's protocol version is not served.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = ErrorKind::UnsupportedProtocolVersion.code();
    /// HTTP headers that disagree with the body (2026-07-28).
    pub const HEADER_MISMATCH: i32 = ErrorKind::HeaderMismatch.code();
    /// A client capability the request needs is not declared (2026-07-28).
    pub const MISSING_CLIENT_CAPABILITY: i32 = ErrorKind::MissingClientCapability.code();
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RpcError {
    /// The error code.
    pub code: i32,
    /// A sentence a person can act on.
    pub message: String,
    /// Structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error of `kind` without data.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        RpcError {
            code: kind.code(),
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error response carrying it, as JSON: with `id` when the request's could be
    /// read, without one otherwise (the one place an error envelope is written outside a
    /// [`Reply`]).
    pub fn envelope(&self, id: Option<&RequestId>) -> Vec<u8> {
        let mut body = serde_json::json!({ "jsonrpc": "2.0", "error": self });
        if let Some(id) = id {
            body["id"] = id.to_value();
        }
        body.to_string().into_bytes()
    }
}

/// A request that expects a reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id to echo.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params object (an absent `params` reads as empty).
    pub params: Map<String, Value>,
}

/// A message without an id.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, when they were an object.
    pub params: Map<String, Value>,
}

/// A well-formed message from the client.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response object (we never send requests, so these are ignored).
    Response,
}

/// Why a single message could not be accepted, with the id when it could be read.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// The id, if it was readable.
    pub id: Option<RequestId>,
    /// The error to send.
    pub error: RpcError,
}

/// Classifies one JSON value (not an array) as a request, notification or response.
///
/// # Errors
/// A [`Rejected`] with -32600 for envelope problems and -32602 for params that are not
/// an object.
pub fn classify(value: Value) -> Result<Incoming, Box<Rejected>> {
    let Value::Object(mut obj) = value else {
        return Err(Box::new(Rejected {
            id: None,
            error: RpcError::new(
                ErrorKind::InvalidRequest,
                format!(
                    "invalid request: expected a JSON object, got {}",
                    kind_of(&value)
                ),
            ),
        }));
    };
    let id = match obj.remove("id") {
        None => None,
        Some(v) => Some(RequestId::from_value(&v).ok_or_else(|| {
            invalid(
                None,
                format!(
                    "invalid request: id must be a string or an integer, got {}",
                    kind_of(&v)
                ),
            )
        })?),
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => {
            return Err(invalid(
                id,
                format!("invalid request: \"jsonrpc\" must be \"2.0\", got {other}"),
            ))
        }
        None => return Err(invalid(id, "invalid request: missing \"jsonrpc\": \"2.0\"")),
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Err(invalid(
                id,
                format!(
                    "invalid request: method must be a string, got {}",
                    kind_of(&other)
                ),
            ))
        }
        None if obj.contains_key("result") || obj.contains_key("error") => {
            return Ok(Incoming::Response)
        }
        None => return Err(invalid(id, "invalid request: missing \"method\"")),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        // A notification is never answered, whatever its params: they are left out.
        Some(other) if id.is_none() => {
            log::debug!(
                "notification {method} has params that are {}, not an object; ignoring them",
                kind_of(&other)
            );
            Map::new()
        }
        Some(other) => return Err(not_an_object(id, &method, &other)),
    };
    Ok(match id {
        Some(id) => Incoming::Request(Request { id, method, params }),
        None => Incoming::Notification(Notification { method, params }),
    })
}

fn not_an_object(id: Option<RequestId>, method: &str, params: &Value) -> Box<Rejected> {
    Box::new(Rejected {
        id,
        error: RpcError::new(
            ErrorKind::InvalidParams,
            format!(
                "invalid params for {method}: params must be an object, got {}",
                kind_of(params)
            ),
        ),
    })
}

fn invalid(id: Option<RequestId>, message: impl Into<String>) -> Box<Rejected> {
    Box::new(Rejected {
        id,
        error: RpcError::new(ErrorKind::InvalidRequest, message),
    })
}

/// Names the JSON type of `value` for error messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if RequestId::from_value(&Value::Number(n.clone())).is_some() => {
            "an integer"
        }
        Value::Number(_) => "a fractional number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One reply to the client.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `{"jsonrpc":"2.0","id":..,"result":..}`
    Success {
        /// The request's id.
        id: RequestId,
        /// The result.
        result: Value,
    },
    /// `{"jsonrpc":"2.0","id":..,"error":..}`; `id` is null when it could not be read.
    Failure {
        /// The request's id, when known.
        id: Option<RequestId>,
        /// The error.
        error: RpcError,
    },
}

impl Reply {
    /// The reply to request `id`: its result, or its error. The one place a result and an
    /// id become a reply.
    pub fn to(id: RequestId, result: Result<Value, RpcError>) -> Reply {
        match result {
            Ok(result) => Reply::Success { id, result },
            Err(error) => Reply::Failure {
                id: Some(id),
                error,
            },
        }
    }

    /// The id this reply answers.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Reply::Success { id, .. } => Some(id),
            Reply::Failure { id, .. } => id.as_ref(),
        }
    }
}

impl Serialize for Reply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Reply::Success { id, result } => {
                map.serialize_entry("id", id)?;
                map.serialize_entry("result", result)?;
            }
            Reply::Failure { id, error } => {
                map.serialize_entry("id", id)?;
                map.serialize_entry("error", error)?;
            }
        }
        map.end()
    }
}

/// A notification we send (progress).
#[derive(Clone, Debug, PartialEq)]
pub struct OutgoingNotification {
    /// The method.
    pub method: &'static str,
    /// The params.
    pub params: Value,
}

impl Serialize for OutgoingNotification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", self.method)?;
        map.serialize_entry("params", &self.params)?;
        map.end()
    }
}

#[cfg(test)]
mod tests;
