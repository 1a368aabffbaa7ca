//! The checks, in the order they run. Each returns a verdict; later checks are skipped
//! when one they need failed.

use super::http::DoctorHttp;
use super::models::{live_call, model_exists};
use super::net;
use super::prices::prices;
use super::report::{Check, Report, Status};
use responses_mcp_config::cli::DoctorFlags;
use responses_mcp_config::proxy::{Bypass, ProxyRoute};
use responses_mcp_config::{ConfigError, Source, Startup};
use responses_mcp_core::WebSearch;
use serde_json::json;
use std::path::PathBuf;

/// The configuration check when the configuration did not load.
pub fn config_failed(file: Option<&(PathBuf, bool)>, error: &ConfigError) -> Check {
    let file = file.map_or_else(|| "(no file)".to_owned(), |(p, _)| p.display().to_string());
    Check::new("configuration", Status::Fail, error.to_string())
        .advice(format!(
            "fix the value named above (in {file}, the environment or the command line); docs/reference/config-reference.md lists every key"
        ))
        .details(json!({ "file": file }))
}

/// Every check after the configuration loaded.
pub fn run_all(
    report: &mut Report,
    startup: &Startup,
    file: Option<&(PathBuf, bool)>,
    flags: DoctorFlags,
    mut http: Option<&mut dyn DoctorHttp>,
) {
    report.push(configuration(startup, file));
    let target = provider(report, startup);
    report.push(api_key(startup));
    report.push(proxy(startup));
    report.push(prices(startup));
    let Some(target) = target else { return };
    let reachable = network(report, startup, &target, http.as_deref());
    let key_missing = report.failed("api key");
    for (tool, model, setting) in startup.resolved.profile_models() {
        let name = format!("model {}", tool.name());
        if !reachable || key_missing {
            let why = if key_missing {
                "no API key"
            } else {
                "the base URL is not reachable"
            };
            report.push(Check::new(
                name,
                Status::Skip,
                format!("{model}: not checked ({why})"),
            ));
            continue;
        }
        let Some(http) = http.as_deref_mut() else {
            continue;
        };
        report.push(model_exists(startup, http, &name, &model, setting));
        if flags.live {
            report.push(live_call(startup, http, tool, &model));
        }
    }
    if !flags.live {
        report.push(Check::new(
            "live call",
            Status::Skip,
            "not made (add --live for one small real call per profile; it costs tokens)",
        ));
    }
}

fn configuration(startup: &Startup, file: Option<&(PathBuf, bool)>) -> Check {
    let warnings = &startup.resolved.warnings;
    let where_ = match file {
        Some((path, true)) => format!("{} loaded", path.display()),
        Some((path, false)) => format!(
            "no file at {} (built-in defaults and the environment)",
            path.display()
        ),
        None => "no configuration file location (no HOME, XDG_CONFIG_HOME or APPDATA)".into(),
    };
    let details = json!({
        "file": file.map(|(p, _)| p.display().to_string()),
        "found": file.is_some_and(|(_, found)| *found),
        "warnings": warnings,
    });
    match warnings.is_empty() {
        true => Check::new("configuration", Status::Ok, where_).details(details),
        false => Check::new(
            "configuration",
            Status::Warn,
            format!("{where_}; {}", warnings.join("; ")),
        )
        .advice("correct or remove each misspelt key (it is ignored); a warning about the base URL says how to set it")
        .details(details),
    }
}

/// The base URL's parts.
pub(super) struct Target {
    https: bool,
    host: String,
    port: u16,
}

