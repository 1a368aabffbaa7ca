//! The pure resolver: defaults, YAML, environment and command line in; the effective
//! configuration with the source of every leaf out. No IO and no global state.
//!
//! Precedence is CLI > ENV > YAML > defaults. Objects merge deeply; arrays (and every
//! other leaf) replace.

use crate::cli::Cli;
use crate::keys::{self, Key, Kind};
use crate::view::Settings;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::env::Env;

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Built in.
    Default,
    /// The YAML file at this path.
    Yaml(PathBuf),
    /// This environment variable.
    Env(String),
    /// This command-line flag.
    Cli(&'static str),
    /// The preset of this provider (`openai.provider`).
    Preset(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::Yaml(p) => write!(f, "yaml:{}", p.display()),
            Source::Env(n) => write!(f, "env:{n}"),
            Source::Cli(flag) => write!(f, "cli:{flag}"),
            Source::Preset(provider) => write!(f, "preset:{provider}"),
        }
    }
}

pub use crate::error::ConfigError;

/// The key whose value decides where the API key is sent.
const BASE_URL: &str = "openai.base_url";

/// OpenAI's own key variable: the one `OPENAI_BASE_URL`, `OPENAI_ORG_ID` and
/// `OPENAI_PROJECT_ID` go with (the OpenAI SDKs read them together).
const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";

/// The YAML input: its text and the path it was read from.
#[derive(Clone, Copy, Debug)]
pub struct YamlInput<'a> {
    /// The file's text.
    pub text: &'a str,
    /// Its path, for messages and sources.
    pub path: &'a Path,
}

/// The effective configuration as a tree, with the source of every leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The effective configuration, typed: what the rest of the program reads.
    pub settings: Settings,
    /// The effective tree (the shape of config.yaml), for `--show-config`.
    pub tree: Value,
    /// Source per dotted leaf path.
    pub sources: BTreeMap<String, Source>,
    /// Non-fatal findings, such as unknown keys.
    pub warnings: Vec<String>,
}

/// Resolves the configuration.
///
/// # Errors
/// Invalid YAML (with line and column) and values of the wrong type or out of range
/// (naming the key or variable, the value and what is allowed).
pub fn resolve(yaml: Option<YamlInput<'_>>, env: &Env, cli: &Cli) -> Result<Resolved, ConfigError> {
    let tree = keys::defaults();
    let mut r = Resolved {
        settings: Settings::from_tree(&tree)?,
        tree,
        sources: BTreeMap::new(),
        warnings: Vec::new(),
    };
    let tree = r.tree.clone();
    record_defaults(&tree, "", &mut r.sources);
    if let Some(yaml) = yaml {
        r.apply_yaml(yaml)?;
    }
    let beneath_env = r.layer(BASE_URL);
    r.apply_env(env)?;
    r.apply_cli(cli);
    let ignored = r.unset_env_base_url(beneath_env);
    r.validate()?;
    r.apply_preset(env, ignored)?;
    r.refuse_foreign_key(env)?;
    r.warn_key_in_the_clear(env);
    r.warn_openai_ids(env);
    r.settings = Settings::from_tree(&r.tree)?;
    Ok(r)
}

fn record_defaults(v: &Value, prefix: &str, sources: &mut BTreeMap<String, Source>) {
    if keys::key(prefix).is_some() {
        sources.insert(prefix.to_owned(), Source::Default);
        return;
    }
    if let Value::Object(map) = v {
        for (k, child) in map {
            record_defaults(child, &join(prefix, k), sources);
        }
    }
}

fn join(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        k.to_owned()
    } else {
        format!("{prefix}.{k}")
    }
}

impl Resolved {
    /// The value at a dotted path (the typed [`Resolved::settings`] is what to read;
    /// this serves validation and tests).
    pub fn get(&self, path: &str) -> Option<&Value> {
        path.split('.').try_fold(&self.tree, |v, k| v.get(k))
    }

