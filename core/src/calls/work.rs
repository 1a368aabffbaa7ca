//! The kinds of upstream work the engine runs, the request each attempt sends, and how
//! the reply of a stored (background) response reads.
//!
//! An answer and a background create are calls: each takes a `max_inflight` slot and
//! queues when none is free. Reads and cancels of stored responses are fetches: they take
//! no slot (a poll must not wait behind the answers it polls for), at most
//! [`MAX_FETCHES`] run at once, and their retries wait at least the fetch pace, so one
//! response is read at most once per poll interval on every path.

use crate::io::HttpMethod;
use crate::openai::{parse_answer, Answer, FailureKind, ResponseBody, UpstreamFailure, Usage};

/// Most reads, cancels and model lookups in flight or waiting to retry at once.
pub const MAX_FETCHES: usize = 64;
/// Most identity-provider documents in flight at once: a room of their own, so that
/// background reads filling [`MAX_FETCHES`] never keep the gate from its keys (it asks
/// for one document at a time).
pub const MAX_IDENTITY_FETCHES: usize = 4;

/// What a piece of work does upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Work {
    /// `POST /responses`; the reply is an answer.
    Answer,
    /// `POST /responses` in background mode; the reply is a stored response's first state.
    Create,
    /// `GET /responses/{id}`: a stored response's state now.
    Read(String),
    /// `POST /responses/{id}/cancel`.
    Cancel(String),
    /// `GET /models/{id}`: what the provider says of a model (its `shutdown_date`).
    Model(String),
    /// `GET` of a document of the identity provider (OAuth mode: its metadata, its key
    /// set), at this absolute URL, without the provider's credentials.
    Fetch(String),
}

impl Work {
    /// Whether the work holds a `max_inflight` slot while it runs.
    pub fn takes_slot(&self) -> bool {
        matches!(self, Work::Answer | Work::Create)
    }

    /// Whether the work is about a stored response (its outcome is a [`Stored`]).
    pub fn is_stored(&self) -> bool {
        matches!(self, Work::Create | Work::Read(_) | Work::Cancel(_))
    }

    /// Whether a transport failure of `kind` may be retried. A create that may have
    /// reached OpenAI (the connection broke or timed out after sending) is not sent
    /// again: a second background response would run, and be paid for, beside the first.
    pub fn retries_after(&self, kind: FailureKind) -> bool {
        kind.is_transient() && (*self != Work::Create || kind == FailureKind::Connect)
    }

    /// The method, URL and body of an attempt; `base` is the API root, `responses` is
    /// `{base}/responses` (built once), and `body` builds the plan's request body (answers
    /// and creates only).
    pub fn request(
        &self,
        base: &str,
        responses: &str,
        body: impl FnOnce() -> Vec<u8>,
    ) -> (HttpMethod, String, Vec<u8>) {
        match self {
            Work::Fetch(url) => (HttpMethod::Get, url.clone(), Vec::new()),
            Work::Model(id) => (
                HttpMethod::Get,
                format!("{base}/models/{}", path_segment(id)),
                Vec::new(),
            ),
            Work::Answer | Work::Create => (HttpMethod::Post, responses.to_owned(), body()),
            Work::Read(id) => (
                HttpMethod::Get,
                format!("{responses}/{}", path_segment(id)),
                Vec::new(),
            ),
            // An empty JSON object: both clients label every POST body JSON.
            Work::Cancel(id) => (
                HttpMethod::Post,
                format!("{responses}/{}/cancel", path_segment(id)),
                b"{}".to_vec(),
            ),
        }
    }
}

/// A stored response as one reply showed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The response id (a create learns it here).
    pub id: Option<String>,
    /// Where the response is.
    pub state: StoredState,
}

/// Where a stored response is. Every status OpenAI gives maps to one of these.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredState {
    /// `queued` or `in_progress`.
    Working,
    /// `cancelled`, with the usage it reported when it did (a run cancelled mid-way has
    /// used what it read and wrote so far), and the model it ran on (the body's, else
    /// the one the read named), which prices it.
    Cancelled {
        /// OpenAI's usage, when the body had one.
        usage: Option<Box<Usage>>,
        /// The model.
        model: String,
    },
    /// `completed`, `failed` or `incomplete` (or an unknown status): the outcome a plain
    /// call would have for the same body, with the usage it reported.
    /// The usage is boxed: it is the largest part, and the other states carry nothing.
    Ended(Result<Answer, UpstreamFailure>, Box<Usage>),
}

impl Stored {
    /// Reads a 2xx body of a stored response. A `failed` or `incomplete` response is an
    /// ending, never a reason to read again: it will not change.
    pub fn read(
        body: &ResponseBody<'_>,
        max_citations: usize,
        model: &str,
        access_date: &str,
    ) -> Stored {
        let state = match body.status.get() {
            Some("queued" | "in_progress") => StoredState::Working,
            Some("cancelled") => StoredState::Cancelled {
                usage: body
                    .usage
                    .get()
                    .is_some()
                    .then(|| Box::new(Usage::of(body))),
                model: body.model.get().unwrap_or(model).to_owned(),
            },
            _ => StoredState::Ended(
                parse_answer(body, max_citations, model, access_date),
                Box::new(Usage::of(body)),
            ),
        };
        Stored {
            id: body.id.get().map(str::to_owned),
            state,
        }
    }
}