fn provider(report: &mut Report, startup: &Startup) -> Option<Target> {
    let r = &startup.resolved;
    let openai = &r.settings.openai;
    let source = |path: &str| {
        r.sources
            .get(path)
            .map_or_else(String::new, Source::to_string)
    };
    let search = match r.web_search() {
        WebSearch::OpenAi => "web_search tool",
        WebSearch::OpenRouter => "openrouter:web_search tool",
        WebSearch::Perplexity => "Perplexity's web_search tool",
        WebSearch::Always => "the service searches on every request",
        WebSearch::Unavailable => "no web search",
    };
    let api = openai.provider.api();
    let search = if api.takes_openai_options() {
        search.to_owned()
    } else {
        // What this provider's API leaves out of ours, so nobody looks for it.
        let background = if api.has_background() {
            ""
        } else {
            ", no background mode"
        };
        format!(
            "{search}; {} API: answers not streamed, no text.verbosity or service_tier, reasoning effort low to high{background}",
            api.name()
        )
    };
    let summary = format!(
        "{} ({}), base URL {} ({}), {search}",
        openai.provider,
        source("openai.provider"),
        openai.base_url,
        source("openai.base_url")
    );
    let details = json!({
        "provider": openai.provider,
        "base_url": openai.base_url,
        "web_search": openai.web_search,
        "auth": openai.auth,
    });
    let Some(target) = split_url(&openai.base_url) else {
        report.push(
            Check::new("provider", Status::Fail, summary)
                .advice("set openai.base_url to an http:// or https:// URL with a host")
                .details(details),
        );
        return None;
    };
    let check = match r.web_search() {
        WebSearch::Unavailable => Check::new("provider", Status::Warn, summary).advice(
            "answers come from the model alone (used_search: false); use a provider with hosted search for web answers",
        ),
        _ => Check::new("provider", Status::Ok, summary),
    };
    report.push(check.details(details));
    Some(target)
}

/// Splits `scheme://host[:port]/…`.
fn split_url(url: &str) -> Option<Target> {
    let (https, rest) = match url.split_once("://")? {
        ("https", rest) => (true, rest),
        ("http", rest) => (false, rest),
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) =
        responses_mcp_config::proxy::host_and_port(authority, if https { 443 } else { 80 })?;
    Some(Target { https, host, port })
}

fn api_key(startup: &Startup) -> Check {
    let openai = &startup.resolved.settings.openai;
    let env = &openai.api_key_env;
    let header = match openai.auth {
        responses_mcp_config::choices::Auth::ApiKey => "api-key header",
        responses_mcp_config::choices::Auth::Bearer => "Authorization: Bearer",
    };
    match (&startup.api_key, openai.api_key_required) {
        (Some(key), _) => Check::new(
            "api key",
            Status::Ok,
            format!("{env} is set ({}), sent as {header}", mask(key.expose())),
        )
        .details(json!({ "env": env, "set": true })),
        (None, true) => Check::new("api key", Status::Fail, format!("{env} is not set"))
            .advice(format!(
                "set the {env} environment variable where the MCP client starts the server (its env block), or name another variable in openai.api_key_env"
            ))
            .details(json!({ "env": env, "set": false })),
        (None, false) => Check::new(
            "api key",
            Status::Ok,
            format!("{env} is not set; provider {} needs none", openai.provider),
        )
        .details(json!({ "env": env, "set": false })),
    }
}

/// How a key is shown: its length, and a well-known prefix such as `sk-` when the key is
/// long enough that the prefix gives nothing away. Never the key.
pub fn mask(key: &str) -> String {
    let len = key.chars().count();
    let prefix = key
        .find('-')
        .filter(|&i| i > 0 && i <= 3 && len >= 20)
        .map(|i| format!("{}…, ", &key[..=i]))
        .unwrap_or_default();
    format!("{prefix}{len} characters")
}

fn proxy(startup: &Startup) -> Check {
    match &startup.proxy {
        ProxyRoute::Direct => Check::new("proxy", Status::Ok, "none (direct connection)"),
        ProxyRoute::Bypassed { variable, by } => Check::new(
            "proxy",
            Status::Ok,
            match by {
                Bypass::NoProxy => format!(
                    "{variable} is set but NO_PROXY bypasses it for the base URL (direct connection)"
                ),
                Bypass::Loopback => format!(
                    "{variable} is set but the base URL is plain http to this machine, never proxied (direct connection)"
                ),
            },
        ),
        ProxyRoute::Via { proxy, variable } => Check::new(
            "proxy",
            Status::Ok,
            format!("through {proxy} (from {variable})"),
        )
        .details(json!({ "url": proxy.to_string(), "variable": variable })),
    }
}

