//! Every configuration key: its type, range, default and environment variable.
//!
//! This table is the single source for validation, unknown-key suggestions, the
//! environment mapping and `--show-config`. The names of efforts, verbosities and tools
//! come from the core, and so do the defaults the core has.

use responses_mcp_core::tools::{Tool, ALL_TOOLS};
use responses_mcp_core::vocab::{Effort, SearchContextSize, ServiceTier, Verbosity};
use responses_mcp_core::ServerConfig;
use serde_json::{json, Value};
use std::sync::LazyLock;

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
    /// true/false, or null (unset).
    OptBool,
    /// An integer within `min..=max`, or null (unset).
    OptInt {
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// An ISO 3166-1 alpha-2 country code such as `JP`, or null.
    Country,
    /// An IANA time zone such as `Asia/Tokyo`, or null.
    TimeZone,
    /// An amount of US dollars from 0 up to (not including) a million.
    Usd,
    /// An amount of US dollars as [`Kind::Usd`], or null (unset).
    OptUsd,
    /// Model ids mapped to their rates (`pricing.models`): see [`PRICE_FIELDS`].
    PriceTable,
}

/// The fields of one `pricing.models.<model>` entry: name, whether required, what it is.
pub const PRICE_FIELDS: [(&str, bool, &str); 9] = [
    ("input_per_mtok", true, "USD per million input tokens"),
    (
        "cached_input_per_mtok",
        false,
        "USD per million cached input tokens (unset: the input rate)",
    ),
    (
        "cache_write_per_mtok",
        false,
        "USD per million input tokens written to the prompt cache (unset: 1.25 times the input rate)",
    ),
    ("output_per_mtok", true, "USD per million output tokens, reasoning included"),
    (
        "long_context_above_tokens",
        false,
        "above this many input tokens the request is billed at twice the input rates and 1.5 times the output rate (unset: never)",
    ),
    (
        "per_request_usd",
        false,
        "USD per request besides its tokens, at every reasoning effort without its own fee (unset: none)",
    ),
    (
        "per_request_usd_low",
        false,
        "USD per request sent with reasoning effort low",
    ),
    (
        "per_request_usd_medium",
        false,
        "USD per request sent with reasoning effort medium, or with none",
    ),
    (
        "per_request_usd_high",
        false,
        "USD per request sent with reasoning effort high",
    ),
];

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

/// The variable whose secret seals task ids unless `tasks.secret_env` names another.
pub const DEFAULT_TASKS_SECRET_ENV: &str = "MCP_TASKS_SECRET";

/// Reasoning effort values (OpenAI `reasoning.effort`).
pub const EFFORTS: &[&str] = &Effort::NAMES;
/// Verbosity values (OpenAI `text.verbosity`).
pub const VERBOSITIES: &[&str] = &Verbosity::NAMES;
/// Web search context sizes.
pub const CONTEXT_SIZES: &[&str] = &SearchContextSize::NAMES;
/// Service tiers.
pub const SERVICE_TIERS: &[&str] = &ServiceTier::NAMES;

/// Where `--http` listens unless told otherwise: loopback only, a fixed documented port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// The variable that holds the bearer token unless `server.http.token_env` names another.
pub const DEFAULT_TOKEN_ENV: &str = "MCP_HTTP_TOKEN";
/// The providers with a preset (`openai.provider`).
pub const PROVIDERS: &[&str] = crate::choices::Provider::NAMES;

/// Whether `name` is a profile under `model_profiles` (one per tool).
pub fn is_profile_name(name: &str) -> bool {
    Tool::from_name(name).is_some()
}

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

