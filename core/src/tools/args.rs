//! Checking a tool's arguments: parsed once, at the boundary, into [`AnswerArgs`], or a
//! typed [`ArgError`] that says which argument is wrong and how to fix it.

use super::tool::{Tool, MAX_DOMAINS, MAX_QUERY_CHARS, MAX_RECENCY_DAYS, MAX_RESULTS};
use crate::jsonrpc::kind_of;
use crate::vocab::{Effort, Style, Verbosity};
use serde_json::{Map, Value};
use std::fmt;

/// Validated arguments of an answer tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

/// Why a tool's arguments were refused. The `Display` text names the argument and what
/// would be accepted, so a model can fix its call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgError {
    /// `arguments` was not an object.
    NotAnObject {
        /// The JSON type it was.
        got: &'static str,
    },
    /// An argument the tool does not take.
    Unknown {
        /// The tool called.
        tool: Tool,
        /// The argument's name.
        name: String,
    },
    /// `query` is missing.
    MissingQuery,
    /// `query` is empty or only white space.
    EmptyQuery,
    /// `query` is longer than [`MAX_QUERY_CHARS`].
    QueryTooLong,
    /// An argument of the wrong JSON type.
    WrongType {
        /// The argument.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// The JSON type it was.
        got: &'static str,
    },
    /// A number outside `1..=max` or not whole.
    OutOfRange {
        /// The argument.
        name: &'static str,
        /// The largest allowed value.
        max: u64,
        /// The value as sent.
        value: String,
    },
    /// A string that is not one of the allowed names.
    NotOneOf {
        /// The argument.
        name: &'static str,
        /// The allowed names.
        allowed: &'static [&'static str],
        /// The value as sent.
        value: String,
    },
    /// An enumerated argument that is not a string.
    ChoiceNotString {
        /// The argument.
        name: &'static str,
        /// The allowed names.
        allowed: &'static [&'static str],
        /// The JSON type it was.
        got: &'static str,
    },
    /// `domains` is a string that starts like a JSON array but is not one.
    DomainsNotAList,
    /// More than [`MAX_DOMAINS`] domains.
    TooManyDomains {
        /// How many were sent.
        count: usize,
    },
    /// A `domains` entry that is not a string.
    DomainNotString {
        /// Its position.
        index: usize,
        /// The JSON type it was.
        got: &'static str,
    },
    /// A `domains` entry that is not a bare host name.
    BadDomain {
        /// Its position.
        index: usize,
        /// The entry, normalised.
        host: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::NotAnObject { got } => write!(f, "arguments must be an object, got {got}"),
            ArgError::Unknown { tool, name } => write!(
                f,
                "unknown argument {name:?}; {tool} accepts {}",
                tool.argument_names().join(", ")
            ),
            ArgError::MissingQuery => f.write_str("query is required"),
            ArgError::EmptyQuery => f.write_str("query must not be empty"),
            ArgError::QueryTooLong => {
                write!(f, "query is longer than {MAX_QUERY_CHARS} characters")
            }
            ArgError::WrongType {
                name,
                expected,
                got,
            } => write!(f, "{name} must be {expected}, got {got}"),
            ArgError::OutOfRange { name, max, value } => write!(
                f,
                "{name} must be a whole number from 1 to {max}, got {value}"
            ),
            ArgError::NotOneOf {
                name,
                allowed,
                value,
            } => write!(
                f,
                "{name} must be one of {}, got {value:?}",
                allowed.join(", ")
            ),
            ArgError::ChoiceNotString { name, allowed, got } => write!(
                f,
                "{name} must be one of {}, got {got}",
                allowed.join(", ")
            ),
            ArgError::DomainsNotAList => f.write_str(
                "domains must be an array of host names such as [\"example.com\"]; the string sent starts like a JSON array but is not one",
            ),
            ArgError::TooManyDomains { count } => write!(
                f,
                "domains has {count} entries; at most {MAX_DOMAINS} are allowed"
            ),
            ArgError::DomainNotString { index, got } => {
                write!(f, "domains[{index}] must be a string, got {got}")
            }
            ArgError::BadDomain { index, host, why } => write!(
                f,
                "domains[{index}] {host:?} is not a bare host name: {why} (write it like example.com)"
            ),
        }
    }
}

