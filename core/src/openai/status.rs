//! Deciding what an upstream reply means: an answer to read, a retry, or a failure.

use super::body::ResponseBody;
use super::drift::ParamRejection;
use crate::io::TransportErrorKind;
use serde_json::Value;
use std::time::Duration;

/// The longest server-requested wait we honour; longer requests are capped to it.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Longest upstream error message kept (spec 8.2: about 400 characters).
const MAX_MESSAGE_CHARS: usize = 400;

/// A wait the server asked for, from `retry-after-ms` or `retry-after`.
pub type RetryAfter = Option<Duration>;

/// What kind of failure ended an attempt. Retry decisions and advice match on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// A non-2xx HTTP status.
    HttpError,
    /// The response (or a 2xx body) carried an API `error`, or had status `failed`.
    Failed,
    /// A 2xx body that is not JSON.
    InvalidResponse,
    /// A response with status `incomplete`.
    Incomplete,
    /// A response with another status than `completed` (`cancelled`, `in_progress`, ...).
    UnexpectedStatus,
    /// The model refused to answer.
    Refusal,
    /// A completed response without answer text.
    NoAnswer,
    /// No reply within the attempt's timeout.
    Timeout,
    /// Could not connect (DNS, refused, proxy).
    Connect,
    /// The connection broke mid-way.
    Io,
    /// TLS handshake or certificate failure.
    Tls,
    /// The body was larger than the runtime accepts.
    BodyTooLarge,
    /// The request could not be made at all (bad URL, bad proxy setting).
    InvalidRequest,
    /// The server shut down before the call finished.
    Shutdown,
    /// A stored (background) response OpenAI no longer keeps.
    Expired,
}

