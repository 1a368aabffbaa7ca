//! The answer tools against a loopback fake OpenAI (answer issue).

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

fn ready(fake: &FakeOpenAi, opts: Opts, version: &str) -> Mcp {
    let mut mcp = Mcp::spawn(Opts {
        base_url: Some(fake.url.clone()),
        ..opts
    });
    mcp.initialize(version);
    mcp
}

pub fn http_404_question_answers_without_search() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mut mcp = ready(&fake, Opts::default(), "2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"What does HTTP 404 mean?"}));
    let answer = answer_of(&reply);
    assert_eq!(answer["used_search"], false);
    assert_eq!(answer["citations"], json!([]));
    assert!(!answer["answer"].as_str().unwrap().is_empty());
    assert_eq!(reply["result"]["structuredContent"], answer);

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("user-agent"),
        Some(format!("openai-responses-mcp/{}", env!("CARGO_PKG_VERSION")).as_str())
    );
    assert_eq!(r.header("openai-organization"), None);
    let body = &r.body;
    assert_eq!(body["model"], "gpt-6.1-terra");
    assert_eq!(
        body["instructions"],
        responses_mcp_core::policy::SYSTEM_POLICY
    );
    assert!(body["input"]
        .as_str()
        .unwrap()
        .starts_with("What does HTTP 404 mean?"));
    // No location configured: one that states none (OpenAI would assume the US).
    assert_eq!(
        body["tools"],
        json!([{"type":"web_search","user_location":{"type":"approximate"}}])
    );
    assert_eq!(body["include"], json!(["web_search_call.action.sources"]));
    assert_eq!(body["reasoning"], json!({"effort":"medium"}));
    assert_eq!(body["text"], json!({"verbosity":"medium"}));
}

pub fn tokyo_weather_answers_with_search_citations_and_dates() {
    let fake = FakeOpenAi::fixed(200, fixture("response-web-search.json"));
    let mut mcp = ready(&fake, Opts::default(), "2025-11-25");
    let reply = mcp.call(
        1,
        "answer",
        json!({"query":"Today's Tokyo weather for 2025-12-05","domains":["jma.go.jp","tenki.jp"]}),
    );
    let answer = answer_of(&reply);
    assert_eq!(answer["used_search"], true);
    let citations = answer["citations"].as_array().unwrap();
    assert!(!citations.is_empty() && citations.len() <= 3);
    let text = answer["answer"].as_str().unwrap();
    for c in citations {
        let url = c["url"].as_str().unwrap();
        // A page's publication date is not known: the date it was read is said as such.
        assert!(c.get("published_at").is_none(), "{c}");
        let date = c["accessed_at"].as_str().unwrap();
        assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{date}");
        assert!(
            text.contains(&format!("{url} (accessed {date})")),
            "URL + ISO date in the body: {text}"
        );
    }
    assert_eq!(
        fake.requests()[0].body["tools"][0]["filters"],
        json!({"allowed_domains":["jma.go.jp","tenki.jp"]})
    );
}

pub fn rate_limit_then_success_honours_retry_after() {
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(429, &fixture("error-429-rate-limit-exceeded.json"))
            .with_header("retry-after", "1"),
        _ => Action::json(200, &fixture("response-no-search.json")),
    });
    let mut mcp = ready(&fake, Opts::default(), "2025-06-18");
    let start = Instant::now();
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert!(reply.get("result").is_some(), "{reply}");
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "waited {:?}",
        start.elapsed()
    );
    assert_eq!(fake.requests().len(), 2);
}

pub fn server_errors_until_retries_run_out() {
    let fake = FakeOpenAi::fixed(500, fixture("error-500-server-error.json"));
    let mut mcp = ready(
        &fake,
        Opts::default().env("OPENAI_MAX_RETRIES", "2"),
        "2025-06-18",
    );
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    assert_eq!(reply["error"]["data"]["retries"], 2);
    assert_eq!(reply["error"]["data"]["status"], 500);
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("openai responses failed"));
    assert_eq!(fake.requests().len(), 3);
}

