//! Reading the files and the environment into a [`Startup`], in two steps with the
//! logger installed between them by the host: [`read`] finds and reads the configuration
//! file, resolves it and works out the proxy; [`Read::startup`] says what was read, then
//! reads the policy, the CA roots, the key, the task key and the clients file, and
//! resolves the listeners, the store and traces into the core's configuration, built once.

use crate::clients;
use crate::http::HttpServe;
use crate::paths::relative_to_config;
use crate::proxy::{self, ProxyRoute};
use crate::resolve::{resolve, ConfigError, Env, Resolved, YamlInput};
use crate::settings::{CoreInputs, PolicySource};
use crate::{startup_warnings, store, task_key, traces};
use crate::{ApiKey, Cli, Startup};
use std::path::PathBuf;

/// The configuration file read and resolved, before the logger is up.
#[derive(Debug)]
pub struct Read {
    /// The command line.
    pub cli: Cli,
    /// The resolved configuration with sources.
    pub resolved: Resolved,
    /// Where the configuration file is looked for, when anywhere.
    pub located: Option<PathBuf>,
    /// Whether the file was there and read.
    loaded: bool,
    /// What is said at debug level once the logger is up.
    notes: Vec<String>,
    /// The proxy upstream requests go through.
    proxy: ProxyRoute,
}

/// What startup takes from the process rather than the configuration.
#[derive(Clone, Copy, Debug)]
pub struct Process<'a> {
    /// The environment snapshot.
    pub env: &'a Env,
    /// Entropy for retry jitter and trace ids.
    pub seed: u64,
    /// The time now, in seconds since the Unix epoch.
    pub unix_secs: u64,
    /// Whether the installed logger writes the call log.
    pub call_records: bool,
    /// The system's random source, for the task key; `false` when it gives none.
    pub random: fn(&mut [u8]) -> bool,
}

/// Finds and reads the configuration file, resolves it, and works out the proxy.
///
/// # Errors
/// An unreadable file, a configuration that does not resolve, or an unusable proxy.
pub fn read(cli: Cli, env: &Env) -> Result<Read, ConfigError> {
    let mut notes = Vec::new();
    let located = crate::paths::config_path(&cli, env, cfg!(windows));
    let text = read_config_file(located.as_deref(), &mut notes)?;
    let yaml = match (&located, &text) {
        (Some(path), Some(text)) => Some(YamlInput { text, path }),
        _ => None,
    };
    let mut resolved = resolve(yaml, env, &cli)?;
    let base_url = &resolved.settings.openai.base_url;
    let proxy = proxy::resolve_proxy(env, base_url)?;
    let proxied_in_the_clear = proxy::warning(&proxy, base_url);
    resolved.warnings.extend(proxied_in_the_clear);
    Ok(Read {
        cli,
        resolved,
        located,
        loaded: text.is_some(),
        notes,
        proxy,
    })
}

impl Read {
    /// Says what was read (the logger is up by now), then reads and resolves the rest.
    ///
    /// # Errors
    /// A file that cannot be read, a value that cannot be used, or a store without a
    /// shared task secret.
    pub fn startup(mut self, process: Process<'_>) -> Result<Startup, ConfigError> {
        self.tell();
        let (env, cli, config) = (process.env, &self.cli, self.located.as_deref());
        let resolved = &mut self.resolved;
        let policy_text = read_policy(resolved, config)?;
        let ca_pem = read_ca(resolved, config)?;
        let api_key = api_key(resolved, env, cli.serves());
        warn_at_start(resolved, cli.serves(), process.unix_secs);
        let secret_env = &resolved.settings.tasks.secret_env;
        let task_key = task_key::task_key(env, secret_env, process.random)?;
        log_proxy(&self.proxy);
        let named = clients::read(resolved, config)?;
        let http = match cli.http {
            true => Some(HttpServe::resolve(resolved, env, named.as_ref())?),
            false => None,
        };
        let metrics = HttpServe::resolve_metrics(resolved, env, named.as_ref())?;
        let store = store::StoreConnect::resolve(resolved, env, ca_pem.as_deref())?;
        let (traces, sampler) = match traces::resolve(env)? {
            Some((export, _)) if !cfg!(feature = "traces") => {
                log::warn!("OTEL_* asks for traces to {}, but this build has none: it was built without the `traces` feature (`--no-default-features`); the release builds have it", export.origin());
                (None, None)
            }
            Some((export, sampler)) => {
                log::debug!("traces go to {} ({sampler:?})", export.origin());
                (Some(export), Some(sampler))
            }
            None => (None, None),
        };
        if cli.serves() && store.is_some() && task_key::secret(env, secret_env).is_none() {
            // Instances would each seal with a random key of their own: the fleet would look
            // healthy and refuse every task made elsewhere.
            return Err(ConfigError::StoreWithoutTaskSecret {
                variable: secret_env.clone(),
            });
        }
        let server = resolved.core_config(CoreInputs {
            credentials_ready: api_key.is_some(),
            policy_file: policy_text.as_deref(),
            jitter_seed: process.seed,
            task_key,
            clients: named.map(|n| n.clients).unwrap_or_default(),
            call_records: process.call_records,
            traces: sampler,
        });
        // OpenAI's organization and project go only with OpenAI's own key: another
        // service has no use for them (the resolver warns when they are dropped).
        let openai = resolved.carries_openai_key();
        let non_empty = |name: &str| {
            env.get(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| openai && !v.is_empty())
        };
        Ok(Startup {
            http,
            metrics,
            store,
            traces,
            auth: resolved.settings.openai.auth,
            organization: non_empty("OPENAI_ORG_ID"),
            project: non_empty("OPENAI_PROJECT_ID"),
            ca_pem,
            server,
            api_key,
            proxy: self.proxy,
            cli: self.cli,
            resolved: self.resolved,
        })
    }

    /// What was read and what should be known, at debug and warning level.
    fn tell(&mut self) {
        if let (Some(path), true) = (&self.located, self.loaded) {
            log::debug!("config file {} loaded", path.display());
        }
        for note in self.notes.drain(..) {
            log::debug!("{note}");
        }
        for warning in &self.resolved.warnings {
            log::warn!("{warning}");
        }
    }
}

/// Replaces a retired default model, and warns of what a user should know before the
/// first call (only when serving).
fn warn_at_start(resolved: &mut Resolved, serves: bool, unix_secs: u64) {
    let today = responses_mcp_core::date::Date::tokyo(unix_secs).to_string();
    let replaced = resolved.replace_retired_default(&today);
    if serves {
        for warning in replaced
            .into_iter()
            .chain(startup_warnings(resolved, unix_secs))
        {
            log::warn!("{warning}");
        }
    }
}

/// Says at debug level which way upstream requests go.
fn log_proxy(proxy: &ProxyRoute) {
    match proxy {
        ProxyRoute::Via { proxy, variable } => log::debug!("upstream through {proxy} ({variable})"),
        ProxyRoute::Bypassed { variable, by } => {
            let by = by.as_str();
            log::debug!("the proxy in {variable} is bypassed for the base URL ({by})")
        }
        ProxyRoute::Direct => {}
    }
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
