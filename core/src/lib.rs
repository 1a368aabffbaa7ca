//! The sans-IO core of openai-responses-mcp.
#![forbid(unsafe_code)]

pub mod framing;
