//! The shared end-to-end suite, run against the blocking binary.

responses_mcp_testkit::e2e_suite!(env!("CARGO_BIN_EXE_openai-responses-mcp-blocking"));
