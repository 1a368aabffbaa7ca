//! Each provider's request shape through the real binary: URL, how the key is sent, the
//! search tool or its absence, and what the client is told (providers issue).

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

/// A server for `provider` whose base URL is the fake (given with `--base-url`: a
/// preset other than openai does not follow `OPENAI_BASE_URL`), with `key_env` holding
/// the planted key when given.
fn spawn(fake: &FakeOpenAi, provider: &str, key_env: Option<&str>) -> Mcp {
    initialized(preset(fake, provider, key_env))
}

/// The options of [`spawn`]'s server, for a test that adds its own.
fn preset(fake: &FakeOpenAi, provider: &str, key_env: Option<&str>) -> Opts {
    let opts = Opts {
        key: false,
        ..Opts::default()
    }
    .arg("--provider")
    .arg(provider)
    .arg("--base-url")
    .arg(&fake.url);
    match key_env {
        Some(name) => opts.env(name, PLANTED_KEY),
        None => opts,
    }
}

fn initialized(opts: Opts) -> Mcp {
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-11-25");
    mcp
}

pub fn azure_sends_the_key_in_an_api_key_header_with_web_search() {
    let fake = FakeOpenAi::fixed(200, fixture("response-web-search.json"));
    let mut mcp = spawn(&fake, "azure", Some("AZURE_OPENAI_API_KEY"));
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(
        reply["result"]["structuredContent"]["used_search"], true,
        "{reply}"
    );
    let r = &fake.requests()[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.header("api-key"), Some(PLANTED_KEY));
    assert_eq!(
        r.header("authorization"),
        None,
        "Azure's key is not a bearer token"
    );
    assert_eq!(r.body["tools"][0]["type"], "web_search");
}

pub fn openrouter_uses_its_key_model_names_and_search_tool() {
    let fake = FakeOpenAi::fixed(200, fixture("response-web-search.json"));
    let mut mcp = spawn(&fake, "openrouter", Some("OPENROUTER_API_KEY"));
    mcp.call(1, "answer", json!({"query":"q"}));
    let r = &fake.requests()[0];
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    assert_eq!(r.body["model"], "openai/gpt-6.1-terra");
    assert_eq!(r.body["tools"], json!([{"type": "openrouter:web_search"}]));
    assert!(r.body.get("include").is_none());
}

pub fn local_providers_need_no_key_send_no_tool_and_say_so() {
    for (provider, model) in [
        ("ollama", "gpt-oss:20b"),
        ("lmstudio", "openai/gpt-oss-20b"),
    ] {
        let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
        let mut mcp = spawn(&fake, provider, None);
        let list = mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        for tool in list["result"]["tools"].as_array().unwrap() {
            let description = tool["description"].as_str().unwrap();
            assert!(
                description.contains("has no web search"),
                "{provider}: {description}"
            );
        }
        let reply = mcp.call(2, "answer", json!({"query":"q"}));
        assert!(
            reply["result"]["structuredContent"].is_object(),
            "{provider}: {reply}"
        );
        assert_eq!(reply["result"]["structuredContent"]["used_search"], false);
        let r = &fake.requests()[0];
        assert_eq!(r.body["model"], model, "{provider}");
        assert!(
            r.body.get("tools").is_none() && r.body.get("include").is_none(),
            "{provider}: {}",
            r.body
        );
        assert_eq!(r.header("authorization"), None, "no key, no header");
        let stderr = mcp.stderr();
        assert_eq!(
            stderr.matches("has no hosted web search").count(),
            1,
            "warned once: {stderr}"
        );
    }
}

