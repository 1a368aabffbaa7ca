//! What a call cost: OpenAI's prices per model and the estimate from a call's usage.
//!
//! Built-in prices, USD per million tokens at the standard tier, from OpenAI's pricing
//! and model pages as quoted by the sources below (checked 2026-11-27, the date
//! [`PRICES_AS_OF`] carries):
//!
//! | model         | input | cached input | cache writes | output | source |
//! |---------------|-------|--------------|--------------|--------|--------|
//! | gpt-6.2-astra | 8.00  | 0.40         | 10.00        | 40.00  | OpenAI's release of 2026-11-17 as quoted by BerriAI/litellm discussion #52347 and AgentCompass-Router v0.6.8 (2026-11-18) |
//! | gpt-6.2-sol   | 2.00  | 0.10         | 2.50         | 10.00  | developers.openai.com/api/docs/models/gpt-6.2-sol (2026-11-27) |
//! | gpt-6.1-sol   | 2.00  | 0.10         | 2.50         | 10.00  | model page via LiteLLM "Day 0 Support: GPT-6.1 Sol" (2026-09-29) |
//! | gpt-6.1-terra | 1.00  | 0.05         | 1.25         | 5.00   | model page via docs.litellm.ai/blog/gpt-6-1-terra (2026-10-26); cache writes: PromptFuel v1.0.24 notes |
//! | gpt-6-sol     | 2.00  | 0.20         | 2.50         | 10.00  | OpenAI pricing, 2026-09-22 (codexometer v0.18.4, PromptFuel v1.0.21 notes) |
//! | gpt-6-luna    | 0.10  | 0.01         | 0.125        | 0.50   | OpenAI pricing, 2026-09-22 (codexometer v0.18.4, PromptFuel v1.0.21 notes) |
//!
//! Cache writes: since 2026-11-03 a response reports the input tokens it wrote to the
//! prompt cache (`usage.input_tokens_details.cache_write_tokens`); they are part of
//! `input_tokens` and billed at the cache-write rate instead of the input rate. OpenAI's
//! prompt-caching guide: "for GPT-5.6 and later, cache writes cost 1.25× the standard,
//! uncached input-token rate" for the default 30-minute retention, the rate the table
//! holds. A 12-hour write costs more ($5 per million for gpt-6.2-sol, its model page), but
//! only a request that asks for extended retention makes one, and ours never do, so
//! every write this server causes is a 30-minute one.
//!
//! Rules the same pages give for these models: a request above 272,000 input tokens is
//! billed whole at twice the input, cached-input and cache-write rates and 1.5 times the
//! output rate; `flex` halves every token rate and `priority` (shown as "fast") doubles
//! it. Reasoning tokens are billed as output (they are counted in `output_tokens`). The
//! `web_search` tool costs $10 per 1,000 calls, and the search content it reads is billed
//! as input tokens at the model's rates (those tokens are already in `input_tokens`);
//! OpenAI's pricing page, as quoted on community.openai.com/t/search-web-using-openai-api/1363698
//! and modelcostwatch.com (checked 2026-03-12). Since 2026-10-31 a response reports the
//! searches it bills (`tool_usage.web_search.num_requests`: discounted searches and page
//! opens left out), which the estimate takes over counting the search calls in its
//! output. Other models are priced by configuration (`pricing.models.<model>`); a model
//! with no price gets no estimate, never a guess.
//!
//! Data residency: OpenAI's regional endpoints (`us.`, `eu.`, `au.`, `in.`, `jp.` and
//! `ae.api.openai.com`) are "charged a 10% uplift for models released on or after March
//! 5, 2026, that are eligible for data residency" (developers.openai.com/api/docs/guides/
//! data-residency, checked 2026-11-28; the `ae` region from openai-node's
//! `src/internal/data-residency.ts`). Every built-in model was released after that day,
//! so with a regional base URL their token rates are 110 % of the table's; searches are
//! not uplifted, and a configured price is taken as the operator wrote it (it knows its
//! model's release and its contract).
//!
//! Money is counted in picodollars (10^-12 USD) in integers, so an estimate is exact
//! for rates given to the millionth of a dollar per million tokens, and repeatable.

