//! Startup for openai-responses-mcp, and the host code both runtimes share.
//!
//! Two things live here, because both binaries need them and neither runtime may lean on
//! the other:
//!
//! - **Configuration.** The command line, the environment and the YAML file resolved once
//!   into the configuration the binaries run with. [`resolve::resolve`] is pure: defaults,
//!   YAML text, an environment snapshot and the parsed command line in; the effective
//!   configuration with the source of every leaf out ([`keys`], [`view`], [`choices`],
//!   [`providers`], [`proxy`], [`http`], [`clients`], [`show`]). [`launch`] is the thin
//!   layer around it that the binaries call once: it finds and reads the files, handles
//!   `--help`, `--version` and `--show-config`, and sets up logging.
//! - **Host code shared by the runtimes.** What does IO the same way in both: the TLS
//!   cryptography every connection uses ([`tls`]), the sans-IO pieces of the smol
//!   build's HTTP client and the header values both clients send ([`client`]), `doctor`'s
//!   checks and probes ([`doctor`]), reading stdin on a thread of its own ([`stdin`]),
//!   signals ([`signals`]), the clock and the process's environment and entropy.

#![deny(unsafe_code)]
#![deny(missing_docs)]

mod base_url;
pub mod choices;
pub mod cli;
pub mod client;
pub mod clients;
pub mod doctor;
mod error;
pub mod http;
pub mod keys;
mod logging;
pub mod oauth;
pub mod paths;
pub mod providers;
pub mod proxy;
pub mod resolve;
mod settings;
pub mod show;
pub mod signals;
pub mod stdin;
pub mod store;
mod task_key;
pub mod tls;
pub mod traces;
pub mod view;

pub use cli::{usage, Cli};
pub use logging::{announce_listening, write_call};
pub use resolve::{resolve, ConfigError, Env, Resolved, Source, YamlInput};
pub use settings::{PolicyMerge, PolicySource};

use proxy::ProxyRoute;
use responses_mcp_core::{Now, ServerConfig};
use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::path::PathBuf;

/// The version of the workspace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `User-Agent` of every upstream request, whichever client sends it.
pub const USER_AGENT: &str = concat!("openai-responses-mcp/", env!("CARGO_PKG_VERSION"));

/// The API key. Its `Debug` and `Display` print a mask, so it cannot leak through logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

pub use choices::Auth;

impl Startup {
    /// The header that carries the key, when there is a key.
    pub fn auth_header(&self) -> Option<(&'static str, String)> {
        let key = self.api_key.as_ref()?.expose();
        Some(match self.auth {
            Auth::Bearer => ("Authorization", format!("Bearer {key}")),
            Auth::ApiKey => ("api-key", key.to_owned()),
        })
    }
}

/// Everything a runtime needs to serve.
#[derive(Debug)]
pub struct Startup {
    /// The command line.
    pub cli: Cli,
    /// The resolved configuration with sources.
    pub resolved: Resolved,
    /// The core's configuration (no secrets).
    pub server: ServerConfig,
    /// The API key, when its variable is set.
    pub api_key: Option<ApiKey>,
    /// How the key is sent (`openai.auth`).
    pub auth: Auth,
    /// `OPENAI_ORG_ID`, sent as `OpenAI-Organization` with OpenAI's own key only.
    pub organization: Option<String>,
    /// `OPENAI_PROJECT_ID`, sent as `OpenAI-Project` with OpenAI's own key only.
    pub project: Option<String>,
    /// Root certificates (PEM) from `openai.ca_file`, replacing the built-in roots.
    pub ca_pem: Option<Vec<u8>>,
    /// The proxy upstream requests go through.
    pub proxy: ProxyRoute,
    /// The HTTP endpoint, with `--http`.
    pub http: Option<http::HttpServe>,
    /// The metrics-only listener, with `--metrics-listen` (`server.metrics_listen`).
    pub metrics: Option<http::HttpServe>,
    /// The store instances share their limits through (`server.store.url`).
    pub store: Option<store::StoreConnect>,
    /// Where spans go (`OTEL_*`); `None`: no traces.
    pub traces: Option<traces::TraceExport>,
}

/// What the binary should do after [`launch`].
#[derive(Debug)]
pub enum Launch {
    /// Exit with this status; everything has been printed.
    Exit(i32),
    /// Serve over stdio, or HTTP when [`Startup::http`] is set.
    Serve(Box<Startup>),
    /// Run `doctor`: the runtime gives it an HTTP client and exits with its status.
    Doctor(Box<doctor::Doctor>),
}