pub fn a_silent_upstream_times_out_and_its_connection_is_closed() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let opts = Opts::default()
        .env("OPENAI_API_TIMEOUT", "300")
        .env("OPENAI_MAX_RETRIES", "0");
    let mut mcp = ready(&fake, opts, "2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{reply}"
    );
    let start = Instant::now();
    while fake.closed().is_empty() && start.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        fake.closed().len(),
        1,
        "the attempt's connection was closed"
    );
}

pub fn malformed_and_incomplete_bodies_are_clear_errors() {
    let incomplete = br#"{"model":"gpt-5","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"partial"}]}]}"#.to_vec();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"<html><body>Bad gateway</body></html>".to_vec(),
            "not JSON",
        ),
        (incomplete, "incomplete"),
        (
            br#"{"status":"completed","output":[]}"#.to_vec(),
            "no answer",
        ),
    ];
    for (body, needle) in cases {
        let fake = FakeOpenAi::fixed(200, body);
        let mut mcp = ready(&fake, Opts::default(), "2025-06-18");
        let reply = mcp.call(1, "answer", json!({"query":"q"}));
        assert_eq!(reply["error"]["code"], -32050, "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(needle),
            "{needle}: {reply}"
        );
        assert_eq!(fake.requests().len(), 1, "not retried");
    }
}

pub fn japanese_answer_with_citations_after_multibyte_text() {
    let body = json!({"model":"gpt-5-2025-08-07","status":"completed","output":[
        {"type":"reasoning","summary":[]},
        {"type":"web_search_call","status":"completed","action":{"type":"search","query":"東京 天気"}},
        {"type":"web_search_call","status":"completed","action":{"type":"open_page","url":"https://www.jma.go.jp/"}},
        {"type":"message","status":"completed","content":[{"type":"output_text",
          "text":"東京の今日の天気は晴れのち曇り、最高気温は１２度です（[気象庁](https://www.jma.go.jp/bosai/forecast/?utm_source=openai)）。",
          "annotations":[{"type":"url_citation","url":"https://www.jma.go.jp/bosai/forecast/?utm_source=openai","title":"気象庁｜天気予報","start_index":31,"end_index":86}]}]}]});
    let fake = FakeOpenAi::fixed(200, serde_json::to_vec(&body).unwrap());
    let mut mcp = ready(&fake, Opts::default(), "2025-06-18");
    let answer = answer_of(&mcp.call(1, "answer", json!({"query":"今日の東京の天気は？"})));
    assert_eq!(answer["used_search"], true);
    assert_eq!(
        answer["citations"][0]["url"],
        "https://www.jma.go.jp/bosai/forecast/"
    );
    assert_eq!(answer["citations"][0]["title"], "気象庁｜天気予報");
    assert!(answer["answer"]
        .as_str()
        .unwrap()
        .starts_with("東京の今日の天気"));
    assert_eq!(answer["model"], "gpt-5-2025-08-07");
}

pub fn model_families_get_only_the_parameters_they_take() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let opts = Opts::default()
        .env("MODEL_ANSWER", "gpt-4.1")
        .env("ANSWER_VERBOSITY", "low");
    let mut mcp = ready(&fake, opts, "2025-06-18");
    mcp.call(1, "answer", json!({"query":"q"}));
    let body = &fake.requests()[0].body;
    assert_eq!(body["model"], "gpt-4.1");
    assert!(
        body.get("text").is_none() && body.get("reasoning").is_none(),
        "{body}"
    );

    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mut mcp = ready(
        &fake,
        Opts::default().env("ANSWER_EFFORT", "minimal"),
        "2025-06-18",
    );
    mcp.call(1, "answer", json!({"query":"q","verbosity":"high"}));
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["reasoning"],
        json!({"effort":"low"}),
        "minimal cannot go with web_search"
    );
    assert_eq!(body["text"], json!({"verbosity":"high"}));
}

