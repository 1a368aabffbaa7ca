//! JSON-RPC 2.0 envelopes: reading what the client sent, writing replies.
//!
//! Incoming messages are parsed into a [`serde_json::Value`] first and then classified,
//! so that every way a message can be wrong gets its own error with the id echoed when it
//! could be read.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Number, Value};
use std::fmt;

/// Standard and product error codes.
pub mod code {
    /// Invalid JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Bad params.
    pub const INVALID_PARAMS: i32 = -32602;
    /// A bug on our side.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// Tool arguments failed validation (spec Appendix B).
    pub const INVALID_ARGUMENTS: i32 = -32001;
    /// The OpenAI call failed after retries (spec Appendix B).
    pub const UPSTREAM_FAILED: i32 = -32050;
    /// The server cannot take more work right now.
    pub const OVERLOADED: i32 = -32051;
    /// A required model profile is missing (spec Appendix B).
    pub const MISSING_PROFILE: i32 = -32052;
}

/// A request id: a string or an integer of any size, echoed back exactly.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestId {
    /// An integer id, kept as its exact decimal text so that large ids survive.
    Int(String),
    /// A string id.
    Str(String),
}

impl RequestId {
    /// Reads an id. `None` when the value is not a string or an integer.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::Str(s.clone())),
            Value::Number(n) => {
                let text = n.to_string();
                let digits = text.strip_prefix('-').unwrap_or(&text);
                (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then_some(RequestId::Int(text))
            }
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Int(text) => text
                .parse::<Number>()
                .map(Value::Number)
                .unwrap_or_else(|_| Value::String(text.clone())),
            RequestId::Str(s) => Value::String(s.clone()),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Int(text) => f.write_str(text),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
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
    /// An error without data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
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
                code::INVALID_REQUEST,
                format!(
                    "invalid request: expected a JSON object, got {}",
                    kind_of(&value)
                ),
            ),
        }));
    };
    let id_value = obj.remove("id");
    let id = match &id_value {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(invalid(
                    None,
                    format!(
                        "invalid request: id must be a string or an integer, got {}",
                        kind_of(v)
                    ),
                ))
            }
        },
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
        Some(other) => {
            return Err(Box::new(Rejected {
                id,
                error: RpcError::new(
                    code::INVALID_PARAMS,
                    format!(
                        "invalid params for {method}: params must be an object, got {}",
                        kind_of(&other)
                    ),
                ),
            }))
        }
    };
    Ok(match id {
        Some(id) => Incoming::Request(Request { id, method, params }),
        None => Incoming::Notification(Notification { method, params }),
    })
}

fn invalid(id: Option<RequestId>, message: impl Into<String>) -> Box<Rejected> {
    Box::new(Rejected {
        id,
        error: RpcError::new(code::INVALID_REQUEST, message),
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
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<Incoming, Box<Rejected>> {
        classify(serde_json::from_str(text).unwrap())
    }

    #[test]
    fn ids_are_echoed_exactly() {
        for raw in [
            "1",
            "-7",
            "123456789012345678901234567890",
            "\"abc\"",
            "\"\"",
        ] {
            let Ok(Incoming::Request(r)) = parse(&format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#
            )) else {
                panic!("{raw}")
            };
            let reply = Reply::Success {
                id: r.id,
                result: json!({}),
            };
            let text = serde_json::to_string(&reply).unwrap();
            assert_eq!(
                text,
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn bad_ids_are_invalid_requests() {
        for raw in ["1.5", "1e3", "null", "true", "{}", "[]"] {
            let err = parse(&format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#
            ))
            .unwrap_err();
            assert_eq!(err.error.code, code::INVALID_REQUEST, "{raw}");
            assert!(
                err.error.message.contains("id must be"),
                "{}",
                err.error.message
            );
            assert_eq!(err.id, None);
        }
    }

    #[test]
    fn envelope_errors_name_the_problem() {
        let cases = [
            (
                r#"{"id":1,"method":"ping"}"#,
                code::INVALID_REQUEST,
                "missing \"jsonrpc\"",
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                code::INVALID_REQUEST,
                "must be \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                code::INVALID_REQUEST,
                "method must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1}"#,
                code::INVALID_REQUEST,
                "missing \"method\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
                code::INVALID_PARAMS,
                "params must be an object",
            ),
            (
                "7",
                code::INVALID_REQUEST,
                "expected a JSON object, got an integer",
            ),
            ("\"s\"", code::INVALID_REQUEST, "got a string"),
            ("null", code::INVALID_REQUEST, "got null"),
        ];
        for (text, code, needle) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.error.code, code, "{text}");
            assert!(
                err.error.message.contains(needle),
                "{text}: {}",
                err.error.message
            );
        }
        // The id is echoed when it was readable.
        assert_eq!(
            parse(r#"{"id":5,"method":"ping"}"#).unwrap_err().id,
            Some(RequestId::Int("5".into()))
        );
    }

    #[test]
    fn notifications_and_responses() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification(_))
        ));
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Incoming::Response)
        );
    }

    #[test]
    fn failure_with_unknown_id_serializes_null() {
        let reply = Reply::Failure {
            id: None,
            error: RpcError::new(-32700, "parse error"),
        };
        assert_eq!(
            serde_json::to_string(&reply).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
        );
    }
}
