//! The three answer tools: their definitions and the validation of their arguments.

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
    fn takes_search_hints(self) -> bool {
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

    /// Validates `arguments` against this tool's schema.
    ///
    /// # Errors
    /// The argument name and what was wrong with it.
    pub fn parse_args(self, arguments: &Map<String, Value>) -> Result<AnswerArgs, String> {
        let accepted = self.argument_names();
        if let Some(key) = arguments.keys().find(|k| !accepted.contains(&k.as_str())) {
            return Err(format!(
                "unknown argument {key:?}; {} accepts {}",
                self.name(),
                accepted.join(", ")
            ));
        }
        let query = match arguments.get("query") {
            None => return Err("query is required".into()),
            Some(Value::String(q)) if q.trim().is_empty() => {
                return Err("query must not be empty".into())
            }
            Some(Value::String(q)) if q.chars().count() > MAX_QUERY_CHARS => {
                return Err(format!("query is longer than {MAX_QUERY_CHARS} characters"))
            }
            Some(Value::String(q)) => q.clone(),
            Some(other) => {
                return Err(format!(
                    "query must be a string, got {}",
                    crate::jsonrpc::kind_of(other)
                ))
            }
        };
        Ok(AnswerArgs {
            query,
            recency_days: bounded_int(arguments, "recency_days", MAX_RECENCY_DAYS)?,
            max_results: bounded_int(arguments, "max_results", MAX_RESULTS)?,
            domains: domains(arguments)?,
            style: choice(arguments, "style", &Style::NAMES, Style::from_index)?,
            verbosity: choice(
                arguments,
                "verbosity",
                &Verbosity::NAMES,
                Verbosity::from_index,
            )?,
            reasoning_effort: choice(
                arguments,
                "reasoning_effort",
                &Effort::NAMES,
                Effort::from_index,
            )?,
        })
    }

    /// The argument names this tool accepts, as its input schema lists them.
    fn argument_names(self) -> &'static [&'static str] {
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

/// The JSON schema of a tool's structured result.
pub fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "used_search": {"type": "boolean"},
            "citations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string"},
                        "title": {"type": "string"},
                        "published_at": {"type": "string", "description": "YYYY-MM-DD"},
                    },
                    "required": ["url"],
                },
            },
            "model": {"type": "string"},
        },
        "required": ["answer", "used_search", "citations", "model"],
    })
}

/// Validated arguments of an answer tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerArgs {
    /// The question.
    pub query: String,
    /// Prefer sources from the last N days.
    pub recency_days: Option<u64>,
    /// How many results to consider.
    pub max_results: Option<u64>,
    /// Allowed domains (bare host names), when given.
    pub domains: Option<Vec<String>>,
    /// Answer style.
    pub style: Option<Style>,
    /// Per-call verbosity override.
    pub verbosity: Option<Verbosity>,
    /// Per-call reasoning effort override.
    pub reasoning_effort: Option<Effort>,
}

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];
            const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the wire spelling.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|v| v.as_str() == s)
            }

            fn from_index(i: usize) -> Self {
                Self::ALL[i]
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// How the answer is laid out.
    Style { Summary = "summary", Bullets = "bullets", CitationsOnly = "citations-only" }
);
string_enum!(
    /// `text.verbosity`.
    Verbosity { Low = "low", Medium = "medium", High = "high" }
);
string_enum!(
    /// `reasoning.effort`.
    Effort {
        /// No reasoning tokens.
        None = "none", Minimal = "minimal", Low = "low", Medium = "medium", High = "high",
        /// Above high.
        Xhigh = "xhigh", Max = "max",
    }
);

fn bounded_int(args: &Map<String, Value>, name: &str, max: u64) -> Result<Option<u64>, String> {
    let Some(value) = args.get(name) else {
        return Ok(None);
    };
    let n = match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= max as f64)
                .map(|f| f as u64)
        }),
        _ => {
            return Err(format!(
                "{name} must be an integer, got {}",
                crate::jsonrpc::kind_of(value)
            ))
        }
    };
    match n {
        Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{name} must be a whole number from 1 to {max}, got {value}"
        )),
    }
}

fn choice<T>(
    args: &Map<String, Value>,
    name: &str,
    names: &[&str],
    from_index: fn(usize) -> T,
) -> Result<Option<T>, String> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => names
            .iter()
            .position(|n| n == s)
            .map(|i| Some(from_index(i)))
            .ok_or_else(|| format!("{name} must be one of {}, got {s:?}", names.join(", "))),
        Some(other) => Err(format!(
            "{name} must be one of {}, got {}",
            names.join(", "),
            crate::jsonrpc::kind_of(other)
        )),
    }
}

fn domains(args: &Map<String, Value>) -> Result<Option<Vec<String>>, String> {
    let Some(value) = args.get("domains") else {
        return Ok(None);
    };
    let Value::Array(items) = value else {
        return Err(format!(
            "domains must be an array of host names, got {}",
            crate::jsonrpc::kind_of(value)
        ));
    };
    if items.len() > MAX_DOMAINS {
        return Err(format!(
            "domains has {} entries; at most {MAX_DOMAINS} are allowed",
            items.len()
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::String(host) = item else {
            return Err(format!(
                "domains[{i}] must be a string, got {}",
                crate::jsonrpc::kind_of(item)
            ));
        };
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        if let Err(why) = check_host(&host) {
            return Err(format!(
                "domains[{i}] {host:?} is not a bare host name: {why} (write it like example.com)"
            ));
        }
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(Some(out))
}

/// Checks that `host` is a bare DNS name: no scheme, path, port or spaces.
pub fn check_host(host: &str) -> Result<(), &'static str> {
    if host.is_empty() {
        return Err("it is empty");
    }
    if host.contains("://") {
        return Err("drop the scheme");
    }
    if host.contains('/') {
        return Err("drop the path");
    }
    if host.contains(':') {
        return Err("drop the port");
    }
    if host.len() > 253 {
        return Err("it is longer than 253 characters");
    }
    for label in host.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err("a label is empty or longer than 63 characters");
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err("only letters, digits, '-' and '.' are allowed");
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err("a label starts or ends with '-'");
        }
    }
    Ok(())
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
}
