//! `doctor` through the real binary, against the fake OpenAI over HTTP and over TLS with
//! a test CA (providers issue).

use crate::fake_openai::{Action, FakeOpenAi, Recorded};
use crate::*;

/// The key every doctor run here plants; it must never be printed.
const PLANTED: &str = "sk-planted-doctor-secret-0123456789abcdef";

/// Runs `doctor` with `args` and `env` (clean HOME); returns (exit status, stdout, stderr).
fn doctor(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let args: Vec<&str> = std::iter::once("doctor")
        .chain(args.iter().copied())
        .collect();
    let out = super::config::run(&args, env);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        !stdout.contains(PLANTED) && !stderr.contains(PLANTED),
        "the key leaked:\n{stdout}\n{stderr}"
    );
    assert!(
        !stdout.contains("doctor-secret"),
        "part of the key leaked:\n{stdout}"
    );
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// A fake that knows `models` and answers calls with a searched answer.
fn provider(models: &'static [&'static str]) -> impl Fn(&Recorded, usize) -> Action {
    move |req, _| {
        match (req.method.as_str(), req.path.as_str()) {
        ("GET", path) => match path.strip_prefix("/v1/models/") {
            Some(id) if models.contains(&id) => {
                let body = format!(r#"{{"id":"{id}","object":"model","owned_by":"openai"}}"#);
                Action::json(200, body.as_bytes())
            }
            _ => Action::json(
                404,
                br#"{"error":{"message":"The model does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
            ),
        },
        _ => Action::json(200, &fixture("response-web-search.json")),
    }
    }
}

fn line<'a>(out: &'a str, check: &str) -> &'a str {
    out.lines()
        .find(|l| {
            l.split_once(']')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(&format!("{check}:")))
        })
        .unwrap_or_else(|| panic!("no {check} line in:\n{out}"))
}

pub fn doctor_is_all_green_against_a_working_provider() {
    let fake = FakeOpenAi::start(provider(&["gpt-6.1-terra", "gpt-5.6-luna"])).passing_lookups();
    let env = [
        ("OPENAI_BASE_URL", fake.url.as_str()),
        ("OPENAI_API_KEY", PLANTED),
        ("MODEL_QUICK", "gpt-5.6-luna"),
    ];
    let (code, out, _) = doctor(&["--live"], &env);
    assert_eq!(code, 0, "{out}");
    for check in [
        "configuration",
        "provider",
        "api key",
        "proxy",
        "dns",
        "tcp",
    ] {
        assert!(line(&out, check).starts_with("[ok]"), "{check}: {out}");
    }
    assert!(line(&out, "tls").starts_with("[skip]"), "plain http: {out}");
    assert!(line(&out, "api key").contains("41 characters"), "{out}");
    assert!(
        line(&out, "model answer").contains("gpt-6.1-terra exists"),
        "{out}"
    );
    assert!(line(&out, "model answer_quick").contains("gpt-5.6-luna exists"));
    // The prices in use; a model without one is named with what to set.
    let prices = line(&out, "prices");
    assert!(
        prices.starts_with("[warn]")
            && prices.contains("gpt-6.1-terra $1 / $0.05 cached / $1.25 cache writes / $5 output per million tokens (built-in, as of 2026-11-27)")
            && prices.contains("web search $10 per 1,000 calls"),
        "{out}"
    );
    assert!(
        out.contains("no price is known for gpt-5.6-luna")
            && out.contains("pricing.models.<model>"),
        "{out}"
    );
    let live = line(&out, "live answer");
    assert!(
        live.starts_with("[ok]") && live.contains("searched: yes"),
        "{out}"
    );
    assert!(out.contains("ready: a call can work"), "{out}");
    // The requests carried the key as calls do, and the live call asked for a search.
    let requests = fake.requests();
    assert!(requests
        .iter()
        .all(|r| r.header("authorization") == Some(&format!("Bearer {PLANTED}"))));
    let post = requests.iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(post.path, "/v1/responses");
    assert_eq!(post.body["tools"][0]["type"], "web_search");
}

