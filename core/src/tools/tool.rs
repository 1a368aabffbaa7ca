//! One answer tool: its name, title and description, the bounds of its arguments and the
//! JSON schema of them, apart from the parsing in `args`, which reads by these.

use crate::vocab::{Effort, Verbosity};
use serde_json::{json, Map, Value};
use std::fmt;

/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 16_000;
/// Largest accepted `recency_days`.
pub const MAX_RECENCY_DAYS: u64 = 3650;
/// Largest accepted `max_results`.
pub const MAX_RESULTS: u64 = 50;
/// Most entries accepted in `domains`.
pub const MAX_DOMAINS: usize = 100;

/// One of the answer tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tool {
    /// Balanced answers; the baseline profile.
    Answer,
    /// Thorough research.
    AnswerDetailed,
    /// Fast, concise answers.
    AnswerQuick,
}

/// The tools in `tools/list` order.
pub const ALL_TOOLS: [Tool; 3] = [Tool::Answer, Tool::AnswerDetailed, Tool::AnswerQuick];

impl Tool {
    /// Looks a tool up by name.
    pub fn from_name(name: &str) -> Option<Tool> {
        ALL_TOOLS.into_iter().find(|t| t.name() == name)
    }

    /// The programmatic name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Answer => "answer",
            Tool::AnswerDetailed => "answer_detailed",
            Tool::AnswerQuick => "answer_quick",
        }
    }

    /// The configuration key of the model of this tool's own profile.
    pub fn model_setting(self) -> &'static str {
        match self {
            Tool::Answer => "model_profiles.answer.model",
            Tool::AnswerDetailed => "model_profiles.answer_detailed.model",
            Tool::AnswerQuick => "model_profiles.answer_quick.model",
        }
    }

    /// The display title.
    pub fn title(self) -> &'static str {
        match self {
            Tool::Answer => "Answer with web search",
            Tool::AnswerDetailed => "Detailed answer with web research",
            Tool::AnswerQuick => "Quick answer",
        }
    }

    /// The description (spec 3.1).
    pub fn description(self) -> &'static str {
        match self {
            Tool::Answer => "Search the web when needed and provide balanced, well-sourced answers. This is the standard general-purpose tool.",
            Tool::AnswerDetailed => "Perform comprehensive analysis with thorough research and detailed explanations. Best for complex questions requiring deep investigation.",
            Tool::AnswerQuick => "Provide fast, concise answers optimized for speed. Best for simple lookups or urgent questions.",
        }
    }

    /// Whether the tool takes the search hints (recency, results, domains, style).
    pub(crate) fn takes_search_hints(self) -> bool {
        self != Tool::AnswerQuick
    }

    /// The JSON schema of the arguments.
    pub fn input_schema(self) -> Value {
        let mut props = Map::new();
        props.insert(
            "query".into(),
            json!({"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                   "description": "The question, in any language; the answer uses the same language (Japanese or English)."}),
        );
        if self.takes_search_hints() {
            props.insert(
                "recency_days".into(),
                json!({"type": "integer", "minimum": 1, "maximum": MAX_RECENCY_DAYS,
                "description": "Prefer sources published within this many days."}),
            );
            props.insert(
                "max_results".into(),
                json!({"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                "description": "How many search results to consider."}),
            );
            props.insert("domains".into(), json!({"type": "array", "maxItems": MAX_DOMAINS,
                "items": {"type": "string", "description": "A bare host name such as example.com (subdomains included)."},
                "description": "Only search these sites."}));
            props.insert("style".into(), json!({"type": "string", "enum": ["summary", "bullets", "citations-only"],
                "description": "summary: prose; bullets: a bulleted list; citations-only: just the sources."}));
        }
        props.insert(
            "verbosity".into(),
            json!({"type": "string", "enum": Verbosity::NAMES,
            "description": "Override the profile's answer length (gpt-5 models only)."}),
        );
        props.insert(
            "reasoning_effort".into(),
            json!({"type": "string", "enum": Effort::NAMES,
            "description": "Override the profile's reasoning effort (reasoning models only)."}),
        );
        json!({
            "type": "object",
            "properties": props,
            "required": ["query"],
            "additionalProperties": false,
        })
    }

    /// The argument names this tool accepts, as its input schema lists them.
    pub(crate) fn argument_names(self) -> &'static [&'static str] {
        const WITH_HINTS: &[&str] = &[
            "query",
            "recency_days",
            "max_results",
            "domains",
            "style",
            "verbosity",
            "reasoning_effort",
        ];
        const QUERY_ONLY: &[&str] = &["query", "verbosity", "reasoning_effort"];
        if self.takes_search_hints() {
            WITH_HINTS
        } else {
            QUERY_ONLY
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_arguments_are_the_schema_properties() {
        for tool in ALL_TOOLS {
            let schema = tool.input_schema();
            let props: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(props, tool.argument_names(), "{tool}");
        }
    }

    #[test]
    fn names_round_trip() {
        for tool in ALL_TOOLS {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
        }
        assert_eq!(Tool::from_name("Answer"), None);
    }
}
