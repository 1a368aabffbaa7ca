//! The paths the endpoint serves.

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// The health endpoint's path (liveness and load).
pub const HEALTH_PATH: &str = "/health";
/// The readiness endpoint's path: whether a call can work now.
pub const READY_PATH: &str = "/ready";
/// The Prometheus scrape endpoint's path.
pub const METRICS_PATH: &str = "/metrics";
