//! The checks, in the order they run. Each returns a verdict; later checks are skipped
//! when one they need failed.

use super::http::DoctorHttp;
use super::net;
use super::report::{Check, Report, Status};
use responses_mcp_config::cli::DoctorFlags;
use responses_mcp_config::proxy::{Bypass, ProxyRoute};
use responses_mcp_config::{ConfigError, Source, Startup};
use responses_mcp_core::openai::pricing::{
    ModelPrice, PerToken, PriceSource, PRICES_AS_OF, RESIDENCY_PERCENT,
};
use responses_mcp_core::openai::{
    classify_reply, models, parse_answer, RequestPlan, UpstreamVerdict, Usage,
};
use responses_mcp_core::vocab::Effort;
use responses_mcp_core::{HttpMethod, WebSearch};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a model look-up may take.
const MODEL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the live call may take (a search and a short answer).
const LIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The live call's question: one that needs a search to be answered well.
const LIVE_QUESTION: &str =
    "Search the web once: what is the top headline on a major news site right now? Answer in one sentence.";

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

/// The prices each profile's calls are estimated with, and the models that have none.
fn prices(startup: &Startup) -> Check {
    let prices = startup.resolved.prices();
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    let mut details = serde_json::Map::new();
    for (tool, model, _) in startup.resolved.profile_models() {
        match prices.of(&model) {
            Some((price, source)) => {
                lines.push(price_line(&model, price, source, prices.residency));
                let shown = price_details(&model, price, source, prices.residency);
                details.insert(tool.name().into(), shown);
            }
            None => {
                unpriced.push(model.clone());
                details.insert(
                    tool.name().into(),
                    json!({ "model": model, "source": null }),
                );
            }
        }
    }
    lines.sort();
    lines.dedup();
    let per_1k = prices.web_search_call.usd() * 1000.0;
    lines.push(format!("web search ${per_1k} per 1,000 calls"));
    details.insert("web_search_per_1k_usd".into(), json!(per_1k));
    let summary = lines.join("; ");
    if unpriced.is_empty() {
        return Check::new("prices", Status::Ok, summary).details(Value::Object(details));
    }
    let api = startup.resolved.settings.openai.provider.api();
    if api == responses_mcp_core::settings::Api::Perplexity {
        // Its responses carry what they cost (`usage.cost`), which the estimate takes.
        let summary =
            format!("{summary}; Perplexity reports each response's cost, which calls use");
        return Check::new("prices", Status::Ok, summary).details(Value::Object(details));
    }
    unpriced.sort();
    unpriced.dedup();
    Check::new("prices", Status::Warn, summary)
        .advice(format!(
            "no price is known for {}: calls work, but their cost is not estimated; set \
             pricing.models.<model> (input_per_mtok, output_per_mtok) in the configuration",
            unpriced.join(", ")
        ))
        .details(Value::Object(details))
}

/// One model's prices, as the report's line says them.
fn price_line(
    model: &str,
    price: &ModelPrice,
    source: PriceSource,
    residency: Option<&str>,
) -> String {
    let per_million = |rate: PerToken| format!("${}", rate.usd_per_million());
    let origin = match (source, residency) {
        (PriceSource::BuiltIn, Some(region)) => format!(
            "built-in, as of {PRICES_AS_OF}; billed at {RESIDENCY_PERCENT} % at the {region} data-residency endpoint"
        ),
        (PriceSource::BuiltIn, None) => format!("built-in, as of {PRICES_AS_OF}"),
        (PriceSource::Configured | PriceSource::Reported, _) => "configured".to_owned(),
    };
    let fees = price.fees;
    let per_request = match fees.any_set() {
        false => String::new(),
        true => {
            let fee = |e: Effort| {
                let usd = fees.at(e).map(|f| format!("${}", f.usd()));
                format!("{e} {}", usd.as_deref().unwrap_or("unknown"))
            };
            let listed: Vec<String> = EFFORTS.into_iter().map(fee).collect();
            format!("; per request: {}", listed.join(", "))
        }
    };
    format!(
        "{model} {} / {} cached / {} cache writes / {} output per million tokens{per_request} ({origin})",
        per_million(price.input),
        per_million(price.cached_input),
        per_million(price.cache_write),
        per_million(price.output),
    )
}

/// The reasoning efforts a per-request fee is listed for.
const EFFORTS: [Effort; 3] = [Effort::Low, Effort::Medium, Effort::High];

