//! Reading the answer, `used_search` and citations out of a Responses API body.

use super::body::{Item, ResponseBody, SearchResult};
use super::status::{FailureKind, UpstreamFailure};
use serde::Serialize;

/// What a tool call returns (spec 3.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// The answer text, ending with a `Sources:` list when search was used.
    pub answer: String,
    /// Whether web search was used.
    pub used_search: bool,
    /// The sources, de-duplicated, in first-seen order, capped.
    pub citations: Vec<Citation>,
    /// The model id the API reported.
    pub model: String,
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

/// One source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Citation {
    /// The URL, or a source id such as `oai-weather` for non-web sources.
    pub url: String,
    /// The page title, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The source's publication date, `YYYY-MM-DD`, only when the service gives one
    /// (Perplexity's `search_results` do; OpenAI's Responses API gives none today, so
    /// there it is absent: a date the page was read is not a publication date).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    /// The day the source was read, `YYYY-MM-DD` in Asia/Tokyo: the day of the answer.
    pub accessed_at: String,
}

/// Reads an answer from a 2xx body.
///
/// `fallback_model` is used when the body names no model; `access_date` (Asia/Tokyo,
/// `YYYY-MM-DD`) is each citation's `accessed_at`.
///
/// # Errors
/// A failure when the response is not a completed answer: status incomplete, failed,
/// cancelled or still running, a refusal, or no message text at all.
pub fn parse_answer(
    body: &ResponseBody<'_>,
    max_citations: usize,
    fallback_model: &str,
    access_date: &str,
) -> Result<Answer, UpstreamFailure> {
    check_status(body)?;
    let output = &body.output;
    let (mut text, refusal, mut cited) = read_messages(output);
    let searches: Vec<&Item<'_>> = output
        .iter()
        .filter(|i| is_search_call(i.kind.get()))
        .collect();
    // Perplexity lists the pages its searches found as `search_results` items, with
    // their publication dates.
    let found: Vec<&SearchResult<'_>> = output
        .iter()
        .filter(|i| i.kind.get() == Some("search_results"))
        .flat_map(|i| i.results.iter())
        .collect();
    let used_search = !cited.list.is_empty() || !searches.is_empty() || !found.is_empty();
    if cited.list.is_empty() {
        for page in &found {
            if let Some(url) = page.url.get() {
                cited.add(url, page.title.get());
            }
        }
    }
    cited.date_from(&found);
    if cited.list.is_empty() {
        for source in searches.iter().flat_map(|call| call.action.sources.iter()) {
            match source.url.get() {
                Some(url) => cited.add(url, source.title.get()),
                // Non-web sources such as `{"type":"api","name":"oai-weather"}`.
                None => {
                    if let Some(name) = source.name.get() {
                        cited.add(name, None);
                    }
                }
            }
        }
    }
    if text.trim().is_empty() {
        return Err(match refusal {
            Some(r) => {
                UpstreamFailure::local(FailureKind::Refusal, format!("the model refused: {r}"))
            }
            None => {
                UpstreamFailure::local(FailureKind::NoAnswer, "the response held no answer text")
            }
        });
    }
    let mut citations = cited.list;
    citations.truncate(max_citations);
    for c in &mut citations {
        access_date.clone_into(&mut c.accessed_at);
    }
    if used_search {
        append_sources(&mut text, &citations);
    }
    let model = body
        .model
        .get()
        .filter(|m| !m.is_empty())
        .unwrap_or(fallback_model)
        .to_owned();
    Ok(Answer {
        answer: text,
        used_search,
        citations,
        model,
    })
}