/// The leaves before the profiles, in display order.
const BEFORE_PROFILES: &[Key] = &[
    key!(
        "openai.provider",
        Kind::OneOf(PROVIDERS),
        Some("OPENAI_PROVIDER"),
        "Who serves the Responses API; its preset fills base_url, api_key_env, auth, api_key_required, web_search and the answer model unless set (--provider)."
    ),
    key!(
        "openai.azure_resource",
        Kind::OptStr,
        None,
        "Azure OpenAI resource name (NAME in https://NAME.openai.azure.com) for provider azure; AZURE_OPENAI_ENDPOINT may give the endpoint instead."
    ),
    key!(
        "openai.api_key_env",
        Kind::Str,
        None,
        "Name of the environment variable that holds the API key."
    ),
    key!(
        "openai.auth",
        Kind::OneOf(crate::choices::Auth::NAMES),
        None,
        "How the key is sent: Authorization: Bearer, or Azure's api-key header."
    ),
    key!(
        "openai.api_key_required",
        Kind::Bool,
        None,
        "Whether calls need the key (a local server such as Ollama takes none; it is still sent when set)."
    ),
    key!(
        "openai.web_search",
        Kind::OneOf(crate::choices::SearchMode::NAMES),
        None,
        "How the provider searches: OpenAI's web_search tool, OpenRouter's openrouter:web_search, or none (no tool sent; answers say used_search: false)."
    ),
    key!(
        "openai.model_lookups",
        Kind::Bool,
        Some("OPENAI_MODEL_LOOKUPS"),
        "Look up each profile's model at the provider (GET /models/{id}) after startup and every day, for its shutdown date: a past date refuses calls with the model, one within 30 days is warned about. false: the built-in table alone decides."
    ),
    key!(
        "openai.allow_foreign_key",
        Kind::Bool,
        None,
        "Send the key to OpenAI's host (api.openai.com) even when it looks like another service's: openai.api_key_env names another provider's variable (OPENROUTER_API_KEY, PERPLEXITY_API_KEY…) or the key starts as another provider's do (sk-or-, pplx-…). false: the server refuses to start, since OpenAI would receive a key that is not its own; set openai.provider (or openai.base_url) to the key's service instead."
    ),
    key!(
        "openai.base_url",
        Kind::Url,
        Some("OPENAI_BASE_URL"),
        "Responses API base URL; requests go to <base_url>/responses. OPENAI_BASE_URL sets it for provider openai only: another preset keeps its own URL unless the config file or --base-url sets one."
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
        "request.idle_timeout_ms",
        Kind::Int {
            min: 1000,
            max: 3_600_000
        },
        None,
        "An attempt that receives no byte for this long fails (and is retried)."
    ),
    key!(
        "responses.stream",
        Kind::Bool,
        None,
        "Read answers as event streams: progress from what the model does, and no client deadline hit while it works."
    ),
    key!(
        "responses.json_mode",
        Kind::Bool,
        None,
        "Accepted for compatibility; the tool result is always JSON."
    ),
];

