//! What a platform team reads (platform issue): the JSON log line of every finished call,
//! over stdio and HTTP, with the client's trace continued and no secret in any line.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
/// Text that must never reach a log: the question asked, and the HTTP token.
const QUERY: &str = "PLANTED-QUESTION-text-that-must-not-be-logged";
const TOKEN: &str = "PLANTED-bearer-token-0123456789";

/// Every stderr line, each parsed as JSON (a line that is not JSON fails the test),
/// after checking that no secret appears anywhere.
fn json_lines(stderr: &str, answer: Option<&str>) -> Vec<Value> {
    for secret in [PLANTED_KEY, QUERY, TOKEN] {
        assert!(!stderr.contains(secret), "{secret} was logged:\n{stderr}");
    }
    if let Some(answer) = answer {
        assert!(!stderr.contains(answer), "the answer was logged:\n{stderr}");
    }
    stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: not a JSON line: {l}")))
        .collect()
}

fn call_lines(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["event"] == "call").collect()
}

fn answered() -> Vec<u8> {
    let mut body: Value =
        serde_json::from_slice(&fixture("response-web-search-preview.json")).unwrap();
    body["model"] = json!("gpt-6.1-terra-2026-10-26");
    body["usage"] = json!({"input_tokens": 20_000, "input_tokens_details": {"cached_tokens": 5_000},
        "output_tokens": 1_000, "output_tokens_details": {"reasoning_tokens": 600}});
    serde_json::to_vec(&body).unwrap()
}

pub fn json_logs_give_one_line_per_call_with_the_trace_and_no_secret() {
    // The first call is answered; the second meets a 500 with no retries left.
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(200, &answered()).with_header("x-request-id", "req_first123"),
        _ => Action::json(500, &fixture("error-500-server-error.json"))
            .with_header("x-request-id", "req_second456"),
    });
    let opts = Opts::upstream(&fake.url)
        .arg("--log-format")
        .arg("json")
        .arg("--debug")
        .env("OPENAI_MAX_RETRIES", "0");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-11-25");
    let traced = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query": QUERY},
        "_meta":{"traceparent": format!("00-{TRACE}-{PARENT}-01")}}});
    let reply = mcp.request(traced);
    let answer = reply["result"]["structuredContent"]["answer"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = mcp.call(2, "answer_quick", json!({"query": QUERY}));
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());

    let lines = json_lines(&mcp.stderr_to_end(), Some(&answer[..answer.len().min(60)]));
    assert!(
        lines.iter().any(|l| l["level"] == "debug"),
        "every record is a JSON line, debug ones too"
    );
    let calls = call_lines(&lines);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let ok = calls[0];
    assert_eq!(ok["tool"], "answer");
    assert_eq!(ok["outcome"], "ok");
    assert_eq!(ok["transport"], "stdio");
    assert_eq!(
        (ok["era"].as_str(), ok["protocol_version"].as_str()),
        (Some("legacy"), Some("2025-11-25"))
    );
    assert_eq!(ok["upstream_status"], 200);
    assert_eq!(ok["request_id"], "req_first123");
    assert!(ok["response_id"].as_str().unwrap().starts_with("resp_"));
    assert_eq!(ok["model"], "gpt-6.1-terra-2026-10-26");
    assert_eq!(
        (
            ok["input_tokens"].as_u64(),
            ok["cached_input_tokens"].as_u64()
        ),
        (Some(20_000), Some(5_000))
    );
    assert_eq!(
        (
            ok["output_tokens"].as_u64(),
            ok["reasoning_tokens"].as_u64()
        ),
        (Some(1_000), Some(600))
    );
    assert_eq!(ok["web_searches"], 4);
    assert_eq!(ok["attempts"], 1);
    // The same figure as the result's usage _meta.
    let meta_cost =
        &reply["result"]["_meta"]["com.github.openai-responses-mcp/usage"]["cost"]["usd"];
    assert_eq!(&ok["cost_usd"], meta_cost);
    assert!(ok["duration_ms"].is_u64() && ok["time"].as_str().unwrap().ends_with('Z'));
    // The client's trace goes on: same trace, its span our parent, a new span of ours.
    assert_eq!(ok["trace_id"], TRACE);
    assert_eq!(ok["parent_span_id"], PARENT);
    let span = ok["span_id"].as_str().unwrap();
    assert!(
        span.len() == 16
            && span.bytes().all(|b| b.is_ascii_hexdigit())
            && span != PARENT
            && span != "0000000000000000"
    );
    assert_eq!(ok["traceparent"], format!("00-{TRACE}-{span}-01"));

    let failed = calls[1];
    assert_eq!(failed["tool"], "answer_quick");
    assert_eq!(failed["outcome"], "upstream_http_error");
    assert_eq!(failed["upstream_status"], 500);
    assert_eq!(failed["request_id"], "req_second456");
    assert_eq!(failed["cost_usd"], Value::Null);
    assert!(
        failed.get("trace_id").is_none(),
        "no traceparent, no trace: {failed}"
    );
}

pub fn a_refused_call_and_an_http_call_have_their_lines() {
    // No API key: the call is refused before any request, and its line says why.
    let mut mcp = Mcp::spawn(Opts {
        key: false,
        ..Opts::upstream("http://127.0.0.1:9")
            .arg("--log-format")
            .arg("json")
    });
    mcp.initialize("2025-06-18");
    let traced = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer_detailed","arguments":{"query": QUERY},
        "_meta":{"traceparent": "00-not-a-trace"}}});
    mcp.request(traced);
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let lines = json_lines(&mcp.stderr_to_end(), None);
    let calls = call_lines(&lines);
    assert_eq!(calls.len(), 1, "{lines:?}");
    assert_eq!(calls[0]["outcome"], "refused_no_api_key");
    assert_eq!(calls[0]["tool"], "answer_detailed");
    assert_eq!(calls[0]["attempts"], 0);
    assert!(
        calls[0].get("trace_id").is_none(),
        "an invalid traceparent is dropped"
    );

    // Over HTTP, with a bearer token that must not be logged either.
    let fake = FakeOpenAi::fixed(200, answered());
    let opts = Opts::http(&fake.url)
        .arg("--log-format")
        .arg("json")
        .env("MCP_HTTP_TOKEN", TOKEN);
    let mut server = Mcp::spawn(opts);
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let auth = format!("Bearer {TOKEN}");
    let request = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{
        "name":"answer","arguments":{"query": QUERY}}});
    let r = c.post(
        &request,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", &auth),
        ],
    );
    assert_eq!(r.status, 200);
    let kill = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(server.wait_exit(PATIENCE).code(), Some(0));
    let lines = json_lines(&server.stderr_to_end(), None);
    let calls = call_lines(&lines);
    assert_eq!(calls.len(), 1, "{lines:?}");
    assert_eq!(calls[0]["transport"], "http");
    assert_eq!(calls[0]["outcome"], "ok");
}
