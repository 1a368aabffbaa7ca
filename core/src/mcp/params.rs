//! `tools/call` params, parsed once at the boundary into a typed [`CallParams`].

use crate::jsonrpc::{kind_of, RequestId};
use crate::tools::{AnswerArgs, ArgError, Tool};
use crate::trace_context::TraceParent;
use serde_json::{Map, Value};
use std::fmt;

/// A validated `tools/call`.
#[derive(Clone, Debug, PartialEq)]
pub struct CallParams {
    /// The tool called.
    pub tool: Tool,
    /// Its checked arguments.
    pub args: AnswerArgs,
    /// `_meta.progressToken`, when the client wants progress.
    pub progress_token: Option<ProgressToken>,
    /// `task` (2025-11-25): the client asks for a task, with this ttl in ms if any.
    pub task: Option<Option<u64>>,
    /// The client declared the `io.modelcontextprotocol/tasks` extension (2026-07-28).
    pub takes_tasks: bool,
    /// `_meta.traceparent`, when the client's trace should continue in the call's log.
    pub trace: Option<TraceParent>,
}

/// The extension that lets a 2026-07-28 server answer with a task.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a 2026-07-28 request's `_meta` declares the Tasks extension.
pub fn declares_tasks(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(super::meta::CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// A progress token: a string or an integer, echoed back as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgressToken(Value);

impl ProgressToken {
    /// Reads a token; `None` for any other JSON type.
    pub fn from_value(value: &Value) -> Option<ProgressToken> {
        match value {
            Value::String(_) => Some(ProgressToken(value.clone())),
            Value::Number(_) if RequestId::from_value(value).is_some() => {
                Some(ProgressToken(value.clone()))
            }
            _ => None,
        }
    }

    /// The token as sent.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

/// Why `tools/call` params were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallParamsError {
    /// `params.name` is missing.
    MissingName,
    /// `params.name` is not a string.
    NameNotString {
        /// The JSON type it was.
        got: &'static str,
    },
    /// No tool has that name.
    UnknownTool(String),
    /// The tool's arguments are wrong.
    Arguments {
        /// The tool called.
        tool: Tool,
        /// What is wrong.
        error: ArgError,
    },
}

impl fmt::Display for CallParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallParamsError::MissingName => {
                f.write_str("tools/call: missing tool name (params.name); see tools/list")
            }
            CallParamsError::NameNotString { got } => {
                write!(f, "tools/call: name must be a tool name string, got {got}")
            }
            CallParamsError::UnknownTool(name) => write!(f, "Unknown tool: {name}"),
            CallParamsError::Arguments { tool, .. } => write!(f, "{tool}: invalid arguments"),
        }
    }
}

impl CallParams {
    /// Parses `tools/call` params.
    ///
    /// # Errors
    /// The first problem found: the tool name, then the arguments.
    pub fn parse(params: &Map<String, Value>) -> Result<CallParams, CallParamsError> {
        let tool = match params.get("name") {
            Some(Value::String(name)) => {
                Tool::from_name(name).ok_or_else(|| CallParamsError::UnknownTool(name.clone()))?
            }
            Some(other) => {
                return Err(CallParamsError::NameNotString {
                    got: kind_of(other),
                })
            }
            None => return Err(CallParamsError::MissingName),
        };
        let empty = Map::new();
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(other) => {
                let error = ArgError::NotAnObject {
                    got: kind_of(other),
                };
                return Err(CallParamsError::Arguments { tool, error });
            }
        };
        let args = tool
            .parse_args(arguments)
            .map_err(|error| CallParamsError::Arguments { tool, error })?;
        log::debug!(
            "tools/call name={tool} argsKeys=[{}] queryLen={}",
            arguments
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(","),
            args.query.chars().count()
        );
        let task = match params.get("task") {
            Some(Value::Object(task)) => Some(task.get("ttl").and_then(Value::as_u64)),
            _ => None,
        };
        let takes_tasks = declares_tasks(params);
        Ok(CallParams {
            tool,
            args,
            progress_token: progress_token(params),
            task,
            takes_tasks,
            trace: trace_parent(params),
        })
    }
}

/// `_meta.traceparent`; an invalid one is dropped, as W3C Trace Context says.
pub(crate) fn trace_parent(params: &Map<String, Value>) -> Option<TraceParent> {
    let value = params.get("_meta")?.get("traceparent")?;
    match value.as_str().map(TraceParent::parse) {
        Some(Ok(parent)) => Some(parent),
        Some(Err(why)) => {
            log::debug!("ignoring the call's traceparent: {why}");
            None
        }
        None => {
            log::debug!(
                "ignoring a traceparent that is {}, not a string",
                kind_of(value)
            );
            None
        }
    }
}

fn progress_token(params: &Map<String, Value>) -> Option<ProgressToken> {
    let token = params.get("_meta")?.get("progressToken")?;
    let parsed = ProgressToken::from_value(token);
    if parsed.is_none() {
        log::debug!(
            "ignoring a progressToken that is {}, not a string or an integer",
            kind_of(token)
        );
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<CallParams, CallParamsError> {
        CallParams::parse(v.as_object().unwrap())
    }

    #[test]
    fn name_arguments_and_token() {
        let p = parse(json!({"name":"answer_quick","arguments":{"query":"q"},
            "_meta":{"progressToken": 7}}))
        .unwrap();
        assert_eq!(p.tool, Tool::AnswerQuick);
        assert_eq!(p.args.query, "q");
        assert_eq!(p.progress_token.unwrap().as_value(), &json!(7));
        let p = parse(json!({"name":"answer","arguments":{"query":"q"},
            "_meta":{"progressToken": 1.5}}))
        .unwrap();
        assert_eq!(p.progress_token, None);
    }

    #[test]
    fn each_problem_is_its_own_error() {
        assert_eq!(parse(json!({})), Err(CallParamsError::MissingName));
        assert_eq!(
            parse(json!({"name": 3})),
            Err(CallParamsError::NameNotString { got: "an integer" })
        );
        assert_eq!(
            parse(json!({"name": "nope"})),
            Err(CallParamsError::UnknownTool("nope".into()))
        );
        assert!(matches!(
            parse(json!({"name": "answer", "arguments": [1]})),
            Err(CallParamsError::Arguments {
                error: ArgError::NotAnObject { .. },
                ..
            })
        ));
    }
}
