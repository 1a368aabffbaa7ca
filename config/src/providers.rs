//! Provider presets: what differs between the services that speak the Responses API.
//!
//! A preset fills a setting only where nobody set it (its value is still the built-in
//! default); `--show-config` then names the preset as the source. One exception keeps a
//! preset's key where the operator pointed it: `OPENAI_BASE_URL` does not count as set
//! for any preset but `openai` ([`Preset::follows_openai_base_url`]). Facts per provider
//! (shared/reference/openai/README.md, section 3.6):
//! - Azure OpenAI: `https://NAME.openai.azure.com/openai/v1` (the v1 surface needs no
//!   `api-version`), the key in an `api-key` header, the model is the deployment name,
//!   web search through the same `web_search` tool (Bing-grounded).
//! - OpenRouter: `https://openrouter.ai/api/v1`, Bearer, models named `openai/…`,
//!   search through its own `openrouter:web_search` server tool.
//! - Ollama (since 0.13.3) and LM Studio (since 0.3.29): local, no key needed, and no
//!   hosted web search.
//! - Perplexity's Agent API: `https://api.perplexity.ai/v1` (`POST /v1/responses`, an
//!   alias of `/v1/agent` for OpenAI's SDKs), Bearer `PERPLEXITY_API_KEY`, models named
//!   `provider/model` (`openai/gpt-5.5`, `perplexity/sonar`), its own `web_search` tool
//!   at $5 per 1,000 searches, and each response's `usage.cost` says what it billed
//!   (docs.perplexity.ai: agent-api/openai-compatibility, grounded-llm/responses/tools,
//!   api-reference/responses-post; read 2026-11-28).
//! - Parallel's Responses API (released 2026-07-21): `https://api.parallel.ai/v1`, the
//!   OpenAI SDK's Bearer key (`PARALLEL_API_KEY`), one model `parallel` whose
//!   `reasoning.effort` picks the research tier, search on every request without a tool,
//!   $10 per 1,000 low requests and $50 per 1,000 medium ones (docs.parallel.ai:
//!   responses-api/responses-quickstart, responses-api/openai-compatibility; the prices as
//!   re-read from docs.parallel.ai/getting-started/pricing on 2026-11-10 by the
//!   `parallel-efficiency` skill's snapshot; no published figure for `high` was found).

use crate::choices::{Auth, Provider, SearchMode};
use serde_json::{json, Value};

/// Why Azure's base URL cannot be made from `openai.azure_resource` or `AZURE_OPENAI_ENDPOINT`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AzureUrlError(pub String);

impl From<String> for AzureUrlError {
    fn from(message: String) -> Self {
        AzureUrlError(message)
    }
}

impl From<&str> for AzureUrlError {
    fn from(message: &str) -> Self {
        AzureUrlError(message.to_owned())
    }
}

/// One provider's preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// `openai.provider`.
    pub name: Provider,
    /// `openai.base_url` (`None` for Azure: built from the resource).
    base_url: Option<&'static str>,
    /// `openai.api_key_env`.
    api_key_env: &'static str,
    /// `openai.auth`.
    auth: Auth,
    /// `openai.api_key_required`.
    api_key_required: bool,
    /// `openai.web_search`.
    web_search: SearchMode,
    /// Profiles the provider names its own way: tool, model, `reasoning_effort`.
    profiles: &'static [(&'static str, &'static str, Option<&'static str>)],
    /// `pricing.web_search_per_1k_usd`, where the provider bills searches otherwise.
    search_per_1k_usd: Option<u64>,
    /// `openai.model_lookups`: whether the provider answers `GET /models/{id}`.
    model_lookups: bool,
}

const OPENAI: Preset = Preset {
    name: Provider::OpenAi,
    base_url: Some("https://api.openai.com/v1"),
    api_key_env: "OPENAI_API_KEY",
    auth: Auth::Bearer,
    api_key_required: true,
    web_search: SearchMode::OpenAi,
    profiles: &[],
    search_per_1k_usd: None,
    model_lookups: true,
};

