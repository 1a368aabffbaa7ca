//! Configuration for openai-responses-mcp: the command line, the environment and the
//! YAML file resolved once into the configuration the binaries run with.
//!
//! [`resolve::resolve`] is pure: defaults, YAML text, an environment snapshot and the
//! parsed command line in; the effective configuration with the source of every leaf out
//! ([`keys`], [`view`], [`choices`], [`providers`], [`proxy`], [`http`], [`clients`],
//! [`show`]). [`load`] reads the files around it in two steps, so that the host can
//! install the logger between them: [`load::read`] and [`load::Read::startup`]. Nothing
//! here starts a thread or speaks to a store, a collector or an issuer: that is the host
//! crate's (`config/host`). Its one reach outside the process is the system resolver, for
//! a `--http` address given as a host name.

#![deny(unsafe_code)]
// No function over 80 lines of code (clippy.toml's threshold) outside tests: issue 48.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]

mod base_url;
pub mod choices;
pub mod cli;
pub mod clients;
mod env;
mod error;
pub mod http;
pub mod keys;
pub mod load;
pub mod oauth;
pub mod paths;
mod percent;
pub mod providers;
pub mod proxy;
pub mod resolve;
mod settings;
pub mod show;
pub mod store;
mod task_key;
pub mod traces;
mod version;
pub mod view;

pub use cli::{usage, Cli};
pub use resolve::{resolve, ConfigError, Env, Resolved, Source, YamlInput};
pub use settings::{CoreInputs, PolicyMerge, PolicySource};
pub use version::{USER_AGENT, VERSION};

use proxy::ProxyRoute;
use responses_mcp_core::ServerConfig;
use std::fmt;

/// The API key. Its `Debug` and `Display` print a mask, so it cannot leak through logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

pub use choices::Auth;

impl Startup {
    /// The header that carries the key, when there is a key.
    pub fn auth_header(&self) -> Option<(&'static str, String)> {
        let key = self.api_key.as_ref()?.expose();
        Some(match self.auth {
            Auth::Bearer => ("Authorization", format!("Bearer {key}")),
            Auth::ApiKey => ("api-key", key.to_owned()),
        })
    }
}

/// Everything a runtime needs to serve.
#[derive(Debug)]
pub struct Startup {
    /// The command line.
    pub cli: Cli,
    /// The resolved configuration with sources.
    pub resolved: Resolved,
    /// The core's configuration (no secrets).
    pub server: ServerConfig,
    /// The API key, when its variable is set.
    pub api_key: Option<ApiKey>,
    /// How the key is sent (`openai.auth`).
    pub auth: Auth,
    /// `OPENAI_ORG_ID`, sent as `OpenAI-Organization` with OpenAI's own key only.
    pub organization: Option<String>,
    /// `OPENAI_PROJECT_ID`, sent as `OpenAI-Project` with OpenAI's own key only.
    pub project: Option<String>,
    /// Root certificates (PEM) from `openai.ca_file`, replacing the built-in roots.
    pub ca_pem: Option<Vec<u8>>,
    /// The proxy upstream requests go through.
    pub proxy: ProxyRoute,
    /// The HTTP endpoint, with `--http`.
    pub http: Option<http::HttpServe>,
    /// The metrics-only listener, with `--metrics-listen` (`server.metrics_listen`).
    pub metrics: Option<http::HttpServe>,
    /// The store instances share their limits through (`server.store.url`).
    pub store: Option<store::StoreConnect>,
    /// Where spans go (`OTEL_*`); `None`: no traces.
    pub traces: Option<traces::TraceExport>,
}

/// What a user should know before the first call: a provider without web search, and
/// profile models OpenAI has shut down or will (the core's table; dates in Asia/Tokyo).
pub fn startup_warnings(resolved: &Resolved, unix_secs: u64) -> Vec<String> {
    let mut warnings = Vec::new();
    let provider = &resolved.settings.openai.provider;
    if resolved.settings.openai.web_search == choices::SearchMode::None {
        warnings.push(format!(
            "provider {provider} has no hosted web search: answers come from the model alone (used_search: false, no citations), and the tool descriptions say so"
        ));
    }
    let today = responses_mcp_core::date::Date::tokyo(unix_secs).to_string();
    let prices = resolved.prices();
    let server = &resolved.settings.server;
    let capped = server.limits.spend_per_day_usd.is_some()
        || server.http.oauth.spend_per_day_usd.is_some()
        || server.http.clients_file.is_some();
    for (_, model, setting) in resolved.profile_models() {
        if let Some(r) = responses_mcp_core::openai::models::retirement(&model) {
            warnings.push(r.describe(&model, setting, &today));
        }
        if capped && prices.of(&model).is_none() {
            warnings.push(format!(
                "{setting} is {model}, which has no price: a spend cap (server.limits.spend_per_day_usd, the identities' or a client's spend_per_day_usd) counts nothing for its calls and holds nothing while they run; add its price under pricing.models.{model}"
            ));
        }
    }
    warnings
}
