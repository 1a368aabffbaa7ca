//! A request's id, as the envelope reads it and the id scan finds it in a refused body.

use serde::{Serialize, Serializer};
use serde_json::{Number, Value};
use std::fmt;

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