const AZURE: Preset = Preset {
    name: Provider::Azure,
    base_url: None,
    api_key_env: "AZURE_OPENAI_API_KEY",
    auth: Auth::ApiKey,
    api_key_required: true,
    web_search: SearchMode::OpenAi,
    profiles: &[],
    search_per_1k_usd: None,
    model_lookups: true,
};

const OPENROUTER: Preset = Preset {
    name: Provider::OpenRouter,
    base_url: Some("https://openrouter.ai/api/v1"),
    api_key_env: "OPENROUTER_API_KEY",
    auth: Auth::Bearer,
    api_key_required: true,
    web_search: SearchMode::OpenRouter,
    profiles: &[("answer", "openai/gpt-6.1-terra", None)],
    search_per_1k_usd: None,
    model_lookups: true,
};

const OLLAMA: Preset = Preset {
    name: Provider::Ollama,
    base_url: Some("http://localhost:11434/v1"),
    api_key_env: "OLLAMA_API_KEY",
    auth: Auth::Bearer,
    api_key_required: false,
    web_search: SearchMode::None,
    profiles: &[("answer", "gpt-oss:20b", None)],
    search_per_1k_usd: None,
    model_lookups: true,
};

const LMSTUDIO: Preset = Preset {
    name: Provider::LmStudio,
    base_url: Some("http://localhost:1234/v1"),
    api_key_env: "LMSTUDIO_API_KEY",
    auth: Auth::Bearer,
    api_key_required: false,
    web_search: SearchMode::None,
    profiles: &[("answer", "openai/gpt-oss-20b", None)],
    search_per_1k_usd: None,
    model_lookups: true,
};

const PERPLEXITY: Preset = Preset {
    name: Provider::Perplexity,
    base_url: Some("https://api.perplexity.ai/v1"),
    api_key_env: "PERPLEXITY_API_KEY",
    auth: Auth::Bearer,
    api_key_required: true,
    web_search: SearchMode::Perplexity,
    profiles: &[
        ("answer", "openai/gpt-5.5", Some("medium")),
        ("answer_detailed", "openai/gpt-5.5", Some("high")),
        ("answer_quick", "perplexity/sonar", Some("low")),
    ],
    search_per_1k_usd: Some(5),
    model_lookups: false,
};

const PARALLEL: Preset = Preset {
    name: Provider::Parallel,
    base_url: Some("https://api.parallel.ai/v1"),
    api_key_env: "PARALLEL_API_KEY",
    auth: Auth::Bearer,
    api_key_required: true,
    web_search: SearchMode::Always,
    profiles: &[
        ("answer", "parallel", Some("medium")),
        ("answer_detailed", "parallel", Some("high")),
        ("answer_quick", "parallel", Some("low")),
    ],
    search_per_1k_usd: None,
    model_lookups: false,
};

/// The preset of `provider`.
pub fn preset(provider: Provider) -> &'static Preset {
    match provider {
        Provider::OpenAi => &OPENAI,
        Provider::Azure => &AZURE,
        Provider::OpenRouter => &OPENROUTER,
        Provider::Ollama => &OLLAMA,
        Provider::LmStudio => &LMSTUDIO,
        Provider::Perplexity => &PERPLEXITY,
        Provider::Parallel => &PARALLEL,
    }
}

