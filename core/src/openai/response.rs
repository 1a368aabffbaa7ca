//! Reading the answer, `used_search` and citations out of a Responses API body.

use super::body::{Item, ResponseBody, SearchResult};
use super::status::{FailureKind, UpstreamFailure};
use serde::Serialize;
use std::collections::BTreeMap;

mod usage;
pub(crate) use usage::is_search_call;
pub use usage::{Billed, SearchCount, Usage, UsageParts};

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
    /// Each URL's place in `list`: a reply may cite thousands of pages (a 16 MiB body,
    /// hundreds of thousands), and a search of the list per citation made reading it
    /// quadratic.
    at: BTreeMap<String, usize>,
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
        if let Some(existing) = self.find_mut(&url) {
            if existing.title.is_none() {
                existing.title = title;
            }
            return;
        }
        self.at.insert(url.clone(), self.list.len());
        self.list.push(Citation {
            url,
            title,
            published_at: None,
            accessed_at: String::new(),
        });
    }

    fn find_mut(&mut self, url: &str) -> Option<&mut Citation> {
        let &i = self.at.get(url)?;
        self.list.get_mut(i)
    }

    /// Gives each source the publication date a search result of its URL reports, when
    /// that is a `YYYY-MM-DD` date.
    fn date_from(&mut self, found: &[&SearchResult<'_>]) {
        for page in found {
            let (Some(url), Some(date)) = (page.url.get(), page.date.get()) else {
                continue;
            };
            let date = date.get(..10).filter(|d| crate::date::is_iso_date(d));
            let url = strip_tracking(url.trim());
            if let Some(c) = self.find_mut(&url) {
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
