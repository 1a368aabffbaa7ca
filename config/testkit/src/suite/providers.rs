//! Each provider's request shape through the real binary: URL, how the key is sent, the
//! search tool or its absence, and what the client is told (providers issue).

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

/// A server for `provider` whose base URL is the fake (set explicitly, so it wins over
/// the preset), with `key_env` holding the planted key when given.
fn spawn(fake: &FakeOpenAi, provider: &str, key_env: Option<&str>) -> Mcp {
    let mut opts = Opts {
        key: false,
        ..Opts::upstream(&fake.url)
    }
    .arg("--provider")
    .arg(provider);
    if let Some(name) = key_env {
        opts = opts.env(name, PLANTED_KEY);
    }
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