/// The answer text, a refusal and the cited sources, from the output's messages (only the
/// `final_answer` when a message has a phase: newer models send `commentary` first).
fn read_messages(output: &[Item<'_>]) -> (String, Option<String>, Sources) {
    let messages: Vec<&Item<'_>> = output
        .iter()
        .filter(|i| i.kind.get() == Some("message"))
        .collect();
    // Newer models send a `commentary` message before the `final_answer`; only the final
    // answer is the answer.
    let is_final = |m: &&&Item<'_>| m.phase.get() == Some("final_answer");
    let has_phase = messages.iter().any(|m| is_final(&m));
    let chosen = messages.iter().filter(|m| !has_phase || is_final(m));

    let mut text = String::new();
    let mut refusal = None;
    let mut cited = Sources::default();
    for message in chosen {
        for part in message.content.iter() {
            match part.kind.get() {
                Some("output_text") => {
                    if let Some(t) = part.text.get() {
                        if !text.is_empty() && !t.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(t);
                    }
                    for a in part.annotations.iter() {
                        if a.kind.get() == Some("url_citation") {
                            if let Some(url) = a.url.get() {
                                cited.add(url, a.title.get());
                            }
                        }
                    }
                }
                Some("refusal") => refusal = part.refusal.get().map(str::to_owned),
                _ => {}
            }
        }
    }
    (text, refusal, cited)
}

/// OpenAI's `web_search_call`, or OpenRouter's server tool's item.
pub(crate) fn is_search_call(kind: Option<&str>) -> bool {
    matches!(kind, Some("web_search_call" | "openrouter:web_search"))
}

fn check_status(body: &ResponseBody<'_>) -> Result<(), UpstreamFailure> {
    match body.status.get() {
        None | Some("completed") => Ok(()),
        Some("incomplete") => {
            let reason = body
                .incomplete_details
                .reason
                .get()
                .unwrap_or("unknown reason");
            Err(UpstreamFailure {
                code: Some(reason.to_owned()),
                ..UpstreamFailure::local(
                    FailureKind::Incomplete,
                    format!("the response is incomplete ({reason})"),
                )
            })
        }
        Some("failed") => Err(match body.error.get() {
            Some(e) => {
                UpstreamFailure::from_api(None, FailureKind::Failed, e, "the response failed")
            }
            None => UpstreamFailure::local(FailureKind::Failed, "the response failed"),
        }),
        Some(other) => Err(UpstreamFailure::local(
            FailureKind::UnexpectedStatus,
            format!("the response has status {other:?} instead of completed"),
        )),
    }
}

/// Citations de-duplicated by URL without tracking parameters, in first-seen order.
#[derive(Default)]
struct Sources {
    list: Vec<Citation>,
}

impl Sources {
    fn add(&mut self, url: &str, title: Option<&str>) {
        let url = strip_tracking(url.trim());
        if url.is_empty() {
            return;
        }
        let title = title
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        match self.list.iter_mut().find(|c| c.url == url) {
            Some(existing) => {
                if existing.title.is_none() {
                    existing.title = title;
                }
            }
            None => self.list.push(Citation {
                url,
                title,
                published_at: None,
                accessed_at: String::new(),
            }),
        }
    }
}

impl Sources {
    /// Gives each source the publication date a search result of its URL reports, when
    /// that is a `YYYY-MM-DD` date.
    fn date_from(&mut self, found: &[&SearchResult<'_>]) {
        for page in found {
            let (Some(url), Some(date)) = (page.url.get(), page.date.get()) else {
                continue;
            };
            let date = date.get(..10).filter(|d| crate::date::is_iso_date(d));
            let url = strip_tracking(url.trim());
            if let Some(c) = self.list.iter_mut().find(|c| c.url == url) {
                if c.published_at.is_none() {
                    c.published_at = date.map(str::to_owned);
                }
            }
        }
    }
}

/// Removes `utm_*` query parameters, which OpenAI adds to cited URLs.
fn strip_tracking(url: &str) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let Some((path, query)) = base.split_once('?') else {
        return url.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("utm_"))
        .collect();
    let mut out = path.to_owned();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Ends `text` with a `Sources:` list of the citations: the model's own list is extended
/// with the sources it left out, never written a second time.
fn append_sources(text: &mut String, citations: &[Citation]) {
    // Inline links do not count: only a list under a `Sources:` heading does.
    let section = sources_heading(text).map(|at| text[at..].to_owned());
    let written = section.as_deref().unwrap_or("");
    let missing: Vec<String> = citations
        .iter()
        .filter(|c| !written.contains(&c.url))
        .map(|c| match &c.published_at {
            Some(published) => format!("- {} ({published})", c.url),
            None => format!("- {} (accessed {})", c.url, c.accessed_at),
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let trimmed_len = text.trim_end().len();
    text.truncate(trimmed_len);
    text.push_str(if section.is_some() {
        "\n"
    } else {
        "\n\nSources:\n"
    });
    text.push_str(&missing.join("\n"));
}

/// Byte offset of the last line that opens a sources section, if any.
fn sources_heading(text: &str) -> Option<usize> {
    let mut found = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line
            .trim_start_matches(['#', '*', ' '])
            .to_ascii_lowercase();
        if l.starts_with("sources") || l.starts_with("出典") || l.starts_with("参考") {
            found = Some(offset);
        }
        offset += line.len();
    }
    found
}

#[cfg(test)]
mod tests;
