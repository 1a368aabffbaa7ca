//! The sans-IO core of openai-responses-mcp.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod date;
pub mod framing;
pub mod jsonrpc;
pub mod mcp;
pub mod openai;
pub mod policy;
pub mod server;
pub mod tools;

/// Reference data for unit tests: the OpenAI fixtures under `core/testdata/openai`.
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Test fixtures live on disk.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/testdata/openai/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