impl std::error::Error for ArgError {}

impl Tool {
    /// Validates `arguments` against this tool's schema.
    ///
    /// # Errors
    /// The first argument that is wrong, and how.
    pub fn parse_args(self, arguments: &Map<String, Value>) -> Result<AnswerArgs, ArgError> {
        let accepted = self.argument_names();
        if let Some(key) = arguments.keys().find(|k| !accepted.contains(&k.as_str())) {
            return Err(ArgError::Unknown {
                tool: self,
                name: key.clone(),
            });
        }
        let query = match arguments.get("query") {
            None => return Err(ArgError::MissingQuery),
            Some(Value::String(q)) if q.trim().is_empty() => return Err(ArgError::EmptyQuery),
            Some(Value::String(q)) if q.chars().count() > MAX_QUERY_CHARS => {
                return Err(ArgError::QueryTooLong)
            }
            Some(Value::String(q)) => q.clone(),
            Some(other) => {
                return Err(ArgError::WrongType {
                    name: "query",
                    expected: "a string",
                    got: kind_of(other),
                })
            }
        };
        Ok(AnswerArgs {
            query,
            recency_days: bounded_int(arguments, "recency_days", MAX_RECENCY_DAYS)?,
            max_results: bounded_int(arguments, "max_results", MAX_RESULTS)?,
            domains: domains(arguments)?,
            style: choice(arguments, "style", &Style::NAMES, Style::parse)?,
            verbosity: choice(arguments, "verbosity", &Verbosity::NAMES, Verbosity::parse)?,
            reasoning_effort: choice(arguments, "reasoning_effort", &Effort::NAMES, Effort::parse)?,
        })
    }
}

/// A whole number from 1 to `max`. Models often send numbers as strings (`"5"`), so a
/// string holding a whole number is read as that number.
fn bounded_int(
    args: &Map<String, Value>,
    name: &'static str,
    max: u64,
) -> Result<Option<u64>, ArgError> {
    let Some(value) = args.get(name) else {
        return Ok(None);
    };
    let whole = |f: f64| (f.fract() == 0.0 && f >= 1.0 && f <= max as f64).then_some(f as u64);
    let n = match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().and_then(whole)),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<u64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(whole))
        }
        _ => {
            return Err(ArgError::WrongType {
                name,
                expected: "an integer",
                got: kind_of(value),
            })
        }
    };
    match n {
        Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(ArgError::OutOfRange {
            name,
            max,
            value: value.to_string(),
        }),
    }
}

fn choice<T>(
    args: &Map<String, Value>,
    name: &'static str,
    allowed: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, ArgError> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => parse(s).map(Some).ok_or_else(|| ArgError::NotOneOf {
            name,
            allowed,
            value: s.clone(),
        }),
        Some(other) => Err(ArgError::ChoiceNotString {
            name,
            allowed,
            got: kind_of(other),
        }),
    }
}

/// Host names to search. Besides an array, models send a single host as a string
/// (`"example.com"`), a list as one string (`"a.com, b.org"`), or an array encoded as a
/// JSON string (`"[\"a.com\"]"`): each is read as the list it means.
fn domains(args: &Map<String, Value>) -> Result<Option<Vec<String>>, ArgError> {
    let Some(value) = args.get("domains") else {
        return Ok(None);
    };
    let decoded;
    let items: &[Value] = match value {
        Value::Array(items) => items,
        Value::String(s) if s.trim_start().starts_with('[') => {
            decoded = match serde_json::from_str::<Value>(s) {
                Ok(Value::Array(items)) => items,
                _ => return Err(ArgError::DomainsNotAList),
            };
            &decoded
        }
        Value::String(s) => {
            decoded = s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|h| !h.is_empty())
                .map(|h| Value::String(h.to_owned()))
                .collect();
            &decoded
        }
        other => {
            return Err(ArgError::WrongType {
                name: "domains",
                expected: "an array of host names",
                got: kind_of(other),
            })
        }
    };
    if items.len() > MAX_DOMAINS {
        return Err(ArgError::TooManyDomains { count: items.len() });
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::String(host) = item else {
            return Err(ArgError::DomainNotString {
                index,
                got: kind_of(item),
            });
        };
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        if let Err(why) = check_host(&host) {
            return Err(ArgError::BadDomain { index, host, why });
        }
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(Some(out))
}