/// Parses the command line, resolves the configuration, sets up logging and handles the
/// options that do not serve. `seed` is entropy for retry jitter.
pub fn launch(args: impl IntoIterator<Item = OsString>, env: Env, seed: u64) -> Launch {
    let cli = match Cli::parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "openai-responses-mcp: {e}\n\n{}",
                usage()
            );
            return Launch::Exit(2);
        }
    };
    if cli.version {
        let _ = writeln!(std::io::stdout(), "openai-responses-mcp {VERSION}");
        return Launch::Exit(0);
    }
    if let Some(flags) = cli.doctor {
        let config_file =
            paths::config_path(&cli, &env, cfg!(windows)).map(|p| (p.clone(), p.is_file()));
        let loaded = load(cli, &env, seed).map(Box::new);
        return Launch::Doctor(Box::new(doctor::Doctor::new(flags, loaded, config_file)));
    }
    if cli.help || (!cli.serves() && !cli.show_config) {
        let _ = writeln!(std::io::stdout(), "{}", usage());
        return Launch::Exit(0);
    }
    let startup = match load(cli, &env, seed) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
            return Launch::Exit(1);
        }
    };
    if startup.cli.show_config || startup.resolved.show_config_on_start() {
        let secrets = show::SecretsSet {
            api_key: startup.api_key.is_some(),
            ..show::SecretsSet::of(&startup.resolved, &env)
        };
        let text = show::show_config(&startup.resolved, secrets, &startup.proxy);
        let _ = writeln!(std::io::stderr(), "{text}");
        if !startup.cli.serves() {
            return Launch::Exit(0);
        }
    }
    Launch::Serve(Box::new(startup))
}

/// Finds and reads the files, resolves, and initialises logging.
fn load(cli: Cli, env: &Env, seed: u64) -> Result<Startup, ConfigError> {
    let mut notes = Vec::new();
    let located = paths::config_path(&cli, env, cfg!(windows));
    let text = read_config_file(located.as_deref(), &mut notes)?;
    let yaml = match (&located, &text) {
        (Some(path), Some(text)) => Some(YamlInput { text, path }),
        _ => None,
    };
    let mut resolved = resolve(yaml, env, &cli)?;
    let proxy = proxy::resolve_proxy(env, &resolved.settings.openai.base_url)?;
    let proxied_in_the_clear = proxy::warning(&proxy, &resolved.settings.openai.base_url);
    resolved.warnings.extend(proxied_in_the_clear);
    if let Err(e) = logging::init(
        resolved.debug(),
        resolved.debug_file().as_deref(),
        resolved.json_logs(),
    ) {
        let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
    }
    if let (Some(path), Some(_)) = (&located, &text) {
        log::debug!("config file {} loaded", path.display());
    }
    for note in notes {
        log::debug!("{note}");
    }
    for warning in &resolved.warnings {
        log::warn!("{warning}");
    }
    let policy_text = read_policy(&resolved, located.as_deref())?;
    let ca_pem = read_ca(&resolved, located.as_deref())?;
    let api_key = api_key(&resolved, env, cli.serves());
    let today = responses_mcp_core::date::Date::tokyo(now().unix_secs).to_string();
    let replaced = resolved.replace_retired_default(&today);
    if cli.serves() {
        for warning in replaced
            .into_iter()
            .chain(startup_warnings(&resolved, now().unix_secs))
        {
            log::warn!("{warning}");
        }
    }
    let mut server = resolved.server_config(api_key.is_some(), policy_text.as_deref(), seed);
    let secret_env = &resolved.settings.tasks.secret_env;
    server.tasks.key = task_key::task_key(env, secret_env, task_key::system_random)?;
    server.call_records = logging::call_log_enabled();
    // OpenAI's organization and project go only with OpenAI's own key: another
    // service has no use for them (the resolver warns when they are dropped).
    let openai = resolved.carries_openai_key();
    let non_empty = |name: &str| {
        env.get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| openai && !v.is_empty())
    };
    match &proxy {
        ProxyRoute::Via { proxy, variable } => log::debug!("upstream through {proxy} ({variable})"),
        ProxyRoute::Bypassed { variable, by } => {
            let by = by.as_str();
            log::debug!("the proxy in {variable} is bypassed for the base URL ({by})")
        }
        ProxyRoute::Direct => {}
    }
    let named = clients::read(&resolved, located.as_deref())?;
    let tokens = named.as_ref().map(|n| n.tokens.clone());
    if let Some(named) = named {
        server.clients = named.clients;
    }
    let http = match cli.http {
        true => Some(http::HttpServe::resolve(&resolved, env, tokens.clone())?),
        false => None,
    };
    let metrics = http::HttpServe::resolve_metrics(&resolved, env, tokens)?;
    let store = store::StoreConnect::resolve(&resolved, env, ca_pem.as_deref())?;
    let traces = match traces::resolve(env)? {
        Some((export, sampler)) => {
            log::debug!("traces go to {} ({sampler:?})", export.origin());
            server.traces = Some(sampler);
            Some(export)
        }
        None => None,
    };
    if cli.serves() && store.is_some() && task_key::secret(env, secret_env).is_none() {
        // Instances would each seal with a random key of their own: the fleet would look
        // healthy and refuse every task made elsewhere.
        return Err(ConfigError::StoreWithoutTaskSecret {
            variable: secret_env.clone(),
        });
    }
    let auth = resolved.settings.openai.auth;
    Ok(Startup {
        http,
        metrics,
        store,
        traces,
        proxy,
        auth,
        organization: non_empty("OPENAI_ORG_ID"),
        project: non_empty("OPENAI_PROJECT_ID"),
        ca_pem,
        cli,
        resolved,
        server,
        api_key,
    })
}