pub fn openai_is_unchanged_and_show_config_names_preset_values() {
    // The default provider: Bearer, the web_search tool, as before.
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &fixture("response-web-search.json")));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-06-18");
    mcp.call(1, "answer", json!({"query":"q"}));
    let r = &fake.requests()[0];
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    assert_eq!(r.body["tools"][0]["type"], "web_search");
    // --show-config marks what the preset filled, and what the user set stays theirs.
    let home = temp_dir("preset");
    let out = Command::new(crate::binary())
        .args(["--show-config", "--provider", "openrouter"])
        .env_clear()
        .env("HOME", &home)
        .env("OPENROUTER_API_KEY", PLANTED_KEY)
        .env("MODEL_ANSWER", "openai/gpt-5.6-terra")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(PLANTED_KEY));
    let shown: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(shown["sources"]["openai.base_url"], "preset:openrouter");
    assert_eq!(shown["sources"]["openai.web_search"], "preset:openrouter");
    assert_eq!(shown["sources"]["openai.provider"], "cli:--provider");
    assert_eq!(
        shown["sources"]["model_profiles.answer.model"],
        "env:MODEL_ANSWER"
    );
    assert_eq!(
        shown["api_key"],
        json!({"env": "OPENROUTER_API_KEY", "set": true})
    );
    let _ = std::fs::remove_dir_all(home);
}

pub fn profile_tuning_reaches_the_request() {
    let fake = FakeOpenAi::fixed(200, fixture("response-web-search.json"));
    let dir = temp_dir("tuning");
    let yaml = "model_profiles:\n  answer:\n    model: gpt-5.6-terra\n    search_context_size: low\n    user_location: {country: JP, city: Tokyo, timezone: Asia/Tokyo}\n    external_web_access: false\n    service_tier: flex\n    max_output_tokens: 3000\n";
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).config(&dir, yaml));
    mcp.initialize("2025-06-18");
    mcp.call(1, "answer", json!({"query":"q"}));
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["tools"][0],
        json!({"type":"web_search","search_context_size":"low",
               "user_location":{"type":"approximate","country":"JP","city":"Tokyo","timezone":"Asia/Tokyo"},
               "external_web_access":false})
    );
    assert_eq!(
        (
            body["service_tier"].clone(),
            body["max_output_tokens"].clone()
        ),
        (json!("flex"), json!(3000))
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_retired_model_warns_at_startup_and_a_404_says_what_to_set() {
    let fake = FakeOpenAi::fixed(
        404,
        br#"{"error":{"message":"The model `o4-mini` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#.to_vec(),
    );
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).env("MODEL_QUICK", "o4-mini"));
    mcp.initialize("2025-11-25");
    let reply = mcp.call(1, "answer_quick", json!({"query":"q"}));
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("set model_profiles.answer_quick.model to gpt-5.6-terra"),
        "{text}"
    );
    let stderr = mcp.stderr();
    assert!(
        stderr.contains("o4-mini was shut down by OpenAI on 2026-10-23")
            || stderr.contains("o4-mini will be shut down"),
        "{stderr}"
    );
    assert!(
        stderr.contains("model_profiles.answer_quick.model"),
        "{stderr}"
    );
}

/// A Perplexity Agent API reply, in the shape its API reference and SDK types give
/// (perplexity-py `OutputItem`, `SearchResult`, `ResponsesUsage`): a `search_results`
/// item with dates, a message citing one page, and `usage.cost` as billed.
pub(super) const PERPLEXITY_REPLY: &str = r#"{"id":"resp_pplx_1","object":"response","created_at":1764300000,"model":"openai/gpt-5.5","status":"completed",
"output":[
 {"type":"search_results","queries":["what changed"],"results":[
   {"id":1,"url":"https://example.org/a?utm_source=perplexity","title":"Page A","snippet":"…","date":"2026-11-20","last_updated":"2026-11-21","source":"web"},
   {"id":2,"url":"https://example.org/b","title":"Page B","snippet":"…","date":null}]},
 {"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[
   {"type":"output_text","text":"It changed on 20 November [1].","annotations":[{"type":"url_citation","url":"https://example.org/a","title":"Page A","start_index":0,"end_index":10}]}]}],
"usage":{"input_tokens":1900,"output_tokens":300,"total_tokens":2200,
 "cost":{"currency":"USD","input_cost":0.003325,"output_cost":0.0042,"tool_calls_cost":0.015,"total_cost":0.022525},
 "tool_calls_details":{"web_search":{"invocation":3}}}}"#;

