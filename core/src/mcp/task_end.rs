//! How a task ends, as each protocol era says.
//!
//! 2025-11-25 (`basic/utilities/tasks`, "Task Status" and "Task Execution Errors"):
//! `failed` covers a JSON-RPC error and, for tool calls, a result with `isError: true`;
//! `tasks/get` should say why. The 2026-07-28 Tasks extension (SEP-2663) narrows `failed`
//! to JSON-RPC errors: a tool error is a `completed` task whose result says `isError`.
//! Either way `tasks/result` returns what the call returned.

use crate::jsonrpc::RpcError;
use crate::mcp::version::ProtocolVersion;
use crate::tasks::Status;
use serde_json::Value;

/// Characters of the cause kept in a `statusMessage`.
const MAX_MESSAGE: usize = 300;

/// A task's terminal status and, when it failed, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// `completed` or `failed`.
    pub status: Status,
    /// The `statusMessage`: the cause of a failure.
    pub message: Option<String>,
}

impl Ending {
    /// How a task in `version` whose call returned `outcome` ends.
    pub fn of(outcome: &Result<Value, RpcError>, version: ProtocolVersion) -> Ending {
        let failed = |cause: &str| Ending {
            status: Status::Failed,
            message: Some(cut(cause)),
        };
        match outcome {
            Err(error) => failed(&error.message),
            Ok(result) if !version.is_modern() && is_tool_error(result) => {
                let text = result
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("the tool call failed");
                failed(text)
            }
            Ok(_) => Ending {
                status: Status::Completed,
                message: None,
            },
        }
    }
}

/// Whether a `tools/call` result is a tool error.
pub fn is_tool_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// `cause` cut to [`MAX_MESSAGE`] characters, at a word boundary where one is near.
fn cut(cause: &str) -> String {
    let cause = cause.trim();
    if cause.chars().count() <= MAX_MESSAGE {
        return cause.to_owned();
    }
    let head: String = cause.chars().take(MAX_MESSAGE).collect();
    let head = match head.rfind(char::is_whitespace) {
        Some(i) if i > MAX_MESSAGE / 2 => &head[..i],
        _ => &head,
    };
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::ErrorKind;
    use serde_json::json;

    fn tool_error(text: &str) -> Result<Value, RpcError> {
        Ok(json!({"content": [{"type": "text", "text": text}], "isError": true}))
    }

    #[test]
    fn a_tool_error_fails_a_2025_11_25_task_and_completes_a_2026_07_28_one() {
        let outcome = tool_error("OpenAI refused the request: quota exceeded. Check billing.");
        let legacy = Ending::of(&outcome, ProtocolVersion::V2025_11_25);
        assert_eq!(legacy.status, Status::Failed);
        assert_eq!(
            legacy.message.as_deref(),
            Some("OpenAI refused the request: quota exceeded. Check billing.")
        );
        let modern = Ending::of(&outcome, ProtocolVersion::V2026_07_28);
        assert_eq!(
            modern,
            Ending {
                status: Status::Completed,
                message: None
            }
        );
    }

    #[test]
    fn an_answer_completes_and_a_json_rpc_error_fails_in_both_eras() {
        let answer = Ok(json!({"content": [{"type": "text", "text": "{}"}], "isError": false}));
        let error = Err(RpcError::new(ErrorKind::InvalidParams, "bad arguments"));
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            assert_eq!(Ending::of(&answer, version).status, Status::Completed);
            let failed = Ending::of(&error, version);
            assert_eq!(failed.status, Status::Failed);
            assert_eq!(failed.message.as_deref(), Some("bad arguments"));
        }
    }

    #[test]
    fn a_long_cause_is_cut_at_a_word() {
        let long = "word ".repeat(200);
        let message = Ending::of(&tool_error(&long), ProtocolVersion::V2025_11_25)
            .message
            .unwrap_or_default();
        assert!(message.chars().count() <= MAX_MESSAGE + 1, "{message}");
        assert!(message.ends_with("word…"), "{message}");
    }
}