/// The configuration file's text; `None` (with a note why) when there is none to read.
fn read_config_file(
    located: Option<&std::path::Path>,
    notes: &mut Vec<String>,
) -> Result<Option<String>, ConfigError> {
    let Some(path) = located else {
        notes.push("no config file location (no HOME, XDG_CONFIG_HOME or APPDATA)".into());
        return Ok(None);
    };
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            notes.push(format!("config file {} not found; skipped", path.display()));
            Ok(None)
        }
        Err(e) => Err(ConfigError::Unreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        }),
    }
}

/// The policy file's text when the policy comes from a file (relative to the config file).
fn read_policy(
    resolved: &Resolved,
    config: Option<&std::path::Path>,
) -> Result<Option<String>, ConfigError> {
    let PolicySource::File { path, .. } = resolved.policy_source() else {
        return Ok(None);
    };
    let path = relative_to_config(&path, config);
    std::fs::read_to_string(&path)
        .map(Some)
        .map_err(|e| ConfigError::PolicyFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

/// The PEM roots of `openai.ca_file`, refused unless they hold a certificate.
fn read_ca(
    resolved: &Resolved,
    config: Option<&std::path::Path>,
) -> Result<Option<Vec<u8>>, ConfigError> {
    let Some(path) = resolved.settings.openai.ca_file.as_deref() else {
        return Ok(None);
    };
    let path = relative_to_config(std::path::Path::new(path), config);
    let shown = path.display().to_string();
    let pem = std::fs::read(&path).map_err(|e| ConfigError::CaFile {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
        let message = "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned();
        return Err(ConfigError::CaFile {
            path: shown,
            message,
        });
    }
    log::debug!("trusting the root certificates in {shown} instead of the built-in roots");
    Ok(Some(pem))
}

/// The API key from the environment variable the profile names; a server that needs one
/// and has none says so once at startup.
fn api_key(resolved: &Resolved, env: &Env, serves: bool) -> Option<ApiKey> {
    let key_env = resolved.api_key_env();
    let api_key = env
        .get(key_env)
        .map(|k| k.trim())
        .filter(|k| !k.is_empty())
        .map(|k| ApiKey(k.to_owned()));
    if api_key.is_none() && resolved.settings.openai.api_key_required && serves {
        log::warn!(
            "{key_env} is not set: tools/list works, but every tools/call will fail until it is"
        );
    }
    api_key
}

/// What a user should know before the first call: a provider without web search, and
/// profile models OpenAI has shut down or will (the core's table; dates in Asia/Tokyo).
pub fn startup_warnings(resolved: &Resolved, unix_secs: u64) -> Vec<String> {
    let mut warnings = Vec::new();
    let provider = &resolved.settings.openai.provider;
    if resolved.settings.openai.web_search == choices::SearchMode::None {
        warnings.push(format!(
            "provider {provider} has no hosted web search: answers come from the model alone (used_search: false, no citations), and the tool descriptions say so"
        ));
    }
    let today = responses_mcp_core::date::Date::tokyo(unix_secs).to_string();
    for (_, model, setting) in resolved.profile_models() {
        if let Some(r) = responses_mcp_core::openai::models::retirement(&model) {
            warnings.push(r.describe(&model, setting, &today));
        }
    }
    warnings
}

/// A relative policy path is taken relative to the config file's folder.
pub(crate) fn relative_to_config(
    path: &std::path::Path,
    config: Option<&std::path::Path>,
) -> PathBuf {
    match config.and_then(|c| c.parent()) {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// Reads the process environment, skipping variables that are not UTF-8.
pub fn process_env() -> Env {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The time now, for the core: the one place a runtime reads the clocks.
pub fn now() -> Now {
    let unix_secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Now {
        instant: std::time::Instant::now(),
        unix_secs,
    }
}

/// Entropy for the server: retry jitter, and where this process's task numbers start.
/// From the system's random source (ring's, already linked for TLS): the clock and the
/// process id are not enough, since replicas start in the same second as PID 1 each.
/// Only where the system gives none, the clock and the process id (called before the
/// logger is up, so nothing is said of it).
pub fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}