impl FailureKind {
    /// The short machine name shown in debug data and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::HttpError => "http_error",
            FailureKind::Failed => "failed",
            FailureKind::InvalidResponse => "invalid_response",
            FailureKind::Incomplete => "incomplete",
            FailureKind::UnexpectedStatus => "unexpected_status",
            FailureKind::Refusal => "refusal",
            FailureKind::NoAnswer => "no_answer",
            FailureKind::Timeout => "timeout",
            FailureKind::Connect => "connect",
            FailureKind::Io => "io",
            FailureKind::Tls => "tls",
            FailureKind::BodyTooLarge => "body_too_large",
            FailureKind::InvalidRequest => "invalid_request",
            FailureKind::Shutdown => "shutdown",
            FailureKind::Expired => "expired",
        }
    }

    /// Whether another attempt may succeed where this one failed (for failures without
    /// an HTTP status; statuses are classified by [`classify_reply`]).
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            FailureKind::Timeout | FailureKind::Connect | FailureKind::Io
        )
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why one attempt failed, with metadata only (no bodies, no secrets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamFailure {
    /// HTTP status, when a reply arrived.
    pub status: Option<u16>,
    /// What kind of failure.
    pub kind: FailureKind,
    /// The API's `error.type`.
    pub error_type: Option<String>,
    /// The API's `error.code`.
    pub code: Option<String>,
    /// The API's message (trimmed) or our description.
    pub message: String,
}

impl UpstreamFailure {
    /// A failure without an HTTP reply or API error fields.
    pub fn local(kind: FailureKind, message: impl Into<String>) -> Self {
        UpstreamFailure {
            status: None,
            kind,
            error_type: None,
            code: None,
            message: trim_message(&message.into()),
        }
    }

    /// The failure of a call ended by a shutdown.
    pub fn shutdown(message: &str) -> Self {
        UpstreamFailure {
            error_type: Some("shutdown".into()),
            ..UpstreamFailure::local(FailureKind::Shutdown, message)
        }
    }

    /// A failure read from an API `error` object.
    pub fn from_api(status: Option<u16>, kind: FailureKind, error: &Value, fallback: &str) -> Self {
        // Upstream text: passed on without anything of a key's shape.
        let field = |k: &str| {
            let text = error.get(k).and_then(Value::as_str)?;
            Some(crate::redact::key_fragments(text).into_owned())
        };
        UpstreamFailure {
            status,
            kind,
            error_type: field("type"),
            code: field("code"),
            message: trim_message(&field("message").unwrap_or_else(|| fallback.to_owned())),
        }
    }

    /// What the user should do about it.
    pub fn advice(&self, context: &Advice<'_>) -> String {
        let code = self.code.as_deref().unwrap_or("");
        let ty = self.error_type.as_deref().unwrap_or("");
        let api_key_env = context.api_key_env;
        let service = context.service;
        match (self.status, self.kind) {
            (Some(401), _) => format!("check that {api_key_env} holds a valid API key for this provider"),
            (Some(403), _) => "check that the API key's project may use this model and the Responses API".into(),
            (Some(404), _) if code == "model_not_found" || context.model.is_some_and(|m| self.message.contains(m)) => {
                context.model_advice()
            }
            (Some(404), _) => "check the model name in model_profiles and openai.base_url".into(),
            (Some(429), _) if code == "insufficient_quota" || ty == "insufficient_quota" => {
                "the account is out of quota: check the plan and billing details".into()
            }
            (Some(429), _) => format!("rate limited by {service}: wait a little, lower concurrency, or raise the rate limit"),
            (Some(400), _) => "the request was rejected; check the model profile (model, reasoning_effort, verbosity)".into(),
            (Some(s), _) if s >= 500 => format!("{service} had a server error; try again later"),
            (_, FailureKind::Timeout) => "the request timed out; try again or raise request.timeout_ms".into(),
            (_, FailureKind::Connect) => format!("could not reach {service}; check the network, proxy settings and openai.base_url"),
            (_, FailureKind::Tls) => "the TLS handshake failed; check openai.base_url (https vs http), any proxy, and openai.ca_file (SSL_CERT_FILE) if a gateway uses its own certificate".into(),
            (_, FailureKind::Incomplete) => "the answer was cut short; try a narrower question or a higher verbosity".into(),
            (_, FailureKind::Refusal) => "the model declined to answer; rephrase the question".into(),
            (_, FailureKind::Expired) => format!("{service} keeps a background answer only for a limited time: call the tool again for a new one"),
            _ => "try again; if it keeps failing, run with --debug and check the log".into(),
        }
    }
}

/// What advice may name: the service, the key's variable, and the model with the setting
/// it came from.
#[derive(Clone, Copy, Debug)]
pub struct Advice<'a> {
    /// The service called, as its users know it ([`super::options::Api::name`]).
    pub service: &'a str,
    /// The variable that holds the API key.
    pub api_key_env: &'a str,
    /// The model called.
    pub model: Option<&'a str>,
    /// Where it was configured, such as `model_profiles.answer.model`.
    pub model_setting: Option<&'a str>,
}

impl Default for Advice<'_> {
    fn default() -> Self {
        Advice {
            service: super::options::Api::OpenAi.name(),
            api_key_env: "",
            model: None,
            model_setting: None,
        }
    }
}

impl Advice<'_> {
    /// For a model the provider does not know: which setting to change, and to what
    /// when the model is one OpenAI shut down.
    fn model_advice(&self) -> String {
        let setting = self.model_setting.unwrap_or("the model in model_profiles");
        let model = self.model.unwrap_or("the model");
        match self.model.and_then(super::models::retirement) {
            Some(r) => format!(
                "{model} is scheduled for shutdown by OpenAI on {}; set {setting} to {} (OpenAI's recommended replacement) and restart the server",
                r.shutdown, r.replacement
            ),
            None => format!(
                "the provider does not offer {model} to this key; set {setting} to a model it lists (run `openai-responses-mcp doctor` to check every profile) and restart the server"
            ),
        }
    }
}

/// A message as it is kept: without anything of a key's shape (before the cut, so that
/// no half of a key is left to pass), at most [`MAX_MESSAGE_CHARS`] long.
fn trim_message(s: &str) -> String {
    let s = crate::redact::key_fragments(s);
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        return s.into_owned();
    }
    let mut t: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    t.push('…');
    t
}

