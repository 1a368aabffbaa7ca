//! The estimated cost of each call in its usage `_meta` (platform issue, cost per call):
//! the fake's usage priced by hand, for every price rule.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

/// The real web-search payload with its model, usage and service tier replaced.
fn priced_body(model: &str, input: u64, cached: u64, output: u64, tier: &str) -> Vec<u8> {
    let mut body: Value =
        serde_json::from_slice(&fixture("response-web-search-preview.json")).unwrap();
    body["model"] = model.into();
    body["service_tier"] = tier.into();
    body["usage"] = json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": output / 2},
        "total_tokens": input + output,
    });
    serde_json::to_vec(&body).unwrap()
}

/// The searches the payload ran (its `search` actions; opening a page is no search call).
fn searches_in_payload() -> u64 {
    let body: Value = serde_json::from_slice(&fixture("response-web-search-preview.json")).unwrap();
    let n = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "web_search_call" && i["action"]["type"] == "search")
        .count();
    n as u64
}

/// The usage `_meta` of one `answer` call against a fake that returns `body`.
fn usage_of(body: Vec<u8>, opts: Opts) -> Value {
    let fake = FakeOpenAi::fixed(200, body);
    let mut mcp = Mcp::spawn(Opts {
        base_url: Some(fake.url.clone()),
        ..opts
    });
    mcp.initialize("2025-11-25");
    let reply = mcp.call(1, "answer", json!({"query": "what changed this week?"}));
    assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    reply["result"]["_meta"]["com.github.openai-responses-mcp/usage"].clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

pub fn each_call_reports_its_cost_at_the_built_in_prices() {
    let searches = searches_in_payload();
    assert_eq!(searches, 4, "the fixture's search actions");
    // A snapshot id of gpt-6.1-terra ($1 input, $0.05 cached, $5 output per million).
    let usage = usage_of(
        priced_body("gpt-6.1-terra-2026-10-26", 20_000, 5_000, 1_000, "default"),
        Opts::default(),
    );
    let tokens = 15_000.0 * 1.0 / 1e6 + 5_000.0 * 0.05 / 1e6 + 1_000.0 * 5.0 / 1e6;
    let search_cost = searches as f64 * 0.01;
    let cost = &usage["cost"];
    assert!(
        close(cost["tokens_usd"].as_f64().unwrap(), tokens),
        "{usage}"
    );
    assert!(
        close(cost["web_searches_usd"].as_f64().unwrap(), search_cost),
        "{usage}"
    );
    assert!(
        close(cost["usd"].as_f64().unwrap(), tokens + search_cost),
        "{usage}"
    );
    assert_eq!(cost["prices"], "built-in, as of 2026-11-27");
    assert_eq!(cost["long_context"], false);
    assert_eq!(usage["cached_input_tokens"], 5_000);
    assert_eq!(usage["service_tier"], "default");
    assert_eq!(usage["web_searches"], searches);

    // Flex halves the tokens, not the searches.
    let usage = usage_of(
        priced_body("gpt-6.1-terra", 20_000, 5_000, 1_000, "flex"),
        Opts::default(),
    );
    assert!(
        close(
            usage["cost"]["usd"].as_f64().unwrap(),
            tokens / 2.0 + search_cost
        ),
        "{usage}"
    );

    // Above 272,000 input tokens the whole request is at long-context rates.
    let usage = usage_of(
        priced_body("gpt-6.1-sol", 300_000, 0, 10_000, "priority"),
        Opts::default(),
    );
    let tokens = (300_000.0 * 2.0 * 2.0 + 10_000.0 * 10.0 * 1.5) / 1e6 * 2.0;
    assert!(
        close(usage["cost"]["usd"].as_f64().unwrap(), tokens + search_cost),
        "{usage}"
    );
    assert_eq!(usage["cost"]["long_context"], true);

    // OpenAI's own count of billed searches, and cache writes (gpt-6.2-sol: $2 input,
    // $0.10 cached, $2.50 cache writes, $10 output per million).
    let mut body: Value = serde_json::from_slice(&priced_body(
        "gpt-6.2-sol",
        40_000,
        10_000,
        2_000,
        "default",
    ))
    .unwrap();
    body["usage"]["input_tokens_details"]["cache_write_tokens"] = 8_000.into();
    body["tool_usage"] = json!({"web_search": {"num_requests": 2}});
    let usage = usage_of(serde_json::to_vec(&body).unwrap(), Opts::default());
    let tokens = (22_000.0 * 2.0 + 10_000.0 * 0.10 + 8_000.0 * 2.50 + 2_000.0 * 10.0) / 1e6;
    assert!(
        close(usage["cost"]["tokens_usd"].as_f64().unwrap(), tokens),
        "{usage}"
    );
    assert!(
        close(
            usage["cost"]["web_searches_usd"].as_f64().unwrap(),
            2.0 * 0.01
        ),
        "{usage}"
    );
    assert_eq!(
        (
            usage["web_searches"].clone(),
            usage["web_searches_from"].clone(),
            usage["cache_write_tokens"].clone()
        ),
        (json!(2), json!("reported by the provider"), json!(8_000))
    );
}

pub fn configured_prices_win_and_an_unpriced_model_says_what_to_set() {
    let dir = temp_dir("pricing");
    let yaml = "pricing:\n  web_search_per_1k_usd: 25\n  models:\n    house-model: {input_per_mtok: 0.4, cached_input_per_mtok: 0.1, output_per_mtok: 1.6}\n";
    let opts = || Opts::default().config(&dir, yaml);
    let usage = usage_of(
        priced_body("house-model", 10_000, 4_000, 2_000, "default"),
        opts(),
    );
    let tokens = (6_000.0 * 0.4 + 4_000.0 * 0.1 + 2_000.0 * 1.6) / 1e6;
    let search_cost = searches_in_payload() as f64 * 0.025;
    assert!(
        close(usage["cost"]["usd"].as_f64().unwrap(), tokens + search_cost),
        "{usage}"
    );
    assert_eq!(usage["cost"]["prices"], "configured (pricing.models)");

    let usage = usage_of(
        priced_body("mystery-1", 10_000, 0, 2_000, "default"),
        opts(),
    );
    assert_eq!(usage["cost"]["usd"], Value::Null, "{usage}");
    let why = usage["cost"]["why"].as_str().unwrap();
    assert!(
        why.contains("mystery-1") && why.contains("pricing.models.mystery-1"),
        "{why}"
    );
    // The tokens are still reported.
    assert_eq!(usage["input_tokens"], 10_000);
}

/// OpenAI's answer when flex capacity is unavailable (the flex processing guide: a 429
/// "Resource Unavailable", not billed).
const FLEX_UNAVAILABLE: &[u8] = br#"{"error":{"message":"Resource Unavailable: flex capacity is not available right now. Please try again later or use the default service tier.","type":"resource_unavailable","param":null,"code":"resource_unavailable"}}"#;

/// A task's calls go in the flex lane: sent at `flex`, priced at half, and on a 429 for
/// want of flex capacity sent again at once at the default tier (or retried at flex, as
/// configured); a plain call keeps its profile's tier.
pub fn a_tasks_flex_lane_is_sent_priced_and_falls_back_as_configured() {
    for (fallback, second_tier) in [("default", None), ("retry", Some("flex"))] {
        let fake = FakeOpenAi::start(|req, n| {
            let tier = req.body["service_tier"].as_str().unwrap_or("default");
            match n {
                0 => Action::json(429, FLEX_UNAVAILABLE),
                _ => Action::json(200, &priced_body("gpt-6.1-terra", 100_000, 0, 10_000, tier)),
            }
        });
        let yaml = format!(
            "tasks: {{service_tier: flex, flex_unavailable: {fallback}}}\nrequest: {{max_retries: 2}}\n"
        );
        let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).temp_config("flex", &yaml));
        mcp.initialize("2025-11-25");
        let (created, _) = mcp.ask(
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":"q"},"task":{"ttl":60_000}}}),
        );
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        let (result, _) =
            mcp.ask(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":id}}));
        let usage = &result["result"]["_meta"]["com.github.openai-responses-mcp/usage"];
        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "{fallback}: {result}");
        assert_eq!(requests[0].body["service_tier"], "flex", "{fallback}");
        assert_eq!(
            requests[1].body["service_tier"].as_str(),
            second_tier,
            "{fallback}: {}",
            requests[1].body
        );
        // gpt-6.1-terra: 100,000 input at $1/M and 10,000 output at $5/M = $0.15, and
        // half at flex; plus the fixture's searches at $0.01.
        let tokens = usage["cost"]["tokens_usd"].as_f64().unwrap();
        let expected = if second_tier.is_some() { 0.075 } else { 0.15 };
        assert!(close(tokens, expected), "{fallback}: {usage}");
        match fallback {
            "default" => assert_eq!(
                usage["adjusted"],
                json!([{"param": "service_tier", "from": "flex", "to": null}]),
                "{usage}"
            ),
            _ => assert!(usage.get("adjusted").is_none(), "{usage}"),
        }
        // A call that is not a task keeps its profile's tier (none here).
        let (plain, _) = mcp.ask(
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":"q"}}}),
        );
        assert!(plain["result"]["structuredContent"].is_object(), "{plain}");
        assert!(fake.requests()[2].body.get("service_tier").is_none());
    }
}