/// The leaves after the profiles, in display order.
const AFTER_PROFILES: &[Key] = &[
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
        Kind::OneOf(crate::choices::PolicyMerge::NAMES),
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
        Kind::OneOf(&["stdio", "http"]),
        None,
        "The transport in use: http with --http (Streamable HTTP, see server.http), stdio otherwise; the command line decides."
    ),
    key!("server.debug", Kind::Bool, None, "Debug logging to stderr."),
    key!(
        "server.debug_file",
        Kind::OptStr,
        None,
        "Also write the debug log to this file."
    ),
    key!(
        "server.metrics_listen",
        Kind::OptStr,
        Some("MCP_METRICS_LISTEN"),
        "A second address serving only /metrics, /health and /ready (host:port, loopback unless a token is set; --metrics-listen sets it), over stdio or --http."
    ),
    key!(
        "server.log_format",
        Kind::OneOf(crate::choices::LogFormat::NAMES),
        Some("MCP_LOG_FORMAT"),
        "text: log lines for people (warnings, and debug with --debug). json: one JSON object per line, plus one per finished tools/call (--log-format sets it)."
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
    key!(
        "tasks.default_ttl_ms",
        Kind::Int {
            min: 1_000,
            max: 604_800_000
        },
        None,
        "How long a task and its result are kept when the client asks no ttl."
    ),
    key!(
        "tasks.max_ttl_ms",
        Kind::Int {
            min: 1_000,
            max: 604_800_000
        },
        None,
        "The longest a task is kept, whatever ttl the client asks."
    ),
    key!(
        "tasks.max_tasks",
        Kind::Int {
            min: 1,
            max: 1_000_000
        },
        None,
        "Most tasks kept at once; the oldest finished go first, and new ones are refused when all are working."
    ),
    key!(
        "tasks.max_bytes",
        Kind::Int {
            min: 1 << 20,
            max: 1 << 34
        },
        None,
        "Most bytes of finished results kept at once; the oldest go first."
    ),
    key!(
        "tasks.poll_interval_ms",
        Kind::Int {
            min: 100,
            max: 600_000
        },
        None,
        "How often clients are asked to poll a working task older than a minute; younger tasks are asked every 250 ms at first, growing to at most a second."
    ),
    key!(
        "tasks.answer_within_ms",
        Kind::Int {
            min: 0,
            max: 60_000
        },
        None,
        "A 2026-07-28 task-augmented call that ends within this time is answered with its result; a longer one becomes a task then (0: a task at once). 2025-11-25 clients that ask for a task get it at once."
    ),
    key!(
        "tasks.openai_background",
        Kind::Bool,
        None,
        "Run tasks as OpenAI background responses (store: true: OpenAI keeps the response) so that any instance, or a restarted one, serves them."
    ),
    key!(
        "tasks.completion_window",
        Kind::OneOf(&responses_mcp_core::tasks::CompletionWindow::NAMES),
        None,
        "With openai_background: how soon OpenAI is asked to finish a task's response (background_options.completion_window, public beta): soonest (the default), or 2h / 8h for OpenAI's discount on model tokens (30 % / 40 % as published); the task lives at least the window and an hour, and is read at most every 240th of the window. Only the standard tier takes a window, so profiles' service_tier is not sent for such tasks."
    ),
    key!(
        "tasks.completion_window_price_percent",
        Kind::OptInt { min: 1, max: 100 },
        None,
        "The price of a windowed background response's tokens, in percent of the standard rates, for the cost estimate; unset: the published discount (70 for 2h, 60 for 8h)."
    ),
    key!(
        "tasks.service_tier",
        Kind::OptOneOf(SERVICE_TIERS),
        None,
        "The service_tier of every call made for a task, over its profile's: flex (OpenAI's half-price tier for work that tolerates a slower, sometimes refused answer) is the natural lane; not with a completion_window other than soonest (only the standard tier takes one)."
    ),
    key!(
        "tasks.flex_unavailable",
        Kind::OneOf(crate::choices::FlexUnavailable::NAMES),
        None,
        "When OpenAI answers a task's flex call 429 because flex capacity is unavailable: default sends it again at once at the default tier (priced as such); retry retries it at flex with the usual backoff, up to request.max_retries."
    ),
    key!(
        "tasks.secret_env",
        Kind::Str,
        None,
        "Name of the environment variable whose secret seals task ids (share it between instances); unset: a random key per process."
    ),
    key!(
        "pricing.web_search_per_1k_usd",
        Kind::Usd,
        None,
        "What OpenAI charges per 1,000 web search calls, for the cost estimate of each call (built in: 10, as of 2026-11-26)."
    ),
    key!(
        "pricing.models",
        Kind::PriceTable,
        None,
        "Prices by model id, over the built-in ones: each an object of input_per_mtok, output_per_mtok and optional cached_input_per_mtok and long_context_above_tokens (USD per million tokens). A model with no price gets no estimate."
    ),
    key!(
        "server.http.listen",
        Kind::Str,
        Some("MCP_HTTP_LISTEN"),
        "Address of the HTTP endpoint (host:port; port 0 picks a free one); --listen sets it."
    ),
    key!(
        "server.http.allowed_origins",
        Kind::StrList,
        None,
        "Origins (scheme://host[:port]) browser clients may call from; loopback origins are allowed when bound to loopback."
    ),
    key!(
        "server.http.allowed_hosts",
        Kind::StrList,
        None,
        "Host header values served (host or host:port; \"*\" is any); empty means the loopback names and the bound address when bound to loopback, any otherwise."
    ),
    key!(
        "server.http.trusted_proxies",
        Kind::StrList,
        Some("MCP_HTTP_TRUSTED_PROXIES"),
        "Addresses or networks (192.0.2.7, 10.0.0.0/8, fd00::/8; comma-separated in the variable) of the proxies or gateways in front of the server: only a request from one of them has its X-Forwarded-For believed (the call log's remote address) and its identity header read. A list that holds every address (0.0.0.0/0, ::/0, ::ffff:0:0/96) is refused: list the gateway's own addresses or network. Empty: none."
    ),
    key!(
        "server.http.identity_header",
        Kind::OptStr,
        None,
        "A header (such as X-Forwarded-User) a trusted proxy names the user in: a request from server.http.trusted_proxies that carries the gateway's credential (a clients-file client with gateway: true, or the bearer token when there is no clients file) is that user's (limits, tasks, spend, call log, metrics), named <header>:<value>, compared byte for byte. Beside any other credential, or from any other peer, it is ignored and counted. Headers that carry something else (Cookie, Authorization, Forwarded, User-Agent, Host, Mcp-*...) are refused. null: none."
    ),
    key!(
        "server.http.token_env",
        Kind::Str,
        None,
        "Name of the environment variable holding the bearer token every /mcp request must carry when set."
    ),
    key!(
        "server.http.allow_unauthenticated",
        Kind::Bool,
        None,
        "Serve a non-loopback address without a bearer token (refused otherwise)."
    ),
    key!(
        "server.http.clients_file",
        Kind::OptStr,
        Some("MCP_HTTP_CLIENTS_FILE"),
        "YAML file of named clients (name, token_sha256, optional calls_per_minute and spend_per_day_usd): each client's bearer token, by its SHA-256, is accepted besides the single token, and logs, metrics and limits name the client."
    ),
    key!(
        "server.limits.calls_per_minute",
        Kind::OptInt {
            min: 1,
            max: 1_000_000
        },
        Some("MCP_LIMIT_CALLS_PER_MINUTE"),
        "Most tools/call requests this instance admits per UTC minute, all clients together; more are refused with a tool error (and Retry-After over HTTP). null: no limit."
    ),
    key!(
        "server.limits.spend_per_day_usd",
        Kind::OptUsd,
        Some("MCP_LIMIT_SPEND_PER_DAY_USD"),
        "Estimated OpenAI spend (USD) this instance may reach per UTC day, all clients together; once reached, calls are refused until the day ends. null: no limit."
    ),
    key!(
        "server.store.url",
        Kind::OptStr,
        Some("MCP_STORE_URL"),
        "redis:// (or rediss:// for TLS, trusting the roots of openai.ca_file or the built-in ones) URL of the Redis 7 or Valkey store that instances share their limits, tasks and cancels through; null: each instance counts and keeps tasks on its own. A password in the URL is never printed."
    ),
    key!(
        "server.store.password_env",
        Kind::OptStr,
        None,
        "Name of the environment variable holding the store's password (instead of one in the URL)."
    ),
    key!(
        "server.store.on_unavailable",
        Kind::OneOf(&["refuse", "allow"]),
        None,
        "What a call gets while the store does not answer: refused naming the store (refuse), or admitted uncounted (allow). A call under a spend limit is always refused then."
    ),
    key!(
        "server.store.timeout_ms",
        Kind::Int {
            min: 10,
            max: 10_000
        },
        None,
        "Longest wait for the store, per connection attempt and per operation; a slower store counts as unreachable."
    ),
    key!(
        "server.http.max_connections",
        Kind::Int {
            min: 1,
            max: 100_000
        },
        None,
        "Most open client connections; beyond it a connection gets 503 with Retry-After."
    ),
    key!(
        "server.http.max_head_bytes",
        Kind::Int {
            min: 1024,
            max: 1 << 20
        },
        None,
        "Largest request line and headers (431 beyond); the body is capped by server.max_message_bytes."
    ),
    key!(
        "server.http.request_timeout_ms",
        Kind::Int {
            min: 100,
            max: 3_600_000
        },
        None,
        "Time a client has to send a whole request once it began (slow clients get 408)."
    ),
    key!(
        "server.http.idle_timeout_ms",
        Kind::Int {
            min: 100,
            max: 3_600_000
        },
        None,
        "A kept-alive connection idle this long closes; a response the client does not read for this long is abandoned."
    ),
    key!(
        "server.http.public_url",
        Kind::OptStr,
        Some("MCP_PUBLIC_URL"),
        "The URL clients reach this server at (https://answers.example.com, or its MCP URL https://answers.example.com/mcp): OAuth mode's resource is <public_url>/mcp, what tokens must be for; a URL ending in /mcp is taken as the resource itself. null: http://<the bound address>, right only for clients on this machine."
    ),
    key!(
        "server.http.oauth.issuer",
        Kind::OptStr,
        Some("MCP_OAUTH_ISSUER"),
        "OAuth mode: the authorization server's issuer URL, exactly as its tokens' iss claim writes it (Keycloak https://kc/realms/<realm>, Entra ID https://login.microsoftonline.com/<tenant>/v2.0, Okta https://<org>.okta.com/oauth2/default, Auth0 https://<tenant>.auth0.com/). Bearer tokens that are no static token are then verified as its JWT access tokens, and the protected resource's metadata is served. null: static tokens only."
    ),
    key!(
        "server.http.oauth.audiences",
        Kind::StrList,
        None,
        "The aud values a token may carry to be for this server; empty: the resource, <public_url>/mcp (RFC 8707). Entra ID names an API by its application ID URI or client id instead."
    ),
    key!(
        "server.http.oauth.scopes",
        Kind::StrList,
        None,
        "Scopes every token must carry (scope or scp claim); a token without one is refused with 403 insufficient_scope naming it. Published in the metadata's scopes_supported."
    ),
    key!(
        "server.http.oauth.identity_claim",
        Kind::Str,
        None,
        "The claim that names the caller, who becomes the call's client for limits, metrics, the call log and task ownership: sub for people, client_id or azp for machine clients."
    ),
    key!(
        "server.http.oauth.leeway_secs",
        Kind::Int { min: 0, max: 300 },
        None,
        "Clock skew allowed on a token's exp and nbf, in seconds."
    ),
    key!(
        "server.http.oauth.wait_ms",
        Kind::Int {
            min: 100,
            max: 10_000
        },
        None,
        "Longest a request waits for the identity provider's keys (at startup, or after a token names a new key); then 503 saying so, and /ready says so too."
    ),
    key!(
        "server.http.oauth.refetch_after_ms",
        Kind::Int {
            min: 100,
            max: 3_600_000
        },
        None,
        "Least time between two fetches of the provider's keys when tokens name a key the cached set lacks (key rotation), so tokens cannot make the server hammer its provider."
    ),
    key!(
        "server.http.oauth.calls_per_minute",
        Kind::OptInt {
            min: 1,
            max: 1_000_000
        },
        None,
        "Most tools/call requests per UTC minute of each identity (OAuth's, or a gateway's through server.http.identity_header) the clients file does not name. null: no limit of their own."
    ),
    key!(
        "server.http.oauth.spend_per_day_usd",
        Kind::OptUsd,
        None,
        "Estimated spend (USD) per UTC day of each identity (OAuth's, or a gateway's through server.http.identity_header) the clients file does not name. null: no limit of their own."
    ),
];

