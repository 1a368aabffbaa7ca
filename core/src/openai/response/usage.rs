//! What a call used, read from a response: tokens, searches, the tier it was billed at,
//! and the cost when the service says it.

use super::super::body::ResponseBody;

/// OpenAI's `web_search_call`, or OpenRouter's server tool's item.
pub(crate) fn is_search_call(kind: Option<&str>) -> bool {
    matches!(kind, Some("web_search_call" | "openrouter:web_search"))
}

/// What a call used, for the tool result's `_meta`: tokens, searches, the response id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The response id OpenAI gave.
    pub response_id: Option<String>,
    /// Input tokens, cached ones and the search content read included.
    pub input_tokens: u64,
    /// Of the input tokens, those read from OpenAI's prompt cache.
    pub cached_input_tokens: u64,
    /// Output tokens (reasoning included).
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_tokens: u64,
    /// Of the input tokens, those written to OpenAI's prompt cache.
    pub cache_write_tokens: u64,
    /// Web searches billed: as OpenAI reports them, else the search calls in the output.
    pub web_searches: u32,
    /// Where [`Usage::web_searches`] came from.
    pub searches_from: SearchCount,
    /// The `service_tier` OpenAI says it processed the request with (what it bills).
    pub service_tier: Option<String>,
    /// What the service says it billed, when it says (Perplexity's `usage.cost`).
    pub billed: Option<Billed>,
    /// The `reasoning.effort` the request sent, for services that price a request by it
    /// (Parallel echoes none back).
    pub effort: Option<crate::vocab::Effort>,
}

/// A cost the service reported with its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Billed {
    /// The whole response.
    pub total: crate::money::Picodollars,
    /// Of it, the tool calls (searches, page fetches).
    pub tools: crate::money::Picodollars,
}

/// Where a call's count of web searches came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchCount {
    /// OpenAI's own count of the searches it bills (`tool_usage.web_search.num_requests`).
    Reported,
    /// The `web_search_call` items of kind `search` in the output (before OpenAI reported
    /// its count, or when a response lacks it).
    #[default]
    Counted,
}

impl SearchCount {
    /// How the usage report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchCount::Reported => "reported by the provider",
            SearchCount::Counted => "counted from the output",
        }
    }
}

/// The parts of a response its usage is read from.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsageParts<'a> {
    /// The response id.
    pub id: Option<&'a str>,
    /// Its `usage` object.
    pub usage: Option<&'a serde_json::Value>,
    /// Its `tool_usage` object.
    pub tool_usage: Option<&'a serde_json::Value>,
    /// The search calls counted in its output.
    pub searches_counted: u32,
    /// Its `service_tier`.
    pub service_tier: Option<&'a str>,
}

impl Usage {
    /// Reads the usage of a whole response body.
    pub fn of(body: &ResponseBody<'_>) -> Usage {
        let searches = body
            .output
            .iter()
            .filter(|i| is_search_call(i.kind.get()))
            .filter(|i| i.action.kind.get() == Some("search"))
            .count();
        Usage::from_parts(UsageParts {
            id: body.id.get(),
            usage: body.usage.get(),
            tool_usage: body.tool_usage.get(),
            searches_counted: u32::try_from(searches).unwrap_or(u32::MAX),
            service_tier: body.service_tier.get(),
        })
    }

    /// Usage from a response's parts.
    pub fn from_parts(parts: UsageParts<'_>) -> Usage {
        // Plain lookups: `Value::pointer` allocates for every path segment.
        let at = |root: Option<&serde_json::Value>, path: &[&str]| {
            root.and_then(|u| path.iter().try_fold(u, |v, key| v.get(key)))
                .and_then(serde_json::Value::as_u64)
        };
        let n = |path: &[&str]| at(parts.usage, path).unwrap_or(0);
        // OpenAI's count of billed searches: on the response, or inside its usage.
        let reported = at(parts.tool_usage, &["web_search", "num_requests"])
            .or_else(|| at(parts.usage, &["tool_usage", "web_search", "num_requests"]));
        // Perplexity counts its tool calls by name, and reports what it billed.
        let reported = reported.or_else(|| {
            at(
                parts.usage,
                &["tool_calls_details", "web_search", "invocation"],
            )
        });
        let (web_searches, searches_from) = match reported {
            Some(n) => (u32::try_from(n).unwrap_or(u32::MAX), SearchCount::Reported),
            None => (parts.searches_counted, SearchCount::Counted),
        };
        let service_tier = parts.service_tier;
        Usage {
            response_id: parts.id.map(str::to_owned),
            input_tokens: n(&["input_tokens"]),
            cached_input_tokens: n(&["input_tokens_details", "cached_tokens"]),
            cache_write_tokens: n(&["input_tokens_details", "cache_write_tokens"]),
            output_tokens: n(&["output_tokens"]),
            reasoning_tokens: n(&["output_tokens_details", "reasoning_tokens"]),
            web_searches,
            searches_from,
            // A tier name is a short word; anything else is not one.
            service_tier: service_tier.filter(|t| t.len() <= 32).map(str::to_owned),
            billed: billed(parts.usage),
            effort: None,
        }
    }
}

/// `usage.cost` of a service that reports what it billed: `total_cost` and
/// `tool_calls_cost` in US dollars (Perplexity's Agent API).
fn billed(usage: Option<&serde_json::Value>) -> Option<Billed> {
    let cost = usage?.get("cost")?;
    if cost.get("currency").and_then(serde_json::Value::as_str) != Some("USD") {
        return None;
    }
    let usd = |key: &str| {
        cost.get(key)
            .and_then(serde_json::Value::as_f64)
            .and_then(crate::money::Picodollars::from_usd)
    };
    let total = usd("total_cost")?;
    let tools = usd("tool_calls_cost").map_or(crate::money::Picodollars(0), |t| {
        crate::money::Picodollars(t.0.min(total.0))
    });
    Some(Billed { total, tools })
}
