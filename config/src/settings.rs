//! Turning the resolved tree into the core's `ServerConfig` and the runtime's settings.

use crate::resolve::Resolved;
use crate::view::UserLocationNode;
use responses_mcp_core::clients::{Clients, Limit};
use responses_mcp_core::openai::pricing::{
    residency_region, ModelPrice, PerToken, Picodollars, Prices, RequestFees,
};
use responses_mcp_core::policy::SYSTEM_POLICY;
use responses_mcp_core::settings::{OnUnavailable, StoreSettings};
use responses_mcp_core::tasks::{TaskKey, TaskSettings};
use responses_mcp_core::tools::{Tool, ALL_TOOLS};
use responses_mcp_core::trace_context::Sampler;
use responses_mcp_core::vocab::{Effort, SearchContextSize, ServiceTier, Verbosity};
use responses_mcp_core::{
    Profile, Profiles, SearchDefaults, SearchOptions, ServerConfig, UserLocation, WebSearch,
};
use std::path::PathBuf;
use std::time::Duration;

/// Where the system policy comes from (`policy.system`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// The built-in policy only.
    Builtin,
    /// A file, combined with the built-in policy.
    File {
        /// The file.
        path: PathBuf,
        /// How it combines.
        merge: PolicyMerge,
    },
}

pub use crate::choices::PolicyMerge;

/// The location a `user_location` node gives (every field may be unset).
fn location(node: &UserLocationNode) -> UserLocation {
    UserLocation {
        country: node.country.clone(),
        region: node.region.clone(),
        city: node.city.clone(),
        timezone: node.timezone.clone(),
    }
}

impl Resolved {
    /// The environment variable that holds the API key.
    pub fn api_key_env(&self) -> &str {
        &self.settings.openai.api_key_env
    }

    /// Whether debug logging is on.
    pub fn debug(&self) -> bool {
        self.settings.server.debug
    }

    /// Whether logs are JSON lines (`server.log_format: json`).
    pub fn json_logs(&self) -> bool {
        self.settings.server.log_format == crate::choices::LogFormat::Json
    }

    /// The debug log file, when one is set and debug is on.
    pub fn debug_file(&self) -> Option<PathBuf> {
        let server = &self.settings.server;
        server
            .debug_file
            .as_ref()
            .filter(|_| server.debug)
            .map(PathBuf::from)
    }

    /// Whether to print the configuration when serving starts.
    pub fn show_config_on_start(&self) -> bool {
        self.settings.server.show_config_on_start
    }

