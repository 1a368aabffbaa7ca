//! One answer tool: its name, title and description, the bounds of its arguments and the
//! JSON schema of them, apart from the parsing in `args`, which reads by these.

use serde_json::Value;
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

    /// Its place in [`ALL_TOOLS`] (the variants are declared in that order).
    pub const fn index(self) -> usize {
        self as usize
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

    /// The JSON schema of the arguments: those of `schemas/arguments.json` this tool
    /// takes, in its order.
    pub fn input_schema(self) -> Value {
        let mut schema = super::schemas::arguments();
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            props.retain(|name, _| self.argument_names().contains(&name.as_str()));
        }
        schema
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
    fn the_schema_states_the_bounds_and_words_the_parser_enforces() {
        use crate::vocab::{Effort, Verbosity};
        let schema = Tool::Answer.input_schema();
        let prop = |name: &str, key: &str| schema["properties"][name][key].clone();
        assert_eq!(prop("query", "maxLength"), MAX_QUERY_CHARS);
        assert_eq!(prop("recency_days", "maximum"), MAX_RECENCY_DAYS);
        assert_eq!(prop("max_results", "maximum"), MAX_RESULTS);
        assert_eq!(prop("domains", "maxItems"), MAX_DOMAINS);
        assert_eq!(
            prop("verbosity", "enum"),
            serde_json::json!(Verbosity::NAMES)
        );
        assert_eq!(
            prop("reasoning_effort", "enum"),
            serde_json::json!(Effort::NAMES)
        );
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], serde_json::json!(["query"]));
        let result = crate::tools::output_schema();
        assert_eq!(result["type"], "object", "the result schema is a document");
    }

    #[test]
    fn names_round_trip() {
        for (i, tool) in ALL_TOOLS.into_iter().enumerate() {
            assert_eq!(tool.index(), i, "{tool} is at its index");
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
        }
        assert_eq!(Tool::from_name("Answer"), None);
    }
}
