//! Every configuration key: its type, range, default and environment variable.
//!
//! This table is the single source for validation, unknown-key suggestions, the
//! environment mapping and `--show-config`.

use serde_json::{json, Value};

/// The type and range of a leaf value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A non-empty string.
    Str,
    /// A string or null.
    OptStr,
    /// An http(s) URL.
    Url,
    /// true/false.
    Bool,
    /// An integer within `min..=max`.
    Int {
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// One of these strings, or null (unset).
    OptOneOf(&'static [&'static str]),
    /// A list of strings.
    StrList,
    /// A list of bare host names.
    HostList,
}

/// One configuration leaf.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// Dotted path, e.g. `request.timeout_ms`.
    pub path: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// Environment variable that sets it, if any.
    pub env: Option<&'static str>,
    /// One line for the docs.
    pub doc: &'static str,
}

/// Reasoning effort values (OpenAI `reasoning.effort`).
pub const EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh", "max"];
/// Verbosity values (OpenAI `text.verbosity`).
pub const VERBOSITIES: &[&str] = &["low", "medium", "high"];
/// The profile names under `model_profiles`.
pub const PROFILES: &[&str] = &["answer", "answer_detailed", "answer_quick"];

macro_rules! key {
    ($path:literal, $kind:expr, $env:expr, $doc:literal) => {
        Key {
            path: $path,
            kind: $kind,
            env: $env,
            doc: $doc,
        }
    };
}

/// All known leaves, in display order.
pub const KEYS: &[Key] = &[
    key!(
        "openai.api_key_env",
        Kind::Str,
        None,
        "Name of the environment variable that holds the API key."
    ),
    key!(
        "openai.base_url",
        Kind::Url,
        Some("OPENAI_BASE_URL"),
        "Responses API base URL; requests go to <base_url>/responses."
    ),
    key!(
        "openai.ca_file",
        Kind::OptStr,
        Some("SSL_CERT_FILE"),
        "PEM file of root certificates to trust instead of the built-in Mozilla roots."
    ),
    key!(
        "request.timeout_ms",
        Kind::Int {
            min: 1,
            max: 3_600_000
        },
        Some("OPENAI_API_TIMEOUT"),
        "Timeout of one attempt, in milliseconds."
    ),
    key!(
        "request.max_retries",
        Kind::Int { min: 0, max: 10 },
        Some("OPENAI_MAX_RETRIES"),
        "Retries after the first attempt on 429, 5xx, timeouts and connection failures."
    ),
    key!(
        "responses.stream",
        Kind::Bool,
        None,
        "Accepted for compatibility; answers are always read whole."
    ),
    key!(
        "responses.json_mode",
        Kind::Bool,
        None,
        "Accepted for compatibility; the tool result is always JSON."
    ),
    key!(
        "model_profiles.answer.model",
        Kind::Str,
        Some("MODEL_ANSWER"),
        "Model of the answer tool (required profile)."
    ),
    key!(
        "model_profiles.answer.reasoning_effort",
        Kind::OptOneOf(EFFORTS),
        Some("ANSWER_EFFORT"),
        "reasoning.effort for the answer tool (gpt-5, o3, o4 models)."
    ),
    key!(
        "model_profiles.answer.verbosity",
        Kind::OptOneOf(VERBOSITIES),
        Some("ANSWER_VERBOSITY"),
        "text.verbosity for the answer tool (gpt-5 models)."
    ),
    key!(
        "model_profiles.answer_detailed.model",
        Kind::Str,
        Some("MODEL_DETAILED"),
        "Model of answer_detailed; unset means the answer profile."
    ),
    key!(
        "model_profiles.answer_detailed.reasoning_effort",
        Kind::OptOneOf(EFFORTS),
        None,
        "reasoning.effort for answer_detailed."
    ),
    key!(
        "model_profiles.answer_detailed.verbosity",
        Kind::OptOneOf(VERBOSITIES),
        None,
        "text.verbosity for answer_detailed."
    ),
    key!(
        "model_profiles.answer_quick.model",
        Kind::Str,
        Some("MODEL_QUICK"),
        "Model of answer_quick; unset means the answer profile."
    ),
    key!(
        "model_profiles.answer_quick.reasoning_effort",
        Kind::OptOneOf(EFFORTS),
        None,
        "reasoning.effort for answer_quick."
    ),
    key!(
        "model_profiles.answer_quick.verbosity",
        Kind::OptOneOf(VERBOSITIES),
        None,
        "text.verbosity for answer_quick."
    ),
    key!(
        "policy.search_triggers",
        Kind::StrList,
        None,
        "Words that should make the model search; added to the instructions when changed."
    ),
    key!(
        "policy.prefer_search_when_unsure",
        Kind::Bool,
        None,
        "Tell the model to search when unsure."
    ),
    key!(
        "policy.max_citations",
        Kind::Int { min: 1, max: 10 },
        Some("MAX_CITATIONS"),
        "Most citations returned per answer."
    ),
    key!(
        "policy.requery_attempts",
        Kind::Int { min: 0, max: 5 },
        Some("REQUERY_ATTEMPTS"),
        "Accepted for compatibility; reserved."
    ),
    key!(
        "policy.require_dates_iso",
        Kind::Bool,
        None,
        "Dates in answers are YYYY-MM-DD (always on in the built-in policy)."
    ),
    key!(
        "policy.system.source",
        Kind::OneOf(&["builtin", "file"]),
        None,
        "Where the system policy comes from."
    ),
    key!(
        "policy.system.path",
        Kind::OptStr,
        None,
        "Policy file, with source: file."
    ),
    key!(
        "policy.system.merge",
        Kind::OneOf(&["replace", "prepend", "append"]),
        None,
        "How the file combines with the built-in policy."
    ),
    key!(
        "search.defaults.recency_days",
        Kind::Int { min: 1, max: 3650 },
        Some("SEARCH_RECENCY_DAYS"),
        "Default recency hint in days."
    ),
    key!(
        "search.defaults.max_results",
        Kind::Int { min: 1, max: 50 },
        Some("SEARCH_MAX_RESULTS"),
        "Default number of results hint."
    ),
    key!(
        "search.defaults.domains",
        Kind::HostList,
        None,
        "Default allowed domains (bare host names); empty means any."
    ),
    key!(
        "server.transport",
        Kind::OneOf(&["stdio"]),
        None,
        "Transport; only stdio."
    ),
    key!("server.debug", Kind::Bool, None, "Debug logging to stderr."),
    key!(
        "server.debug_file",
        Kind::OptStr,
        None,
        "Also write the debug log to this file."
    ),
    key!(
        "server.show_config_on_start",
        Kind::Bool,
        None,
        "Print the effective configuration to stderr when serving starts."
    ),
    key!(
        "server.line_mode",
        Kind::Bool,
        Some("MCP_LINE_MODE"),
        "Always write newline-delimited replies."
    ),
    key!(
        "server.max_message_bytes",
        Kind::Int {
            min: 1024,
            max: 1 << 30
        },
        None,
        "Largest accepted message."
    ),
    key!(
        "server.max_inflight",
        Kind::Int { min: 1, max: 4096 },
        None,
        "Most concurrent upstream calls."
    ),
    key!(
        "server.max_queue",
        Kind::Int {
            min: 0,
            max: 1_000_000
        },
        None,
        "Most calls waiting for a slot."
    ),
    key!(
        "server.shutdown_grace_ms",
        Kind::Int {
            min: 0,
            max: 3_600_000
        },
        None,
        "How long calls in flight may finish after stdin closes."
    ),
    key!(
        "server.progress_interval_ms",
        Kind::Int {
            min: 100,
            max: 600_000
        },
        None,
        "Least time between two progress notifications for one call."
    ),
];