/// Checks that `host` is a bare DNS name: no scheme, path, port or spaces.
///
/// # Errors
/// What is wrong with it, as a short phrase.
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
    use serde_json::json;

    fn parse(tool: Tool, args: Value) -> Result<AnswerArgs, ArgError> {
        tool.parse_args(args.as_object().unwrap())
    }

    #[test]
    fn errors_are_typed_and_name_the_argument() {
        let t = Tool::Answer;
        assert_eq!(parse(t, json!({})), Err(ArgError::MissingQuery));
        assert_eq!(parse(t, json!({"query": " "})), Err(ArgError::EmptyQuery));
        assert!(matches!(
            parse(Tool::AnswerQuick, json!({"query": "q", "domains": []})),
            Err(ArgError::Unknown { .. })
        ));
        let e = parse(t, json!({"query": "q", "max_results": 0})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "max_results must be a whole number from 1 to 50, got 0"
        );
        let e = parse(t, json!({"query": "q", "style": 3})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "style must be one of summary, bullets, citations-only, got an integer"
        );
        let e = parse(t, json!({"query": "q", "domains": ["https://a.com"]})).unwrap_err();
        assert!(matches!(e, ArgError::BadDomain { index: 0, .. }), "{e}");
    }

    #[test]
    fn arguments_as_models_send_them_are_read_as_meant() {
        let a = parse(
            Tool::Answer,
            json!({"query": "q", "domains": "Example.com", "max_results": "5",
                   "recency_days": " 30 "}),
        )
        .unwrap();
        assert_eq!(a.domains, Some(vec!["example.com".to_owned()]));
        assert_eq!((a.max_results, a.recency_days), (Some(5), Some(30)));
        for domains in [
            json!("[\"a.com\",\"b.org\"]"),
            json!("a.com, b.org"),
            json!("a.com b.org"),
        ] {
            let a = parse(Tool::Answer, json!({"query": "q", "domains": domains})).unwrap();
            assert_eq!(
                a.domains,
                Some(vec!["a.com".to_owned(), "b.org".to_owned()])
            );
        }
    }

    #[test]
    fn what_cannot_be_meant_is_refused_with_how_to_fix_it() {
        let e = parse(Tool::Answer, json!({"query": "q", "max_results": "five"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "max_results must be a whole number from 1 to 50, got \"five\""
        );
        let e = parse(Tool::Answer, json!({"query": "q", "domains": [5]})).unwrap_err();
        assert_eq!(e.to_string(), "domains[0] must be a string, got an integer");
        let e = parse(Tool::Answer, json!({"query": "q", "domains": "[a.com"})).unwrap_err();
        assert_eq!(e, ArgError::DomainsNotAList);
        let e = parse(Tool::Answer, json!({"query": "q", "domains": "[5]"})).unwrap_err();
        assert!(
            matches!(e, ArgError::DomainNotString { index: 0, .. }),
            "{e}"
        );
        let e = parse(Tool::Answer, json!({"query": "q", "recency_days": "0"})).unwrap_err();
        assert!(matches!(e, ArgError::OutOfRange { .. }), "{e}");
    }

    #[test]
    fn good_arguments_are_normalised() {
        let a = parse(
            Tool::Answer,
            json!({"query": "q", "domains": ["A.com.", "a.com"], "max_results": 5.0,
                   "reasoning_effort": "high"}),
        )
        .unwrap();
        assert_eq!(a.domains, Some(vec!["a.com".to_owned()]));
        assert_eq!(a.max_results, Some(5));
        assert_eq!(a.reasoning_effort, Some(Effort::High));
    }
}