impl Preset {
    /// Whether `OPENAI_BASE_URL` from the environment may move this preset's requests.
    ///
    /// Only `openai`'s: the variable is the OpenAI SDKs' own (openai-python and
    /// openai-node read it beside `OPENAI_API_KEY`), so a shell that sets it meant
    /// OpenAI's key to go there, and a gateway in front of OpenAI is configured this way.
    /// Every other preset sends another service's key (Azure's, OpenRouter's,
    /// Perplexity's, Parallel's), or talks to a server on this machine (Ollama, LM
    /// Studio, with their own key when one is set): a variable left in a developer's
    /// shell for a gateway or a local server would hand that key to a host the operator
    /// never chose for it, over plain http if that is what it names. For them, only
    /// `openai.base_url` in the file or `--base-url` moves the URL. The resolver also asks
    /// that the key be OpenAI's own (`OPENAI_API_KEY`):
    /// `Resolved::carries_openai_key` (resolve.rs).
    pub fn follows_openai_base_url(&self) -> bool {
        self.name == Provider::OpenAi
    }

    /// The preset's base URL (`None` for Azure: built from the resource).
    pub fn base_url(&self) -> Option<&'static str> {
        self.base_url
    }

    /// The settings the preset decides, by dotted path; `azure_url` is Azure's base URL
    /// when it could be built.
    pub fn values(&self, azure_url: Option<String>) -> Vec<(&'static str, Value)> {
        // OpenAI's own values are the built-in defaults: nothing to record as a preset.
        if self.name == Provider::OpenAi {
            return Vec::new();
        }
        let mut values = vec![
            ("openai.api_key_env", json!(self.api_key_env)),
            ("openai.auth", json!(self.auth.as_str())),
            ("openai.api_key_required", json!(self.api_key_required)),
            ("openai.web_search", json!(self.web_search.as_str())),
        ];
        match (self.base_url, azure_url) {
            (Some(url), _) => values.push(("openai.base_url", json!(url))),
            (None, Some(url)) => values.push(("openai.base_url", json!(url))),
            (None, None) => {}
        }
        for (tool, model, effort) in self.profiles {
            // The key table's own paths: they live as long as the process.
            let path = |leaf: &str| {
                crate::keys::key(&format!("model_profiles.{tool}.{leaf}")).map(|k| k.path)
            };
            if let Some(path) = path("model") {
                values.push((path, json!(model)));
            }
            if let (Some(path), Some(effort)) = (path("reasoning_effort"), effort) {
                values.push((path, json!(effort)));
            }
        }
        if !self.model_lookups {
            values.push(("openai.model_lookups", json!(false)));
        }
        if let Some(usd) = self.search_per_1k_usd {
            values.push(("pricing.web_search_per_1k_usd", json!(usd)));
        }
        values
    }
}

/// OpenAI's API host: the one host that must never receive another service's key.
pub const OPENAI_HOST: &str = "api.openai.com";

/// Whether requests to `host` (lower case) reach OpenAI: its API host, or one of its
/// regions' (`eu.api.openai.com`).
pub fn is_openai_host(host: &str) -> bool {
    host == "openai.com" || host.ends_with(".openai.com")
}

/// Another service whose key may sit in the environment: its name and, when it has one,
/// this server's preset for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    /// As its users know it.
    pub name: &'static str,
    /// `openai.provider` for it, when there is a preset.
    pub preset: Option<Provider>,
}

const fn service(name: &'static str, preset: Option<Provider>) -> Service {
    Service { name, preset }
}

/// Words of a variable's name (split at `_`) that name another service: its key is kept
/// in such a variable (`OPENROUTER_API_KEY`, `PPLX_API_KEY`, `MY_GROQ_KEY`).
const SERVICE_WORDS: &[(&str, Service)] = &[
    (
        "OPENROUTER",
        service("OpenRouter", Some(Provider::OpenRouter)),
    ),
    (
        "PERPLEXITY",
        service("Perplexity", Some(Provider::Perplexity)),
    ),
    ("PPLX", service("Perplexity", Some(Provider::Perplexity))),
    ("PARALLEL", service("Parallel", Some(Provider::Parallel))),
    ("AZURE", service("Azure OpenAI", Some(Provider::Azure))),
    ("OLLAMA", service("Ollama", Some(Provider::Ollama))),
    ("LMSTUDIO", service("LM Studio", Some(Provider::LmStudio))),
    ("ANTHROPIC", service("Anthropic", None)),
    ("CLAUDE", service("Anthropic", None)),
    ("GEMINI", service("Google", None)),
    ("GOOGLE", service("Google", None)),
    ("XAI", service("xAI", None)),
    ("GROK", service("xAI", None)),
    ("GROQ", service("Groq", None)),
    ("MISTRAL", service("Mistral", None)),
    ("DEEPSEEK", service("DeepSeek", None)),
    ("TOGETHER", service("Together AI", None)),
    ("FIREWORKS", service("Fireworks", None)),
    ("COHERE", service("Cohere", None)),
];