/// A model that refuses the flex lane's tier (a 400 naming the tiers it takes) is
/// remembered: the task that met the refusal is sent again inside the limit, and the next
/// task goes at that tier at once, not at flex again (issue 47).
pub fn a_model_that_refuses_flex_is_not_sent_flex_again() {
    let fake = FakeOpenAi::start(|req, _| {
        let tier = req.body["service_tier"].as_str().unwrap_or("default");
        match tier {
            "flex" => Action::json(400, br#"{"error":{"message":"Unsupported value: 'service_tier' does not support 'flex' with this model. Supported values are: 'auto' and 'default'.","type":"invalid_request_error","param":"service_tier","code":"unsupported_value"}}"#),
            _ => Action::json(200, &priced_body("gpt-6.1-terra", 1_000, 0, 100, tier)),
        }
    });
    let yaml = "tasks: {service_tier: flex}\n";
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).temp_config("flex-refused", yaml));
    mcp.initialize("2025-11-25");
    for n in [1u64, 3] {
        let (created, _) = mcp.ask(
            json!({"jsonrpc":"2.0","id":n,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":"q"},"task":{"ttl":60_000}}}),
        );
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        let (result, _) = mcp.ask(
            json!({"jsonrpc":"2.0","id":n + 1,"method":"tasks/result","params":{"taskId":id}}),
        );
        assert!(
            result["result"]["structuredContent"].is_object(),
            "{result}"
        );
    }
    let tiers: Vec<Option<String>> = fake
        .requests()
        .iter()
        .map(|r| r.body["service_tier"].as_str().map(str::to_owned))
        .collect();
    let tier = |t: &str| Some(t.to_owned());
    assert_eq!(
        tiers,
        [tier("flex"), tier("auto"), tier("auto")],
        "one 400 for flex, then the tier the model named"
    );
}

/// A call cancelled before OpenAI said what it used is charged what the profile's calls
/// cost lately, not its question alone: after one answered call that reported 31,073
/// input and 4,416 output tokens (the figures OpenAI gave for a call whose cancelled
/// twin was once estimated at 789 input tokens), a call of the same profile cancelled
/// once its stream began a search is charged those counts, with its own search.
pub fn a_cancelled_call_is_charged_its_profiles_recent_cost() {
    use crate::fake_openai::StreamThen;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let whole = fixture("stream-web-search.sse");
    let text = String::from_utf8_lossy(&whole).into_owned();
    let cut = text
        .find("\"type\":\"web_search_call\"")
        .and_then(|at| text[at..].find("\n\n").map(|end| at + end + 2))
        .expect("the fixture begins a search");
    let begun = whole[..cut].to_vec();
    let answered = priced_body("gpt-6.1-terra", 31_073, 0, 4_416, "default");
    let seen = AtomicUsize::new(0);
    // The first call is answered whole; the next streams up to its first search, then
    // goes silent.
    let fake = FakeOpenAi::start(move |_, _| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            Action::json(200, &answered)
        } else {
            Action::Stream {
                body: begun.clone(),
                size: 1 << 16,
                interval: Duration::ZERO,
                then: StreamThen::Hang,
            }
        }
    });
    let yaml = "model_profiles: {answer: {model: gpt-6.1-terra}}\n";
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .temp_config("cancel-median", yaml)
            .arg("--log-format")
            .arg("json"),
    );
    mcp.initialize("2025-11-25");
    let first = mcp.call(1, "answer", json!({"query": "q"}));
    assert!(first["result"]["structuredContent"].is_object(), "{first}");
    mcp.send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":"p"}}}));
    // Cancelled once the server has seen the search begin.
    loop {
        let m = mcp.recv();
        assert!(
            m.get("id").is_none(),
            "answered before the search began: {m}"
        );
        if m["params"]["message"] == "searching the web" {
            break;
        }
    }
    mcp.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":2,"reason":"user"}}));
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    let lines: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "call")
        .collect();
    let [ok, cancelled] = lines.as_slice() else {
        panic!("two call lines: {log}");
    };
    assert_eq!(ok["outcome"], "ok", "{ok}");
    assert_eq!(
        (
            &cancelled["outcome"],
            &cancelled["usage_estimated"],
            &cancelled["input_tokens"],
            &cancelled["output_tokens"],
        ),
        (
            &json!("cancelled"),
            &json!(true),
            &json!(31_073),
            &json!(4_416)
        ),
        "{cancelled}"
    );
    let (paid, estimated) = (
        ok["cost_usd"].as_f64().unwrap_or(f64::NAN),
        cancelled["cost_usd"].as_f64().unwrap_or(f64::NAN),
    );
    // The same tokens and searches as the answered call (its searches outnumber the one
    // begun), so the same cost.
    assert!((estimated - paid).abs() < 1e-9, "{ok} {cancelled}");
    eprintln!("cancelled after an answered call of ${paid}: charged ${estimated} (estimated)");
}
