//! The shared end-to-end suite, run against the smol binary.

const BIN: &str = env!("CARGO_BIN_EXE_openai-responses-mcp");

#[path = "../../runtime-blocking/tests/e2e/mod.rs"]
mod e2e;
