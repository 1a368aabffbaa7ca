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