/// DNS, TCP and TLS to the base URL, or DNS and TCP to the proxy. Whether the next hop
/// answered.
fn network(
    report: &mut Report,
    startup: &Startup,
    target: &Target,
    http: Option<&dyn DoctorHttp>,
) -> bool {
    let via = startup.proxy.proxy();
    let (host, port, what) = match via {
        Some(p) => (p.host.clone(), p.port, "the proxy"),
        None => (target.host.clone(), target.port, "the base URL"),
    };
    let addrs = match net::resolve(&host, port) {
        Ok((addrs, took)) => {
            let shown: Vec<String> = addrs.iter().take(3).map(|a| a.ip().to_string()).collect();
            report.push(
                Check::new("dns", Status::Ok, format!("{host} -> {}", shown.join(", ")))
                    .took(took)
                    .details(json!({ "host": host, "addresses": shown })),
            );
            addrs
        }
        Err(e) => {
            report.push(Check::new("dns", Status::Fail, e.0).advice(format!(
                "check the host of {what} for typos, and this machine's DNS (or set a proxy with HTTPS_PROXY)"
            )));
            return false;
        }
    };
    let stream = match net::connect(&addrs) {
        Ok((stream, addr, took)) => {
            report.push(
                Check::new("tcp", Status::Ok, format!("connected to {addr}"))
                    .took(took)
                    .details(json!({ "address": addr.to_string() })),
            );
            stream
        }
        Err(e) => {
            report.push(Check::new("tcp", Status::Fail, e.0).advice(format!(
                "check that {what} is up and that a firewall lets this machine reach port {port}"
            )));
            return false;
        }
    };
    let (Some(_), true, None) = (http, target.https, via) else {
        let why = match via {
            Some(_) => "through the proxy: the model step below checks it end to end",
            None if !target.https => "plain http:// base URL",
            None => "no client to check with",
        };
        report.push(Check::new("tls", Status::Skip, why.to_owned()));
        return true;
    };
    let check = tls(startup, target, stream);
    let passed = check.status != Status::Fail;
    report.push(check);
    passed
}

/// The TLS handshake with the base URL's host over `stream`, trusting the configured roots.
fn tls(startup: &Startup, target: &Target, stream: std::net::TcpStream) -> Check {
    let bundle = match &startup.resolved.settings.openai.ca_file {
        Some(file) => format!("CA file {file}"),
        None => "built-in Mozilla roots".to_owned(),
    };
    let ca = startup.ca_pem.as_deref();
    match net::handshake(stream, &target.host, ca) {
        Ok(hs) => Check::new(
            "tls",
            Status::Ok,
            format!("{} handshake, certificate trusted by the {bundle}", hs.version),
        )
        .took(hs.took)
        .details(json!({ "version": hs.version, "ca": bundle })),
        Err(e) => Check::new("tls", Status::Fail, format!("{e}; trusting the {bundle}"))
            .advice("if a corporate gateway or proxy re-signs TLS, set openai.ca_file (or SSL_CERT_FILE) to its CA certificate (PEM); otherwise check openai.base_url (https vs http, port)")
            .details(json!({ "ca": bundle })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_show_length_and_a_public_prefix_only() {
        assert_eq!(
            mask("sk-proj-abcdefghijklmnopqrstuvwxyz"),
            "sk-…, 34 characters"
        );
        assert_eq!(mask("abc"), "3 characters");
        assert_eq!(mask("a-b"), "3 characters");
        assert_eq!(mask("secretvaluewithoutdashes123"), "27 characters");
    }

    #[test]
    fn urls_split_into_host_and_port() {
        let t = split_url("https://api.openai.com/v1").unwrap();
        assert_eq!(
            (t.https, t.host.as_str(), t.port),
            (true, "api.openai.com", 443)
        );
        let t = split_url("http://[::1]:8080/v1").unwrap();
        assert_eq!((t.https, t.host.as_str(), t.port), (false, "::1", 8080));
        let t = split_url("http://u:p@127.0.0.1:9/v1").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 9));
        for bad in ["ftp://x", "https://", "https://h:port/", "nothing"] {
            assert!(split_url(bad).is_none(), "{bad}");
        }
    }
}
