//! The engine's fixed settings.

use crate::settings::ServerConfig;
use std::time::Duration;

/// The engine's fixed settings, from the server configuration.
pub struct Settings {
    pub max_inflight: usize,
    pub max_queue: usize,
    pub timeout: Duration,
    pub max_retries: u32,
    pub progress_interval: Duration,
    pub max_citations: usize,
    /// The API root: `base_url` without a trailing `/`.
    pub base: String,
    /// `{base_url}/responses`.
    pub url: String,
    /// The instructions, encoded once as a JSON string for every request body.
    pub instructions_json: Vec<u8>,
    /// Ask for answers as event streams.
    pub stream: bool,
    /// An attempt that receives no byte for this long fails.
    pub idle_timeout: Duration,
    /// Least wait before a read or cancel of a stored response is retried (the tasks'
    /// poll interval), so a response is fetched at most once per interval.
    pub fetch_pace: Duration,
    /// Report each attempt's end ([`super::CallEvent::Attempted`]), for traces.
    pub trace_attempts: bool,
    /// What a call sent at `flex` does when flex capacity is unavailable.
    pub flex_unavailable: crate::settings::FlexUnavailable,
}

impl Settings {
    /// The engine's part of `config`.
    pub fn from_config(config: &ServerConfig) -> Self {
        // Serialising a string cannot fail.
        #[allow(clippy::expect_used)]
        let instructions_json =
            serde_json::to_vec(&config.instructions).expect("a string is always valid JSON");
        Settings {
            max_inflight: config.max_inflight,
            max_queue: config.max_queue,
            timeout: config.timeout,
            max_retries: config.max_retries,
            progress_interval: config.progress_interval,
            max_citations: config.max_citations,
            base: config.base_url.trim_end_matches('/').to_owned(),
            url: format!("{}/responses", config.base_url.trim_end_matches('/')),
            instructions_json,
            stream: config.stream,
            idle_timeout: config.idle_timeout,
            fetch_pace: config.tasks.background_poll(),
            trace_attempts: config.traces.is_some(),
            flex_unavailable: config.tasks.flex_unavailable,
        }
    }
}
