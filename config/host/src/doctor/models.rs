//! The checks that ask the provider: whether each profile's model exists and when it shuts
//! down (`GET /models`), and with `--live` one small real call per profile.

use super::http::DoctorHttp;
use super::report::{Check, Status};
use responses_mcp_config::Startup;
use responses_mcp_core::openai::{
    classify_reply, models, parse_answer, RequestPlan, UpstreamVerdict, Usage,
};
use responses_mcp_core::HttpMethod;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How long a model look-up may take.
const MODEL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the live call may take (a search and a short answer).
const LIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The live call's question: one that needs a search to be answered well.
const LIVE_QUESTION: &str =
    "Search the web once: what is the top headline on a major news site right now? Answer in one sentence.";

/// Whether the provider knows `model`: `GET /models/{id}`, or the list where ids hold a
/// `/` (OpenRouter, LM Studio); Azure lists base models, not deployments.
pub(super) fn model_exists(
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
pub(super) fn live_call(
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
}