/// What to do with one upstream reply.
#[derive(Debug, PartialEq)]
pub enum UpstreamVerdict<'a> {
    /// A 2xx JSON body to read the answer from.
    Success(Box<ResponseBody<'a>>),
    /// A transient failure: try again, after the server's wait when it gave one.
    Retry(UpstreamFailure, RetryAfter),
    /// The model refused a parameter or value: try again inside its limits.
    Unsupported(ParamRejection, UpstreamFailure),
    /// A failure retrying cannot fix.
    Fail(UpstreamFailure),
}

/// Classifies a reply by status, headers (lower-case names) and body.
pub fn classify_reply<'a>(
    status: u16,
    headers: &[(String, String)],
    body: &'a [u8],
) -> UpstreamVerdict<'a> {
    if (200..300).contains(&status) {
        let Ok(value) = ResponseBody::parse(body) else {
            return UpstreamVerdict::Fail(UpstreamFailure {
                status: Some(status),
                ..UpstreamFailure::local(
                    FailureKind::InvalidResponse,
                    "the response body is not JSON",
                )
            });
        };
        if let Some(error) = value.error.get() {
            // A 200 carrying an error object: transient codes are retried like their
            // HTTP equivalents.
            let failure = UpstreamFailure::from_api(
                Some(status),
                FailureKind::Failed,
                error,
                "response failed",
            );
            return match failure.code.as_deref() {
                Some("server_error" | "rate_limit_exceeded") => {
                    UpstreamVerdict::Retry(failure, None)
                }
                _ => UpstreamVerdict::Fail(failure),
            };
        }
        return UpstreamVerdict::Success(Box::new(value));
    }
    // Error bodies are rare and small: read as a whole, any shape.
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed
        .as_ref()
        .and_then(|v| v.get("error"))
        .filter(|e| e.is_object());
    let failure = match error {
        Some(e) => UpstreamFailure::from_api(
            Some(status),
            FailureKind::HttpError,
            e,
            &format!("HTTP {status}"),
        ),
        None => UpstreamFailure {
            status: Some(status),
            ..UpstreamFailure::local(FailureKind::HttpError, describe_body(status, body))
        },
    };
    match status {
        429 if is_permanent_429(&failure) => UpstreamVerdict::Fail(failure),
        429 | 500 | 502 | 503 | 504 => UpstreamVerdict::Retry(failure, retry_after(headers)),
        400 => match error.and_then(ParamRejection::from_error) {
            Some(rejection) => UpstreamVerdict::Unsupported(rejection, failure),
            None => UpstreamVerdict::Fail(failure),
        },
        _ => UpstreamVerdict::Fail(failure),
    }
}

/// A 429 that waiting will not fix: no quota, or a request larger than the limit.
fn is_permanent_429(f: &UpstreamFailure) -> bool {
    f.code.as_deref() == Some("insufficient_quota")
        || f.error_type.as_deref() == Some("insufficient_quota")
        || f.message.starts_with("Request too large")
}

/// Describes a non-JSON error body without quoting much of it (it may be an HTML page).
fn describe_body(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let looks_html = text.trim_start().starts_with('<');
    if body.is_empty() {
        format!("HTTP {status} with an empty body")
    } else if looks_html {
        format!("HTTP {status} with an HTML page instead of JSON (a proxy or gateway answered?)")
    } else {
        format!("HTTP {status} with a non-JSON body")
    }
}

/// The wait a 429/5xx asks for: `retry-after-ms` (float milliseconds) first, then
/// `retry-after` (whole seconds), each capped at [`MAX_RETRY_AFTER`].
pub fn retry_after(headers: &[(String, String)]) -> RetryAfter {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    let wait = header("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_secs_f64(ms.min(3.6e6) / 1000.0))
        .or_else(|| {
            header("retry-after")
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_secs)
        })?;
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests;

impl From<TransportErrorKind> for FailureKind {
    fn from(kind: TransportErrorKind) -> FailureKind {
        match kind {
            TransportErrorKind::Connect => FailureKind::Connect,
            TransportErrorKind::Io => FailureKind::Io,
            TransportErrorKind::Tls => FailureKind::Tls,
            TransportErrorKind::BodyTooLarge => FailureKind::BodyTooLarge,
            TransportErrorKind::Invalid => FailureKind::InvalidRequest,
        }
    }
}
