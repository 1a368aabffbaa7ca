//! The tools' argument and result schemas, read from their JSON documents in `schemas/`.
//! Documents, not `json!` code: they are read once per protocol version (the `tools/list`
//! reply is cached), and the code that builds a `Value` key by key is several times their
//! size in the binary.

use serde_json::Value;

/// Every argument any tool takes (`Tool::input_schema` keeps the ones a tool takes).
pub(super) fn arguments() -> Value {
    document(include_str!("schemas/arguments.json"))
}

/// The structured result every tool gives.
pub(super) fn result() -> Value {
    document(include_str!("schemas/result.json"))
}

fn document(text: &str) -> Value {
    // Each document is JSON: the tools' tests read both.
    serde_json::from_str(text).unwrap_or_default()
}