    fn set(&mut self, path: &str, value: Value, source: Source) {
        let mut node = &mut self.tree;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            if !node.is_object() {
                *node = Value::Object(Map::new());
            }
            let Value::Object(map) = node else { return };
            if parts.peek().is_none() {
                map.insert(part.to_owned(), value);
                break;
            }
            node = map
                .entry(part.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
        }
        self.sources.insert(path.to_owned(), source);
    }

    /// Removes an object (a profile), with the sources beneath it.
    fn remove(&mut self, path: &str) {
        if let Some((parent, last)) = path.rsplit_once('.') {
            let parent_node = parent
                .split('.')
                .try_fold(&mut self.tree, |v, k| v.get_mut(k));
            if let Some(Value::Object(map)) = parent_node {
                map.remove(last);
            }
        }
        let prefix = format!("{path}.");
        self.sources.retain(|k, _| !k.starts_with(&prefix));
    }

    fn apply_yaml(&mut self, yaml: YamlInput<'_>) -> Result<(), ConfigError> {
        let display = yaml.path.display().to_string();
        let parsed: serde_yaml::Value = serde_yaml::from_str(yaml.text).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            ConfigError::Yaml {
                path: display.clone(),
                line,
                column,
                message: e.to_string(),
            }
        })?;
        let value: Value = serde_json::to_value(&parsed).map_err(|e| ConfigError::Yaml {
            path: display.clone(),
            line: 0,
            column: 0,
            message: format!("unsupported YAML value: {e}"),
        })?;
        let source = Source::Yaml(yaml.path.to_path_buf());
        match value {
            Value::Null => Ok(()),
            Value::Object(map) => self.merge_object("", map, &source),
            other => Err(invalid(
                "(top level)",
                &other,
                &source,
                "a mapping of sections such as openai:, request:, model_profiles:",
            )),
        }
    }

    fn merge_object(
        &mut self,
        prefix: &str,
        map: Map<String, Value>,
        source: &Source,
    ) -> Result<(), ConfigError> {
        for (k, v) in map {
            let path = join(prefix, &k);
            if keys::key(&path).is_some() {
                self.set(&path, v, source.clone());
            } else if keys::is_known_object(&path) {
                match v {
                    Value::Object(inner) => self.merge_object(&path, inner, source)?,
                    // `model_profiles.answer_detailed: null` removes the profile.
                    Value::Null if is_profile(&path) => self.remove(&path),
                    Value::Null => {}
                    other => return Err(invalid(&path, &other, source, "a mapping")),
                }
            } else {
                let hint = keys::nearest(&path)
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_default();
                self.warnings.push(format!(
                    "unknown configuration key {path} in {source}{hint}"
                ));
            }
        }
        Ok(())
    }

    fn apply_env(&mut self, env: &Env) -> Result<(), ConfigError> {
        for key in keys::keys() {
            let Some(name) = key.env else { continue };
            let Some(raw) = env.get(name).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            let source = Source::Env(name.to_owned());
            let value = from_env_text(key, raw.trim()).ok_or_else(|| ConfigError::Invalid {
                key: name.to_owned(),
                value: format!("{raw:?}"),
                origin: format!("sets {}", key.path),
                allowed: allowed(key.kind),
            })?;
            self.set(key.path, value, source);
        }
        if let Some(raw) = env.get("DEBUG").map(|v| v.trim()).filter(|v| !v.is_empty()) {
            let source = Source::Env("DEBUG".into());
            match raw.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => self.set("server.debug", Value::Bool(true), source),
                "0" | "false" | "no" | "off" => {
                    self.set("server.debug", Value::Bool(false), source)
                }
                _ => {
                    self.set("server.debug", Value::Bool(true), source.clone());
                    self.set("server.debug_file", Value::String(raw.to_owned()), source);
                }
            }
        }
        Ok(())
    }

    fn apply_cli(&mut self, cli: &Cli) {
        if cli.http {
            let http = Value::String("http".into());
            self.set("server.transport", http, Source::Cli("--http"));
        }
        if let Some(listen) = &cli.listen {
            let listen = Value::String(listen.clone());
            self.set("server.http.listen", listen, Source::Cli("--listen"));
        }
        if let Some(provider) = &cli.provider {
            let value = Value::String(provider.clone());
            self.set("openai.provider", value, Source::Cli("--provider"));
        }
        if let Some(url) = &cli.base_url {
            let url = Value::String(url.clone());
            self.set(BASE_URL, url, Source::Cli("--base-url"));
        }
        if let Some(addr) = &cli.metrics_listen {
            let value = Value::String(addr.clone());
            self.set(
                "server.metrics_listen",
                value,
                Source::Cli("--metrics-listen"),
            );
        }
        if let Some(format) = &cli.log_format {
            let value = Value::String(format.clone());
            self.set("server.log_format", value, Source::Cli("--log-format"));
        }
        if let Some(model) = &cli.model {
            self.set(
                "model_profiles.answer.model",
                Value::String(model.clone()),
                Source::Cli("--model"),
            );
        }
        if let Some(path) = &cli.debug {
            self.set("server.debug", Value::Bool(true), Source::Cli("--debug"));
            if let Some(path) = path {
                let p = Value::String(path.display().to_string());
                self.set("server.debug_file", p, Source::Cli("--debug"));
            }
        }
    }

    /// Fills what the provider's preset decides and nobody set (the value is still the
    /// default), recording the preset as its source.
    ///
    /// `ignored` is the variable and URL [`Resolved::unset_env_base_url`] took back.
    fn apply_preset(
        &mut self,
        env: &Env,
        ignored: Option<(String, String)>,
    ) -> Result<(), ConfigError> {
        let provider = self.provider();
        let preset = crate::providers::preset(provider);
        let azure = (provider == crate::choices::Provider::Azure).then(|| {
            let resource = self.get("openai.azure_resource").and_then(Value::as_str);
            let endpoint = env.get("AZURE_OPENAI_ENDPOINT").map(String::as_str);
            crate::providers::azure_base_url(resource, endpoint)
        });
        let (azure_url, azure_unknown) = match azure {
            Some(Ok(url)) => (Some(url), None),
            Some(Err(why)) => (None, Some(why.0)),
            None => (None, None),
        };
        for (path, value) in preset.values(azure_url.clone()) {
            // A profile other than answer's has no default: nobody set it either.
            if matches!(self.sources.get(path), Some(&Source::Default) | None) {
                self.set(path, value, Source::Preset(preset.name.as_str()));
            }
        }
        if let Some(why) = azure_unknown {
            if self.sources.get(BASE_URL) == Some(&Source::Default) {
                let why = match &ignored {
                    Some((variable, _)) => format!("{why} ({variable} is not used for provider azure: it is the OpenAI SDKs' variable)"),
                    None => why,
                };
                return Err(ConfigError::AzureResource { why });
            }
        }
        if let Some((variable, url)) = ignored {
            self.warn_ignored_base_url(&variable, &url);
        }
        let own = preset.base_url().map(str::to_owned).or(azure_url);
        if let Some(own) = own.filter(|_| provider != crate::choices::Provider::OpenAi) {
            self.warn_foreign_host(env, &own);
        }
        Ok(())
    }

    /// Warns when the operator pointed a preset other than `openai` at a host other than
    /// its service's own while its key's variable holds a key: the key goes there (to a
    /// gateway the operator trusts, or by mistake to another service).
    fn warn_foreign_host(&mut self, env: &Env, own: &str) {
        let source = self.source_of(BASE_URL);
        if matches!(source, Source::Preset(_) | Source::Default) {
            return;
        }
        let url = self
            .get(BASE_URL)
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key_env = self.key_env();
        let has_key = env.get(key_env).is_some_and(|k| !k.trim().is_empty());
        if !has_key || crate::base_url::host_of(url) == crate::base_url::host_of(own) {
            return;
        }
        let warning = format!(
            "openai.base_url ({}, from {source}) is not provider {}'s own host ({}): its key ({key_env}) is sent there with every request; keep it only for a gateway you trust with that key, or remove openai.base_url to use the provider's URL",
            crate::base_url::origin(url),
            self.provider(),
            crate::base_url::origin(own),
        );
        self.warnings.push(warning);
    }

    /// Whether requests carry OpenAI's own key to the `openai` provider: the only case
    /// in which the OpenAI SDKs' variables (`OPENAI_BASE_URL`, `OPENAI_ORG_ID`,
    /// `OPENAI_PROJECT_ID`) apply. Another key (`openai.api_key_env` naming
    /// `PERPLEXITY_API_KEY`, say) is another service's, whatever the provider says.
    pub fn carries_openai_key(&self) -> bool {
        crate::providers::preset(self.provider()).follows_openai_base_url()
            && self.key_env() == OPENAI_KEY_ENV
    }

    /// Says that `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` are not sent when the requests
    /// carry another service's key: they name an OpenAI organization and project.
    fn warn_openai_ids(&mut self, env: &Env) {
        if self.carries_openai_key() {
            return;
        }
        let set: Vec<&str> = ["OPENAI_ORG_ID", "OPENAI_PROJECT_ID"]
            .into_iter()
            .filter(|name| env.get(*name).is_some_and(|v| !v.trim().is_empty()))
            .collect();
        if set.is_empty() {
            return;
        }
        let warning = format!(
            "{} not sent: they name an OpenAI organization and project, and provider {}'s requests carry the key in {}, not OpenAI's own (OPENAI_API_KEY); unset them here to silence this",
            match set.as_slice() {
                [one] => format!("{one} is"),
                _ => format!("{} are", set.join(" and ")),
            },
            self.provider(),
            self.key_env(),
        );
        self.warnings.push(warning);
    }

    /// The value at `path` and its source, to put back later.
    fn layer(&self, path: &str) -> (Option<Value>, Source) {
        (self.get(path).cloned(), self.source_of(path))
    }

    /// Puts back what the layers below the environment set for the base URL (the file's,
    /// or the default the preset then fills) when the environment set it and the requests
    /// carry another key than OpenAI's own ([`Resolved::carries_openai_key`]); returns
    /// the variable and the URL it held. When the variable is followed over a URL the
    /// file set, says so.
    fn unset_env_base_url(
        &mut self,
        (beneath, source): (Option<Value>, Source),
    ) -> Option<(String, String)> {
        let Some(Source::Env(variable)) = self.sources.get(BASE_URL) else {
            return None;
        };
        let variable = variable.clone();
        if self.carries_openai_key() {
            let file_url = beneath.as_ref().and_then(Value::as_str);
            let url = self.get(BASE_URL).and_then(Value::as_str);
            if let (Source::Yaml(_), Some(file_url), Some(url)) = (&source, file_url, url) {
                if file_url.trim_end_matches('/') != url.trim_end_matches('/') {
                    let warning = format!(
                        "{variable} ({}) overrides openai.base_url ({}, from {source}): OpenAI's key (OPENAI_API_KEY) goes to the variable's URL; unset {variable} to use the file's, or pass --base-url to choose",
                        crate::base_url::origin(url),
                        crate::base_url::origin(file_url),
                    );
                    self.warnings.push(warning);
                }
            }
            return None;
        }
        let url = self.get(BASE_URL).and_then(Value::as_str)?.to_owned();
        self.set(BASE_URL, beneath.unwrap_or(Value::Null), source);
        Some((variable, url))
    }

    /// Says that `variable`'s `url` was not used, why, and how to use it; only its origin
    /// is shown (a path or the part before `@` may hold a secret).
    fn warn_ignored_base_url(&mut self, variable: &str, url: &str) {
        let used = self
            .get(BASE_URL)
            .and_then(Value::as_str)
            .unwrap_or_default();
        if used.trim_end_matches('/') == url.trim_end_matches('/') {
            return;
        }
        let warning = format!(
            "{variable} ({}) is ignored: provider {} sends its key ({}) to {used}, from {}. {variable} is the OpenAI SDKs' variable, often left set for another gateway or a local server, so it moves only requests that carry OpenAI's own key (provider openai with OPENAI_API_KEY); to send these requests to that URL, set openai.base_url in the config file or pass --base-url",
            crate::base_url::origin(url),
            self.provider(),
            self.key_env(),
            self.source_of(BASE_URL),
        );
        self.warnings.push(warning);
    }

    /// Refuses to send OpenAI's host a key that is another service's: `openai.api_key_env`
    /// names another provider's variable (`OPENROUTER_API_KEY`), or the key begins as
    /// another provider's keys do (`sk-or-`, `pplx-`), while the base URL is OpenAI's.
    /// `openai.allow_foreign_key: true` allows it where that is meant.
    fn refuse_foreign_key(&self, env: &Env) -> Result<(), ConfigError> {
        use crate::providers::{is_openai_host, service_of_key, service_of_variable};
        let url = self
            .get(BASE_URL)
            .and_then(Value::as_str)
            .unwrap_or_default();
        let allowed = self
            .get("openai.allow_foreign_key")
            .and_then(Value::as_bool);
        let host = crate::base_url::host_of(url);
        if !is_openai_host(&host) || allowed == Some(true) {
            return Ok(());
        }
        let key_env = self.key_env();
        let by_name = service_of_variable(key_env).map(|service| {
            let why = format!(
                "openai.api_key_env is {key_env} (from {}), {}'s variable",
                self.source_of("openai.api_key_env"),
                service.name
            );
            let or = format!("or set openai.api_key_env to the variable that holds an OpenAI key ({OPENAI_KEY_ENV})");
            (why, service, or)
        });
        let key = env.get(key_env).map(String::as_str).unwrap_or_default();
        let by_shape = || {
            service_of_key(key).map(|(prefix, service)| {
                let why = format!(
                    "the key in {key_env} begins as {}'s keys do ({prefix}…)",
                    service.name
                );
                (why, service, format!("or put an OpenAI key in {key_env}"))
            })
        };
        let Some((why, service, or)) = by_name.or_else(by_shape) else {
            return Ok(());
        };
        let advice = match service.preset {
            Some(preset) => format!(
                "Set openai.provider: {preset} (its preset sends the key to {}'s own URL), {or}",
                service.name
            ),
            None => format!(
                "Set openai.base_url to {}'s Responses API URL, {or}",
                service.name
            ),
        };
        Err(ConfigError::ForeignKey {
            why,
            host,
            url: crate::base_url::origin(url),
            url_source: self.source_of(BASE_URL).to_string(),
            advice,
        })
    }

    /// Warns when the key would cross the network unencrypted: an `http://` base URL to
    /// another machine while the key's variable holds a key.
    fn warn_key_in_the_clear(&mut self, env: &Env) {
        let url = self
            .get(BASE_URL)
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key_env = self.key_env();
        let has_key = env.get(key_env).is_some_and(|k| !k.trim().is_empty());
        if !has_key || !crate::base_url::in_the_clear(url) {
            return;
        }
        let warning = format!(
            "openai.base_url ({}, from {}) is plain http to another machine: the key in {key_env} is sent unencrypted with every request, readable by anyone on the network path; use an https:// URL, or a loopback address for a server on this machine",
            crate::base_url::origin(url),
            self.source_of(BASE_URL),
        );
        self.warnings.push(warning);
    }

    /// `openai.api_key_env` as resolved so far (the typed settings are built last; the
    /// key always has a value, its default at least).
    fn key_env(&self) -> &str {
        self.get("openai.api_key_env")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Where `path`'s value came from.
    fn source_of(&self, path: &str) -> Source {
        self.sources.get(path).cloned().unwrap_or(Source::Default)
    }

    /// `openai.provider` as set (the resolver checks its spelling).
    fn provider(&self) -> crate::choices::Provider {
        self.get("openai.provider")
            .and_then(Value::as_str)
            .and_then(crate::choices::Provider::parse)
            .unwrap_or(crate::choices::Provider::OpenAi)
    }

    /// Settings the provider's API does not offer.
    fn offered(&self) -> Result<(), ConfigError> {
        let api = self.provider().api();
        if let Some(tier) = self.get("tasks.service_tier").and_then(Value::as_str) {
            if !api.takes_openai_options() {
                return Err(ConfigError::NotOffered {
                    setting: "tasks.service_tier",
                    value: tier.to_owned(),
                    service: api.name(),
                    feature: "service tiers",
                    advice: "remove tasks.service_tier: the service prices every request alike",
                });
            }
            let window = self.get("tasks.completion_window").and_then(Value::as_str);
            if window.is_some_and(|w| w != "soonest") {
                let source = self.source_of("tasks.service_tier");
                return Err(invalid(
                    "tasks.service_tier",
                    &Value::String(tier.to_owned()),
                    &source,
                    "unset while tasks.completion_window is not soonest: only the standard tier takes a completion window; choose the window's discount or the tier",
                ));
            }
        }
        if !api.has_background()
            && self.get("tasks.openai_background").and_then(Value::as_bool) == Some(true)
        {
            return Err(ConfigError::NotOffered {
                setting: "tasks.openai_background",
                value: "true".into(),
                service: api.name(),
                feature: "background mode (it answers every request while the client waits)",
                advice: "set tasks.openai_background to false: task-augmented calls are then kept by this server and answered when the request ends",
            });
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.offered()?;
        for (path, source) in &self.sources {
            let (Some(key), Some(value)) = (keys::key(path), self.get(path)) else {
                continue;
            };
            if !fits(key.kind, value) {
                return Err(invalid(path, value, source, &allowed(key.kind)));
            }
        }
        if self.get("policy.system.source").and_then(Value::as_str) == Some("file")
            && self
                .get("policy.system.path")
                .and_then(Value::as_str)
                .is_none()
        {
            let source = self.source_of("policy.system.source");
            return Err(invalid(
                "policy.system.path",
                &Value::Null,
                &source,
                "a file path when policy.system.source is file",
            ));
        }
        Ok(())
    }
}

fn is_profile(path: &str) -> bool {
    path.strip_prefix("model_profiles.")
        .is_some_and(keys::is_profile_name)
}

fn invalid(path: &str, value: &Value, source: &Source, allowed: &str) -> ConfigError {
    let mut shown = value.to_string();
    if shown.chars().count() > 80 {
        shown = shown.chars().take(80).collect::<String>() + "…";
    }
    ConfigError::Invalid {
        key: path.to_owned(),
        value: shown,
        origin: source.to_string(),
        allowed: allowed.to_owned(),
    }
}

/// Whether `value` has the type and range `kind` asks for.
fn fits(kind: Kind, value: &Value) -> bool {
    match (kind, value) {
        (Kind::Str, Value::String(s)) => !s.trim().is_empty(),
        (Kind::OptStr, Value::Null) => true,
        (Kind::OptStr, Value::String(s)) => !s.trim().is_empty(),
        (Kind::Url, Value::String(s)) => {
            (s.starts_with("https://") || s.starts_with("http://"))
                && s.len() > "https://".len()
                && !s.contains(char::is_whitespace)
        }
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::Int { min, max }, Value::Number(n)) => {
            n.as_u64().is_some_and(|n| (min..=max).contains(&n))
        }
        (Kind::OneOf(names), Value::String(s)) => names.contains(&s.as_str()),
        (Kind::OptOneOf(_), Value::Null) => true,
        (Kind::OptOneOf(names), Value::String(s)) => names.contains(&s.as_str()),
        (Kind::StrList, Value::Array(items)) => items.iter().all(Value::is_string),
        (Kind::HostList, Value::Array(items)) => items.iter().all(|i| {
            i.as_str()
                .is_some_and(|h| responses_mcp_core::tools::check_host(h).is_ok())
        }),
        (Kind::OptBool | Kind::OptInt { .. } | Kind::Country | Kind::TimeZone, Value::Null) => true,
        (Kind::OptBool, Value::Bool(_)) => true,
        (Kind::OptInt { min, max }, Value::Number(n)) => {
            n.as_u64().is_some_and(|n| (min..=max).contains(&n))
        }
        (Kind::Country, Value::String(s)) => {
            s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
        }
        (Kind::TimeZone, Value::String(s)) => is_time_zone(s),
        (Kind::Usd | Kind::OptUsd, Value::Number(n)) => n.as_f64().is_some_and(is_usd),
        (Kind::OptUsd, Value::Null) => true,
        (Kind::PriceTable, Value::Object(models)) => models
            .iter()
            .all(|(model, entry)| !model.trim().is_empty() && is_price(entry)),
        _ => false,
    }
}

