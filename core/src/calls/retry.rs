//! Retry and backoff as a pure decision: no clock, no JSON, no call state.
//!
//! The call engine asks [`next_step`] after every transient failure and does what it says.

use std::time::Duration;

/// First backoff delay; doubles per retry up to [`MAX_BACKOFF`].
pub const BASE_BACKOFF: Duration = Duration::from_millis(500);
/// Longest computed backoff (a wait the server asks for may be longer, up to its own cap).
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// What to do after a transient failure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Try again after `after`; this is retry number `retry` (1-based).
    Retry {
        /// Which retry this is, counting from 1.
        retry: u32,
        /// How long to wait first.
        after: Duration,
    },
    /// No retries left: the failure is final.
    GiveUp,
}

/// Decides the step after a transient failure, given the retries already used, the
/// configured maximum, the wait the server asked for (`Retry-After`), and a jitter draw
/// from [0, 1).
pub fn next_step(used: u32, max: u32, server_wait: Option<Duration>, jitter: f64) -> Step {
    if used >= max {
        return Step::GiveUp;
    }
    let retry = used + 1;
    Step::Retry {
        retry,
        after: server_wait.unwrap_or_else(|| backoff(retry, jitter)),
    }
}

/// Exponential backoff for retry number `retry` (1-based), jittered down by at most a
/// quarter: spread out, but never more than [`MAX_BACKOFF`].
pub fn backoff(retry: u32, jitter: f64) -> Duration {
    let exp = BASE_BACKOFF
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
        .min(MAX_BACKOFF);
    exp.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
}

/// A deterministic source of jitter (xorshift64*), seeded by the runtime.
#[derive(Clone, Debug)]
pub struct Jitter(u64);

impl Jitter {
    /// A generator from `seed` (any value; zero is made odd).
    pub fn new(seed: u64) -> Self {
        Jitter(seed | 1)
    }

    /// A uniform draw from [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_up_when_the_retries_are_used() {
        assert_eq!(next_step(3, 3, None, 0.0), Step::GiveUp);
        assert_eq!(
            next_step(0, 0, Some(Duration::from_secs(1)), 0.5),
            Step::GiveUp
        );
    }

    #[test]
    fn the_servers_wait_wins_over_backoff() {
        let wait = Duration::from_millis(1234);
        assert_eq!(
            next_step(1, 3, Some(wait), 0.9),
            Step::Retry {
                retry: 2,
                after: wait
            }
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let unjittered: Vec<u128> = (1..=7).map(|r| backoff(r, 0.0).as_millis()).collect();
        assert_eq!(unjittered, [500, 1000, 2000, 4000, 8000, 8000, 8000]);
        assert_eq!(backoff(u32::MAX, 0.0), MAX_BACKOFF);
    }

    #[test]
    fn jitter_takes_at_most_a_quarter_off() {
        let mut jitter = Jitter::new(0);
        for retry in 1..6 {
            let full = backoff(retry, 0.0);
            let d = backoff(retry, jitter.next());
            assert!(d <= full && d >= full.mul_f64(0.75), "{retry}: {d:?}");
        }
        // Out-of-range draws are clamped, never negative or above the full wait.
        assert_eq!(backoff(1, 7.0), BASE_BACKOFF.mul_f64(0.75));
        assert_eq!(backoff(1, -1.0), BASE_BACKOFF);
    }

    #[test]
    fn jitter_is_uniform_enough_and_deterministic() {
        let draws: Vec<f64> = {
            let mut j = Jitter::new(42);
            (0..10_000).map(|_| j.next()).collect()
        };
        assert!(draws.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
        let mut again = Jitter::new(42);
        assert_eq!(again.next(), draws[0]);
    }
}