pub fn doctor_checks_tls_with_the_configured_ca_and_says_when_it_is_not_trusted() {
    let (fake, ca_pem) = FakeOpenAi::start_tls(provider(&["gpt-6.1-terra"]));
    let fake = fake.passing_lookups();
    let dir = temp_dir("doctor-ca");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    let base = [
        ("OPENAI_BASE_URL", fake.url.as_str()),
        ("OPENAI_API_KEY", PLANTED),
    ];
    let mut trusted = base.to_vec();
    trusted.push(("SSL_CERT_FILE", ca.to_str().unwrap()));
    let (code, out, _) = doctor(&[], &trusted);
    assert_eq!(code, 0, "{out}");
    let tls = line(&out, "tls");
    assert!(
        tls.starts_with("[ok]") && tls.contains("handshake") && tls.contains("ca.pem"),
        "{out}"
    );
    // The built-in roots do not know the test CA.
    let (code, out, _) = doctor(&[], &base);
    assert_eq!(code, 1, "{out}");
    let tls = line(&out, "tls");
    assert!(
        tls.starts_with("[FAIL]") && tls.contains("not trusted"),
        "{out}"
    );
    assert!(
        out.contains("openai.ca_file"),
        "the advice names the fix: {out}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn doctor_fails_without_the_key_naming_the_variable() {
    let fake = FakeOpenAi::start(provider(&["gpt-6.1-terra"])).passing_lookups();
    let (code, out, _) = doctor(&[], &[("OPENAI_BASE_URL", fake.url.as_str())]);
    assert_eq!(code, 1, "{out}");
    let key = line(&out, "api key");
    assert!(
        key.starts_with("[FAIL]") && key.contains("OPENAI_API_KEY is not set"),
        "{out}"
    );
    assert!(line(&out, "model answer").starts_with("[skip]"), "{out}");
    assert!(fake.requests().is_empty(), "no request without a key");
}

pub fn another_services_key_bound_for_openai_refuses_to_start_and_doctor_says_so() {
    // An OpenRouter key left in OPENAI_API_KEY, the URL OpenAI's own.
    let key = "sk-or-v1-doctor-secret-0123456789abcdef";
    let (code, out, _) = doctor(&[], &[("OPENAI_API_KEY", key)]);
    assert_eq!(code, 1, "{out}");
    let config = line(&out, "configuration");
    assert!(
        config.starts_with("[FAIL]")
            && config
                .contains("the key in OPENAI_API_KEY begins as OpenRouter's keys do (sk-or-…)")
            && config.contains("api.openai.com")
            && config.contains("openai.provider: openrouter")
            && config.contains("openai.allow_foreign_key: true"),
        "{out}"
    );
    // The server itself refuses, saying the same, and never starts.
    let out = super::config::run(&["--stdio"], &[("OPENAI_API_KEY", key)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("OpenAI would receive a key that is not its own"),
        "{stderr}"
    );
    assert!(!stderr.contains("doctor-secret"), "{stderr}");
}

pub fn doctor_reports_a_name_that_does_not_resolve() {
    let env = [
        ("OPENAI_BASE_URL", "https://no-such-host.invalid/v1"),
        ("OPENAI_API_KEY", PLANTED),
    ];
    let started = std::time::Instant::now();
    let (code, out, _) = doctor(&[], &env);
    assert_eq!(code, 1, "{out}");
    assert!(line(&out, "dns").starts_with("[FAIL]"), "{out}");
    assert!(line(&out, "dns").contains("no-such-host.invalid"), "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "short timeouts"
    );
}

pub fn doctor_names_the_setting_of_an_unknown_model() {
    let fake = FakeOpenAi::start(provider(&["gpt-6.1-terra"])).passing_lookups();
    let env = [
        ("OPENAI_BASE_URL", fake.url.as_str()),
        ("OPENAI_API_KEY", PLANTED),
        ("MODEL_DETAILED", "gpt-imaginary"),
    ];
    let (code, out, _) = doctor(&[], &env);
    assert_eq!(code, 1, "{out}");
    // The default model exists here.
    assert!(!line(&out, "model answer").starts_with("[FAIL]"), "{out}");
    let bad = line(&out, "model answer_detailed");
    assert!(
        bad.starts_with("[FAIL]") && bad.contains("gpt-imaginary"),
        "{out}"
    );
    assert!(
        out.contains("set model_profiles.answer_detailed.model"),
        "{out}"
    );
}

pub fn doctor_json_has_one_entry_per_check() {
    let fake = FakeOpenAi::start(provider(&["gpt-6.1-terra"])).passing_lookups();
    let env = [
        ("OPENAI_BASE_URL", fake.url.as_str()),
        ("OPENAI_API_KEY", PLANTED),
    ];
    let (code, out, _) = doctor(&["--json"], &env);
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], true);
    let checks = report["checks"].as_array().unwrap();
    let names: Vec<&str> = checks
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "configuration",
            "provider",
            "api key",
            "proxy",
            "prices",
            "dns",
            "tcp",
            "tls",
            "model answer",
            "live call"
        ]
    );
    for c in checks {
        let status = c["status"].as_str().unwrap();
        assert!(["ok", "warn", "fail", "skip"].contains(&status), "{c}");
        assert!(c["summary"].is_string() && c.get("advice").is_some() && c.get("ms").is_some());
    }
    assert!(checks[6]["ms"].is_u64(), "the network steps are timed");
    assert_eq!(checks[4]["status"], "ok", "{}", checks[4]);
    assert_eq!(checks[4]["details"]["answer"]["output_per_mtok"], 5.0);
    assert_eq!(checks[4]["details"]["answer"]["source"], "built-in");
    assert_eq!(checks[4]["details"]["web_search_per_1k_usd"], 10.0);
    assert_eq!(
        checks[2]["details"],
        json!({"env": "OPENAI_API_KEY", "set": true})
    );
    // A configuration that does not load is a failed check, not a crash.
    let (code, out, _) = doctor(&["--json"], &[("OPENAI_MAX_RETRIES", "many")]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["checks"][0]["status"], "fail");
    assert!(report["checks"][0]["summary"]
        .as_str()
        .unwrap()
        .contains("OPENAI_MAX_RETRIES"));
}

