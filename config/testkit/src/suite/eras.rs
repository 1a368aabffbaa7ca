//! Both protocol eras on one stdio process, over raw pipes: 2026-07-28 requests served
//! from their `_meta` beside a legacy session, every modern error, and the two bugs found
//! from outside. Every message is checked against the schema of its request's era.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

fn no_search() -> Vec<u8> {
    fixture("response-no-search.json")
}

/// Claude Code's sequence: probe with discover, initialize anyway, then calls of both kinds.
pub fn claude_code_sequence_discover_then_initialize_then_both_eras() {
    let fake =
        FakeOpenAi::start(|_, _| Action::json(200, &no_search()).after(Duration::from_millis(200)));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    let discover = mcp.request(modern(json!("probe"), "server/discover", json!({})));
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    mcp.initialize("2025-06-18");
    let legacy_list = mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    assert!(legacy_list["result"].get("resultType").is_none());
    let modern_list = mcp.request(modern(json!(2), "tools/list", json!({})));
    assert_eq!(modern_list["result"]["resultType"], "complete");
    // Two calls in flight at once, one of each era.
    mcp.send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}));
    mcp.send(&modern(
        json!(4),
        "tools/call",
        json!({"name":"answer_quick","arguments":{"query":"q"}}),
    ));
    let replies = [mcp.recv(), mcp.recv()];
    let by_id = |id: u64| replies.iter().find(|m| m["id"] == id).unwrap();
    assert!(by_id(3)["result"].get("resultType").is_none());
    assert_eq!(by_id(4)["result"]["resultType"], "complete");
    assert_eq!(answer_of(by_id(4))["used_search"], false);
    let pong = mcp.request(json!({"jsonrpc":"2.0","id":5,"method":"ping"}));
    assert_eq!(pong["result"], json!({}));
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
}

/// A client that probes and then goes away: the probe is answered, the server exits 0.
pub fn a_probe_followed_by_eof_is_answered_and_the_server_exits() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.send(&modern(json!(1), "server/discover", json!({})));
    mcp.close_stdin();
    let reply = mcp.recv();
    assert_eq!(reply["result"]["resultType"], "complete");
    assert!(mcp.wait_exit(PATIENCE).success());
}

pub fn modern_envelope_errors_and_removed_methods() {
    let mut mcp = Mcp::spawn(Opts::default());
    let caps_missing = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
        "params":{"_meta":{MODERN_VERSION:"2026-07-28"}}});
    let r = mcp.request(caps_missing);
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("clientCapabilities"));
    let mut unknown = modern(json!(2), "tools/list", json!({}));
    unknown["params"]["_meta"][MODERN_VERSION] = "2099-01-01".into();
    let r = mcp.request(unknown);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    for method in ["ping", "initialize", "logging/setLevel"] {
        let r = mcp.request(modern(json!(3), method, json!({})));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
    // The session era is untouched: initialize still works after all that.
    mcp.initialize("2025-11-25");
}

pub fn subscriptions_are_acknowledged_cancelled_and_closed_at_eof() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.send(&modern(
        json!("sub-a"),
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    ));
    let ack = mcp.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({}));
    mcp.send(
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-a"}}),
    );
    mcp.send(&modern(json!("sub-b"), "subscriptions/listen", json!({})));
    let ack = mcp.recv();
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-b"
    );
    mcp.close_stdin();
    let closed = mcp.recv();
    assert_eq!(
        closed["id"], "sub-b",
        "only the open subscription is closed"
    );
    assert_eq!(closed["result"]["resultType"], "complete");
    assert!(mcp.wait_exit(PATIENCE).success());
}

pub fn modern_tool_failures_are_results_that_say_what_to_do() {
    let fake = FakeOpenAi::fixed(401, br#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#.to_vec());
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    let r = mcp.request(modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Incorrect API key") && text.contains("OPENAI_API_KEY"),
        "{text}"
    );
    let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(details["status"], 401);
    let r = mcp.request(modern(
        json!(2),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q","domains":[5]}}),
    ));
    assert_eq!(r["result"]["isError"], true);
    assert!(
        fake.requests().len() == 1,
        "bad arguments never reach OpenAI"
    );

    let mut keyless = Mcp::spawn(Opts {
        key: false,
        ..Opts::default()
    });
    let r = keyless.request(modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
}

pub fn arguments_as_models_send_them_reach_openai_as_meant() {
    let fake = FakeOpenAi::fixed(200, no_search());
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-06-18");
    let args = json!({"query":"q","domains":"[\"jma.go.jp\",\"tenki.jp\"]","max_results":"5","recency_days":"30"});
    let r = mcp.call(1, "answer", args);
    assert!(r.get("result").is_some(), "{r}");
    let body = fake.requests()[0].body.clone();
    let domains = &body["tools"][0]["filters"]["allowed_domains"];
    assert_eq!(domains, &json!(["jma.go.jp", "tenki.jp"]), "{body}");
    let r = mcp.call(2, "answer", json!({"query":"q","max_results":"five"}));
    assert_eq!(r["error"]["code"], -32001);
    assert!(r["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("max_results"));
}

/// Regression: notifications whose params are not an object were answered with `id: null`.
pub fn notifications_are_never_answered_whatever_their_params() {
    let mut mcp = Mcp::spawn(Opts::default());
    for params in ["[1]", "\"s\"", "3"] {
        let line =
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{params}}}"#);
        mcp.send_raw(format!("{line}\n").as_bytes());
    }
    mcp.expect_silence(Duration::from_millis(300));
    mcp.initialize("2025-06-18");
}

/// Regression: two byte-order marks then a ping gave a parse error when written at once and
/// an answer when the first mark came alone. Now the same, however it is split.
pub fn a_second_byte_order_mark_gives_the_same_reply_however_stdin_is_split() {
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let bytes = [b"\xEF\xBB\xBF\xEF\xBB\xBF".as_slice(), ping, b"\n"].concat();
    let mut replies = Vec::new();
    for cut in [bytes.len(), 3] {
        let mut mcp = Mcp::spawn(Opts::default());
        mcp.send_raw(&bytes[..cut]);
        thread::sleep(Duration::from_millis(100));
        mcp.send_raw(&bytes[cut..]);
        replies.push(mcp.recv());
    }
    assert_eq!(replies[0], replies[1]);
    assert_eq!(replies[0]["error"]["code"], -32700);
}

/// A modern call reports progress (validated against the 2026-07-28 schema) and, once
/// cancelled, closes its upstream connection and is never answered.
pub fn modern_calls_report_progress_and_can_be_cancelled() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let dir = temp_dir("modern-progress");
    let opts = Opts::upstream(&fake.url).config(&dir, "server: {progress_interval_ms: 100}\n");
    let mut mcp = Mcp::spawn(opts);
    mcp.send(&modern(
        json!("c1"),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"},
        "_meta":{"progressToken":"t1"}}),
    ));
    let first = mcp.recv();
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "t1");
    let second = mcp.recv();
    assert!(second["params"]["progress"].as_u64() > first["params"]["progress"].as_u64());
    fake.wait_requests(1, PATIENCE);
    mcp.send(
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}),
    );
    let start = Instant::now();
    while fake.closed().is_empty() && start.elapsed() < PATIENCE {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(fake.closed().len(), 1, "the upstream connection is closed");
    // Progress that was already on its way may still arrive; nothing after that.
    while let Some(m) = mcp.recv_within(Duration::from_millis(300)) {
        assert_eq!(
            m["method"], "notifications/progress",
            "no reply after a cancel: {m}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
