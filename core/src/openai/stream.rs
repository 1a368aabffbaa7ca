//! Folding a streamed response (`"stream": true`) into what an answer needs, event by
//! event: the finished output items (messages with their text and citations, web search
//! calls with their sources), the model, the usage, and how the stream ended. The events
//! themselves are never kept, so a call in flight holds about its answer.
//!
//! At the end the folded items are read by the same reader as a whole response
//! ([`parse_answer`]), so an answer is the same, field for field, streamed or not.
//! Along the way the fold says what the model is doing ([`StreamHint`]), for progress.

use super::body::ResponseBody;
use super::response::{parse_answer, Answer, Usage};
use super::status::{FailureKind, UpstreamFailure};
use crate::sse::SseEvent;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// What the model is doing, as far as the stream shows.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamHint {
    /// A web search started; the query once the stream names it.
    Searching(Option<String>),
    /// A page is being opened or searched: its host.
    Reading(String),
    /// The answer text started.
    Writing,
}

/// How a stream ended.
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEnd {
    /// A completed answer.
    Answer(Answer, Usage),
    /// A failure another attempt may not have (a rate limit, a server error, a cut).
    Retry(UpstreamFailure),
    /// A failure retrying cannot fix.
    Fail(UpstreamFailure),
}

/// One event's effect.
#[derive(Debug, PartialEq)]
pub enum Folded {
    /// Keep reading; the model is doing this (when it changed).
    More(Option<StreamHint>),
    /// A terminal event arrived: call [`StreamFold::finish`].
    End,
}

/// The state of one streamed response. See the module docs.
#[derive(Default)]
pub struct StreamFold {
    /// Finished `message` and `web_search_call` items, as JSON text, in output order.
    items: Vec<(u64, String)>,
    /// The terminal response object's fields we read, once it arrived.
    terminal: Option<Terminal>,
    /// Whether the answer text has started (reported once).
    writing: bool,
    web_searches: u32,
    /// Web search items added (begun), finished or not.
    searches_added: u32,
}

/// What the terminal event said.
enum Terminal {
    /// `response.completed` / `response.incomplete`: the response object less its output
    /// (and its output, for servers that send no `output_item.done`).
    Response { meta: Value, output: Vec<Value> },
    /// `response.failed` or an `error` event: the error object.
    Failed(Value),
}

impl StreamFold {
    /// A fold for a new stream.
    pub fn new() -> Self {
        StreamFold::default()
    }

    /// Web searches the stream has shown starting so far (an added search item is
    /// billed whether or not it finishes).
    pub fn searches_begun(&self) -> u32 {
        self.web_searches.max(self.searches_added)
    }

    /// Takes one event in. Events that are not JSON, or of types we do not know, are
    /// skipped: compatible servers add their own (keepalives, for one).
    pub fn feed(&mut self, event: &SseEvent) -> Folded {
        if self.terminal.is_some() {
            return Folded::End;
        }
        if event.data == "[DONE]" {
            // Some compatible servers end this way; a stream that ends before a terminal
            // event is a cut stream.
            return Folded::End;
        }
        // OpenAI names every event; most are text deltas and argument deltas we need not
        // read, so only the events the fold uses are parsed (an unnamed event is parsed
        // to learn its type).
        let named = event.event != "message";
        if named && !NEEDED.contains(&event.event.as_str()) {
            return Folded::More(None);
        }
        if named && event.event == "response.output_text.delta" {
            return Folded::More(self.start_writing());
        }
        if named && TERMINAL.contains(&event.event.as_str()) {
            return self.terminal_event(&event.event, &event.data);
        }
        if named && event.event == "response.output_item.done" {
            return Folded::More(self.item_done_raw(&event.data));
        }
        let Ok(Value::Object(mut data)) = serde_json::from_str::<Value>(&event.data) else {
            return Folded::More(None);
        };
        let kind = match data.get("type").and_then(Value::as_str) {
            Some(kind) => kind.to_owned(),
            None => event.event.clone(),
        };
        match kind.as_str() {
            "response.output_item.added" => Folded::More(self.item_added(data.get("item"))),
            "response.output_item.done" => {
                let index = data.get("output_index").and_then(Value::as_u64);
                let item = data.remove("item").unwrap_or(Value::Null);
                let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
                Folded::More(self.keep_item(index, kind, item.get("action"), || item.to_string()))
            }
            "response.output_text.delta" => Folded::More(self.start_writing()),
            k if TERMINAL.contains(&k) => self.terminal_event(k, &event.data),
            _ => Folded::More(None),
        }
    }