use super::Usage;
pub use crate::money::{PerToken, Picodollars};
use crate::vocab::{Effort, ServiceTier};

/// The day the built-in prices were checked.
pub const PRICES_AS_OF: &str = "2026-11-27";

/// What one web search call costs at OpenAI: $10 per 1,000 calls.
pub const WEB_SEARCH_PER_CALL: Picodollars = Picodollars(10_000_000_000);

/// The input size above which the built-in models bill a whole request at long-context
/// rates.
const LONG_CONTEXT_ABOVE: u64 = 272_000;

/// The percentage OpenAI's data-residency endpoints bill built-in models at.
pub const RESIDENCY_PERCENT: u64 = 110;

/// The regions whose `<region>.api.openai.com` endpoints bill the residency uplift.
const RESIDENCY_REGIONS: [&str; 6] = ["us", "eu", "au", "in", "jp", "ae"];

/// The data-residency region of an OpenAI base URL (`eu` for
/// `https://eu.api.openai.com/v1`); `None` for the global endpoint and every other host.
pub fn residency_region(base_url: &str) -> Option<&'static str> {
    if !base_url.starts_with("https://") {
        return None;
    }
    let host = crate::http::host_and_port(base_url)?.0.to_ascii_lowercase();
    let region = host.strip_suffix(".api.openai.com")?;
    RESIDENCY_REGIONS.into_iter().find(|r| *r == region)
}

/// One model's rates at the standard tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelPrice {
    /// Input tokens not read from the cache.
    pub input: PerToken,
    /// Input tokens read from the cache.
    pub cached_input: PerToken,
    /// Input tokens written to the cache (30-minute retention).
    pub cache_write: PerToken,
    /// Output tokens, reasoning included.
    pub output: PerToken,
    /// Above this many input tokens the whole request is billed at long-context rates
    /// (input and cached ×2, output ×1.5); `None` when the model has no such rule.
    pub long_context_above: Option<u64>,
    /// What each request costs besides its tokens (Parallel's are priced per request).
    pub fees: RequestFees,
}

/// What a service charges per request, by the `reasoning.effort` the request sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestFees {
    /// Every effort without a fee of its own.
    pub any: Option<Picodollars>,
    /// `low`.
    pub low: Option<Picodollars>,
    /// `medium`, and a request that sends no effort (Parallel's default tier).
    pub medium: Option<Picodollars>,
    /// `high`.
    pub high: Option<Picodollars>,
}

impl RequestFees {
    /// Whether the model is priced per request at all.
    pub fn any_set(&self) -> bool {
        *self != RequestFees::default()
    }

    /// The fee at `effort`: its own, else the one for every effort; `None` when neither
    /// is known.
    pub fn at(&self, effort: Effort) -> Option<Picodollars> {
        let own = match effort {
            Effort::Low => self.low,
            Effort::Medium => self.medium,
            Effort::High => self.high,
            _ => None,
        };
        own.or(self.any)
    }

    /// The fee of a request that sent `effort` (none is `medium`, Parallel's default
    /// tier): nothing when the model has no fees, `None` when it has some but not this
    /// effort's.
    pub fn of(&self, effort: Option<Effort>) -> Option<Picodollars> {
        if !self.any_set() {
            return Some(Picodollars(0));
        }
        self.at(effort.unwrap_or(Effort::Medium))
    }
}

/// Where a model's price came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceSource {
    /// The table above, as of [`PRICES_AS_OF`].
    BuiltIn,
    /// `pricing.models.<model>` in the configuration.
    Configured,
    /// What the service said it billed for the response (Perplexity's `usage.cost`).
    Reported,
}

impl PriceSource {
    /// How reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            PriceSource::BuiltIn => "built-in",
            PriceSource::Configured => "configured",
            PriceSource::Reported => "reported by the provider",
        }
    }
}

