//! The `prices` check: what each profile's calls are estimated with, as a line and as JSON.

use super::report::{Check, Status};
use responses_mcp_config::Startup;
use responses_mcp_core::openai::pricing::{
    ModelPrice, PerToken, PriceSource, PRICES_AS_OF, RESIDENCY_PERCENT,
};
use responses_mcp_core::vocab::Effort;
use serde_json::{json, Value};

/// The prices each profile's calls are estimated with, and the models that have none.
pub(super) fn prices(startup: &Startup) -> Check {
    let prices = startup.resolved.prices();
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    let mut details = serde_json::Map::new();
    for (tool, model, _) in startup.resolved.profile_models() {
        match prices.of(&model) {
            Some((price, source)) => {
                lines.push(price_line(&model, price, source, prices.residency));
                let shown = price_details(&model, price, source, prices.residency);
                details.insert(tool.name().into(), shown);
            }
            None => {
                unpriced.push(model.clone());
                details.insert(
                    tool.name().into(),
                    json!({ "model": model, "source": null }),
                );
            }
        }
    }
    lines.sort();
    lines.dedup();
    let per_1k = prices.web_search_call.usd() * 1000.0;
    lines.push(format!("web search ${per_1k} per 1,000 calls"));
    details.insert("web_search_per_1k_usd".into(), json!(per_1k));
    let summary = lines.join("; ");
    if unpriced.is_empty() {
        return Check::new("prices", Status::Ok, summary).details(Value::Object(details));
    }
    let api = startup.resolved.settings.openai.provider.api();
    if api == responses_mcp_core::settings::Api::Perplexity {
        // Its responses carry what they cost (`usage.cost`), which the estimate takes.
        let summary =
            format!("{summary}; Perplexity reports each response's cost, which calls use");
        return Check::new("prices", Status::Ok, summary).details(Value::Object(details));
    }
    unpriced.sort();
    unpriced.dedup();
    Check::new("prices", Status::Warn, summary)
        .advice(format!(
            "no price is known for {}: calls work, but their cost is not estimated; set \
             pricing.models.<model> (input_per_mtok, output_per_mtok) in the configuration",
            unpriced.join(", ")
        ))
        .details(Value::Object(details))
}

/// One model's prices, as the report's line says them.
fn price_line(
    model: &str,
    price: &ModelPrice,
    source: PriceSource,
    residency: Option<&str>,
) -> String {
    let per_million = |rate: PerToken| format!("${}", rate.usd_per_million());
    let origin = match (source, residency) {
        (PriceSource::BuiltIn, Some(region)) => format!(
            "built-in, as of {PRICES_AS_OF}; billed at {RESIDENCY_PERCENT} % at the {region} data-residency endpoint"
        ),
        (PriceSource::BuiltIn, None) => format!("built-in, as of {PRICES_AS_OF}"),
        (PriceSource::Configured | PriceSource::Reported, _) => "configured".to_owned(),
    };
    let fees = price.fees;
    let per_request = match fees.any_set() {
        false => String::new(),
        true => {
            let fee = |e: Effort| {
                let usd = fees.at(e).map(|f| format!("${}", f.usd()));
                format!("{e} {}", usd.as_deref().unwrap_or("unknown"))
            };
            let listed: Vec<String> = EFFORTS.into_iter().map(fee).collect();
            format!("; per request: {}", listed.join(", "))
        }
    };
    format!(
        "{model} {} / {} cached / {} cache writes / {} output per million tokens{per_request} ({origin})",
        per_million(price.input),
        per_million(price.cached_input),
        per_million(price.cache_write),
        per_million(price.output),
    )
}

/// The reasoning efforts a per-request fee is listed for.
const EFFORTS: [Effort; 3] = [Effort::Low, Effort::Medium, Effort::High];

/// One model's prices, as the JSON report gives them.
fn price_details(
    model: &str,
    price: &ModelPrice,
    source: PriceSource,
    residency: Option<&str>,
) -> Value {
    let fees = price.fees;
    json!({
        "model": model,
        "input_per_mtok": price.input.usd_per_million(),
        "cached_input_per_mtok": price.cached_input.usd_per_million(),
        "cache_write_per_mtok": price.cache_write.usd_per_million(),
        "output_per_mtok": price.output.usd_per_million(),
        "long_context_above_tokens": price.long_context_above,
        "source": source.as_str(),
        "data_residency": residency,
        "per_request_usd": fees.any_set().then(|| {
            EFFORTS
                .into_iter()
                .map(|e| (e.to_string(), json!(fees.at(e).map(|f| f.usd()))))
                .collect::<serde_json::Map<_, _>>()
        }),
    })
}
