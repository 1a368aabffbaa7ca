//! The sans-IO core of openai-responses-mcp: placeholder docs, replaced below.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod calls;
pub mod date;
mod driver;
pub mod framing;
pub mod http;
pub mod jsonrpc;
pub mod mcp;
pub mod openai;
pub mod policy;
pub mod server;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tools;
pub mod vocab;

pub use driver::{Driver, Event, Poll, MAX_PENDING_OUTPUT};

/// Reference data for unit tests: the OpenAI fixtures under `core/testdata/openai`.
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Test fixtures live on disk.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/testdata/openai/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
