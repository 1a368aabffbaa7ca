//! The workspace's version, and the `User-Agent` that carries it.

/// The version of the workspace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `User-Agent` of every upstream request, whichever client sends it.
pub const USER_AGENT: &str = concat!("openai-responses-mcp/", env!("CARGO_PKG_VERSION"));
