//! The shape of every MCP JSON value the server sends: results, notifications and error
//! objects. Nothing else in the crate builds MCP JSON, so what a protocol version allows
//! is decided here.

use super::meta::{MetaError, SERVER_INFO, SUBSCRIPTION_ID};
use super::params::{CallParamsError, ProgressToken};
use super::version::ProtocolVersion;
use crate::jsonrpc::{ErrorKind, OutgoingNotification, RequestId, RpcError};
use crate::openai::pricing::Estimate;
use crate::openai::Answer;
use crate::openai::Report;
use crate::tools::{Tool, ALL_TOOLS};
use serde_json::{json, Map, Value};

mod errors;
mod usage;

pub use errors::{RequestError, TaskError};

/// The `_meta` member of results and notifications.
pub const META: &str = "_meta";
/// `_meta` key on a tool result: what the call used (tokens, searches, the response id,
/// attempts, wall time).
pub const META_USAGE: &str = "com.github.openai-responses-mcp/usage";
/// `_meta` key on an `isError` result: the structured details of the failure.
pub const META_ERROR: &str = "com.github.openai-responses-mcp/error";
/// How long a client may cache `tools/list` and `server/discover` (2026-07-28): both are
/// fixed for the life of the process.
pub const TTL_MS: u64 = 3_600_000;

/// Name in `serverInfo`.
pub const SERVER_NAME: &str = "openai-responses-mcp";
/// Version in `serverInfo`: the workspace version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Tells the client when to use which tool.
pub const INSTRUCTIONS: &str = "Web-search-backed answers from the OpenAI Responses API. \
Use `answer` for general questions, especially about anything recent or changing (news, \
prices, releases, versions, security issues, weather); `answer_detailed` for complex \
comparisons or research that needs depth; `answer_quick` for short factual lookups. Each \
returns JSON {answer, used_search, citations[{url,title?,published_at?,accessed_at}], model}; \
`accessed_at` is the day a source was read, `published_at` (rare) its publication date; cite \
the URLs when you use the answer.";

/// Who we are, with the fields `version` defines.
fn server_info(version: ProtocolVersion) -> Value {
    let mut server_info = Map::new();
    server_info.insert("name".into(), SERVER_NAME.into());
    if version.has_titles_and_structured_output() {
        server_info.insert("title".into(), "OpenAI Responses (web search)".into());
    }
    server_info.insert("version".into(), SERVER_VERSION.into());
    Value::Object(server_info)
}

/// What the server offers: tools, whose list never changes.
fn capabilities() -> Value {
    json!({ "tools": { "listChanged": false } })
}

/// What a legacy session in `version` is told the server can do.
fn session_capabilities(version: ProtocolVersion) -> Value {
    let mut caps = capabilities();
    if version.has_session_tasks() {
        caps["tasks"] =
            json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
    }
    caps
}

/// The `initialize` result for `version`.
pub fn initialize_result(version: ProtocolVersion) -> Value {
    json!({
        "protocolVersion": version.as_str(),
        "capabilities": session_capabilities(version),
        "serverInfo": server_info(version),
        "instructions": INSTRUCTIONS,
    })
}

/// The `server/discover` result (2026-07-28): every version, newest first.
pub fn discover_result() -> Value {
    let version = ProtocolVersion::V2026_07_28;
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    complete(
        json!({
            "supportedVersions": supported,
            "capabilities": {
                "tools": { "listChanged": false },
                "extensions": { super::params::TASKS_EXTENSION: {} },
            },
            "instructions": INSTRUCTIONS,
            "ttlMs": TTL_MS,
            "cacheScope": "public",
        }),
        version,
    )
}

/// The `tools/list` result for `version`: only fields the version defines.
/// `search` says whether the provider can search the web; descriptions say when not.
pub fn tools_list_result(version: ProtocolVersion, search: bool) -> Value {
    let tools: Vec<Value> = ALL_TOOLS
        .iter()
        .map(|t| tool_json(*t, version, search))
        .collect();
    let mut result = json!({ "tools": tools });
    if version.is_modern() {
        result["ttlMs"] = TTL_MS.into();
        result["cacheScope"] = "public".into();
    }
    complete(result, version)
}

/// A modern result's required fields: `resultType` and who answered. Unchanged for
/// legacy versions.
pub fn complete(mut result: Value, version: ProtocolVersion) -> Value {
    if version.is_modern() {
        result["resultType"] = "complete".into();
        add_meta(&mut result, SERVER_INFO, server_info(version));
    }
    result
}

