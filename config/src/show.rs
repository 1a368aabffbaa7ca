//! `--show-config`: the effective configuration with the source of every value.

use crate::proxy::ProxyRoute;
use crate::resolve::Resolved;
use serde_json::{json, Map, Value};

/// Pretty JSON: the version, the effective tree, each leaf's source, whether the API key
/// variable is set (never the key), and the proxy in use (never its credentials).
pub fn show_config(resolved: &Resolved, api_key_set: bool, proxy: &ProxyRoute) -> String {
    let sources: Map<String, Value> = resolved
        .sources
        .iter()
        .map(|(k, s)| (k.clone(), Value::String(s.to_string())))
        .collect();
    let out = json!({
        "version": crate::VERSION,
        "api_key": { "env": resolved.api_key_env(), "set": api_key_set },
        "proxy": match proxy {
            ProxyRoute::Direct => json!({ "url": null, "source": "default" }),
            ProxyRoute::Bypassed { variable } => json!({
                "url": null, "source": format!("env:{variable}"), "bypassed_by": "NO_PROXY",
            }),
            ProxyRoute::Via { proxy, variable } => json!({
                "url": proxy.to_string(), "source": format!("env:{variable}"),
            }),
        },
        "effective": resolved.tree,
        "sources": sources,
        "warnings": resolved.warnings,
    });
    // A `Value` always serialises.
    #[allow(clippy::expect_used)]
    serde_json::to_string_pretty(&out).expect("a Value is always valid JSON")
}