/// How other services' keys begin (each a public prefix, the only part of a key ever
/// named in a message). OpenAI's own begin `sk-`, `sk-proj-`, `sk-svcacct-`, `sk-admin-`.
/// Read 2026-12-08: OpenRouter's `sk-or-v1-` in its setup guides (openrouter.ai/keys),
/// Perplexity's `pplx-` in its API guides (perplexity.ai/settings/api); the others are
/// the prefixes secret scanners match for those services, and a wrong one only lets a
/// key through to OpenAI, which refuses it.
const KEY_PREFIXES: &[(&str, Service)] = &[
    ("sk-or-", service("OpenRouter", Some(Provider::OpenRouter))),
    ("pplx-", service("Perplexity", Some(Provider::Perplexity))),
    ("sk-ant-", service("Anthropic", None)),
    ("AIza", service("Google", None)),
    ("xai-", service("xAI", None)),
    ("gsk_", service("Groq", None)),
];

/// The service whose key a variable named `variable` holds, when its name says it is
/// not OpenAI's.
pub fn service_of_variable(variable: &str) -> Option<Service> {
    let upper = variable.to_ascii_uppercase();
    upper.split('_').find_map(|word| {
        SERVICE_WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, service)| *service)
    })
}

/// The service whose keys begin as `key` does, with that public prefix, when it is not
/// OpenAI.
pub fn service_of_key(key: &str) -> Option<(&'static str, Service)> {
    let key = key.trim();
    KEY_PREFIXES
        .iter()
        .find(|(prefix, _)| key.starts_with(prefix))
        .map(|(prefix, service)| (*prefix, *service))
}

/// Azure's v1 base URL from the resource name, or else from `AZURE_OPENAI_ENDPOINT`
/// (`https://NAME.openai.azure.com/`, with or without `/openai/v1`).
pub fn azure_base_url(
    resource: Option<&str>,
    endpoint: Option<&str>,
) -> Result<String, AzureUrlError> {
    let resource = resource.map(str::trim).filter(|r| !r.is_empty());
    let endpoint = endpoint.map(str::trim).filter(|e| !e.is_empty());
    if let Some(name) = resource.filter(|n| is_resource_name(n)) {
        return Ok(format!("https://{name}.openai.azure.com/openai/v1"));
    }
    if let Some(url) = endpoint {
        return endpoint_base(url).ok_or_else(|| {
            format!("the AZURE_OPENAI_ENDPOINT environment variable is set to {url:?}, which is not usable: an https:// URL with a host is required, such as https://NAME.openai.azure.com").into()
        });
    }
    Err(match resource {
        Some(name) => format!("openai.azure_resource is {name:?}, which is not an Azure resource name (2 to 64 letters, digits and hyphens, not starting with a hyphen)").into(),
        None => "neither openai.azure_resource nor the AZURE_OPENAI_ENDPOINT environment variable is set".into(),
    })
}

/// `{endpoint}/openai/v1` for an `https://` endpoint with a host.
fn endpoint_base(endpoint: &str) -> Option<String> {
    let base = endpoint
        .strip_prefix("https://")
        .map(|_| endpoint.trim_end_matches('/'))?;
    let base = base.strip_suffix("/openai/v1").unwrap_or(base);
    let base = base.strip_suffix("/openai").unwrap_or(base);
    (base.len() > "https://".len() && !base.contains(char::is_whitespace))
        .then(|| format!("{base}/openai/v1"))
}

