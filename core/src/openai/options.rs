//! What a request asks of OpenAI beside the question: the web search's options, which
//! hosted search the provider has, and a background response's completion window.
//! Configuration sets them; the request body sends them.

use crate::vocab::SearchContextSize;
use std::time::Duration;

/// The settings of OpenAI's web_search tool a profile may tune; unset ones are not sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// `search_context_size`.
    pub context_size: Option<SearchContextSize>,
    /// `user_location` (approximate; with no fields it states none); `None` sends none
    /// (a provider refused it).
    pub user_location: Option<UserLocation>,
    /// `external_web_access`: `false` searches the cache only.
    pub external_web_access: Option<bool>,
}

impl Default for SearchOptions {
    /// Nothing tuned, and a location with no fields: `{"type": "approximate"}`. OpenAI's
    /// API reference says a web search without `user_location` assumes the United States
    /// (`WebSearchTool.user_location`, checked 2026-11-27), which would shape every
    /// answer for users elsewhere; an approximate location with no fields states none.
    fn default() -> Self {
        SearchOptions {
            context_size: None,
            user_location: Some(UserLocation::default()),
            external_web_access: None,
        }
    }
}

/// The approximate location the web search localises results for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserLocation {
    /// ISO 3166-1 alpha-2 code, such as `JP`.
    pub country: Option<String>,
    /// Free text, such as `Tokyo`.
    pub region: Option<String>,
    /// Free text, such as `Minato`.
    pub city: Option<String>,
    /// IANA time zone, such as `Asia/Tokyo`.
    pub timezone: Option<String>,
}

/// How the provider is asked to search the web, if it can.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WebSearch {
    /// OpenAI's hosted `web_search` tool (OpenAI, Azure OpenAI).
    #[default]
    OpenAi,
    /// OpenRouter's `openrouter:web_search` server tool.
    OpenRouter,
    /// Perplexity's `web_search` tool: the same name, its own options
    /// (`filters.search_domain_filter`, `user_location` without a time zone).
    Perplexity,
    /// The service searches on its own, without a tool (Parallel): none is sent.
    Always,
    /// No hosted search (Ollama, LM Studio): no tool is sent and no answer claims one.
    Unavailable,
}

/// Whose Responses API the server calls, where their requests differ. OpenAI's is the
/// reference; Azure, OpenRouter and the local servers take it whole.
///
/// Perplexity's Agent API (docs.perplexity.ai/api-reference/responses-post and the
/// perplexity-py SDK's `ResponseCreateParams`, read 2026-11-28) takes `model`, `input`,
/// `instructions`, `max_output_tokens`, `reasoning.effort` (low, medium, high), `tools`
/// and `stream`, and background runs (docs.perplexity.ai/docs/agent-api/background-mode);
/// it has no `text.verbosity`, `service_tier`, `include` or `store`. Parallel's Responses
/// API (docs.parallel.ai/responses-api/openai-compatibility, read 2026-11-28) honours
/// `model` (`parallel` only), `input`, `instructions` and `reasoning.effort` (low,
/// medium, high: the research tier); it ignores `tools`, `include`, `store` and
/// `max_output_tokens`, searches on every request, and runs no background mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Api {
    /// OpenAI's Responses API.
    #[default]
    OpenAi,
    /// Perplexity's Agent API (`POST /v1/responses`).
    Perplexity,
    /// Parallel's Responses API (`POST /v1/responses`).
    Parallel,
}

impl Api {
    /// The service's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "OpenAI",
            Api::Perplexity => "Perplexity",
            Api::Parallel => "Parallel",
        }
    }

    /// Whether requests may carry `text.verbosity` and `service_tier`.
    pub fn takes_openai_options(self) -> bool {
        self == Api::OpenAi
    }

    /// Whether requests may carry `safety_identifier` and `prompt_cache_key`: OpenAI's
    /// Responses API takes both (its OpenAPI document, `CreateResponse`); Perplexity's
    /// and Parallel's are not known to, so they get neither.
    pub fn takes_user_ids(self) -> bool {
        self == Api::OpenAi
    }

    /// The `reasoning.effort` values the service names for every model, when it names
    /// them (OpenAI's depend on the model).
    pub fn efforts(self) -> Option<&'static [&'static str]> {
        match self {
            Api::OpenAi => None,
            Api::Perplexity | Api::Parallel => Some(&["low", "medium", "high"]),
        }
    }

    /// Whether the service runs responses in the background (`"background": true`).
    pub fn has_background(self) -> bool {
        self != Api::Parallel
    }

    /// Whether the server reads the service's answers as an event stream: only OpenAI's.
    /// Perplexity's events are its own. Parallel's follow OpenAI's sequence, but the answer
    /// comes as one delta once its research is done (docs.parallel.ai/responses-api/
    /// features/streaming-events, read 2026-11-28): a stream would bring nothing a whole
    /// read does not, and its silence of up to a minute would meet the idle timeout.
    pub fn streams(self) -> bool {
        self == Api::OpenAi
    }
}

impl WebSearch {
    /// Whether the provider can search at all.
    pub fn available(self) -> bool {
        self != WebSearch::Unavailable
    }
}

/// `background_options.completion_window` of OpenAI's background mode: how soon a
/// response must be done, traded for a discount on its model tokens.
///
/// OpenAI's background guide (developers.openai.com/api/docs/guides/background, "Use
/// discounted completion windows", public beta since 2026-11-17, checked 2026-11-27):
/// `soonest` (the default, no discount), `2h` (model tokens 30 % below Standard) and
/// `8h` (40 % below); only background requests at the standard tier, not streamed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompletionWindow {
    /// As soon as possible, at the standard rates.
    #[default]
    Soonest,
    /// Within two hours of acceptance.
    TwoHours,
    /// Within eight hours of acceptance.
    EightHours,
}

impl CompletionWindow {
    /// The names configuration and the API use.
    pub const NAMES: [&'static str; 3] = ["soonest", "2h", "8h"];

    /// The window named `name`.
    pub fn parse(name: &str) -> Option<CompletionWindow> {
        match name {
            "soonest" => Some(CompletionWindow::Soonest),
            "2h" => Some(CompletionWindow::TwoHours),
            "8h" => Some(CompletionWindow::EightHours),
            _ => None,
        }
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            CompletionWindow::Soonest => "soonest",
            CompletionWindow::TwoHours => "2h",
            CompletionWindow::EightHours => "8h",
        }
    }

    /// How long OpenAI may take; `None` for `soonest`.
    pub fn length(self) -> Option<Duration> {
        match self {
            CompletionWindow::Soonest => None,
            CompletionWindow::TwoHours => Some(Duration::from_secs(2 * 3600)),
            CompletionWindow::EightHours => Some(Duration::from_secs(8 * 3600)),
        }
    }

    /// The model-token price OpenAI published for the window, in percent of Standard.
    pub fn published_price_percent(self) -> u64 {
        match self {
            CompletionWindow::Soonest => 100,
            CompletionWindow::TwoHours => 70,
            CompletionWindow::EightHours => 60,
        }
    }
}