    fn start_writing(&mut self) -> Option<StreamHint> {
        (!std::mem::replace(&mut self.writing, true)).then_some(StreamHint::Writing)
    }

    /// A terminal event: its response object is read without its output (the items came
    /// one by one), unless no item came, when its output is all there is.
    fn terminal_event(&mut self, kind: &str, data: &str) -> Folded {
        let envelope: Envelope = serde_json::from_str(data).unwrap_or_default();
        self.terminal = Some(match (kind, envelope.response, envelope.error) {
            ("error", _, Some(error)) if error.is_object() => Terminal::Failed(error),
            // The published spec puts the error's fields at the top of the event.
            ("error", _, _) => Terminal::Failed(serde_json::from_str(data).unwrap_or(Value::Null)),
            ("response.failed", Some(response), _) if response.error.is_object() => {
                Terminal::Failed(response.error)
            }
            (_, response, _) => {
                let response = response.unwrap_or_default();
                let output = if self.items.is_empty() {
                    full_output(data)
                } else {
                    Vec::new()
                };
                Terminal::Response {
                    meta: response.into_meta(),
                    output,
                }
            }
        });
        Folded::End
    }

    fn item_added(&mut self, item: Option<&Value>) -> Option<StreamHint> {
        match item?.get("type")?.as_str()? {
            kind if super::response::is_search_call(Some(kind)) => {
                self.searches_added += 1;
                Some(StreamHint::Searching(None))
            }
            "message" => self.start_writing(),
            _ => None,
        }
    }

    /// `response.output_item.done` as OpenAI names it: the item's kind and action are
    /// read typed and its JSON kept as sent, without building a tree of it (the item
    /// holds the whole answer text and its citations).
    fn item_done_raw(&mut self, data: &str) -> Option<StreamHint> {
        #[derive(Deserialize)]
        struct Done<'a> {
            // Anything but a small integer is no index, as on the general path.
            #[serde(default)]
            output_index: Option<Value>,
            #[serde(borrow)]
            item: &'a RawValue,
        }
        #[derive(Deserialize)]
        struct Head {
            #[serde(rename = "type", default)]
            kind: String,
            #[serde(default)]
            action: Option<Value>,
        }
        let done: Done = serde_json::from_str(data).ok()?;
        let head: Head = serde_json::from_str(done.item.get()).ok()?;
        let json = || done.item.get().to_owned();
        let index = done.output_index.as_ref().and_then(Value::as_u64);
        self.keep_item(index, &head.kind, head.action.as_ref(), json)
    }

    /// Keeps a finished message or web search call (others carry nothing an answer
    /// uses); `json` is the item as JSON, made only when kept.
    fn keep_item(
        &mut self,
        index: Option<u64>,
        kind: &str,
        action: Option<&Value>,
        json: impl FnOnce() -> String,
    ) -> Option<StreamHint> {
        let search = super::response::is_search_call(Some(kind));
        if kind != "message" && !search {
            return None;
        }
        let hint = search.then(|| action.and_then(search_hint)).flatten();
        if hint
            .as_ref()
            .is_some_and(|h| matches!(h, StreamHint::Searching(_)))
        {
            self.web_searches += 1;
        }
        let index = index.unwrap_or(self.items.len() as u64);
        self.items.push((index, json()));
        hint
    }

    /// The answer, or why there is none, once [`Folded::End`] came (or the stream ended
    /// without it, which is a cut stream). `max_citations`, `fallback_model` and
    /// `access_date` are as for [`parse_answer`].
    pub fn finish(
        self,
        max_citations: usize,
        fallback_model: &str,
        access_date: &str,
    ) -> StreamEnd {
        let (meta, output) = match self.terminal {
            None => {
                return StreamEnd::Retry(UpstreamFailure::local(
                    FailureKind::Io,
                    "the response stream ended before response.completed",
                ))
            }
            Some(Terminal::Failed(error)) => return failed(&error),
            Some(Terminal::Response { meta, output }) => (meta, output),
        };
        let mut items = self.items;
        items.sort_by_key(|(index, _)| *index);
        // Servers that send no `output_item.done` still send the whole output at the end.
        let output: Vec<String> = if items.is_empty() {
            output.iter().map(Value::to_string).collect()
        } else {
            items.into_iter().map(|(_, json)| json).collect()
        };
        let mut body = meta.to_string();
        body.pop(); // the closing brace: the output goes in before it
        if body.len() > 1 {
            body.push(',');
        }
        body.push_str("\"output\":[");
        body.push_str(&output.join(","));
        body.push_str("]}");
        let usage = usage(&meta, self.web_searches);
        match ResponseBody::parse(body.as_bytes()) {
            Ok(response) => {
                match parse_answer(&response, max_citations, fallback_model, access_date) {
                    Ok(answer) => StreamEnd::Answer(answer, usage),
                    Err(failure) => StreamEnd::Fail(failure),
                }
            }
            Err(_) => StreamEnd::Fail(UpstreamFailure::local(
                FailureKind::InvalidResponse,
                "the streamed response could not be read",
            )),
        }
    }
}