/// Describes what `kind` allows, for error messages.
fn allowed(kind: Kind) -> String {
    match kind {
        Kind::Str => "a non-empty string".into(),
        Kind::OptStr => "a non-empty string or null".into(),
        Kind::Url => "an http:// or https:// URL".into(),
        Kind::Bool => "true or false".into(),
        Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
        Kind::OneOf(names) => format!("one of {}", names.join(", ")),
        Kind::OptOneOf(names) => format!("one of {} (or null)", names.join(", ")),
        Kind::StrList => "a list of strings".into(),
        Kind::HostList => "a list of bare host names such as example.com".into(),
        Kind::OptBool => "true, false or null".into(),
        Kind::OptInt { min, max } => format!("a whole number from {min} to {max}, or null"),
        Kind::Country => {
            "a two-letter upper-case ISO 3166-1 country code such as JP, or null".into()
        }
        Kind::TimeZone => "an IANA time zone such as Asia/Tokyo or UTC, or null".into(),
        Kind::Usd => "an amount of US dollars from 0 to 999999".into(),
        Kind::OptUsd => "an amount of US dollars from 0 to 999999, or null".into(),
        Kind::PriceTable => {
            let fields: Vec<String> = keys::PRICE_FIELDS
                .iter()
                .map(|(name, required, what)| {
                    let optional = if *required { "" } else { ", optional" };
                    format!("{name} ({what}{optional})")
                })
                .collect();
            format!(
                "a mapping of model ids to objects of {}; rates from 0 to 999999",
                fields.join("; ")
            )
        }
    }
}

