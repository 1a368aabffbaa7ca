//! The three answer tools: each one's definition and argument schema (`tool`), its
//! arguments checked (`args`), and the schema of the result they share.
//!
//! Adding a tool: a variant of [`Tool`] (name, title, description, profile fallback) and
//! its configuration keys in `config/src/keys.rs`; everything else iterates [`ALL_TOOLS`].

mod args;
mod schemas;
mod tool;

pub use args::{check_host, AnswerArgs, ArgError};
pub use tool::{Tool, ALL_TOOLS, MAX_DOMAINS, MAX_QUERY_CHARS, MAX_RECENCY_DAYS, MAX_RESULTS};

use serde_json::Value;

/// The JSON schema of a tool's structured result.
pub fn output_schema() -> Value {
    schemas::result()
}
