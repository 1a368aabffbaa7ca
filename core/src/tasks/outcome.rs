//! A task's outcome: the result of its call as the JSON text it serialises to, or its
//! JSON-RPC error; and the same in the shared store's form (`{"result":…}` or
//! `{"error":…}`), read back without a tree of values.

use crate::jsonrpc::RpcError;
use serde_json::value::RawValue;
use serde_json::Value;

/// A finished call's result, or its error. The result is kept as the JSON text it
/// serialises to: as a tree of `Value`s it took three times the bytes (10,000 kept tasks,
/// see docs/benchmarks.md).
#[derive(Clone, Debug)]
pub struct Outcome(Result<Box<RawValue>, RpcError>);

impl Outcome {
    /// Keeps `outcome`.
    pub fn new(outcome: Result<Value, RpcError>) -> Outcome {
        Outcome(outcome.and_then(|v| {
            serde_json::value::to_raw_value(&v).map_err(|e| {
                RpcError::new(crate::jsonrpc::ErrorKind::InvalidRequest, e.to_string())
            })
        }))
    }

    /// The result as a value, or the error.
    pub fn get(&self) -> Result<Value, RpcError> {
        match &self.0 {
            Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                RpcError::new(crate::jsonrpc::ErrorKind::InvalidRequest, e.to_string())
            }),
            Err(e) => Err(e.clone()),
        }
    }

    /// Whether the call produced a result (rather than a JSON-RPC error).
    pub fn is_ok(&self) -> bool {
        self.0.is_ok()
    }

    /// The stored form: `{"result":…}` with the result's own text, or `{"error":…}`.
    pub fn stored(&self) -> String {
        match &self.0 {
            Ok(raw) => format!("{{\"result\":{}}}", raw.get()),
            Err(e) => serde_json::json!({ "error": e }).to_string(),
        }
    }

    /// An outcome read back from its stored form; `None` when `text` is not one.
    pub fn from_stored(text: &str) -> Option<Outcome> {
        #[derive(serde::Deserialize)]
        struct Stored {
            result: Option<Box<RawValue>>,
            error: Option<StoredError>,
        }
        #[derive(serde::Deserialize)]
        struct StoredError {
            code: i32,
            message: String,
            data: Option<Value>,
        }
        match serde_json::from_str::<Stored>(text).ok()? {
            Stored {
                result: Some(raw),
                error: None,
            } => Some(Outcome(Ok(raw))),
            Stored {
                result: None,
                error: Some(e),
            } => Some(Outcome(Err(RpcError {
                code: e.code,
                message: e.message,
                data: e.data,
            }))),
            _ => None,
        }
    }

    /// Bytes it takes, roughly.
    pub(super) fn bytes(&self) -> usize {
        match &self.0 {
            Ok(raw) => raw.get().len(),
            Err(e) => e.message.len() + 64,
        }
    }
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Outcome) -> bool {
        match (&self.0, &other.0) {
            (Ok(a), Ok(b)) => a.get() == b.get(),
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }
}
