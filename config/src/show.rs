//! `--show-config`: the effective configuration with the source of every value.

use crate::resolve::Resolved;
use serde_json::{json, Map, Value};

/// Pretty JSON: the version, the effective tree, each leaf's source, and whether the API
/// key variable is set (never the key).
pub fn show_config(resolved: &Resolved, api_key_set: bool) -> String {
    let sources: Map<String, Value> = resolved
        .sources
        .iter()
        .map(|(k, s)| (k.clone(), Value::String(s.to_string())))
        .collect();
    let out = json!({
        "version": crate::VERSION,
        "api_key": { "env": resolved.api_key_env(), "set": api_key_set },
        "effective": resolved.tree,
        "sources": sources,
        "warnings": resolved.warnings,
    });
    serde_json::to_string_pretty(&out).unwrap_or_default()
}
