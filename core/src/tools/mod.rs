//! The three answer tools: each one's definition and argument schema (`tool`), its
//! arguments checked (`args`), and the schema of the result they share.
//!
//! Adding a tool: a variant of [`Tool`] (name, title, description, profile fallback) and
//! its configuration keys in `config/src/keys.rs`; everything else iterates [`ALL_TOOLS`].

mod args;
mod tool;

pub use args::{check_host, AnswerArgs, ArgError};
pub use tool::{Tool, ALL_TOOLS, MAX_DOMAINS, MAX_QUERY_CHARS, MAX_RECENCY_DAYS, MAX_RESULTS};

use serde_json::{json, Value};

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
                        "published_at": {"type": "string", "description": "YYYY-MM-DD: the source's publication date, only when the source gives one"},
                        "accessed_at": {"type": "string", "description": "YYYY-MM-DD (Asia/Tokyo): the day the source was read, not a publication date"},
                    },
                    "required": ["url", "accessed_at"],
                },
            },
            "model": {"type": "string"},
        },
        "required": ["answer", "used_search", "citations", "model"],
    })
}