/// One model's prices, as the JSON report gives them.
fn price_details(
    model: &str,
    price: &ModelPrice,
    source: PriceSource,
    residency: Option<&str>,
) -> Value {
    let fees = price.fees;
    json!({
        "model": model,
        "input_per_mtok": price.input.usd_per_million(),
        "cached_input_per_mtok": price.cached_input.usd_per_million(),
        "cache_write_per_mtok": price.cache_write.usd_per_million(),
        "output_per_mtok": price.output.usd_per_million(),
        "long_context_above_tokens": price.long_context_above,
        "source": source.as_str(),
        "data_residency": residency,
        "per_request_usd": fees.any_set().then(|| {
            EFFORTS
                .into_iter()
                .map(|e| (e.to_string(), json!(fees.at(e).map(|f| f.usd()))))
                .collect::<serde_json::Map<_, _>>()
        }),
    })
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

/// Whether the provider knows `model`: `GET /models/{id}`, or the list where ids hold a
/// `/` (OpenRouter, LM Studio); Azure lists base models, not deployments.
fn model_exists(
    startup: &Startup,
    http: &mut dyn DoctorHttp,
    name: &str,
    model: &str,
    setting: &str,
) -> Check {
    let r = &startup.resolved;
    let base = r.settings.openai.base_url.trim_end_matches('/');
    let today = responses_mcp_core::date::Date::tokyo(crate::process::now().unix_secs).to_string();
    if r.settings.openai.provider == responses_mcp_config::choices::Provider::Azure {
        return Check::new(
            name,
            Status::Skip,
            format!("{model}: Azure deployment names are not listed by /models; --live calls it"),
        );
    }
    if !r.settings.openai.model_lookups {
        return Check::new(
            name,
            Status::Skip,
            format!("{model}: openai.model_lookups is off (the provider lists no models); --live calls it"),
        );
    }
    let by_list = model.contains('/');
    let url = match by_list {
        true => format!("{base}/models"),
        false => format!("{base}/models/{model}"),
    };
    let started = Instant::now();
    let reply = http.send(HttpMethod::Get, &url, Vec::new(), MODEL_TIMEOUT);
    let took = started.elapsed();
    let details = json!({ "model": model, "setting": setting, "url": url });
    let reply = match reply {
        Ok(reply) => reply,
        Err(e) => {
            return Check::new(
                name,
                Status::Fail,
                format!("{model}: {} ({:?})", e.detail, e.kind),
            )
            .advice("the request failed before an answer: see the network checks above")
            .took(took)
            .details(details)
        }
    };
    let (found, entry) = match model_entry(reply.status, &reply.body, model, by_list) {
        Ok(found) => found,
        Err(status @ (401 | 403)) => {
            let env = &r.settings.openai.api_key_env;
            return Check::new(
                name,
                Status::Fail,
                format!("{model}: the key was refused (HTTP {status})"),
            )
            .advice(format!(
                "check that {env} holds a valid key for {}, with access to this model",
                r.settings.openai.provider
            ))
            .took(took)
            .details(details);
        }
        Err(status) => {
            return Check::new(
                name,
                Status::Fail,
                format!("{model}: HTTP {status} from {url}"),
            )
            .advice("check openai.base_url: it should be the API root that /responses hangs off")
            .took(took)
            .details(details)
        }
    };
    model_verdict(name, model, setting, found, &entry, &today)
        .took(took)
        .details(details)
}

/// Whether a `/models` answer (`status`, `body`) knows `model`, and its object; the status
/// when the answer says neither (a refused key, a wrong URL).
fn model_entry(status: u16, body: &[u8], model: &str, by_list: bool) -> Result<(bool, Value), u16> {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    match (status, by_list) {
        (200, false) => Ok((true, body)),
        (200, true) => {
            let entry = body["data"]
                .as_array()
                .and_then(|list| list.iter().find(|m| m["id"] == model))
                .cloned();
            Ok((entry.is_some(), entry.unwrap_or(Value::Null)))
        }
        (404, _) => Ok((false, Value::Null)),
        (status, _) => Err(status),
    }
}

/// A profile model's check from what the provider said of it (`entry`, its `/models`
/// object): whether it exists, and its shutdown date with where the date came from (the
/// provider's `shutdown_date`, else the built-in table); a past date fails.
fn model_verdict(
    name: &str,
    model: &str,
    setting: &str,
    found: bool,
    entry: &Value,
    today: &str,
) -> Check {
    let retired = models::retirement(model);
    let (date, source) = match entry.get("shutdown_date") {
        Some(Value::String(d)) if responses_mcp_core::date::is_iso_date(d) => {
            (Some(d.clone()), "the provider".to_owned())
        }
        Some(Value::Null) => (None, "the provider".to_owned()),
        _ => (
            retired.map(|r| r.shutdown.to_owned()),
            format!("the built-in table as of {}", models::CALENDAR_AS_OF),
        ),
    };
    let replacement = retired.map_or("a current model".to_owned(), |r| {
        format!("{} (the recommended replacement)", r.replacement)
    });
    let advice = |when: &str| format!("model {model} {when}; set {setting} to {replacement}");
    match (found, date) {
        (_, Some(d)) if today >= d.as_str() => Check::new(
            name,
            Status::Fail,
            format!("{model} was shut down on {d} (date from {source})"),
        )
        .advice(advice(&format!("was shut down on {d}"))),
        (true, Some(d)) => Check::new(
            name,
            Status::Warn,
            format!("{model} exists; it shuts down on {d} (date from {source})"),
        )
        .advice(advice(&format!("shuts down on {d}"))),
        (true, None) => Check::new(
            name,
            Status::Ok,
            format!("{model} exists; no shutdown date announced (per {source})"),
        ),
        (false, _) => Check::new(
            name,
            Status::Fail,
            format!("{model} is not available to this key"),
        )
        .advice(format!(
            "set {setting} to a model the provider lists (run doctor again to check it)"
        )),
    }
}

/// One small real call with the profile's settings, asking for a search.
fn live_call(
    startup: &Startup,
    http: &mut dyn DoctorHttp,
    tool: responses_mcp_core::tools::Tool,
    model: &str,
) -> Check {
    let name = format!("live {}", tool.name());
    let config = &startup.server;
    let Some(profile) = config.profiles.for_tool(tool) else {
        return Check::new(name, Status::Skip, "no profile");
    };
    let plan = RequestPlan {
        model: model.to_owned(),
        input: LIVE_QUESTION.to_owned(),
        web_search: config.web_search,
        search: profile.search.clone(),
        service_tier: profile.service_tier,
        ..RequestPlan::default()
    };
    let url = format!("{}/responses", config.base_url.trim_end_matches('/'));
    let started = Instant::now();
    let reply = http.send(
        HttpMethod::Post,
        &url,
        plan.body("Answer briefly."),
        LIVE_TIMEOUT,
    );
    let took = started.elapsed();
    let reply = match reply {
        Ok(reply) => reply,
        Err(e) => {
            return Check::new(name, Status::Fail, format!("{model}: {}", e.detail)).took(took)
        }
    };
    match classify_reply(reply.status, &reply.headers, &reply.body) {
        UpstreamVerdict::Success(body) => {
            let usage = Usage::of(&body);
            let today =
                responses_mcp_core::date::Date::tokyo(crate::process::now().unix_secs).to_string();
            let answer = parse_answer(&body, 3, model, &today);
            let searched = answer.as_ref().is_ok_and(|a| a.used_search);
            let summary = format!(
                "{model} answered; searched: {}; {} input + {} output tokens",
                if searched { "yes" } else { "no" },
                usage.input_tokens,
                usage.output_tokens
            );
            let details = json!({
                "used_search": searched, "web_searches": usage.web_searches,
                "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            });
            let check = match (searched, config.web_search.available()) {
                (false, true) => Check::new(name, Status::Warn, summary).advice(
                    "the model did not search although asked to; web answers may lack citations",
                ),
                _ => Check::new(name, Status::Ok, summary),
            };
            check.took(took).details(details)
        }
        UpstreamVerdict::Retry(f, _)
        | UpstreamVerdict::Unsupported(_, f)
        | UpstreamVerdict::Fail(f) => {
            let advice = f.advice(&responses_mcp_core::openai::Advice {
                service: config.api.name(),
                api_key_env: &config.api_key_env,
                model: Some(model),
                model_setting: None,
            });
            Check::new(name, Status::Fail, format!("{model}: {}", f.message))
                .advice(advice)
                .took(took)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_date_comes_from_the_provider_else_the_table_and_a_past_one_fails() {
        let verdict = |model: &str, entry: Value| {
            let c = model_verdict(
                "model answer",
                model,
                "model_profiles.answer.model",
                true,
                &entry,
                "2026-11-26",
            );
            (c.status, c.summary)
        };
        let (status, message) = verdict("gpt-6.1-terra", json!({"shutdown_date": null}));
        assert_eq!(status, Status::Ok);
        assert!(
            message.contains("no shutdown date announced (per the provider)"),
            "{message}"
        );
        let (status, message) = verdict("gpt-6.1-terra", json!({"shutdown_date": "2026-11-01"}));
        assert_eq!(status, Status::Fail);
        assert!(
            message.contains("was shut down on 2026-11-01 (date from the provider)"),
            "{message}"
        );
        let (status, message) = verdict("gpt-5-mini", json!({"id": "gpt-5-mini"}));
        assert_eq!(status, Status::Warn);
        assert!(
            message.contains("shuts down on 2026-12-11 (date from the built-in table as of"),
            "{message}"
        );
        // The provider's word wins over the table's.
        let (status, _) = verdict("gpt-5-mini", json!({"shutdown_date": "2027-06-01"}));
        assert_eq!(status, Status::Warn);
        let (status, _) = verdict("o4-mini", json!({}));
        assert_eq!(status, Status::Fail, "past by the table");
    }

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
