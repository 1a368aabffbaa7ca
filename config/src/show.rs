//! `--show-config`: the effective configuration with the source of every value.

use crate::proxy::ProxyRoute;
use crate::resolve::Resolved;
use serde_json::{json, Map, Value};

/// Which secrets the environment holds (never their values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecretsSet {
    /// The API key's variable is set.
    pub api_key: bool,
    /// The HTTP bearer token's variable is set.
    pub http_token: bool,
    /// The task-sealing secret's variable is set.
    pub tasks_secret: bool,
}

impl SecretsSet {
    /// Reads which of the variables `resolved` names are set in `env`.
    pub fn of(resolved: &Resolved, env: &crate::Env) -> SecretsSet {
        let set = |name: &str| env.get(name).is_some_and(|v| !v.trim().is_empty());
        SecretsSet {
            api_key: set(resolved.api_key_env()),
            http_token: set(&resolved.settings.server.http.token_env),
            tasks_secret: set(&resolved.settings.tasks.secret_env),
        }
    }
}

/// Pretty JSON: the version, the effective tree, each leaf's source, which secret
/// variables are set (never a secret), and the proxy in use (never its credentials).
pub fn show_config(resolved: &Resolved, secrets: SecretsSet, proxy: &ProxyRoute) -> String {
    let sources: Map<String, Value> = resolved
        .sources
        .iter()
        .map(|(k, s)| (k.clone(), Value::String(s.to_string())))
        .collect();
    let out = json!({
        "version": crate::version::VERSION,
        "api_key": { "env": resolved.api_key_env(), "set": secrets.api_key },
        "http_token": { "env": resolved.settings.server.http.token_env, "set": secrets.http_token },
        "tasks_secret": { "env": resolved.settings.tasks.secret_env, "set": secrets.tasks_secret },
        "proxy": match proxy {
            ProxyRoute::Direct => json!({ "url": null, "source": "default" }),
            ProxyRoute::Bypassed { variable, by } => json!({
                "url": null, "source": format!("env:{variable}"), "bypassed_by": by.as_str(),
            }),
            ProxyRoute::Via { proxy, variable } => json!({
                "url": proxy.to_string(), "source": format!("env:{variable}"),
            }),
        },
        "model_calendar": {
            "as_of": responses_mcp_core::openai::models::CALENDAR_AS_OF,
            "source": "OpenAI's deprecations page; a provider's own shutdown_date wins",
        },
        "effective": shown_tree(&resolved.tree),
        "sources": sources,
        "warnings": resolved.warnings,
    });
    // A `Value` always serialises.
    #[allow(clippy::expect_used)]
    serde_json::to_string_pretty(&out).expect("a Value is always valid JSON")
}

/// The effective tree as it may be printed: the store URL's password replaced.
fn shown_tree(tree: &Value) -> Value {
    let mut tree = tree.clone();
    if let Some(url) = tree.pointer_mut("/server/store/url") {
        if let Some(text) = url.as_str() {
            *url = Value::String(crate::store::without_password(text));
        }
    }
    tree
}