pub fn a_refused_effort_is_clamped_once_and_remembered() {
    // The real 400 of a model that takes none/low/medium/high, then answers.
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(400, &fixture("error-400-unsupported-reasoning-effort.json")),
        _ => Action::json(200, &fixture("response-no-search.json")),
    });
    let mut mcp = ready(&fake, Opts::default(), "2025-11-25");
    let args = json!({"query":"q", "reasoning_effort": "xhigh"});
    let first = mcp.call(1, "answer", args.clone());
    assert!(first["result"]["structuredContent"].is_object(), "{first}");
    let usage = &first["result"]["_meta"]["com.github.openai-responses-mcp/usage"];
    assert_eq!(
        usage["adjusted"],
        json!([{"param": "reasoning.effort", "from": "xhigh", "to": "high"}]),
        "{first}"
    );
    let second = mcp.call(2, "answer", args);
    assert_eq!(
        second["result"]["_meta"]["com.github.openai-responses-mcp/usage"]["attempts"],
        1
    );
    let r = fake.requests();
    assert_eq!(
        r.len(),
        3,
        "one 400, then success, then no 400 on the next call"
    );
    assert_eq!(r[0].body["reasoning"]["effort"], "xhigh");
    assert_eq!(r[1].body["reasoning"]["effort"], "high");
    assert_eq!(
        r[2].body["reasoning"]["effort"], "high",
        "remembered for the model"
    );
}

pub fn without_an_api_key_tools_list_works_and_calls_fail_at_once() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mut mcp = ready(
        &fake,
        Opts {
            key: false,
            ..Opts::default()
        },
        "2025-06-18",
    );
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let reply = mcp.call(2, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .contains("OPENAI_API_KEY"));
    assert!(fake.requests().is_empty());
}

pub fn connections_are_reused_and_org_headers_sent() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    // No model lookup: its own connection could be the one a later call reuses.
    let opts = Opts::default()
        .env("OPENAI_ORG_ID", "org-123")
        .env("OPENAI_PROJECT_ID", "proj_456")
        .env("OPENAI_MODEL_LOOKUPS", "false");
    let mut mcp = ready(&fake, opts, "2025-06-18");
    for id in 1..=3 {
        assert!(mcp
            .call(id, "answer_quick", json!({"query":"q"}))
            .get("result")
            .is_some());
    }
    assert_eq!(
        fake.connections(),
        1,
        "keep-alive: one connection for three calls"
    );
    let r = &fake.requests()[2];
    assert_eq!(r.header("openai-organization"), Some("org-123"));
    assert_eq!(r.header("openai-project"), Some("proj_456"));
}

pub fn invalid_arguments_are_reported_with_the_reason() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mut mcp = ready(&fake, Opts::default(), "2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q","max_results":0}));
    assert_eq!(reply["error"]["code"], -32001);
    assert_eq!(reply["error"]["message"], "answer: invalid arguments");
    assert!(reply["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("max_results"));
    let reply = mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"answer_slow","arguments":{"query":"q"}}}));
    assert_eq!(reply["error"]["message"], "Unknown tool: answer_slow");
    assert!(fake.requests().is_empty());
}

pub fn requests_go_through_http_proxy_and_no_proxy_bypasses_it() {
    // The fake plays the proxy: the server opens a CONNECT tunnel through it.
    let proxy = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let opts = Opts::upstream("http://api.openai.invalid/v1")
        .env("HTTP_PROXY", proxy.url.trim_end_matches("/v1"));
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert!(reply.get("result").is_some(), "{reply}");
    let seen: Vec<(String, String)> = proxy
        .requests()
        .iter()
        .map(|r| (r.method.clone(), r.path.clone()))
        .collect();
    assert_eq!(
        seen[0],
        ("CONNECT".to_owned(), "api.openai.invalid:80".to_owned()),
        "{seen:?}"
    );
    assert_eq!(seen[1].1, "/v1/responses", "{seen:?}");
    assert_eq!(
        proxy.requests()[1].header("host"),
        Some("api.openai.invalid")
    );

    // NO_PROXY lets a host bypass a proxy that does not even listen.
    let direct = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let opts = Opts::upstream(&direct.url)
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    assert!(mcp
        .call(1, "answer", json!({"query":"q"}))
        .get("result")
        .is_some());
    assert_eq!(direct.requests().len(), 1);
}