/// The `shutdown_date` a 2xx `GET /models/{id}` body gives (`YYYY-MM-DD`), or `None`
/// when it gives none (absent, `null`, or not a date).
///
/// # Errors
/// The body is not JSON.
pub fn shutdown_date(status: u16, body: &[u8]) -> Result<Option<String>, UpstreamFailure> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| not_json(status))?;
    Ok(value
        .get("shutdown_date")
        .and_then(serde_json::Value::as_str)
        .filter(|d| crate::date::is_iso_date(d))
        .map(str::to_owned))
}

/// The failure of a 2xx body that is not JSON.
pub fn not_json(status: u16) -> UpstreamFailure {
    UpstreamFailure {
        status: Some(status),
        ..UpstreamFailure::local(
            FailureKind::InvalidResponse,
            "the response body is not JSON",
        )
    }
}

/// A response id as one URL path segment (ids are `resp_…`; anything else is escaped).
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(json: &str) -> Stored {
        let body = ResponseBody::parse(json.as_bytes()).unwrap();
        Stored::read(&body, 3, "gpt-6.1-terra", "2026-11-26")
    }

    #[test]
    fn every_status_maps_to_a_state() {
        assert_eq!(
            stored(r#"{"id":"resp_1","status":"queued"}"#).state,
            StoredState::Working
        );
        assert_eq!(
            stored(r#"{"id":"resp_1","status":"in_progress"}"#).state,
            StoredState::Working
        );
        assert_eq!(
            stored(r#"{"id":"resp_1","status":"cancelled"}"#).state,
            StoredState::Cancelled {
                usage: None,
                model: "gpt-6.1-terra".into()
            }
        );
        let completed = stored(
            r#"{"id":"resp_1","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"42"}]}]}"#,
        );
        assert_eq!(completed.id.as_deref(), Some("resp_1"));
        assert!(
            matches!(completed.state, StoredState::Ended(Ok(ref a), _) if a.answer.starts_with("42"))
        );
        let failed = stored(
            r#"{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model failed."}}"#,
        );
        let StoredState::Ended(Err(f), _) = failed.state else {
            panic!("{failed:?}");
        };
        assert_eq!(
            (f.kind, f.code.as_deref()),
            (FailureKind::Failed, Some("server_error"))
        );
        assert_eq!(f.message, "The model failed.");
        let cut = stored(
            r#"{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}"#,
        );
        let StoredState::Ended(Err(f), _) = cut.state else {
            panic!("{cut:?}");
        };
        assert_eq!(f.kind, FailureKind::Incomplete);
        assert!(f.message.contains("max_output_tokens"), "{}", f.message);
    }

    #[test]
    fn requests_by_work() {
        let r = "https://api.openai.com/v1/responses";
        let body = || b"{}".to_vec();
        assert_eq!(
            Work::Answer.request("https://api.openai.com/v1", r, body).1,
            r
        );
        let (method, url, body) = Work::Read("resp_a/b".into()).request(
            "https://api.openai.com/v1",
            r,
            || unreachable!(),
        );
        assert_eq!(
            (method, url.as_str()),
            (
                HttpMethod::Get,
                "https://api.openai.com/v1/responses/resp_a%2Fb"
            )
        );
        assert!(body.is_empty());
        let (method, url, _) = Work::Cancel("resp_1".into()).request(
            "https://api.openai.com/v1",
            r,
            || unreachable!(),
        );
        assert_eq!(
            (method, url.as_str()),
            (
                HttpMethod::Post,
                "https://api.openai.com/v1/responses/resp_1/cancel"
            )
        );
    }

    #[test]
    fn a_models_shutdown_date_is_read_when_it_is_a_date() {
        let date = |body: &str| shutdown_date(200, body.as_bytes());
        assert_eq!(
            date(r#"{"id":"gpt-5","shutdown_date":"2026-12-11"}"#)
                .unwrap()
                .as_deref(),
            Some("2026-12-11")
        );
        assert_eq!(
            date(r#"{"id":"gpt-6.1-terra","shutdown_date":null}"#).unwrap(),
            None
        );
        assert_eq!(date(r#"{"id":"x"}"#).unwrap(), None);
        assert_eq!(date(r#"{"shutdown_date":"soon"}"#).unwrap(), None);
        assert_eq!(date(r#"{"shutdown_date":"2026-13-45"}"#).unwrap(), None);
        assert!(date("<html>").is_err());
        let (method, url, _) = Work::Model("gpt-6.1-terra".into()).request(
            "https://h/v1",
            "https://h/v1/responses",
            || unreachable!(),
        );
        assert_eq!(
            (method, url.as_str()),
            (HttpMethod::Get, "https://h/v1/models/gpt-6.1-terra")
        );
        assert!(!Work::Model("m".into()).takes_slot() && !Work::Model("m".into()).is_stored());
    }

    #[test]
    fn a_create_is_resent_only_when_it_never_left() {
        assert!(Work::Create.retries_after(FailureKind::Connect));
        assert!(!Work::Create.retries_after(FailureKind::Timeout));
        assert!(!Work::Create.retries_after(FailureKind::Io));
        assert!(Work::Answer.retries_after(FailureKind::Io));
        assert!(Work::Read("r".into()).retries_after(FailureKind::Timeout));
        assert!(!Work::Read("r".into()).retries_after(FailureKind::Tls));
    }
}
