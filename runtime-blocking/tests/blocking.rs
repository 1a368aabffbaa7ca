//! The shared end-to-end suite, run against the blocking binary.

const BIN: &str = env!("CARGO_BIN_EXE_openai-responses-mcp-blocking");

mod e2e;