pub fn doctor_describes_the_perplexity_and_parallel_presets() {
    let fake = FakeOpenAi::start(|req, _| match req.method.as_str() {
        "POST" if req.body["model"] == "parallel" => {
            Action::json(200, super::providers::PARALLEL_REPLY.as_bytes())
        }
        "POST" => Action::json(200, super::providers::PERPLEXITY_REPLY.as_bytes()),
        _ => Action::json(404, br#"{"error":{"message":"not here"}}"#),
    });
    for (provider, key_env, says) in [
        (
            "perplexity",
            "PERPLEXITY_API_KEY",
            "perplexity (cli:--provider), base URL",
        ),
        (
            "parallel",
            "PARALLEL_API_KEY",
            "parallel (cli:--provider), base URL",
        ),
    ] {
        let args = ["--live", "--provider", provider, "--base-url", &fake.url];
        let (code, out, _) = doctor(&args, &[(key_env, PLANTED)]);
        assert_eq!(code, 0, "{provider}: {out}");
        let line_of = |check| line(&out, check);
        let described = line_of("provider");
        assert!(
            described.starts_with("[ok]")
                && described.contains(says)
                && described.contains("answers not streamed, no text.verbosity or service_tier"),
            "{out}"
        );
        assert!(line_of("api key").starts_with("[ok]"), "{out}");
        let live = line_of("live answer");
        assert!(
            live.starts_with("[ok]") && live.contains("searched: yes"),
            "{out}"
        );
        // No model lookups: neither service documents GET /models/{id}.
        assert!(
            fake.requests().iter().all(|r| r.method == "POST"),
            "{provider}: {:?}",
            fake.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
        );
        match provider {
            "parallel" => {
                let prices = line_of("prices");
                assert!(
                    prices.contains("per request: low $0.01, medium $0.05, high unknown"),
                    "{out}"
                );
                assert!(described.contains("no background mode"), "{out}");
            }
            _ => assert!(described.contains("Perplexity's web_search tool"), "{out}"),
        }
    }
}
