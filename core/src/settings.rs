//! What the core needs to know, resolved by the runtime before start. No secrets.

use crate::framing::DEFAULT_MAX_MESSAGE_BYTES;
pub use crate::openai::options::{Api, CompletionWindow, SearchOptions, UserLocation, WebSearch};
use crate::policy::SYSTEM_POLICY;
use crate::tools::{Tool, ALL_TOOLS};
use crate::vocab::{Effort, ServiceTier, Verbosity};
use std::fmt;
use std::time::Duration;

/// One model profile (spec 3.0.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The model id.
    pub model: String,
    /// `reasoning.effort`, sent only to models that take it.
    pub reasoning_effort: Option<Effort>,
    /// `text.verbosity`, sent only to models that take it.
    pub verbosity: Option<Verbosity>,
    /// The web_search tool's own settings.
    pub search: SearchOptions,
    /// `service_tier`.
    pub service_tier: Option<ServiceTier>,
    /// `max_output_tokens` (at least 16, as the API requires).
    pub max_output_tokens: Option<u64>,
}

/// The model profile of each tool. `answer` is required; a tool without its own profile
/// runs with `answer`'s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profiles {
    /// Each tool's own profile, at its index in [`crate::tools::ALL_TOOLS`].
    by_tool: [Option<Profile>; ALL_TOOLS.len()],
}

impl Profiles {
    /// Sets `tool`'s own profile.
    pub fn set(&mut self, tool: Tool, profile: Profile) {
        self.by_tool[tool.index()] = Some(profile);
    }

    /// `tool`'s own profile, if it has one.
    pub fn own(&self, tool: Tool) -> Option<&Profile> {
        self.by_tool[tool.index()].as_ref()
    }

    /// The tool whose profile `tool` runs with: itself when it has its own, else `answer`.
    pub fn serving(&self, tool: Tool) -> Tool {
        if self.own(tool).is_some() {
            tool
        } else {
            Tool::Answer
        }
    }

    /// The profile `tool` runs with: its own, else `answer`'s.
    pub fn for_tool(&self, tool: Tool) -> Option<&Profile> {
        self.own(tool).or_else(|| self.own(Tool::Answer))
    }

    /// The model `tool`'s profile names (what a refused call's record names).
    pub fn model_for(&self, tool: Tool) -> Option<&str> {
        self.for_tool(tool).map(|p| p.model.as_str())
    }
}

/// `search.defaults`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchDefaults {
    /// Default `recency_days`.
    pub recency_days: Option<u64>,
    /// Default `max_results`.
    pub max_results: Option<u64>,
    /// Default allowed domains; empty means no filter.
    pub domains: Vec<String>,
}

