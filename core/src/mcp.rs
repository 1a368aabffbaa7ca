//! The MCP protocol versions we speak and the few result shapes we send.

use crate::tools::{Tool, ALL_TOOLS};
use serde_json::{json, Map, Value};

/// Name in `serverInfo`.
pub const SERVER_NAME: &str = "openai-responses-mcp";
/// Version in `serverInfo`: the workspace version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The protocol versions this server negotiates, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05: the baseline.
    V2024_11_05,
    /// 2025-03-26: batches, tool annotations, progress messages.
    V2025_03_26,
    /// 2025-06-18: titles, structured tool output; batches removed.
    V2025_06_18,
    /// 2025-11-25: icons, tasks (not used here).
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];
    /// What we answer when the client asks for a version we do not know.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a version string we support.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// JSON-RPC batches are part of this version (2025-03-26 only).
    pub fn has_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Tool annotations exist (2025-03-26 on).
    pub fn has_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `title` fields, `outputSchema` and `structuredContent` exist (2025-06-18 on).
    pub fn has_titles_and_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// `message` on progress notifications exists (2025-03-26 on).
    pub fn has_progress_message(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }
}

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
