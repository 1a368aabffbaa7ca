//! The effective configuration, typed. The resolver validates the tree against the key
//! table; this view is what the rest of the program reads, so a misspelt setting is a
//! compile error instead of a silent zero. A test ties its fields to the key table.

use crate::choices::{Auth, FlexUnavailable, PolicyMerge, Provider, SearchMode};
use crate::error::ConfigError;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every section of `config.yaml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Settings {
    pub openai: OpenAi,
    pub request: Request,
    pub responses: Responses,
    /// Profiles by tool name.
    pub model_profiles: BTreeMap<String, ProfileNode>,
    pub policy: Policy,
    pub search: Search,
    pub server: Server,
    pub tasks: Tasks,
    pub pricing: Pricing,
}

/// `pricing.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Pricing {
    pub web_search_per_1k_usd: f64,
    /// Prices by model id.
    pub models: BTreeMap<String, ModelPriceNode>,
}

/// One `pricing.models.<model>` entry, in USD per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ModelPriceNode {
    pub input_per_mtok: f64,
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
    #[serde(default)]
    pub cache_write_per_mtok: Option<f64>,
    pub output_per_mtok: f64,
    #[serde(default)]
    pub long_context_above_tokens: Option<u64>,
    #[serde(default)]
    pub per_request_usd: Option<f64>,
    #[serde(default)]
    pub per_request_usd_low: Option<f64>,
    #[serde(default)]
    pub per_request_usd_medium: Option<f64>,
    #[serde(default)]
    pub per_request_usd_high: Option<f64>,
}

/// `tasks.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Tasks {
    pub default_ttl_ms: u64,
    pub max_ttl_ms: u64,
    pub max_tasks: u64,
    pub max_bytes: u64,
    pub poll_interval_ms: u64,
    pub answer_within_ms: u64,
    pub openai_background: bool,
    pub completion_window: String,
    pub completion_window_price_percent: Option<u64>,
    pub service_tier: Option<String>,
    pub flex_unavailable: FlexUnavailable,
    pub secret_env: String,
}

/// `openai.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct OpenAi {
    pub provider: Provider,
    pub azure_resource: Option<String>,
    pub api_key_env: String,
    pub auth: Auth,
    pub api_key_required: bool,
    pub model_lookups: bool,
    pub allow_foreign_key: bool,
    pub web_search: SearchMode,
    pub base_url: String,
    pub ca_file: Option<String>,
}

/// `request.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Request {
    pub timeout_ms: u64,
    pub idle_timeout_ms: u64,
    pub max_retries: u32,
}

/// `responses.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Responses {
    pub stream: bool,
    pub json_mode: bool,
}

/// One `model_profiles.<tool>` node. Each field is tri-state: absent (inherit from the
/// `answer` profile), `null` (do not send), or a value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ProfileNode {
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_context_size: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_location: Option<Option<UserLocationNode>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_web_access: Option<Option<bool>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<Option<u64>>,
}

/// `model_profiles.<tool>.user_location`; absent and null fields are not sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct UserLocationNode {
    #[serde(default)]
    pub country: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub city: Option<String>,
    #[serde(default)]
    pub timezone: Option<String>,
}

/// `policy.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Policy {
    pub search_triggers: Vec<String>,
    pub prefer_search_when_unsure: bool,
    pub max_citations: u64,
    pub requery_attempts: u64,
    pub require_dates_iso: bool,
    pub system: PolicySystem,
}

/// `policy.system.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct PolicySystem {
    pub source: String,
    pub path: Option<String>,
    pub merge: PolicyMerge,
}

/// `search.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Search {
    pub defaults: SearchDefaults,
}

/// `search.defaults.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SearchDefaults {
    pub recency_days: Option<u64>,
    pub max_results: Option<u64>,
    pub domains: Vec<String>,
}

/// `server.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Server {
    pub transport: String,
    pub debug: bool,
    pub debug_file: Option<String>,
    pub log_format: crate::choices::LogFormat,
    pub metrics_listen: Option<String>,
    pub show_config_on_start: bool,
    pub line_mode: bool,
    pub limits: Limits,
    pub store: Store,
    pub max_message_bytes: u64,
    pub max_inflight: u64,
    pub max_queue: u64,
    pub shutdown_grace_ms: u64,
    pub progress_interval_ms: u64,
    pub http: Http,
}

/// `server.limits.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Limits {
    pub calls_per_minute: Option<u32>,
    pub spend_per_day_usd: Option<f64>,
}

/// `server.store.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Store {
    pub url: Option<String>,
    pub password_env: Option<String>,
    pub on_unavailable: String,
    pub timeout_ms: u64,
}

/// `server.http.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Http {
    pub listen: String,
    pub allowed_origins: Vec<String>,
    pub allowed_hosts: Vec<String>,
    pub trusted_proxies: Vec<String>,
    pub identity_header: Option<String>,
    pub token_env: String,
    pub allow_unauthenticated: bool,
    pub clients_file: Option<String>,
    pub max_connections: u64,
    pub max_head_bytes: u64,
    pub request_timeout_ms: u64,
    pub idle_timeout_ms: u64,
    pub public_url: Option<String>,
    pub oauth: OAuth,
}

/// `server.http.oauth.*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct OAuth {
    pub issuer: Option<String>,
    pub audiences: Vec<String>,
    pub scopes: Vec<String>,
    pub identity_claim: String,
    pub leeway_secs: u64,
    pub wait_ms: u64,
    pub refetch_after_ms: u64,
    pub calls_per_minute: Option<u32>,
    pub spend_per_day_usd: Option<f64>,
}

impl Settings {
    /// Reads a validated tree.
    ///
    /// # Errors
    /// Only when the tree does not match the key table, which validation rules out; the
    /// message names the mismatch.
    pub fn from_tree(tree: &Value) -> Result<Settings, ConfigError> {
        Settings::deserialize(tree).map_err(|e| ConfigError::Invalid {
            key: "(configuration)".into(),
            value: e.to_string(),
            origin: "the resolved tree".into(),
            allowed: "the shape of config.yaml".into(),
        })
    }
}

/// A field that is present, even as `null` (`Some(None)`); absent fields stay `None`
/// through `#[serde(default)]`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