/// Azure resource names: letters, digits and hyphens, 2 to 64 of them.
fn is_resource_name(name: &str) -> bool {
    (2..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azure_urls_come_from_the_resource_or_the_endpoint() {
        let url = |r, e| azure_base_url(r, e).ok();
        let expected = Some("https://contoso.openai.azure.com/openai/v1".to_owned());
        assert_eq!(url(Some("contoso"), None), expected);
        assert_eq!(
            url(None, Some("https://contoso.openai.azure.com/")),
            expected
        );
        assert_eq!(
            url(None, Some("https://contoso.openai.azure.com/openai/v1/")),
            expected
        );
        assert_eq!(
            url(Some("contoso"), Some("https://other.example/")),
            expected
        );
        assert_eq!(
            url(None, Some("https://x.cognitiveservices.azure.com")),
            Some("https://x.cognitiveservices.azure.com/openai/v1".to_owned())
        );
        for (r, e, says) in [
            (
                Some("bad name"),
                None,
                "openai.azure_resource is \"bad name\"",
            ),
            (Some("-x"), None, "not an Azure resource name"),
            (
                None,
                Some("http://plain.example"),
                "AZURE_OPENAI_ENDPOINT environment variable is set to \"http://plain.example\"",
            ),
            (
                None,
                Some("https://"),
                "an https:// URL with a host is required",
            ),
            (None, None, "neither openai.azure_resource nor"),
        ] {
            let why = azure_base_url(r, e).unwrap_err().0;
            assert!(why.contains(says), "{r:?} {e:?}: {why}");
        }
    }

    #[test]
    fn other_services_keys_are_known_by_their_variable_or_their_start() {
        for (variable, service) in [
            ("OPENROUTER_API_KEY", "OpenRouter"),
            ("PERPLEXITY_API_KEY", "Perplexity"),
            ("pplx_api_key", "Perplexity"),
            ("AZURE_OPENAI_API_KEY", "Azure OpenAI"),
            ("MY_GROQ_KEY", "Groq"),
            ("ANTHROPIC_API_KEY", "Anthropic"),
        ] {
            assert_eq!(
                service_of_variable(variable).map(|s| s.name),
                Some(service),
                "{variable}"
            );
        }
        for variable in [
            "OPENAI_API_KEY",
            "OPENAI_API_KEY_PROD",
            "MY_KEY",
            "TEAM_OPENAI_KEY",
        ] {
            assert_eq!(service_of_variable(variable), None, "{variable}");
        }
        assert_eq!(
            service_of_key(" sk-or-v1-0123"),
            Some(("sk-or-", service("OpenRouter", Some(Provider::OpenRouter))))
        );
        assert_eq!(service_of_key("pplx-0123").map(|(p, _)| p), Some("pplx-"));
        for openai in [
            "sk-0123",
            "sk-proj-0123",
            "sk-svcacct-0123",
            "sk-admin-0123",
        ] {
            assert_eq!(service_of_key(openai), None, "{openai}");
        }
    }

    #[test]
    fn every_provider_has_a_preset_and_local_ones_need_no_key_nor_search() {
        for name in crate::keys::PROVIDERS {
            let provider = Provider::parse(name).unwrap();
            let p = preset(provider);
            assert_eq!(p.name, provider);
            let local = matches!(provider, Provider::Ollama | Provider::LmStudio);
            assert_eq!(p.api_key_required, !local, "{name}");
            assert_eq!(p.web_search == SearchMode::None, local, "{name}");
        }
        assert!(preset(Provider::OpenAi).values(None).is_empty());
        let azure = preset(Provider::Azure).values(Some("https://a/openai/v1".into()));
        assert!(azure.contains(&("openai.auth", json!("api-key"))));
        assert!(azure.contains(&("openai.base_url", json!("https://a/openai/v1"))));
    }
}