/// Sets `_meta[key]` on a result or params object.
pub fn add_meta(object: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = object {
        let meta = map.entry(META).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(key.to_owned(), value);
        }
    }
}

/// `notifications/subscriptions/acknowledged` for the `subscriptions/listen` request `id`:
/// the subset of notifications honoured, which is none (the tool list never changes).
pub fn subscription_acknowledged(id: &RequestId) -> OutgoingNotification {
    let mut params = json!({ "notifications": {} });
    add_meta(&mut params, SUBSCRIPTION_ID, id.to_value());
    OutgoingNotification {
        method: "notifications/subscriptions/acknowledged",
        params,
    }
}

/// The result that ends the subscription `id` gracefully (at shutdown).
pub fn subscription_closed(id: &RequestId) -> Value {
    let mut result = complete(json!({}), ProtocolVersion::V2026_07_28);
    add_meta(&mut result, SUBSCRIPTION_ID, id.to_value());
    result
}

/// The error for a modern request whose `_meta` was refused.
pub fn meta_error(error: &MetaError) -> RpcError {
    match error {
        MetaError::Unsupported { requested } => {
            let supported: Vec<&str> = ProtocolVersion::ALL
                .iter()
                .rev()
                .map(|v| v.as_str())
                .collect();
            RpcError::new(ErrorKind::UnsupportedProtocolVersion, error.to_string())
                .with_data(json!({ "supported": supported, "requested": requested }))
        }
        other => RpcError::new(ErrorKind::InvalidParams, other.to_string()),
    }
}

/// The error for a method the modern era does not have (or we do not serve).
pub fn method_not_found(method: &str, version: ProtocolVersion) -> RpcError {
    let removed = matches!(
        method,
        "ping" | "initialize" | "logging/setLevel" | "notifications/initialized"
    );
    let message = if version.is_modern() && removed {
        format!(
            "method not found: {method} is not part of protocol {} (send it without the modern _meta, after initialize)",
            version.as_str()
        )
    } else {
        format!("method not found: {method}")
    };
    RpcError::new(ErrorKind::MethodNotFound, message)
}

/// Appended to every description when the provider cannot search.
pub const NO_SEARCH_NOTE: &str = " Note: this server's model provider has no web search, so answers come from the model's own knowledge (used_search is false, with no citations) and may be out of date.";

fn tool_json(tool: Tool, version: ProtocolVersion, search: bool) -> Value {
    let mut obj = Map::new();
    obj.insert("name".into(), tool.name().into());
    if version.has_titles_and_structured_output() {
        obj.insert("title".into(), tool.title().into());
    }
    let description = match search {
        true => tool.description().to_owned(),
        false => format!("{}{NO_SEARCH_NOTE}", tool.description()),
    };
    obj.insert("description".into(), description.into());
    obj.insert("inputSchema".into(), tool.input_schema());
    if version.has_titles_and_structured_output() {
        obj.insert("outputSchema".into(), crate::tools::output_schema());
    }
    if version.has_session_tasks() {
        obj.insert("execution".into(), json!({ "taskSupport": "optional" }));
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
pub fn tool_result(
    answer: &Answer,
    version: ProtocolVersion,
    report: &Report,
    cost: &Estimate,
) -> Value {
    // Serialising plain strings, booleans and vectors of them cannot fail.
    #[allow(clippy::expect_used)]
    let structured = serde_json::to_value(answer).expect("an Answer is always valid JSON");
    let text = structured.to_string();
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if version.has_titles_and_structured_output() {
        result["structuredContent"] = structured;
    }
    add_meta(
        &mut result,
        META_USAGE,
        usage::report(report, cost, &answer.model),
    );
    complete(result, version)
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

/// The error for `tools/call` params that were refused before the tool could run (no
/// tool name, an unknown tool); bad arguments are a [`ToolFailure`](super::failure).
pub fn call_params_error(error: &CallParamsError) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, error.to_string())
}

/// The error for a request id already used by a call in flight.
pub fn duplicate_id(id: &crate::jsonrpc::RequestId) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidRequest,
        format!("request id {id} is already in use by a call in flight; use a new id"),
    )
}

/// The error for an `initialize` whose `protocolVersion` cannot be read.
pub fn invalid_version(why: &str) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidParams,
        format!("initialize: {why}; send a version such as \"2025-06-18\""),
    )
    .with_data(json!({
        "supported": ProtocolVersion::LEGACY.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
    }))
}

