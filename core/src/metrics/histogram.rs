//! The one histogram kind the exposition writes: durations in seconds, over the bounds
//! the MCP conventions recommend. The text writer reads its buckets.

/// The boundaries the conventions recommend for MCP durations, in seconds.
pub const DURATION_BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// A histogram over [`DURATION_BOUNDS`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Observations at or below each bound (not cumulative; summed when written).
    pub(super) buckets: [u64; DURATION_BOUNDS.len()],
    /// Observations above the last bound.
    over: u64,
    /// The observations' total, in seconds.
    pub(super) sum: f64,
    /// How many observations.
    pub(super) count: u64,
}

impl Histogram {
    /// Counts one observation of `seconds`.
    pub fn observe(&mut self, seconds: f64) {
        match DURATION_BOUNDS.iter().position(|&b| seconds <= b) {
            Some(i) => self.buckets[i] += 1,
            None => self.over += 1,
        }
        self.sum += seconds;
        self.count += 1;
    }
}