/// The prices in use: the built-in table with the configuration's models over it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prices {
    models: Vec<(String, ModelPrice, PriceSource)>,
    /// What one web search call costs.
    pub web_search_call: Picodollars,
    /// The data-residency region the base URL names: built-in models' tokens cost
    /// [`RESIDENCY_PERCENT`] of the table.
    pub residency: Option<&'static str>,
}

impl Default for Prices {
    fn default() -> Prices {
        let rate = |usd_per_million_times_100: u64| PerToken(usd_per_million_times_100 * 10_000);
        let model = |name: &str, input, cached, output| {
            let input = rate(input);
            let price = ModelPrice {
                input,
                cached_input: rate(cached),
                cache_write: PerToken::cache_write_of(input),
                output: rate(output),
                long_context_above: Some(LONG_CONTEXT_ABOVE),
                fees: RequestFees::default(),
            };
            (name.to_owned(), price, PriceSource::BuiltIn)
        };
        let usd = |usd_times_1000: u64| Some(Picodollars(usd_times_1000 * 1_000_000_000));
        // Parallel's one model: no token rates, a fee per request by effort.
        let parallel = ModelPrice {
            input: PerToken(0),
            cached_input: PerToken(0),
            cache_write: PerToken(0),
            output: PerToken(0),
            long_context_above: None,
            fees: RequestFees {
                any: None,
                low: usd(10),
                medium: usd(50),
                high: None,
            },
        };
        // Cents per million tokens, from the table in the module's documentation (sorted
        // by name, as `configure` keeps it).
        Prices {
            models: vec![
                model("gpt-6-luna", 10, 1, 50),
                model("gpt-6-sol", 200, 20, 1000),
                model("gpt-6.1-sol", 200, 10, 1000),
                model("gpt-6.1-terra", 100, 5, 500),
                model("gpt-6.2-astra", 800, 40, 4000),
                model("gpt-6.2-sol", 200, 10, 1000),
                ("parallel".to_owned(), parallel, PriceSource::BuiltIn),
            ],
            web_search_call: WEB_SEARCH_PER_CALL,
            residency: None,
        }
    }
}

impl Prices {
    /// Sets `model`'s price from the configuration, replacing a built-in one.
    pub fn configure(&mut self, model: &str, price: ModelPrice) {
        self.models.retain(|(name, _, _)| name != model);
        self.models
            .push((model.to_owned(), price, PriceSource::Configured));
        self.models.sort_by(|a, b| a.0.cmp(&b.0));
    }

    /// Every model priced, by name.
    pub fn models(&self) -> impl Iterator<Item = (&str, &ModelPrice, PriceSource)> {
        self.models.iter().map(|(n, p, s)| (n.as_str(), p, *s))
    }

    /// The price of `model`: by its exact id, else without a `-YYYY-MM-DD` snapshot
    /// suffix (the API reports `gpt-6.1-terra-2026-10-26` for `gpt-6.1-terra`).
    pub fn of(&self, model: &str) -> Option<(&ModelPrice, PriceSource)> {
        let find = |id: &str| {
            self.models
                .iter()
                .find(|(name, _, _)| name == id)
                .map(|(_, p, s)| (p, *s))
        };
        find(model).or_else(|| find(strip_snapshot(model)?))
    }