/// A Responses body whose answer text is `n` bytes: large enough to span many TLS records.
fn big_answer(n: usize) -> Vec<u8> {
    let text = "データ".repeat(n / 9 + 1);
    serde_json::to_vec(&json!({"model":"gpt-5","status":"completed","output":[
        {"type":"message","content":[{"type":"output_text","text":text,"annotations":[]}]}]}))
    .unwrap()
}

pub fn https_with_a_trusted_ca_carries_large_answers_over_kept_alive_connections() {
    let body = big_answer(300_000);
    let expected: Value = serde_json::from_slice(&body).unwrap();
    let (fake, ca_pem) = FakeOpenAi::start_tls(move |_, _| Action::json(200, &body));
    let dir = temp_dir("tls");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    // No model lookup: its own connection could be the one a later call reuses.
    let opts = Opts::upstream(&fake.url)
        .env("SSL_CERT_FILE", ca.to_str().unwrap())
        .env("OPENAI_MODEL_LOOKUPS", "false");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    for id in 1..=2 {
        let answer = answer_of(&mcp.call(id, "answer", json!({"query":"q"})));
        assert_eq!(
            answer["answer"],
            expected["output"][0]["content"][0]["text"]
        );
    }
    assert!(fake.url.starts_with("https://"));
    assert_eq!(
        fake.connections(),
        1,
        "the TLS connection is kept alive and reused"
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn chunked_bodies_are_decoded_over_http_and_https() {
    let body = big_answer(200_000);
    let expected: Value = serde_json::from_slice(&body).unwrap();
    let text = &expected["output"][0]["content"][0]["text"];
    let chunked = body.clone();
    let plain = FakeOpenAi::start(move |_, i| Action::Chunked {
        body: chunked.clone(),
        size: [1, 7, 4096, 100_000][i % 4],
    });
    // No model lookup: it would open a connection of its own while a slow call holds the
    // kept one, and a later call may reuse either.
    let mut mcp = Mcp::spawn(Opts::upstream(&plain.url).env("OPENAI_MODEL_LOOKUPS", "false"));
    mcp.initialize("2025-06-18");
    for id in 1..=4 {
        let answer = answer_of(&mcp.call(id, "answer", json!({"query":"q"})));
        assert_eq!(&answer["answer"], text, "call {id}");
    }
    assert_eq!(
        plain.connections(),
        1,
        "a chunked response keeps the connection"
    );

    let (tls, ca_pem) = FakeOpenAi::start_tls(move |_, _| Action::Chunked {
        body: body.clone(),
        size: 1000,
    });
    let dir = temp_dir("tls-chunked");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    let mut mcp = Mcp::spawn(Opts::upstream(&tls.url).env("SSL_CERT_FILE", ca.to_str().unwrap()));
    mcp.initialize("2025-06-18");
    let answer = answer_of(&mcp.call(1, "answer", json!({"query":"q"})));
    assert_eq!(&answer["answer"], text);
    let _ = std::fs::remove_dir_all(dir);
}

pub fn a_kept_alive_connection_the_server_closed_is_replaced_quietly() {
    let body = fixture("response-no-search.json");
    let fake = FakeOpenAi::start(move |_, _| Action::RespondAndClose { body: body.clone() });
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-06-18");
    for id in 1..=3 {
        let reply = mcp.call(id, "answer", json!({"query":"q"}));
        assert!(reply.get("result").is_some(), "call {id}: {reply}");
        // Let the close arrive before the next call, as an idle timeout would.
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(fake.requests().len(), 3, "each call sent once");
    assert_eq!(fake.connections(), 3);
}

pub fn https_with_an_untrusted_certificate_fails_with_a_tls_hint() {
    let (fake, _ca) =
        FakeOpenAi::start_tls(|_, _| Action::json(200, &fixture("response-no-search.json")));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("TLS"), "{message}");
    assert!(
        fake.requests().is_empty(),
        "nothing is sent over an unverified connection"
    );
}