/// A Parallel Responses API reply: a standard Responses object (its compatibility page),
/// the answer's sources as `url_citation` annotations, `reasoning` echoed as null.
pub(super) const PARALLEL_REPLY: &str = r#"{"id":"resp_par_1","object":"response","created_at":1764300000,"model":"parallel","status":"completed","reasoning":null,"text":null,"tools":[],
"output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[
  {"type":"output_text","text":"Parallel found it.","annotations":[{"type":"url_citation","url":"https://example.net/x","title":"X","start_index":0,"end_index":8}]}]}],
"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}"#;

/// What only OpenAI's API takes of our request (or only our OpenAI requests carry).
const OPENAI_ONLY: [&str; 7] = [
    "include",
    "text",
    "service_tier",
    "stream",
    "store",
    "safety_identifier",
    "prompt_cache_key",
];

/// Asserts that a request body has none of `fields`.
fn lacks(body: &Value, fields: &[&str]) {
    for field in fields {
        assert!(body.get(field).is_none(), "{field}: {body}");
    }
}

fn usage(reply: &Value) -> &Value {
    &reply["result"]["_meta"]["com.github.openai-responses-mcp/usage"]
}

/// `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` name an OpenAI organization and project: left
/// set in the shell, they must not reach another service beside its key.
pub fn openai_org_and_project_never_go_with_another_services_key() {
    let fake = FakeOpenAi::fixed(200, PERPLEXITY_REPLY.as_bytes().to_vec());
    let opts = preset(&fake, "perplexity", Some("PERPLEXITY_API_KEY"))
        .env("OPENAI_ORG_ID", "org-planted")
        .env("OPENAI_PROJECT_ID", "proj_planted");
    let mut mcp = initialized(opts);
    let reply = mcp.call(1, "answer", json!({"query": "q"}));
    assert!(reply.get("result").is_some(), "{reply}");
    let r = &fake.requests()[0];
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    assert_eq!(r.header("openai-organization"), None);
    assert_eq!(r.header("openai-project"), None);
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    assert!(
        log.contains("OPENAI_ORG_ID and OPENAI_PROJECT_ID are not sent"),
        "the operator is told: {log}"
    );
}

