//! Turning the resolved tree into the core's `ServerConfig` and the runtime's settings.

use crate::resolve::Resolved;
use responses_mcp_core::policy::SYSTEM_POLICY;
use responses_mcp_core::server::{Profile, Profiles, SearchDefaults, ServerConfig};
use responses_mcp_core::tools::{Effort, Verbosity};
use serde_json::Value;
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

/// How a policy file combines with the built-in policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyMerge {
    /// The file replaces the built-in policy.
    Replace,
    /// The file comes first.
    Prepend,
    /// The file comes last.
    Append,
}

impl Resolved {
    fn str(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(Value::as_str)
    }

    fn int(&self, path: &str) -> u64 {
        self.get(path).and_then(Value::as_u64).unwrap_or(0)
    }

    fn flag(&self, path: &str) -> bool {
        self.get(path).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The environment variable that holds the API key.
    pub fn api_key_env(&self) -> &str {
        self.str("openai.api_key_env").unwrap_or("OPENAI_API_KEY")
    }

    /// Whether debug logging is on.
    pub fn debug(&self) -> bool {
        self.flag("server.debug")
    }

    /// The debug log file, when one is set and debug is on.
    pub fn debug_file(&self) -> Option<PathBuf> {
        self.str("server.debug_file")
            .filter(|_| self.debug())
            .map(PathBuf::from)
    }

    /// Whether to print the configuration when serving starts.
    pub fn show_config_on_start(&self) -> bool {
        self.flag("server.show_config_on_start")
    }

    /// Per-attempt timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.int("request.timeout_ms"))
    }

    /// `policy.system`.
    pub fn policy_source(&self) -> PolicySource {
        match (
            self.str("policy.system.source"),
            self.str("policy.system.path"),
        ) {
            (Some("file"), Some(path)) => PolicySource::File {
                path: PathBuf::from(path),
                merge: match self.str("policy.system.merge") {
                    Some("prepend") => PolicyMerge::Prepend,
                    Some("append") => PolicyMerge::Append,
                    _ => PolicyMerge::Replace,
                },
            },
            _ => PolicySource::Builtin,
        }
    }

    /// The instructions sent with every call: the built-in policy (with any configured
    /// search triggers) combined with the policy file text when there is one.
    pub fn instructions(&self, policy_file: Option<&str>) -> String {
        let mut builtin = SYSTEM_POLICY.to_owned();
        let defaults = crate::keys::defaults();
        let triggers = self.get("policy.search_triggers");
        if triggers != defaults.pointer("/policy/search_triggers") {
            let words: Vec<&str> = triggers
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !words.is_empty() {
                builtin.push_str("\n\nAlways search when the question involves any of: ");
                builtin.push_str(&words.join(", "));
                builtin.push('.');
            }
        }
        if !self.flag("policy.prefer_search_when_unsure") {
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

    fn profile(&self, name: &str, base: Option<&Profile>) -> Option<Profile> {
        let node = self.get(&format!("model_profiles.{name}"))?.as_object()?;
        if node.values().all(Value::is_null) {
            return None;
        }
        // Fields a profile leaves out come from the answer profile; an explicit null
        // means "do not send".
        let field = |k: &str| match node.get(k) {
            Some(Value::String(s)) => Some(Some(s.clone())),
            Some(_) => Some(None),
            None => None,
        };
        let model = field("model")
            .flatten()
            .or_else(|| base.map(|b| b.model.clone()))?;
        Some(Profile {
            model,
            reasoning_effort: match field("reasoning_effort") {
                Some(v) => v.as_deref().and_then(Effort::parse),
                None => base.and_then(|b| b.reasoning_effort),
            },
            verbosity: match field("verbosity") {
                Some(v) => v.as_deref().and_then(Verbosity::parse),
                None => base.and_then(|b| b.verbosity),
            },
        })
    }

    /// The core's configuration. `policy_file` is the policy file's text, when
    /// `policy.system.source` is `file`; `jitter_seed` is entropy from the runtime.
    pub fn server_config(
        &self,
        api_key_present: bool,
        policy_file: Option<&str>,
        jitter_seed: u64,
    ) -> ServerConfig {
        let answer = self.profile("answer", None);
        let profiles = Profiles {
            answer_detailed: self.profile("answer_detailed", answer.as_ref()),
            answer_quick: self.profile("answer_quick", answer.as_ref()),
            answer,
        };
        let domains = self
            .get("search.defaults.domains")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        ServerConfig {
            max_message_bytes: usize::try_from(self.int("server.max_message_bytes"))
                .unwrap_or(usize::MAX),
            force_line_output: self.flag("server.line_mode"),
            base_url: self
                .str("openai.base_url")
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_owned(),
            api_key_env: self.api_key_env().to_owned(),
            api_key_present,
            timeout: self.timeout(),
            max_retries: u32::try_from(self.int("request.max_retries")).unwrap_or(0),
            profiles,
            max_citations: usize::try_from(self.int("policy.max_citations")).unwrap_or(3),
            instructions: self.instructions(policy_file),
            search_defaults: SearchDefaults {
                recency_days: self
                    .get("search.defaults.recency_days")
                    .and_then(Value::as_u64),
                max_results: self
                    .get("search.defaults.max_results")
                    .and_then(Value::as_u64),
                domains,
            },
            debug: self.debug(),
            shutdown_grace: Duration::from_millis(self.int("server.shutdown_grace_ms")),
            max_inflight: usize::try_from(self.int("server.max_inflight")).unwrap_or(16),
            max_queue: usize::try_from(self.int("server.max_queue")).unwrap_or(1024),
            progress_interval: Duration::from_millis(self.int("server.progress_interval_ms")),
            jitter_seed,
        }
    }
}
