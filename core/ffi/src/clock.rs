//! The host's milliseconds and the engine's `Instant`s.
//!
//! A host counts monotonic time in milliseconds from any origin it likes; the engine
//! counts in `Instant`s. The engine reads the monotonic clock once, at creation, for an
//! `Instant` to stand for the host's first millisecond; after that it never reads a
//! clock: every later instant is that origin plus what the host's count moved.

use responses_mcp_core::Now;
use std::time::{Duration, Instant};

pub(crate) struct Clock {
    /// An instant with no meaning of its own: the origin the host's count is laid on.
    origin: Instant,
    /// The host's count at its first input, and the latest count it gave.
    first_ms: Option<u64>,
    last_ms: u64,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        // The one clock read (see the module docs); the host's time is never replaced by it.
        #[allow(clippy::disallowed_methods)]
        let origin = Instant::now();
        Clock {
            origin,
            first_ms: None,
            last_ms: 0,
        }
    }

    /// The engine's `Now` for the host's count. A count that goes back is taken as the
    /// latest one: monotonic time never does, so the host's clock is wrong, not time.
    pub(crate) fn now(&mut self, now_ms: u64, unix_secs: u64) -> Now {
        let first = *self.first_ms.get_or_insert(now_ms);
        self.last_ms = self.last_ms.max(now_ms).max(first);
        Now {
            instant: self.instant(self.last_ms - first),
            unix_secs,
        }
    }

    /// The host's count at `deadline`, rounded up so that a host that waits until it has
    /// passed that count never wakes the engine early.
    pub(crate) fn to_host_ms(&self, deadline: Instant) -> u64 {
        let first = self.first_ms.unwrap_or(0);
        let since = deadline.saturating_duration_since(self.origin);
        let ms = since.as_nanos().div_ceil(1_000_000);
        first.saturating_add(u64::try_from(ms).unwrap_or(u64::MAX))
    }

    fn instant(&self, ms: u64) -> Instant {
        // A count beyond what `Instant` holds (hundreds of years) stays at the largest
        // instant that fits, found by halving.
        let mut d = Duration::from_millis(ms);
        loop {
            if let Some(at) = self.origin.checked_add(d) {
                return at;
            }
            d /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_map_to_instants_and_back() {
        let mut clock = Clock::new();
        let a = clock.now(5_000, 1);
        let b = clock.now(5_250, 1);
        assert_eq!(b.instant - a.instant, Duration::from_millis(250));
        assert_eq!(clock.to_host_ms(b.instant), 5_250);
        // A deadline between two milliseconds is the later one.
        assert_eq!(
            clock.to_host_ms(b.instant + Duration::from_micros(10)),
            5_251
        );
    }

    #[test]
    fn a_count_that_goes_back_is_the_latest() {
        let mut clock = Clock::new();
        let a = clock.now(10_000, 1);
        let b = clock.now(20_000, 1);
        let c = clock.now(9_000, 1);
        assert_eq!(c.instant, b.instant);
        assert!(a.instant < b.instant);
        let huge = clock.now(u64::MAX, 1);
        assert!(huge.instant >= b.instant);
    }
}