/// Looks a key up by path.
pub fn key(path: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.path == path)
}

/// The built-in defaults as a tree. Optional profiles are absent.
pub fn defaults() -> Value {
    json!({
        "openai": { "api_key_env": "OPENAI_API_KEY", "base_url": "https://api.openai.com/v1", "ca_file": null },
        "request": { "timeout_ms": 120_000, "max_retries": 3 },
        "responses": { "stream": false, "json_mode": false },
        "model_profiles": {
            "answer": { "model": "gpt-5-mini", "reasoning_effort": "medium", "verbosity": "medium" }
        },
        "policy": {
            "search_triggers": ["today","now","latest","breaking","price","cost","release","version",
                                "security","vulnerability","weather","exchange","news","EOL"],
            "prefer_search_when_unsure": true,
            "max_citations": 3,
            "requery_attempts": 1,
            "require_dates_iso": true,
            "system": { "source": "builtin", "path": null, "merge": "replace" }
        },
        "search": { "defaults": { "recency_days": 60, "max_results": 5, "domains": [] } },
        "server": {
            "transport": "stdio", "debug": false, "debug_file": null, "show_config_on_start": false,
            "line_mode": false, "max_message_bytes": 4_194_304, "max_inflight": 16,
            "max_queue": 1024, "shutdown_grace_ms": 30_000, "progress_interval_ms": 5000
        }
    })
}

/// Whether `path` names a known object (not a leaf), such as `model_profiles.answer`.
pub fn is_known_object(path: &str) -> bool {
    KEYS.iter().any(|k| {
        k.path.len() > path.len()
            && k.path.starts_with(path)
            && k.path.as_bytes()[path.len()] == b'.'
    })
}

/// The known path closest to `path`, for "did you mean" hints.
pub fn nearest(path: &str) -> Option<&'static str> {
    let mut candidates: Vec<&'static str> = KEYS.iter().map(|k| k.path).collect();
    for k in KEYS {
        let mut p = k.path;
        while let Some((parent, _)) = p.rsplit_once('.') {
            candidates.push(parent);
            p = parent;
        }
    }
    candidates
        .into_iter()
        .map(|c| (distance(path, c), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min()
        .map(|(_, c)| c)
}

/// Levenshtein distance, for short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