pub fn perplexity_is_asked_in_its_shape_and_its_sources_and_cost_come_back() {
    let fake = FakeOpenAi::fixed(200, PERPLEXITY_REPLY.as_bytes().to_vec());
    let mut mcp = spawn(&fake, "perplexity", Some("PERPLEXITY_API_KEY"));
    let reply = mcp.call(
        1,
        "answer",
        json!({"query": "what changed", "domains": ["example.org"]}),
    );
    let answer = &reply["result"]["structuredContent"];
    assert_eq!(answer["used_search"], true, "{reply}");
    assert_eq!(answer["model"], "openai/gpt-5.5");
    let citations = answer["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1, "the cited page only: {reply}");
    assert_eq!(citations[0]["url"], "https://example.org/a");
    assert_eq!(citations[0]["title"], "Page A");
    assert_eq!(
        citations[0]["published_at"], "2026-11-20",
        "its date from the search results: {reply}"
    );
    let cost = &usage(&reply)["cost"];
    assert_eq!(cost["usd"], 0.022525, "{reply}");
    assert_eq!(cost["web_searches_usd"], 0.015);
    assert!(cost["prices"]
        .as_str()
        .unwrap()
        .contains("reported by the provider"));
    assert_eq!(usage(&reply)["web_searches"], 3);
    let r = &fake.requests()[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    assert_eq!(r.body["model"], "openai/gpt-5.5");
    assert_eq!(r.body["reasoning"], json!({"effort": "medium"}));
    assert_eq!(
        r.body["tools"],
        json!([{"type": "web_search", "filters": {"search_domain_filter": ["example.org"]}}])
    );
    lacks(&r.body, &OPENAI_ONLY);
    assert!(r.body.get("background").is_none());
    // The quick profile: Perplexity's own model at low effort; an effort Perplexity does
    // not name moves to the nearest it does.
    mcp.call(2, "answer_quick", json!({"query": "q"}));
    mcp.call(
        3,
        "answer_detailed",
        json!({"query": "q", "reasoning_effort": "xhigh"}),
    );
    let requests = fake.requests();
    assert_eq!(requests[1].body["model"], "perplexity/sonar");
    assert_eq!(requests[1].body["reasoning"], json!({"effort": "low"}));
    assert_eq!(requests[2].body["reasoning"], json!({"effort": "high"}));
}

pub fn parallel_is_asked_without_a_tool_and_priced_per_request_by_effort() {
    let fake = FakeOpenAi::fixed(200, PARALLEL_REPLY.as_bytes().to_vec());
    let mut mcp = spawn(&fake, "parallel", Some("PARALLEL_API_KEY"));
    let quick = mcp.call(1, "answer_quick", json!({"query": "q"}));
    let answer = &quick["result"]["structuredContent"];
    assert_eq!(answer["used_search"], true, "{quick}");
    assert_eq!(answer["citations"][0]["url"], "https://example.net/x");
    let cost = &usage(&quick)["cost"];
    assert_eq!(cost["usd"], 0.01, "$10 per 1,000 low requests: {quick}");
    assert_eq!(cost["request_fee_usd"], 0.01);
    let medium = mcp.call(2, "answer", json!({"query": "q"}));
    assert_eq!(usage(&medium)["cost"]["usd"], 0.05, "{medium}");
    let high = mcp.call(3, "answer_detailed", json!({"query": "q"}));
    let cost = &usage(&high)["cost"];
    assert!(cost["usd"].is_null(), "no published fee for high: {high}");
    assert!(
        cost["why"]
            .as_str()
            .unwrap()
            .contains("per_request_usd_high"),
        "{high}"
    );
    let requests = fake.requests();
    let efforts: Vec<&Value> = requests
        .iter()
        .map(|r| &r.body["reasoning"]["effort"])
        .collect();
    assert_eq!(efforts, [&json!("low"), &json!("medium"), &json!("high")]);
    for r in &requests {
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {PLANTED_KEY}").as_str())
        );
        assert_eq!(r.body["model"], "parallel");
        lacks(&r.body, &OPENAI_ONLY);
        lacks(&r.body, &["tools", "background"]);
    }
}

/// Parallel answers only once its research is done (up to a minute at `high`), in one
/// body: silence longer than `request.idle_timeout_ms` is no stall, and the answer is
/// asked for, and paid for, once.
pub fn a_whole_answer_slower_than_the_idle_timeout_is_waited_for() {
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, PARALLEL_REPLY.as_bytes()).after(Duration::from_millis(2_500))
    });
    let mut mcp = initialized(
        preset(&fake, "parallel", Some("PARALLEL_API_KEY"))
            .temp_config("slow-whole", "request: {idle_timeout_ms: 1000}\n"),
    );
    let reply = mcp.call(1, "answer", json!({"query": "q"}));
    let answer = &reply["result"]["structuredContent"];
    assert_eq!(
        answer["citations"][0]["url"], "https://example.net/x",
        "{reply}"
    );
    assert_eq!(fake.requests().len(), 1, "asked once, never retried");
}

/// A failure names the service that failed, so neither the model nor its user goes
/// looking at OpenAI for a Parallel or Perplexity outage or key.
pub fn failures_name_the_service_that_failed() {
    for (provider, service, key_env) in [
        ("parallel", "Parallel", "PARALLEL_API_KEY"),
        ("perplexity", "Perplexity", "PERPLEXITY_API_KEY"),
    ] {
        let fake = FakeOpenAi::fixed(500, fixture("error-500-server-error.json"));
        let mut mcp =
            initialized(preset(&fake, provider, Some(key_env)).env("OPENAI_MAX_RETRIES", "0"));
        let reply = mcp.call(1, "answer", json!({"query": "q"}));
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(
            text.starts_with(&format!("The {service} request failed: "))
                && text.contains(&format!("{service} had a server error")),
            "{reply}"
        );
        assert!(!text.contains("OpenAI"), "{reply}");

        let mut keyless = spawn(&fake, provider, None);
        let reply = keyless.call(1, "answer", json!({"query": "q"}));
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(
            text.starts_with(&format!("The server has no {service} API key"))
                && text.contains(key_env),
            "{reply}"
        );
    }
}