/// The environment variables of a tool's profile: model, effort, verbosity.
fn profile_env(tool: Tool) -> [Option<&'static str>; 3] {
    match tool {
        Tool::Answer => [
            Some("MODEL_ANSWER"),
            Some("ANSWER_EFFORT"),
            Some("ANSWER_VERBOSITY"),
        ],
        Tool::AnswerDetailed => [Some("MODEL_DETAILED"), None, None],
        Tool::AnswerQuick => [Some("MODEL_QUICK"), None, None],
    }
}

/// The leaves of every profile after `model`, in order: the path below the profile, the
/// kind, and the description with `{tool}` standing for the tool's name. The first two
/// take the environment variables of [`profile_env`] after the model's.
const PROFILE_LEAVES: [(&str, Kind, &str); 10] = [
    (
        "reasoning_effort",
        Kind::OptOneOf(EFFORTS),
        "reasoning.effort for {tool} (gpt-5, gpt-6, o3, o4 models).",
    ),
    (
        "verbosity",
        Kind::OptOneOf(VERBOSITIES),
        "text.verbosity for {tool} (gpt-5 and gpt-6 models).",
    ),
    (
        "search_context_size",
        Kind::OptOneOf(CONTEXT_SIZES),
        "web_search search_context_size for {tool}: how much found text the model reads.",
    ),
    (
        "user_location.country",
        Kind::Country,
        "Approximate user country for {tool}'s searches (ISO 3166-1 alpha-2, such as JP).",
    ),
    (
        "user_location.region",
        Kind::OptStr,
        "Approximate user region for {tool}'s searches (free text, such as Tokyo).",
    ),
    (
        "user_location.city",
        Kind::OptStr,
        "Approximate user city for {tool}'s searches (free text).",
    ),
    (
        "user_location.timezone",
        Kind::TimeZone,
        "User time zone for {tool}'s searches (IANA, such as Asia/Tokyo).",
    ),
    (
        "external_web_access",
        Kind::OptBool,
        "false: {tool}'s searches use OpenAI's cache only, without live fetches.",
    ),
    (
        "service_tier",
        Kind::OptOneOf(SERVICE_TIERS),
        "service_tier for {tool} (flex is cheaper and slower; priority faster).",
    ),
    (
        "max_output_tokens",
        Kind::OptInt {
            min: 16,
            max: 1_000_000,
        },
        "Upper bound of {tool}'s output tokens, reasoning included.",
    ),
];

