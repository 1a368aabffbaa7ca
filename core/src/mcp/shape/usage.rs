//! The usage report a tool result carries under [`super::META_USAGE`]: what the call used
//! and what it cost. No secrets, nothing from the instructions or the query.

use crate::openai::pricing::{Estimate, PriceSource, Unpriced, PRICES_AS_OF};
use crate::openai::Report;
use serde_json::{json, Value};

/// The report of a call whose answer came from `model`, estimated to cost `cost`.
pub(super) fn report(report: &Report, cost: &Estimate, model: &str) -> Value {
    let mut usage = counts(report);
    usage["cost"] = cost_report(cost, model);
    usage
}

/// The estimated cost under the usage report: dollars and their parts, or why there is
/// no figure and what would give one.
fn cost_report(cost: &Estimate, model: &str) -> Value {
    match cost {
        Estimate::Usd(cost) => {
            let mut report = json!({
                "usd": cost.total().usd(),
                "tokens_usd": cost.tokens.usd(),
                "web_searches_usd": cost.searches.usd(),
                "long_context": cost.long_context,
                "prices": match cost.source {
                    PriceSource::BuiltIn => format!("built-in, as of {PRICES_AS_OF}"),
                    PriceSource::Configured => "configured (pricing.models)".to_owned(),
                    PriceSource::Reported => "reported by the provider with the response".to_owned(),
                },
            });
            if cost.fees.0 > 0 {
                report["request_fee_usd"] = cost.fees.usd().into();
            }
            report
        }
        Estimate::Unknown(why) => json!({ "usd": null, "why": unpriced(*why, model) }),
    }
}

/// Why a call has no cost figure, and what gives one.
fn unpriced(why: Unpriced, model: &str) -> String {
    match why {
        Unpriced::Model => format!(
            "no price is known for model {model}; set pricing.models.{model} \
             (input_per_mtok, cached_input_per_mtok, output_per_mtok) to estimate its cost"
        ),
        Unpriced::Fee => format!(
            "model {model} is priced per request by reasoning effort, and no fee is known \
             for the effort this call sent; set pricing.models.{model}.per_request_usd_high \
             (or _low, _medium, or per_request_usd for every effort) to estimate its cost"
        ),
        Unpriced::Tier => format!(
            "the response's service tier has no known price multiplier for model {model}; \
             the cost is not estimated"
        ),
    }
}

/// What a call used: attempts, time, tokens, searches, what was adjusted.
fn counts(report: &Report) -> Value {
    let mut usage = json!({
        "attempts": report.attempts,
        "wall_ms": u64::try_from(report.wall.as_millis()).unwrap_or(u64::MAX),
    });
    if let Some(u) = &report.usage {
        usage["response_id"] = u.response_id.clone().into();
        usage["input_tokens"] = u.input_tokens.into();
        usage["cached_input_tokens"] = u.cached_input_tokens.into();
        usage["cache_write_tokens"] = u.cache_write_tokens.into();
        usage["output_tokens"] = u.output_tokens.into();
        usage["reasoning_tokens"] = u.reasoning_tokens.into();
        usage["web_searches"] = u.web_searches.into();
        usage["web_searches_from"] = u.searches_from.as_str().into();
        if let Some(tier) = &u.service_tier {
            usage["service_tier"] = tier.as_str().into();
        }
    }
    if !report.adjustments.is_empty() {
        let adjusted: Vec<Value> = report
            .adjustments
            .iter()
            .map(|a| json!({ "param": a.param.as_str(), "from": a.from, "to": a.to }))
            .collect();
        usage["adjusted"] = adjusted.into();
    }
    usage
}