/// The events the fold reads; others are skipped unparsed.
const NEEDED: [&str; 7] = [
    "response.output_item.added",
    "response.output_item.done",
    "response.output_text.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
];

/// The events that end a stream.
const TERMINAL: [&str; 4] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
];

/// A terminal event, less the response's output.
#[derive(Default, serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    response: Option<ResponseMeta>,
    #[serde(default)]
    error: Option<Value>,
}

/// The fields of a response object an answer needs, other than its output; each is read
/// as any JSON value, so an odd type is left for the reader to ignore.
#[derive(Default, serde::Deserialize)]
struct ResponseMeta {
    #[serde(default)]
    id: Value,
    #[serde(default)]
    status: Value,
    #[serde(default)]
    model: Value,
    #[serde(default)]
    usage: Value,
    #[serde(default)]
    tool_usage: Value,
    #[serde(default)]
    service_tier: Value,
    #[serde(default)]
    incomplete_details: Value,
    #[serde(default)]
    error: Value,
}

impl ResponseMeta {
    fn into_meta(self) -> Value {
        let mut meta = serde_json::Map::new();
        for (key, value) in [
            ("id", self.id),
            ("status", self.status),
            ("model", self.model),
            ("usage", self.usage),
            ("tool_usage", self.tool_usage),
            ("service_tier", self.service_tier),
            ("incomplete_details", self.incomplete_details),
            ("error", self.error),
        ] {
            if !value.is_null() {
                meta.insert(key.to_owned(), value);
            }
        }
        Value::Object(meta)
    }
}

/// The output of the terminal event's response, for servers that send no items.
fn full_output(data: &str) -> Vec<Value> {
    let Ok(mut event) = serde_json::from_str::<Value>(data) else {
        return Vec::new();
    };
    match event.pointer_mut("/response/output").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

/// A failure read from an error object: transient codes are retried, as their HTTP
/// equivalents are.
fn failed(error: &Value) -> StreamEnd {
    let failure =
        UpstreamFailure::from_api(None, FailureKind::Failed, error, "the response failed");
    match failure.code.as_deref() {
        Some("rate_limit_exceeded" | "server_error") => StreamEnd::Retry(failure),
        _ => StreamEnd::Fail(failure),
    }
}

/// What a web search call's action says it was doing: a search (with its query) or a
/// page.
fn search_hint(action: &Value) -> Option<StreamHint> {
    match action.get("type").and_then(Value::as_str) {
        Some("search") => {
            let query = action
                .get("query")
                .and_then(Value::as_str)
                .or_else(|| action.pointer("/queries/0").and_then(Value::as_str));
            Some(StreamHint::Searching(query.map(str::to_owned)))
        }
        Some("open_page" | "find_in_page") => {
            let url = action.get("url").and_then(Value::as_str)?;
            let (host, _) = crate::http::host_and_port(url)?;
            Some(StreamHint::Reading(host.to_owned()))
        }
        _ => None,
    }
}

fn usage(meta: &Value, searches_counted: u32) -> Usage {
    Usage::from_parts(super::response::UsageParts {
        id: meta.get("id").and_then(Value::as_str),
        usage: meta.get("usage"),
        tool_usage: meta.get("tool_usage"),
        searches_counted,
        service_tier: meta.get("service_tier").and_then(Value::as_str),
    })
}

#[cfg(test)]
mod tests;