/// `_meta` key tying a result to the task it came from (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A task's fields as `version` names them (`ttl`/`pollInterval` in 2025-11-25,
/// `ttlMs`/`pollIntervalMs` in the 2026-07-28 extension).
pub fn task<W>(
    task: &crate::tasks::Task<W>,
    poll: std::time::Duration,
    version: ProtocolVersion,
) -> Value {
    let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let (ttl, poll_key) = if version.is_modern() {
        ("ttlMs", "pollIntervalMs")
    } else {
        ("ttl", "pollInterval")
    };
    let mut obj = json!({
        "taskId": task.id,
        "status": task.status.as_str(),
        "createdAt": crate::date::iso_utc(task.created),
        "lastUpdatedAt": crate::date::iso_utc(task.updated),
        ttl: millis(task.ttl),
    });
    if !task.status.is_terminal() {
        obj[poll_key] = millis(poll).into();
    }
    if let Some(message) = &task.message {
        obj["statusMessage"] = message.clone().into();
    }
    obj
}

/// The answer to a task-augmented `tools/call`: `{task}` in 2025-11-25, the task itself
/// with `resultType: "task"` in 2026-07-28.
pub fn create_task_result<W>(
    t: &crate::tasks::Task<W>,
    poll: std::time::Duration,
    version: ProtocolVersion,
) -> Value {
    if version.is_modern() {
        let mut result = task(t, poll, version);
        result["resultType"] = "task".into();
        add_meta(&mut result, SERVER_INFO, server_info(version));
        return result;
    }
    let mut result = json!({ "task": task(t, poll, version) });
    add_meta(
        &mut result,
        "io.modelcontextprotocol/model-immediate-response",
        "The answer is being prepared as a task; its result will follow.".into(),
    );
    result
}

/// `tasks/get` (and `tasks/cancel` in 2025-11-25): the task; in 2026-07-28 with its
/// result or error once it has one.
pub fn task_state<W>(
    t: &crate::tasks::Task<W>,
    poll: std::time::Duration,
    version: ProtocolVersion,
) -> Value {
    let mut result = task(t, poll, version);
    if version.is_modern() {
        match t.outcome.as_ref().map(crate::tasks::Outcome::get) {
            // Kept in the shape of whichever request made it; a modern reader gets its own.
            Some(Ok(value)) => result["result"] = complete(value, version),
            Some(Err(error)) => result["error"] = serde_json::to_value(error).unwrap_or_default(),
            None => {}
        }
    }
    complete(result, version)
}

/// `tasks/list` (2025-11-25).
pub fn tasks_list_result(tasks: Vec<Value>, next: Option<String>) -> Value {
    let mut result = json!({ "tasks": tasks });
    if let Some(next) = next {
        result["nextCursor"] = next.into();
    }
    result
}

/// `notifications/tasks/status` (2025-11-25).
pub fn task_status_notification<W>(
    t: &crate::tasks::Task<W>,
    poll: std::time::Duration,
    version: ProtocolVersion,
) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/tasks/status",
        "params": task(t, poll, version),
    })
}

/// A finished task's result as `tasks/result` returns it: the call's own result, tied to
/// its task.
pub fn task_payload(result: &Value, task_id: &str) -> Value {
    let mut result = result.clone();
    add_meta(&mut result, RELATED_TASK, json!({ "taskId": task_id }));
    result
}

/// -32021 for a `tasks/*` request whose client did not declare the Tasks extension.
pub fn missing_tasks_capability(method: &str) -> RpcError {
    RpcError::new(
        ErrorKind::MissingClientCapability,
        format!("{method} needs the io.modelcontextprotocol/tasks extension: declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { super::params::TASKS_EXTENSION: {} } } }))
}

/// `tasks/cancel`'s answer once a background task is in `view`: acknowledged in
/// 2026-07-28; the cancelled task in 2025-11-25, or why it could not be.
pub fn cancel_answer<W>(
    view: &crate::tasks::Task<W>,
    poll: std::time::Duration,
    version: ProtocolVersion,
) -> Result<Value, crate::jsonrpc::RpcError> {
    if version.is_modern() {
        return Ok(complete(empty_result(), version));
    }
    if view.status == crate::tasks::Status::Cancelled {
        return Ok(task_state(view, poll, version));
    }
    Err(crate::jsonrpc::RpcError::new(
        crate::jsonrpc::ErrorKind::InvalidParams,
        format!(
            "task {} is already {} and cannot be cancelled",
            view.id,
            view.status.as_str()
        ),
    ))
}
