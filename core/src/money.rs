//! Money, as the ledger, the limits and the price table count it: integer picodollars,
//! so sums never drift and never wrap, and rates per token.

/// An amount of money in 10^-12 USD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Picodollars(pub u64);

impl Picodollars {
    /// From US dollars; `None` for a negative, non-finite or absurd (≥ $10^6) amount.
    pub fn from_usd(usd: f64) -> Option<Picodollars> {
        let pico = usd * 1e12;
        // The bound keeps the cast exact-enough and far from u64::MAX.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (usd.is_finite() && (0.0..1e6).contains(&usd)).then(|| Picodollars(pico.round() as u64))
    }

    /// In US dollars, rounded to the nanodollar (what reports show).
    pub fn usd(self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let nano = self.0.saturating_add(500) / 1000;
        #[allow(clippy::cast_precision_loss)]
        let usd = nano as f64 / 1e9;
        usd
    }

    /// The sum, saturating.
    #[must_use]
    pub fn plus(self, other: Picodollars) -> Picodollars {
        Picodollars(self.0.saturating_add(other.0))
    }

    /// The difference, never below zero.
    #[must_use]
    pub fn minus(self, other: Picodollars) -> Picodollars {
        Picodollars(self.0.saturating_sub(other.0))
    }
}

/// A token rate: picodollars per token, which is USD per million tokens times 10^6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerToken(pub u64);

impl PerToken {
    /// From USD per million tokens, as OpenAI publishes rates; `None` for a negative,
    /// non-finite or absurd (≥ $10^6 per million) rate.
    pub fn from_usd_per_million(usd: f64) -> Option<PerToken> {
        // The bound keeps the product far inside u64.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (usd.is_finite() && (0.0..1e6).contains(&usd)).then(|| PerToken((usd * 1e6).round() as u64))
    }

    /// The 30-minute cache-write rate for an input rate: 1.25 times it (OpenAI's
    /// prompt-caching guide, for GPT-5.6 and later).
    pub fn cache_write_of(input: PerToken) -> PerToken {
        PerToken(input.0.saturating_mul(5) / 4)
    }

    /// In USD per million tokens.
    pub fn usd_per_million(self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let usd = self.0 as f64 / 1e6;
        usd
    }
}
