//! The configuration values that choose behaviour, typed: each is an enum whose spellings
//! are written once, and the key table, the typed view, the presets and the code that
//! acts on them all read it from here (as `core::vocab` does for efforts and styles).

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! choice {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name { $($(#[$vdoc])* #[serde(rename = $text)] $variant),+ }

        impl $name {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The spelling in configuration.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Reads a spelling.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

choice!(
    /// `openai.provider`: whose Responses API the server calls.
    Provider {
        /// OpenAI's own API.
        OpenAi = "openai",
        /// Azure OpenAI.
        Azure = "azure",
        /// OpenRouter.
        OpenRouter = "openrouter",
        /// A local Ollama.
        Ollama = "ollama",
        /// A local LM Studio.
        LmStudio = "lmstudio",
        /// Perplexity's Agent API.
        Perplexity = "perplexity",
        /// Parallel's Responses API.
        Parallel = "parallel",
    }
);

impl Provider {
    /// Whose Responses API the provider speaks.
    pub fn api(self) -> responses_mcp_core::settings::Api {
        use responses_mcp_core::settings::Api;
        match self {
            Provider::Perplexity => Api::Perplexity,
            Provider::Parallel => Api::Parallel,
            _ => Api::OpenAi,
        }
    }
}

choice!(
    /// `openai.auth`: how the API key is sent.
    Auth {
        /// `Authorization: Bearer <key>` (OpenAI, OpenRouter, local servers).
        Bearer = "bearer",
        /// `api-key: <key>` (Azure OpenAI).
        ApiKey = "api-key",
    }
);

choice!(
    /// `openai.web_search`: how the provider is asked to search.
    SearchMode {
        /// OpenAI's hosted `web_search` tool.
        OpenAi = "openai",
        /// OpenRouter's `openrouter:web_search` server tool.
        OpenRouter = "openrouter",
        /// Perplexity's `web_search` tool.
        Perplexity = "perplexity",
        /// The service searches on every request, without a tool (Parallel).
        Always = "always",
        /// No hosted search.
        None = "none",
    }
);

choice!(
    /// `policy.system.merge`: how a policy file combines with the built-in policy.
    PolicyMerge {
        /// The file replaces the built-in policy.
        Replace = "replace",
        /// The file comes first.
        Prepend = "prepend",
        /// The file comes last.
        Append = "append",
    }
);

choice!(
    /// `server.log_format`: how log records are written to stderr.
    LogFormat {
        /// Human-readable lines.
        Text = "text",
        /// One JSON object per line, and a line per finished `tools/call`.
        Json = "json",
    }
);

choice!(
    /// `tasks.flex_unavailable`: what a task's flex call does when OpenAI has no flex
    /// capacity for it.
    FlexUnavailable {
        /// Send it again at once at the default tier.
        Default = "default",
        /// Back off and retry at flex.
        Retry = "retry",
    }
);

impl From<FlexUnavailable> for responses_mcp_core::settings::FlexUnavailable {
    fn from(choice: FlexUnavailable) -> Self {
        match choice {
            FlexUnavailable::Default => responses_mcp_core::settings::FlexUnavailable::Default,
            FlexUnavailable::Retry => responses_mcp_core::settings::FlexUnavailable::Retry,
        }
    }
}

impl From<SearchMode> for responses_mcp_core::WebSearch {
    fn from(mode: SearchMode) -> Self {
        match mode {
            SearchMode::OpenAi => responses_mcp_core::WebSearch::OpenAi,
            SearchMode::OpenRouter => responses_mcp_core::WebSearch::OpenRouter,
            SearchMode::Perplexity => responses_mcp_core::WebSearch::Perplexity,
            SearchMode::Always => responses_mcp_core::WebSearch::Always,
            SearchMode::None => responses_mcp_core::WebSearch::Unavailable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_through_parse_and_serde() {
        for name in Provider::NAMES {
            let p = Provider::parse(name).unwrap();
            assert_eq!(p.as_str(), *name);
            assert_eq!(serde_json::to_value(p).unwrap(), *name);
            assert_eq!(
                serde_json::from_value::<Provider>((*name).into()).unwrap(),
                p
            );
        }
        assert_eq!(Auth::parse("api-key"), Some(Auth::ApiKey));
        assert_eq!(SearchMode::parse("none"), Some(SearchMode::None));
        assert_eq!(PolicyMerge::parse("append"), Some(PolicyMerge::Append));
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(Provider::parse("Azure"), None);
    }
}
