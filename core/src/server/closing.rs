//! The server on its way out: why, and when the calls still running are stopped.

use std::time::{Duration, Instant};

/// Why the server is on its way out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Closing {
    /// Stdin closed: no more requests can come.
    StdinClosed,
    /// SIGINT/SIGTERM while serving HTTP (`Input::Drain`).
    Draining,
}

impl Closing {
    /// Why calls still running at the end of the grace are stopped.
    pub(super) fn reason(self) -> &'static str {
        match self {
            Closing::StdinClosed => {
                "the server is shutting down (stdin closed) and the call did not finish in time"
            }
            Closing::Draining => {
                "the server is shutting down (it was asked to stop) and the call did not finish in time"
            }
        }
    }
}

/// The most of the shutdown grace kept, with a shared store, for writing the ends of the
/// tasks whose calls it stops (a quarter of the grace when that is less).
const STORE_SHARE: Duration = Duration::from_secs(2);

/// When the calls still running are stopped, for a grace that ends at `end` after
/// `grace`: its end, less the last of it kept for writing the stopped tasks' ends to the
/// shared store when there is one (so that the exit stays within the grace).
pub(super) fn calls_cut(end: Instant, grace: Duration, store: bool) -> Instant {
    let share = if store {
        (grace / 4).min(STORE_SHARE)
    } else {
        Duration::ZERO
    };
    end.checked_sub(share).unwrap_or(end)
}
