//! What the host reads from the process: its environment, the clocks and entropy.

use responses_mcp_config::Env;
use responses_mcp_core::Now;

/// Reads the process environment, skipping variables that are not UTF-8.
pub fn process_env() -> Env {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The time now, for the core: the one place a runtime reads the clocks.
pub fn now() -> Now {
    let unix_secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Now {
        instant: std::time::Instant::now(),
        unix_secs,
    }
}

/// Entropy for the server: retry jitter, and where this process's task numbers start.
/// From the system's random source (ring's, already linked for TLS): the clock and the
/// process id are not enough, since replicas start in the same second as PID 1 each.
/// Only where the system gives none, the clock and the process id (called before the
/// logger is up, so nothing is said of it).
pub fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// Fills `bytes` from the system's random source (ring's `SystemRandom`, through
/// getrandom: `getrandom(2)` on Linux, `BCryptGenRandom` on Windows); `false` when it
/// gives none.
pub fn system_random(bytes: &mut [u8]) -> bool {
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), bytes).is_ok()
}