    /// What a call with `usage` on `model` cost.
    pub fn estimate(&self, model: &str, usage: &Usage) -> Estimate {
        if let Some(billed) = usage.billed {
            // The service's own figure beats any table.
            return Estimate::Usd(Cost {
                tokens: Picodollars(billed.total.0.saturating_sub(billed.tools.0)),
                searches: billed.tools,
                fees: Picodollars(0),
                source: PriceSource::Reported,
                long_context: false,
            });
        }
        let Some((price, source)) = self.of(model) else {
            return Estimate::Unknown(Unpriced::Model);
        };
        let Some((num, den)) = tier_multiplier(usage.service_tier.as_deref()) else {
            return Estimate::Unknown(Unpriced::Tier);
        };
        let long = price
            .long_context_above
            .is_some_and(|above| usage.input_tokens > above);
        let (input_factor, output_factor) = if long {
            ((2, 1), (3, 2))
        } else {
            ((1, 1), (1, 1))
        };
        // Cached and written tokens are part of the input count; each input token is
        // billed at exactly one of the three rates.
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let written = usage.cache_write_tokens.min(usage.input_tokens - cached);
        let fresh = usage.input_tokens - cached - written;
        let scaled = |tokens: u64, rate: PerToken, (n, d): (u128, u128)| {
            u128::from(tokens) * u128::from(rate.0) * n / d
        };
        let tokens = scaled(fresh, price.input, input_factor)
            + scaled(cached, price.cached_input, input_factor)
            + scaled(written, price.cache_write, input_factor)
            + scaled(usage.output_tokens, price.output, output_factor);
        let (up, down) = match (self.residency, source) {
            (Some(_), PriceSource::BuiltIn) => (u128::from(RESIDENCY_PERCENT), 100),
            _ => (1, 1),
        };
        let tokens = tokens * num / den * up / down;
        let tokens = Picodollars(u64::try_from(tokens).unwrap_or(u64::MAX));
        let searches = Picodollars(
            self.web_search_call
                .0
                .saturating_mul(u64::from(usage.web_searches)),
        );
        let Some(fees) = price.fees.of(usage.effort) else {
            return Estimate::Unknown(Unpriced::Fee);
        };
        Estimate::Usd(Cost {
            tokens,
            searches,
            fees,
            source,
            long_context: long,
        })
    }
}

/// The estimate of a call's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// The cost in money.
    Usd(Cost),
    /// No estimate: why.
    Unknown(Unpriced),
}

impl Estimate {
    /// The estimate with its tokens at `percent` of their price (a discounted
    /// completion window; searches are not discounted).
    #[must_use]
    pub fn tokens_at_percent(self, percent: u64) -> Estimate {
        match self {
            Estimate::Usd(mut cost) => {
                let scaled = u128::from(cost.tokens.0) * u128::from(percent) / 100;
                cost.tokens = Picodollars(u64::try_from(scaled).unwrap_or(u64::MAX));
                Estimate::Usd(cost)
            }
            unknown => unknown,
        }
    }

    /// The total, when known.
    pub fn total(&self) -> Option<Picodollars> {
        match self {
            Estimate::Usd(cost) => Some(cost.total()),
            Estimate::Unknown(_) => None,
        }
    }
}

/// A known cost, in its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Tokens at the model's rates, tier and long context applied.
    pub tokens: Picodollars,
    /// Web search calls.
    pub searches: Picodollars,
    /// The service's fee per request, by effort.
    pub fees: Picodollars,
    /// Where the model's price came from.
    pub source: PriceSource,
    /// Whether the long-context rates applied.
    pub long_context: bool,
}

impl Cost {
    /// Tokens and searches.
    pub fn total(&self) -> Picodollars {
        self.tokens.plus(self.searches).plus(self.fees)
    }
}

/// Why a call has no estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpriced {
    /// No price for the model, built in or configured.
    Model,
    /// The response names a service tier whose price multiplier is not known.
    Tier,
    /// The model is priced per request, but not at the effort the request sent.
    Fee,
}

/// The factor a service tier applies to token rates, as a fraction; `None` when unknown.
/// No tier reported means the standard one.
fn tier_multiplier(tier: Option<&str>) -> Option<(u128, u128)> {
    let Some(name) = tier else {
        return Some((1, 1));
    };
    match ServiceTier::parse(name)? {
        ServiceTier::Auto | ServiceTier::Default | ServiceTier::Scale => Some((1, 1)),
        ServiceTier::Flex => Some((1, 2)),
        ServiceTier::Priority | ServiceTier::Fast => Some((2, 1)),
        ServiceTier::Ultrafast => None,
    }
}

/// `gpt-6.1-terra` for `gpt-6.1-terra-2026-10-26`; `None` without such a suffix.
fn strip_snapshot(model: &str) -> Option<&str> {
    let (base, date) = model.split_at_checked(model.len().checked_sub(11)?)?;
    let date = date.strip_prefix('-')?;
    let shaped = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    (shaped && !base.is_empty()).then_some(base)
}

#[cfg(test)]
mod tests;
