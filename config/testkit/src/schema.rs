//! Validation of server messages against the official MCP JSON schemas.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

pub const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The Tasks extension's schema (2026-07-28), loaded as if it were a version.
pub const EXT_TASKS: &str = "ext-tasks";

fn document(version: &str) -> &'static Value {
    static DOCS: OnceLock<BTreeMap<&'static str, Value>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        VERSIONS
            .iter()
            .chain(std::iter::once(&EXT_TASKS))
            .map(|v| {
                let path = format!(
                    "{}/../../core/testdata/mcp-schema/{v}.json",
                    env!("CARGO_MANIFEST_DIR")
                );
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                (*v, serde_json::from_str(&text).unwrap())
            })
            .collect()
    });
    &docs[version]
}

fn defs_key(doc: &Value) -> &'static str {
    if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    }
}

fn has_def(version: &str, name: &str) -> bool {
    let doc = document(version);
    doc[defs_key(doc)].get(name).is_some()
}

fn validator(version: &str, def: &str) -> Arc<jsonschema::Validator> {
    type Cache = Mutex<BTreeMap<(String, String), Arc<jsonschema::Validator>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = (version.to_owned(), def.to_owned());
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let mut schema = document(version).clone();
    let key_name = defs_key(&schema);
    schema["$ref"] = Value::String(format!("#/{key_name}/{def}"));
    let compiled = Arc::new(
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("schema {version} {def}: {e}")),
    );
    cache.lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// Panics with every violation when `instance` does not match `def` of `version`.
pub fn validate(version: &str, def: &str, instance: &Value) {
    let v = validator(version, def);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} is not a valid {def} ({version}): {errors:#?}"
    );
}

fn first_def<'a>(version: &str, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| has_def(version, n))
}

/// Checks one message the server wrote.
pub fn check_message(
    version: &str,
    value: &Value,
    methods: &BTreeMap<String, String>,
    output_schemas: &BTreeMap<String, Value>,
) {
    match value {
        Value::Array(items) => {
            assert_eq!(
                version, "2025-03-26",
                "a batch reply outside 2025-03-26: {value}"
            );
            assert!(!items.is_empty(), "an empty batch reply");
            validate(version, "JSONRPCBatchResponse", value);
            for item in items {
                check_message(version, item, methods, output_schemas);
            }
        }
        Value::Object(obj) if obj.contains_key("method") => check_notification(version, value, obj),
        Value::Object(obj) if obj.contains_key("result") => {
            check_result(version, value, obj, methods, output_schemas)
        }
        Value::Object(obj) if obj.contains_key("error") => check_error(version, value, obj),
        other => panic!("not a JSON-RPC message: {other}"),
    }
}

/// A notification, with the shape its method has.
fn check_notification(version: &str, value: &Value, obj: &Map<String, Value>) {
    assert!(
        !obj.contains_key("id"),
        "the server sends no requests: {value}"
    );
    validate(version, "JSONRPCNotification", value);
    if obj["method"] == "notifications/progress" {
        validate(version, "ProgressNotification", value);
    }
    if obj["method"] == "notifications/tasks/status" {
        validate(version, "TaskStatusNotification", value);
    }
    if obj["method"] == "notifications/subscriptions/acknowledged" {
        validate(version, "SubscriptionsAcknowledgedNotification", value);
    }
}

/// A result, with the shape the method it answers (found by its id in `methods`) has.
fn check_result(
    version: &str,
    value: &Value,
    obj: &Map<String, Value>,
    methods: &BTreeMap<String, String>,
    output_schemas: &BTreeMap<String, Value>,
) {
    validate(
        version,
        first_def(version, &["JSONRPCResultResponse", "JSONRPCResponse"]).unwrap(),
        value,
    );
    let result = &obj["result"];
    match methods.get(&obj["id"].to_string()).map(String::as_str) {
        Some("initialize") => validate(version, "InitializeResult", result),
        Some("tools/list") => validate(version, "ListToolsResult", result),
        Some("server/discover") => validate(version, "DiscoverResult", result),
        Some("subscriptions/listen") => validate(version, "SubscriptionsListenResult", result),
        Some("tools/call") if result.get("task").is_some() => {
            validate(version, "CreateTaskResult", result);
        }
        Some("tools/call") if result["resultType"] == "task" => {
            validate(EXT_TASKS, "CreateTaskResult", result);
        }
        Some("tasks/get") if version == "2026-07-28" => {
            validate(EXT_TASKS, "GetTaskResult", result);
            if let Some(inner) = result.get("result") {
                validate(version, "CallToolResult", inner);
            }
        }
        Some("tasks/cancel") if version == "2026-07-28" => {
            validate(EXT_TASKS, "CancelTaskResult", result)
        }
        Some("tasks/update") => validate(EXT_TASKS, "UpdateTaskResult", result),
        Some("tasks/get") => validate(version, "GetTaskResult", result),
        Some("tasks/cancel") => validate(version, "CancelTaskResult", result),
        Some("tasks/list") => validate(version, "ListTasksResult", result),
        Some("tasks/result") => {
            validate(version, "GetTaskPayloadResult", result);
            validate(version, "CallToolResult", result);
        }
        Some("tools/call") => {
            validate(version, "CallToolResult", result);
            if let Some(structured) = result.get("structuredContent") {
                check_structured(result, structured, output_schemas);
            }
        }
        Some("ping") => {
            if let Some(def) = first_def(version, &["EmptyResult"]) {
                validate(version, def, result);
            }
        }
        _ => {}
    }
}

/// `structuredContent` of a tools/call result matches the tool's outputSchema and the text.
fn check_structured(result: &Value, structured: &Value, output_schemas: &BTreeMap<String, Value>) {
    let schema = output_schemas
        .get("answer")
        .cloned()
        .unwrap_or_else(responses_mcp_core::tools::output_schema);
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(structured).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "structuredContent does not match outputSchema: {errors:?}"
    );
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, structured, "text and structuredContent differ");
}

/// An error reply, with the codes the version allows.
fn check_error(version: &str, value: &Value, obj: &Map<String, Value>) {
    // Schemas before 2025-11-25 require a string or integer id, so a reply to a
    // message whose id could not be read (id null, as JSON-RPC prescribes) has no
    // shape there; check it by hand.
    let code = obj["error"]["code"].as_i64().unwrap_or(0);
    if version >= "2026-07-28" {
        // -32000..-32019 are legacy; -32020..-32099 only as the spec defines them.
        assert!(
            !(-32099..=-32000).contains(&code) || [-32020, -32021, -32022].contains(&code),
            "a code the modern era forbids: {value}"
        );
        if code == -32022 {
            validate(version, "UnsupportedProtocolVersionError", value);
        }
    }
    if obj.get("id") == Some(&Value::Null) && version < "2025-11-25" {
        assert!(
            obj["error"]["code"].is_i64() && obj["error"]["message"].is_string(),
            "{value}"
        );
        assert_eq!(obj["jsonrpc"], "2.0");
    } else {
        validate(
            version,
            first_def(version, &["JSONRPCErrorResponse", "JSONRPCError"]).unwrap(),
            value,
        );
    }
}