/// The leaves of `tool`'s profile.
fn profile_keys(tool: Tool) -> Vec<Key> {
    let name = tool.name();
    // The table lives for the whole process; its few generated strings are made once.
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    let [model_env, effort_env, verbosity_env] = profile_env(tool);
    let model_doc = match tool {
        Tool::Answer => "Model of the answer tool (required profile).".to_owned(),
        other => format!("Model of {other}; unset means the answer profile."),
    };
    let model = Key {
        path: leak(format!("model_profiles.{name}.model")),
        kind: Kind::Str,
        env: model_env,
        doc: leak(model_doc),
    };
    let envs = [effort_env, verbosity_env]
        .into_iter()
        .chain(std::iter::repeat(None));
    let leaves = PROFILE_LEAVES
        .iter()
        .zip(envs)
        .map(|(&(leaf, kind, doc), env)| Key {
            path: leak(format!("model_profiles.{name}.{leaf}")),
            kind,
            env,
            doc: leak(doc.replace("{tool}", name)),
        });
    std::iter::once(model).chain(leaves).collect()
}

static KEYS: LazyLock<Vec<Key>> = LazyLock::new(|| {
    let mut keys = BEFORE_PROFILES.to_vec();
    keys.extend(ALL_TOOLS.into_iter().flat_map(profile_keys));
    keys.extend_from_slice(AFTER_PROFILES);
    keys
});