    /// Per-attempt timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.settings.request.timeout_ms)
    }

    /// `policy.system`.
    pub fn policy_source(&self) -> PolicySource {
        let system = &self.settings.policy.system;
        match (system.source.as_str(), &system.path) {
            ("file", Some(path)) => PolicySource::File {
                path: PathBuf::from(path),
                merge: system.merge,
            },
            _ => PolicySource::Builtin,
        }
    }

    /// The instructions sent with every call: the built-in policy (with any configured
    /// search triggers) combined with the policy file text when there is one.
    pub fn instructions(&self, policy_file: Option<&str>) -> String {
        let policy = &self.settings.policy;
        let mut builtin = SYSTEM_POLICY.to_owned();
        let defaults = crate::keys::defaults();
        let default_triggers = defaults.pointer("/policy/search_triggers");
        let changed = default_triggers != Some(&serde_json::json!(policy.search_triggers));
        if changed && !policy.search_triggers.is_empty() {
            builtin.push_str("\n\nAlways search when the question involves any of: ");
            builtin.push_str(&policy.search_triggers.join(", "));
            builtin.push('.');
        }
        if !policy.prefer_search_when_unsure {
            builtin.push_str("\n\nWhen unsure, answer from your own knowledge and say it may be outdated instead of searching.");
        }
        match (self.policy_source(), policy_file) {
            (PolicySource::File { merge, .. }, Some(text)) => {
                let text = text.trim();
                match merge {
                    PolicyMerge::Replace => text.to_owned(),
                    PolicyMerge::Prepend => format!("{text}\n\n{builtin}"),
                    PolicyMerge::Append => format!("{builtin}\n\n{text}"),
                }
            }
            _ => builtin,
        }
    }

    /// `tool`'s profile: its own fields, with absent ones from `base` (the `answer`
    /// profile); `None` when the tool has no profile of its own.
    fn profile(&self, tool: Tool, base: Option<&Profile>) -> Option<Profile> {
        let node = self.settings.model_profiles.get(tool.name())?;
        // A node whose every field is null or absent is no profile.
        let set = |f: &Option<Option<String>>| matches!(f, Some(Some(_)));
        let location_set =
            matches!(&node.user_location, Some(Some(l)) if location(l) != UserLocation::default());
        if !set(&node.model)
            && !set(&node.reasoning_effort)
            && !set(&node.verbosity)
            && !set(&node.search_context_size)
            && !set(&node.service_tier)
            && !location_set
            && !matches!(node.external_web_access, Some(Some(_)))
            && !matches!(node.max_output_tokens, Some(Some(_)))
        {
            return None;
        }
        let model = match &node.model {
            Some(Some(model)) => Some(model.clone()),
            _ => base.map(|b| b.model.clone()),
        }?;
        // A field set here (a value, or null to send nothing) wins; absent inherits.
        fn pick<T: Clone, U>(
            field: &Option<Option<U>>,
            read: impl FnOnce(&U) -> Option<T>,
            inherited: impl FnOnce() -> Option<T>,
        ) -> Option<T> {
            match field {
                Some(v) => v.as_ref().and_then(read),
                None => inherited(),
            }
        }
        let base_search = base.map(|b| b.search.clone()).unwrap_or_default();
        Some(Profile {
            model,
            reasoning_effort: pick(
                &node.reasoning_effort,
                |v| Effort::parse(v),
                || base.and_then(|b| b.reasoning_effort),
            ),
            verbosity: pick(
                &node.verbosity,
                |v| Verbosity::parse(v),
                || base.and_then(|b| b.verbosity),
            ),
            search: SearchOptions {
                context_size: pick(
                    &node.search_context_size,
                    |v| SearchContextSize::parse(v),
                    || base_search.context_size,
                ),
                // A location with no fields is sent as one that states none; `null`
                // sends none.
                user_location: pick(
                    &node.user_location,
                    |l| Some(location(l)),
                    || base_search.user_location.clone(),
                ),
                external_web_access: pick(
                    &node.external_web_access,
                    |v| Some(*v),
                    || base_search.external_web_access,
                ),
            },
            service_tier: pick(
                &node.service_tier,
                |v| ServiceTier::parse(v),
                || base.and_then(|b| b.service_tier),
            ),
            max_output_tokens: pick(
                &node.max_output_tokens,
                |v| Some(*v),
                || base.and_then(|b| b.max_output_tokens),
            ),
        })
    }

    /// How the provider searches (`openai.web_search`).
    pub fn web_search(&self) -> WebSearch {
        self.settings.openai.web_search.into()
    }

    /// Whether the base URL is OpenAI's own API, whose model calendar the core's
    /// retirement table follows.
    pub fn is_openai_api(&self) -> bool {
        let url = self.settings.openai.base_url.trim_end_matches('/');
        url == "https://api.openai.com/v1" || url == "https://api.openai.com"
    }

    /// When nobody chose the answer model and the built-in default is past OpenAI's
    /// shutdown date (an old binary), uses the table's replacement instead of refusing
    /// every call; what it says once at startup.
    pub fn replace_retired_default(&mut self, today: &str) -> Option<String> {
        const KEY: &str = "model_profiles.answer.model";
        if self.sources.get(KEY) != Some(&crate::resolve::Source::Default) {
            return None;
        }
        let answer = self.settings.model_profiles.get_mut("answer")?;
        let model = answer.model.clone().flatten()?;
        let retired =
            responses_mcp_core::openai::models::retirement(&model).filter(|r| r.is_past(today))?;
        let replacement = retired.replacement.to_owned();
        answer.model = Some(Some(replacement.clone()));
        if let Some(slot) = self.tree.pointer_mut("/model_profiles/answer/model") {
            *slot = serde_json::Value::String(replacement.clone());
        }
        Some(format!(
            "the built-in default model {model} was shut down by OpenAI on {}; using {replacement}, its recommended replacement (set {KEY} to choose another; a newer release has a newer default)",
            retired.shutdown
        ))
    }

    /// The model of every profile, with the setting it comes from, for checks such as
    /// retirements and `doctor`.
    pub fn profile_models(&self) -> Vec<(Tool, String, &'static str)> {
        let profiles = self.profiles();
        ALL_TOOLS
            .into_iter()
            .filter_map(|tool| {
                let profile = profiles.own(tool)?;
                Some((tool, profile.model.clone(), tool.model_setting()))
            })
            .collect()
    }

    /// The built-in prices with the configured ones over them. The resolver checked every
    /// rate's range, so none is dropped here.
    pub fn prices(&self) -> Prices {
        let pricing = &self.settings.pricing;
        let mut prices = Prices::default();
        prices.residency = residency_region(&self.settings.openai.base_url);
        if let Some(per_call) = Picodollars::from_usd(pricing.web_search_per_1k_usd / 1000.0) {
            prices.web_search_call = per_call;
        }
        for (model, node) in &pricing.models {
            let rate = |usd: f64| PerToken::from_usd_per_million(usd).unwrap_or(PerToken(0));
            let input = rate(node.input_per_mtok);
            prices.configure(
                model,
                ModelPrice {
                    input,
                    cached_input: node.cached_input_per_mtok.map_or(input, rate),
                    cache_write: node
                        .cache_write_per_mtok
                        .map_or(PerToken::cache_write_of(input), rate),
                    output: rate(node.output_per_mtok),
                    long_context_above: node.long_context_above_tokens,
                    fees: RequestFees {
                        any: node.per_request_usd.and_then(Picodollars::from_usd),
                        low: node.per_request_usd_low.and_then(Picodollars::from_usd),
                        medium: node.per_request_usd_medium.and_then(Picodollars::from_usd),
                        high: node.per_request_usd_high.and_then(Picodollars::from_usd),
                    },
                },
            );
        }
        prices
    }

    /// Every tool's own profile, the others' falling back to `answer`'s fields.
    fn profiles(&self) -> Profiles {
        let answer = self.profile(Tool::Answer, None);
        let mut profiles = Profiles::default();
        for tool in ALL_TOOLS {
            let base = (tool != Tool::Answer).then_some(answer.as_ref()).flatten();
            if let Some(profile) = self.profile(tool, base) {
                profiles.set(tool, profile);
            }
        }
        profiles
    }

    /// The core's configuration with no task key, no named clients and no traces (the
    /// tests' and the fuzz targets'). `policy_file` is the policy file's text, when
    /// `policy.system.source` is `file`; `jitter_seed` is entropy from the runtime.
    pub fn server_config(
        &self,
        credentials_ready: bool,
        policy_file: Option<&str>,
        jitter_seed: u64,
    ) -> ServerConfig {
        self.core_config(CoreInputs {
            credentials_ready,
            policy_file,
            jitter_seed,
            task_key: TaskKey([0; 32]),
            clients: Clients::default(),
            call_records: true,
            traces: None,
        })
    }

    /// The core's configuration, from the settings and what startup found outside them.
    pub fn core_config(&self, inputs: CoreInputs<'_>) -> ServerConfig {
        let s = &self.settings;
        let credentials_ready = inputs.credentials_ready;
        let profiles = self.profiles();
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let defaults = &s.search.defaults;
        ServerConfig {
            max_message_bytes: size(s.server.max_message_bytes),
            force_line_output: s.server.line_mode,
            base_url: s.openai.base_url.trim_end_matches('/').to_owned(),
            api_key_env: s.openai.api_key_env.clone(),
            credentials_ready: credentials_ready || !s.openai.api_key_required,
            web_search: self.web_search(),
            api: s.openai.provider.api(),
            enforce_retirements: self.is_openai_api(),
            model_lookups: s.openai.model_lookups,
            timeout: self.timeout(),
            idle_timeout: Duration::from_millis(s.request.idle_timeout_ms),
            stream: s.responses.stream,
            max_retries: s.request.max_retries,
            profiles,
            max_citations: size(s.policy.max_citations),
            instructions: self.instructions(inputs.policy_file),
            search_defaults: SearchDefaults {
                recency_days: defaults.recency_days,
                max_results: defaults.max_results,
                domains: defaults
                    .domains
                    .iter()
                    .map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase())
                    .collect(),
            },
            debug: s.server.debug,
            shutdown_grace: Duration::from_millis(s.server.shutdown_grace_ms),
            max_inflight: size(s.server.max_inflight),
            max_queue: size(s.server.max_queue),
            progress_interval: Duration::from_millis(s.server.progress_interval_ms),
            jitter_seed: inputs.jitter_seed,
            prices: self.prices(),
            tasks: self.task_settings(inputs.task_key),
            clients: inputs.clients,
            instance_limit: crate::clients::instance_limit(self),
            // Set by the runtime once the listener is bound (the resource may be its
            // address): the host crate's `oauth::config`.
            oauth: None,
            identity_header: s
                .server
                .http
                .identity_header
                .as_deref()
                .map(|h| h.trim().to_ascii_lowercase()),
            identity_limit: self.identity_limit(),
            call_records: inputs.call_records,
            store: self.store_settings(),
            traces: inputs.traces,
        }
    }

    /// The tasks' settings, sealed with `key`.
    fn task_settings(&self, key: TaskKey) -> TaskSettings {
        let s = &self.settings;
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        TaskSettings {
            max_tasks: size(s.tasks.max_tasks),
            max_bytes: size(s.tasks.max_bytes),
            default_ttl: Duration::from_millis(s.tasks.default_ttl_ms),
            max_ttl: Duration::from_millis(s.tasks.max_ttl_ms),
            poll_interval: Duration::from_millis(s.tasks.poll_interval_ms),
            answer_within: Duration::from_millis(s.tasks.answer_within_ms),
            key,
            background: s.tasks.openai_background,
            // The resolver checked the name against the list.
            completion_window: responses_mcp_core::tasks::CompletionWindow::parse(
                &s.tasks.completion_window,
            )
            .unwrap_or_default(),
            window_price_percent: s.tasks.completion_window_price_percent,
            service_tier: s.tasks.service_tier.as_deref().and_then(ServiceTier::parse),
            flex_unavailable: s.tasks.flex_unavailable.into(),
        }
    }

    /// OAuth mode's limits for each identity.
    fn identity_limit(&self) -> Limit {
        let oauth = &self.settings.server.http.oauth;
        Limit {
            calls_per_minute: oauth.calls_per_minute,
            spend_per_day: oauth
                .spend_per_day_usd
                .and_then(responses_mcp_core::money::Picodollars::from_usd),
        }
    }

    /// The shared store's settings, when there is a store.
    fn store_settings(&self) -> Option<StoreSettings> {
        let store = &self.settings.server.store;
        store.url.as_ref().map(|_| StoreSettings {
            on_unavailable: match store.on_unavailable.as_str() {
                "allow" => OnUnavailable::Allow,
                _ => OnUnavailable::Refuse,
            },
        })
    }
}

/// What the core's configuration takes from outside the settings, found by startup before
/// it is built, so that nothing is patched after.
#[derive(Debug)]
pub struct CoreInputs<'a> {
    /// Whether the API key is set.
    pub credentials_ready: bool,
    /// The policy file's text, when `policy.system.source` is `file`.
    pub policy_file: Option<&'a str>,
    /// Entropy from the runtime.
    pub jitter_seed: u64,
    /// The key that seals task ids (from the environment or the system's entropy).
    pub task_key: TaskKey,
    /// The named clients of the clients file.
    pub clients: Clients,
    /// Whether the installed logger writes the call log.
    pub call_records: bool,
    /// The traces' sampler, when traces are on.
    pub traces: Option<Sampler>,
}
