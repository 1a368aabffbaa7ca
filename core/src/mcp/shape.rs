//! The shape of every MCP JSON value the server sends: results, notifications and error
//! objects. Nothing else in the crate builds MCP JSON, so what a protocol version allows
//! is decided here.

use super::{CallParamsError, ProgressToken, ProtocolVersion};
use crate::jsonrpc::{ErrorKind, OutgoingNotification, RpcError};
use crate::openai::{Answer, UpstreamFailure};
use crate::tools::{Tool, ALL_TOOLS};
use serde_json::{json, Map, Value};

/// Name in `serverInfo`.
pub const SERVER_NAME: &str = "openai-responses-mcp";
/// Version in `serverInfo`: the workspace version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Tells the client when to use which tool.
pub const INSTRUCTIONS: &str = "Web-search-backed answers from the OpenAI Responses API. \
Use `answer` for general questions, especially about anything recent or changing (news, \
prices, releases, versions, security issues, weather); `answer_detailed` for complex \
comparisons or research that needs depth; `answer_quick` for short factual lookups. Each \
returns JSON {answer, used_search, citations[{url,title?,published_at?}], model}; cite the \
URLs when you use the answer.";

/// The `initialize` result for `version`.
pub fn initialize_result(version: ProtocolVersion) -> Value {
    let mut server_info = Map::new();
    server_info.insert("name".into(), SERVER_NAME.into());
    if version.has_titles_and_structured_output() {
        server_info.insert("title".into(), "OpenAI Responses (web search)".into());
    }
    server_info.insert("version".into(), SERVER_VERSION.into());
    json!({
        "protocolVersion": version.as_str(),
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": server_info,
        "instructions": INSTRUCTIONS,
    })
}

/// The `tools/list` result for `version`: only fields the version defines.
pub fn tools_list_result(version: ProtocolVersion) -> Value {
    let tools: Vec<Value> = ALL_TOOLS.iter().map(|t| tool_json(*t, version)).collect();
    json!({ "tools": tools })
}

fn tool_json(tool: Tool, version: ProtocolVersion) -> Value {
    let mut obj = Map::new();
    obj.insert("name".into(), tool.name().into());
    if version.has_titles_and_structured_output() {
        obj.insert("title".into(), tool.title().into());
    }
    obj.insert("description".into(), tool.description().into());
    obj.insert("inputSchema".into(), tool.input_schema());
    if version.has_titles_and_structured_output() {
        obj.insert("outputSchema".into(), crate::tools::output_schema());
    }
    if version.has_annotations() {
        obj.insert(
            "annotations".into(),
            json!({
                "title": tool.title(),
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": false,
                "openWorldHint": true,
            }),
        );
    }
    Value::Object(obj)
}

/// The result of `ping`: an empty object.
pub fn empty_result() -> Value {
    json!({})
}

/// The `tools/call` result for an answer: the JSON text, plus `structuredContent` where
/// the version has it.
pub fn tool_result(answer: &Answer, version: ProtocolVersion) -> Value {
    // Serialising plain strings, booleans and vectors of them cannot fail.
    #[allow(clippy::expect_used)]
    let structured = serde_json::to_value(answer).expect("an Answer is always valid JSON");
    let text = structured.to_string();
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if version.has_titles_and_structured_output() {
        result["structuredContent"] = structured;
    }
    result
}

/// A `notifications/progress` for `token`; the message only where the version has one.
pub fn progress(
    token: &ProgressToken,
    progress: u64,
    message: &str,
    version: ProtocolVersion,
) -> OutgoingNotification {
    let mut params = json!({ "progressToken": token.as_value(), "progress": progress });
    if version.has_progress_message() && !message.is_empty() {
        params["message"] = message.into();
    }
    OutgoingNotification {
        method: "notifications/progress",
        params,
    }
}

/// The error for `tools/call` params that were refused.
pub fn call_params_error(error: &CallParamsError) -> RpcError {
    match error {
        CallParamsError::Arguments { error: reason, .. } => {
            RpcError::new(ErrorKind::InvalidArguments, error.to_string())
                .with_data(json!({ "reason": reason.to_string() }))
        }
        other => RpcError::new(ErrorKind::InvalidParams, other.to_string()),
    }
}

/// The error when no profile serves the tool.
pub fn missing_profile() -> RpcError {
    RpcError::new(
        ErrorKind::MissingProfile,
        "model_profiles.answer is required",
    )
}

/// The error for a request id already used by a call in flight.
pub fn duplicate_id(id: &crate::jsonrpc::RequestId) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidRequest,
        format!("request id {id} is already in use by a call in flight; use a new id"),
    )
}

/// The error when the runtime found no API key.
pub fn missing_key(api_key_env: &str) -> RpcError {
    RpcError::new(
        ErrorKind::UpstreamFailed,
        format!("openai responses failed: no API key; set the {api_key_env} environment variable for the server"),
    )
    .with_data(json!({ "retries": 0, "status": null, "type": "missing_api_key", "code": null }))
}

/// The error when every slot and the queue are full.
pub fn busy(running: usize, queued: usize) -> RpcError {
    RpcError::new(
        ErrorKind::Overloaded,
        format!("server busy: {running} calls running and {queued} queued; retry later"),
    )
}

/// The error for a call whose upstream attempts failed. `debug` adds the diagnostic
/// fields of spec 8.2.
pub fn upstream_failure(
    failure: &UpstreamFailure,
    retries: u32,
    api_key_env: &str,
    debug: bool,
) -> RpcError {
    let mut data = json!({
        "retries": retries,
        "status": failure.status,
        "type": failure.error_type,
        "code": failure.code,
    });
    if debug {
        data["message"] = failure.message.clone().into();
        data["name"] = failure.kind.as_str().into();
    }
    let message = match failure.kind {
        crate::openai::FailureKind::Shutdown => {
            format!("openai responses failed: {}", failure.message)
        }
        _ => format!(
            "openai responses failed: {}; {}",
            failure.message,
            failure.advice(api_key_env)
        ),
    };
    RpcError::new(ErrorKind::UpstreamFailed, message).with_data(data)
}

/// The error for an `initialize` whose `protocolVersion` cannot be read.
pub fn invalid_version(why: &str) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidParams,
        format!("initialize: {why}; send a version such as \"2025-06-18\""),
    )
    .with_data(json!({
        "supported": ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
    }))
}