/// All known leaves, in display order.
pub fn keys() -> &'static [Key] {
    &KEYS
}

/// Looks a key up by path.
pub fn key(path: &str) -> Option<&'static Key> {
    keys().iter().find(|k| k.path == path)
}

/// `server.http.oauth.*`'s defaults (apart: one `json!` of everything is too deep).
fn oauth_defaults() -> Value {
    json!({
        "issuer": null, "audiences": [], "scopes": [], "identity_claim": "sub",
        "leeway_secs": 60, "wait_ms": 5_000, "refetch_after_ms": 5_000,
        "calls_per_minute": null, "spend_per_day_usd": null
    })
}

/// The built-in defaults as a tree: the core's own defaults where the core has the
/// setting, so the two cannot drift. Profiles other than `answer` are absent.
pub fn defaults() -> Value {
    let core = ServerConfig::default();
    let search = &core.search_defaults;
    json!({
        "openai": {
            "provider": "openai", "azure_resource": null,
            "api_key_env": core.api_key_env, "auth": "bearer", "api_key_required": true, "model_lookups": core.model_lookups,
            "allow_foreign_key": false,
            "web_search": "openai", "base_url": core.base_url, "ca_file": null,
        },
        "request": {
            "timeout_ms": millis(core.timeout),
            "idle_timeout_ms": millis(core.idle_timeout),
            "max_retries": core.max_retries,
        },
        "responses": { "stream": core.stream, "json_mode": false },
        "model_profiles": profile_defaults(&core),
        "policy": {
            "search_triggers": ["today","now","latest","breaking","price","cost","release","version",
                                "security","vulnerability","weather","exchange","news","EOL"],
            "prefer_search_when_unsure": true,
            "max_citations": core.max_citations,
            "requery_attempts": 1,
            "require_dates_iso": true,
            "system": { "source": "builtin", "path": null, "merge": "replace" }
        },
        "search": { "defaults": {
            "recency_days": search.recency_days,
            "max_results": search.max_results,
            "domains": search.domains,
        } },
        "server": server_defaults(&core),
        "tasks": {
            "default_ttl_ms": millis(core.tasks.default_ttl),
            "max_ttl_ms": millis(core.tasks.max_ttl),
            "max_tasks": core.tasks.max_tasks,
            "max_bytes": core.tasks.max_bytes,
            "poll_interval_ms": millis(core.tasks.poll_interval),
            "answer_within_ms": millis(core.tasks.answer_within),
            "openai_background": core.tasks.background,
            "completion_window": core.tasks.completion_window.as_str(),
            "completion_window_price_percent": null,
            "service_tier": null,
            "flex_unavailable": "default",
            "secret_env": DEFAULT_TASKS_SECRET_ENV,
        },
        "pricing": {
            "web_search_per_1k_usd": core.prices.web_search_call.usd() * 1000.0,
            "models": {},
        }
    })
}