/// A non-negative amount below a million dollars.
fn is_usd(usd: f64) -> bool {
    usd.is_finite() && (0.0..1e6).contains(&usd)
}

/// One `pricing.models.<model>` entry: the required rates, the optional ones, nothing else.
fn is_price(entry: &Value) -> bool {
    let Value::Object(fields) = entry else {
        return false;
    };
    let known = fields.iter().all(|(name, value)| match name.as_str() {
        "long_context_above_tokens" => value.is_null() || value.as_u64().is_some_and(|n| n > 0),
        "cached_input_per_mtok"
        | "cache_write_per_mtok"
        | "per_request_usd"
        | "per_request_usd_low"
        | "per_request_usd_medium"
        | "per_request_usd_high"
            if value.is_null() =>
        {
            true
        }
        other => {
            keys::PRICE_FIELDS
                .iter()
                .any(|(field, _, _)| *field == other)
                && value.as_f64().is_some_and(is_usd)
        }
    });
    let complete = keys::PRICE_FIELDS
        .iter()
        .filter(|(_, required, _)| *required)
        .all(|(field, _, _)| fields.contains_key(*field));
    known && complete
}

/// `Area/Location` (letters, digits, `_`, `-`, `+`, more `/` parts) or `UTC`.
fn is_time_zone(s: &str) -> bool {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.len() <= 32
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+'))
    };
    s == "UTC" || (s.contains('/') && s.len() <= 64 && s.split('/').all(part_ok))
}

/// Reads an environment variable's text as a value of `key`'s kind.
fn from_env_text(key: &Key, raw: &str) -> Option<Value> {
    let value = match key.kind {
        Kind::Int { .. } | Kind::OptInt { .. } => Value::Number(raw.parse::<u64>().ok()?.into()),
        Kind::Usd | Kind::OptUsd => {
            Value::Number(serde_json::Number::from_f64(raw.trim().parse().ok()?)?)
        }
        Kind::Bool | Kind::OptBool => Value::Bool(match raw.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => return None,
        }),
        Kind::StrList | Kind::HostList => Value::Array(
            raw.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .collect(),
        ),
        _ => Value::String(raw.to_owned()),
    };
    fits(key.kind, &value).then_some(value)
}