pub fn the_new_presets_show_their_values_and_refuse_what_their_api_lacks() {
    for (provider, key_env, base) in [
        (
            "perplexity",
            "PERPLEXITY_API_KEY",
            "https://api.perplexity.ai/v1",
        ),
        ("parallel", "PARALLEL_API_KEY", "https://api.parallel.ai/v1"),
    ] {
        let out = super::config::run(
            &["--show-config", "--provider", provider],
            &[(key_env, PLANTED_KEY)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains(PLANTED_KEY), "{stderr}");
        let shown: Value = serde_json::from_str(stderr.trim()).unwrap();
        let preset = format!("preset:{provider}");
        assert_eq!(shown["effective"]["openai"]["base_url"], base, "{shown}");
        for key in [
            "openai.base_url",
            "openai.web_search",
            "openai.model_lookups",
            "model_profiles.answer.model",
            "model_profiles.answer_quick.model",
            "model_profiles.answer_detailed.reasoning_effort",
        ] {
            assert_eq!(shown["sources"][key], preset.as_str(), "{key}: {shown}");
        }
        assert_eq!(shown["api_key"], json!({"env": key_env, "set": true}));
    }
    // Parallel answers every request while the client waits: no background tasks.
    let home = temp_dir("parallel-bg");
    let config = home.join("c.yaml");
    std::fs::write(&config, "tasks:\n  openai_background: true\n").unwrap();
    let out = super::config::run(
        &[
            "--provider",
            "parallel",
            "--config",
            config.to_str().unwrap(),
            "--show-config",
        ],
        &[("PARALLEL_API_KEY", PLANTED_KEY)],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "tasks.openai_background is true, but Parallel's Responses API has no background mode"
        ) && stderr.contains("set tasks.openai_background to false"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(home);
}

/// `OPENAI_BASE_URL` left in a shell does not move a preset's key (issue 47). Exported at
/// the test's fake service, Perplexity's and Parallel's keys never arrive there: the call
/// heads for the preset's own host, which a loopback SOCKS5 proxy is asked for and
/// refuses (it resolves names itself and opens tunnels to loopback only, so nothing
/// leaves this machine), and startup and `--show-config` say what was ignored and why.
/// With `openai.base_url` in the file, the key goes there, and not to the variable's URL.
pub fn a_presets_key_does_not_follow_openai_base_url() {
    for (provider, key_env, base, answer) in [
        (
            "perplexity",
            "PERPLEXITY_API_KEY",
            "https://api.perplexity.ai/v1",
            PERPLEXITY_REPLY,
        ),
        (
            "parallel",
            "PARALLEL_API_KEY",
            "https://api.parallel.ai/v1",
            PARALLEL_REPLY,
        ),
    ] {
        let fake = FakeOpenAi::fixed(200, answer.as_bytes().to_vec());
        let origin = fake.url.trim_end_matches("/v1");
        let ignored = format!(
            "OPENAI_BASE_URL ({origin}) is ignored: provider {provider} sends its key ({key_env}) to {base}, from preset:{provider}."
        );
        let proxy = crate::proxies::TestProxy::socks5("socks5h", None);
        let mut mcp = initialized(
            Opts {
                key: false,
                ..Opts::upstream(&fake.url)
            }
            .arg("--provider")
            .arg(provider)
            .env(key_env, PLANTED_KEY)
            .env("ALL_PROXY", &proxy.url)
            .env("OPENAI_MAX_RETRIES", "0"),
        );
        let reply = mcp.call(1, "answer", json!({"query": "q"}));
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(
            // The proxy's SOCKS5 reply: host unreachable.
            reply["result"]["isError"] == true && text.contains("host unreachable"),
            "{provider}: {reply}"
        );
        assert!(
            fake.requests().is_empty(),
            "{provider}: the key went to OPENAI_BASE_URL"
        );
        let host = base.trim_start_matches("https://").trim_end_matches("/v1");
        let tunnels = proxy.tunnels();
        assert!(
            !tunnels.is_empty()
                && tunnels
                    .iter()
                    .all(|t| t.target == format!("{host}:443") && !t.opened),
            "{provider}: {tunnels:?}"
        );
        mcp.close_stdin();
        mcp.wait_exit(Duration::from_secs(10));
        let stderr = mcp.stderr_to_end();
        assert!(stderr.contains(&ignored), "{provider}: {stderr}");
        assert!(!stderr.contains(PLANTED_KEY));

        let out = super::config::run(
            &["--show-config", "--provider", provider],
            &[(key_env, PLANTED_KEY), ("OPENAI_BASE_URL", &fake.url)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains(PLANTED_KEY), "{stderr}");
        let (shown, log) = shown_and_logged(&stderr);
        assert!(log.contains(&ignored), "{log}");
        assert_eq!(shown["effective"]["openai"]["base_url"], base, "{shown}");
        assert_eq!(
            shown["sources"]["openai.base_url"],
            format!("preset:{provider}")
        );
        let warnings = shown["warnings"].as_array().unwrap();
        assert!(
            warnings.len() == 1 && warnings[0].as_str().unwrap().contains(&ignored),
            "{shown}"
        );

        // The operator points it in the file: the key arrives there, nowhere else.
        let decoy = FakeOpenAi::fixed(200, answer.as_bytes().to_vec());
        let yaml = format!("openai:\n  base_url: {}\n", fake.url);
        let mut mcp = initialized(
            Opts {
                key: false,
                ..Opts::upstream(&decoy.url)
            }
            .arg("--provider")
            .arg(provider)
            .env(key_env, PLANTED_KEY)
            .temp_config("pointed", &yaml),
        );
        let reply = mcp.call(1, "answer", json!({"query": "q"}));
        assert!(
            reply["result"]["structuredContent"].is_object(),
            "{provider}: {reply}"
        );
        let requests = fake.requests();
        assert_eq!(requests.len(), 1, "{provider}");
        assert_eq!(
            requests[0].header("authorization"),
            Some(format!("Bearer {PLANTED_KEY}").as_str())
        );
        assert!(decoy.requests().is_empty(), "{provider}");
    }
}

/// A preset's key in plain http to another machine is said at startup and in
/// `--show-config`, without the key (no call is made: the host is not reached).
pub fn a_presets_key_in_plain_http_to_another_machine_is_warned_about() {
    let yaml = "openai:\n  base_url: http://gw.example:8080/v1\n";
    let says = "openai.base_url (http://gw.example:8080, from yaml:";
    let then =
        ") is plain http to another machine: the key in PERPLEXITY_API_KEY is sent unencrypted";
    let opts = Opts {
        key: false,
        ..Opts::default()
    }
    .arg("--provider")
    .arg("perplexity")
    .arg("--show-config")
    .env("PERPLEXITY_API_KEY", PLANTED_KEY)
    .temp_config("plain", yaml);
    let mut mcp = initialized(opts);
    mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    mcp.close_stdin();
    mcp.wait_exit(Duration::from_secs(10));
    let stderr = mcp.stderr_to_end();
    assert!(!stderr.contains(PLANTED_KEY), "{stderr}");
    let (shown, log) = shown_and_logged(&stderr);
    let warnings = shown["warnings"].as_array().cloned().unwrap_or_default();
    let said = |text: &str| {
        warnings
            .iter()
            .filter_map(Value::as_str)
            .any(|w| w.contains(says) && w.contains(text))
    };
    assert!(said(then), "{shown}");
    // And that Perplexity's key goes to another host than Perplexity's.
    assert!(
        said(") is not provider perplexity's own host (https://api.perplexity.ai)"),
        "{shown}"
    );
    assert_eq!(
        log.lines()
            .filter(|l| l.contains(says) && l.contains(then))
            .count(),
        1,
        "said once at startup: {log}"
    );
}

/// `--show-config`'s JSON and the log lines around it (stderr holds both: the log lines
/// first, then the configuration as pretty JSON).
fn shown_and_logged(stderr: &str) -> (Value, String) {
    let start = match stderr.starts_with("{\n") {
        true => 0,
        false => stderr
            .find("\n{\n")
            .map(|i| i + 1)
            .unwrap_or_else(|| panic!("no configuration in {stderr}")),
    };
    let end = stderr[start..]
        .find("\n}\n")
        .map(|i| start + i + 2)
        .unwrap_or_else(|| panic!("{stderr}"));
    let shown = serde_json::from_str(&stderr[start..end]).unwrap();
    (shown, format!("{}{}", &stderr[..start], &stderr[end..]))
}