/// Everything the server needs, with no credentials in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Largest accepted message in bytes.
    pub max_message_bytes: usize,
    /// Write replies newline-delimited whatever the client used (`MCP_LINE_MODE=1`).
    pub force_line_output: bool,
    /// `openai.base_url`, without the trailing `/responses`.
    pub base_url: String,
    /// The name of the environment variable holding the API key (for messages).
    pub api_key_env: String,
    /// Whether calls can authenticate: the runtime found the API key, or the provider
    /// needs none (a local server). Calls fail at once otherwise.
    pub credentials_ready: bool,
    /// How the provider searches the web.
    pub web_search: WebSearch,
    /// Whose Responses API the provider speaks, where it differs from OpenAI's.
    pub api: Api,
    /// Refuse calls to models OpenAI has shut down ([`crate::openai::models`]), without
    /// asking upstream: on for OpenAI's own API, whose calendar the table follows.
    pub enforce_retirements: bool,
    /// Look up each profile's model at the provider (`GET /models/{id}`) after startup
    /// and daily, for its own shutdown date.
    pub model_lookups: bool,
    /// Per-attempt timeout (`request.timeout_ms`): the limit for one whole attempt.
    pub timeout: Duration,
    /// An attempt that receives no byte for this long fails (`request.idle_timeout_ms`).
    pub idle_timeout: Duration,
    /// Ask for answers as event streams (`responses.stream`).
    pub stream: bool,
    /// Retries after the first attempt (`request.max_retries`).
    pub max_retries: u32,
    /// The prices that estimate what each call cost.
    pub prices: crate::openai::pricing::Prices,
    /// The model profiles.
    pub profiles: Profiles,
    /// `policy.max_citations`, 1..=10.
    pub max_citations: usize,
    /// The `instructions` text sent with every call.
    pub instructions: String,
    /// `search.defaults`.
    pub search_defaults: SearchDefaults,
    /// Debug mode: error replies carry diagnostic `data` (spec 8.2).
    pub debug: bool,
    /// How long in-flight calls may run after stdin closes.
    pub shutdown_grace: Duration,
    /// Most upstream calls at once (`server.max_inflight`).
    pub max_inflight: usize,
    /// Most calls waiting for a slot (`server.max_queue`).
    pub max_queue: usize,
    /// Least time between two progress notifications for one call.
    pub progress_interval: Duration,
    /// Seed for retry jitter; the runtime supplies entropy.
    pub jitter_seed: u64,
    /// The task store's limits and the key that seals task ids.
    pub tasks: TaskSettings,
    /// The named clients of `server.http.clients_file`, each with its own limits.
    pub clients: crate::clients::Clients,
    /// `server.limits.*`: what all clients together may use.
    pub instance_limit: crate::clients::Limit,
    /// `server.http.oauth.*`: OAuth mode, when configured.
    pub oauth: Option<crate::oauth::OAuthConfig>,
    /// `server.http.identity_header`, lower-cased: the header a trusted proxy names the
    /// user in. Its identities are named `<header>:<value>`.
    pub identity_header: Option<String>,
    /// The limits of each identity of its own, OAuth's or a gateway's
    /// (`server.http.oauth.calls_per_minute`, `spend_per_day_usd`).
    pub identity_limit: crate::clients::Limit,
    /// The store many instances share their limits through (`server.store.url`); `None`:
    /// each instance counts on its own.
    pub store: Option<StoreSettings>,
    /// Whether the host writes the call log: without it the ledger counts every call but
    /// builds no [`crate::ledger::CallRecord`]s.
    pub call_records: bool,
    /// Traces (`OTEL_*`): which are recorded; `None`: no span is made
    /// ([`crate::trace_context`]).
    pub traces: Option<crate::trace_context::Sampler>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            force_line_output: false,
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            credentials_ready: false,
            web_search: WebSearch::OpenAi,
            api: Api::OpenAi,
            enforce_retirements: true,
            model_lookups: true,
            timeout: Duration::from_millis(120_000),
            idle_timeout: Duration::from_millis(60_000),
            stream: true,
            max_retries: 3,
            profiles: {
                let mut profiles = Profiles::default();
                profiles.set(
                    Tool::Answer,
                    Profile {
                        model: "gpt-6.1-terra".into(),
                        reasoning_effort: Some(Effort::Medium),
                        verbosity: Some(Verbosity::Medium),
                        ..Profile::default()
                    },
                );
                profiles
            },
            max_citations: 3,
            instructions: SYSTEM_POLICY.into(),
            search_defaults: SearchDefaults {
                recency_days: Some(60),
                max_results: Some(5),
                domains: Vec::new(),
            },
            debug: false,
            shutdown_grace: Duration::from_secs(30),
            max_inflight: 16,
            max_queue: 1024,
            progress_interval: Duration::from_secs(5),
            jitter_seed: 0x9E37_79B9_7F4A_7C15,
            tasks: TaskSettings::default(),
            prices: crate::openai::pricing::Prices::default(),
            clients: crate::clients::Clients::default(),
            instance_limit: crate::clients::Limit::default(),
            oauth: None,
            identity_header: None,
            identity_limit: crate::clients::Limit::default(),
            call_records: true,
            store: None,
            traces: None,
        }
    }
}

impl ServerConfig {
    /// The roster the server starts with: the named clients, and the limit of each
    /// identity it meets (OAuth mode's, else the gateway's).
    pub(crate) fn roster(&self) -> crate::clients::Clients {
        let mut clients = self.clients.clone();
        clients.set_identity_limit(match &self.oauth {
            Some(oauth) => oauth.settings.identity_limit,
            None => self.identity_limit,
        });
        clients
    }
}

/// The secret that seals task ids. Its `Debug` prints a mask.
#[derive(Clone, PartialEq, Eq)]
pub struct TaskKey(pub [u8; 32]);