/// The defaults of every tool the core has its own profile for.
fn profile_defaults(core: &ServerConfig) -> Value {
    let mut profiles = serde_json::Map::new();
    for tool in ALL_TOOLS {
        if let Some(p) = core.profiles.own(tool) {
            let profile = json!({
                "model": p.model,
                "reasoning_effort": p.reasoning_effort.map(Effort::as_str),
                "verbosity": p.verbosity.map(Verbosity::as_str),
                "search_context_size": null,
                "user_location": { "country": null, "region": null, "city": null, "timezone": null },
                "external_web_access": null,
                "service_tier": null,
                "max_output_tokens": null,
            });
            profiles.insert(tool.name().into(), profile);
        }
    }
    Value::Object(profiles)
}

/// The defaults of `server.*`.
fn server_defaults(core: &ServerConfig) -> Value {
    json!({
        "transport": "stdio", "debug": core.debug, "debug_file": null, "log_format": "text", "metrics_listen": null,
        "show_config_on_start": false, "line_mode": core.force_line_output,
        "limits": { "calls_per_minute": null, "spend_per_day_usd": null },
        "store": { "url": null, "password_env": null, "on_unavailable": "refuse", "timeout_ms": 500 },
        "max_message_bytes": core.max_message_bytes, "max_inflight": core.max_inflight,
        "max_queue": core.max_queue, "shutdown_grace_ms": millis(core.shutdown_grace),
        "progress_interval_ms": millis(core.progress_interval),
        "http": {
            "listen": DEFAULT_LISTEN, "allowed_origins": [], "allowed_hosts": [],
            "trusted_proxies": [], "identity_header": null,
            "token_env": DEFAULT_TOKEN_ENV, "allow_unauthenticated": false, "clients_file": null,
            "max_connections": 1024, "max_head_bytes": 16 * 1024,
            "request_timeout_ms": 10_000, "idle_timeout_ms": 75_000,
            "public_url": null,
            "oauth": oauth_defaults(),
        }
    })
}

/// A duration in whole milliseconds, as the configuration states it.
fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Whether `path` names a known object (not a leaf), such as `model_profiles.answer`.
pub fn is_known_object(path: &str) -> bool {
    keys().iter().any(|k| {
        k.path.len() > path.len()
            && k.path.starts_with(path)
            && k.path.as_bytes()[path.len()] == b'.'
    })
}

/// The known path closest to `path`, for "did you mean" hints.
pub fn nearest(path: &str) -> Option<&'static str> {
    let mut candidates: Vec<&'static str> = keys().iter().map(|k| k.path).collect();
    for k in keys() {
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