impl fmt::Debug for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskKey(***)")
    }
}

/// The default of `tasks.answer_within_ms`, in seconds: long enough for `answer_quick`
/// and answers without a search (a few seconds at OpenAI), well inside the request
/// timeouts of the clients that speak the tasks extension (the MCP TypeScript SDK's 60 s,
/// the Inspector's 10 s or more); a longer call becomes a task then, which its client is
/// told to poll every 250 ms at first, so holding the request costs it at most 0.25 s.
pub const ANSWER_WITHIN_SECS: u64 = 5;

/// How limits behave with a shared store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreSettings {
    /// What a call gets while the store cannot be reached (money limits refuse always).
    pub on_unavailable: OnUnavailable,
}

/// What a call gets while the store cannot be reached, when no spend limit is on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnUnavailable {
    /// Refused, naming the store.
    #[default]
    Refuse,
    /// Admitted without counting it.
    Allow,
}

/// The store's limits and what it tells clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSettings {
    /// Tasks kept at once, working or finished.
    pub max_tasks: usize,
    /// Bytes of finished outcomes kept at once.
    pub max_bytes: usize,
    /// A task's life when the client asks for none.
    pub default_ttl: Duration,
    /// The longest life a client may ask for.
    pub max_ttl: Duration,
    /// How often clients are asked to poll a task older than a minute (younger ones,
    /// more often: [`crate::tasks::poll_interval`]).
    pub poll_interval: Duration,
    /// How long a modern client's task-augmented call may take and still be answered
    /// with its result instead of a task; zero: a task at once.
    pub answer_within: Duration,
    /// Seals the ids.
    pub key: TaskKey,
    /// Tasks are OpenAI background responses (stored by OpenAI), not kept here.
    pub background: bool,
    /// How soon OpenAI is asked to finish a background task's response.
    pub completion_window: CompletionWindow,
    /// What a windowed response's tokens cost, in percent of the standard rates; `None`:
    /// the published discount ([`CompletionWindow::published_price_percent`]).
    pub window_price_percent: Option<u64>,
    /// `tasks.service_tier`: the tier every call made for a task is sent at (`flex`, half
    /// the price for work that can wait), over its profile's.
    pub service_tier: Option<ServiceTier>,
    /// What a task's call does when flex capacity is unavailable.
    pub flex_unavailable: FlexUnavailable,
}

/// What a call sent at `flex` does when OpenAI answers 429 because flex capacity is
/// unavailable (OpenAI's flex processing guide: such a request is not billed, and may be
/// retried later or sent at the standard tier; developers.openai.com/api/docs/guides/
/// flex-processing, read 2026-11-28).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlexUnavailable {
    /// Send it again at once at the default tier (priced as such).
    #[default]
    Default,
    /// Retry it at flex with the usual backoff, up to `request.max_retries`.
    Retry,
}

impl TaskSettings {
    /// How often a background task is read (and its clients asked to poll): the poll
    /// interval, or a 240th of the completion window when that is longer (30 s for 2 h,
    /// 2 min for 8 h): a response given hours is not read every two seconds.
    pub fn background_poll(&self) -> Duration {
        let window = self.completion_window.length().unwrap_or(Duration::ZERO);
        self.poll_interval.max(window / 240)
    }

    /// The life of a background task a client asked `asked` for: at least its completion
    /// window and an hour to fetch the result (the window wins over `max_ttl`).
    pub fn background_ttl(&self, asked: Duration) -> Duration {
        match self.completion_window.length() {
            Some(window) => asked.max(window + Duration::from_secs(3600)),
            None => asked,
        }
    }

    /// What a background response's tokens cost, in percent of the standard rates.
    pub fn background_price_percent(&self) -> u64 {
        self.window_price_percent
            .unwrap_or_else(|| self.completion_window.published_price_percent())
    }
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            max_tasks: 10_000,
            max_bytes: 64 << 20,
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(2),
            answer_within: Duration::from_secs(ANSWER_WITHIN_SECS),
            key: TaskKey([0; 32]),
            background: false,
            completion_window: CompletionWindow::Soonest,
            window_price_percent: None,
            service_tier: None,
            flex_unavailable: FlexUnavailable::Default,
        }
    }
}
