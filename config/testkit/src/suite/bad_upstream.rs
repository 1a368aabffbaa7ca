//! The bad-input catalogue, upstream side (docs/reference/bad-input.md): one test per row.
//! Each ends with a clear -32050 and a server that still answers.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

fn ready(fake_url: &str, retries: &str, timeout_ms: &str) -> Mcp {
    let opts = Opts::upstream(fake_url)
        .env("OPENAI_MAX_RETRIES", retries)
        .env("OPENAI_API_TIMEOUT", timeout_ms);
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    mcp
}

/// Calls `answer` and returns the error, checking the server keeps serving afterwards.
fn failed_call(mcp: &mut Mcp) -> Value {
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050, "{reply}");
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))["result"],
        json!({})
    );
    reply["error"].clone()
}

fn text(e: &Value) -> String {
    e["message"].as_str().unwrap().to_owned()
}

pub fn upstream_non_json_body() {
    let fake = FakeOpenAi::fixed(200, b"this is not json".to_vec());
    let e = failed_call(&mut ready(&fake.url, "2", "5000"));
    assert!(text(&e).contains("not JSON"), "{e}");
    assert_eq!(fake.requests().len(), 1, "not retried");
}

pub fn upstream_html_error_page() {
    let fake = FakeOpenAi::fixed(
        502,
        b"<html><head><title>502 Bad Gateway</title></head></html>".to_vec(),
    );
    let e = failed_call(&mut ready(&fake.url, "1", "5000"));
    assert!(text(&e).contains("HTML page"), "{e}");
    assert_eq!(e["data"]["status"], 502);
    assert_eq!(fake.requests().len(), 2, "a 502 is retried");
}

pub fn upstream_ok_status_carrying_an_error_object() {
    let body = br#"{"error":{"message":"Invalid prompt","type":"invalid_request_error","code":"invalid_prompt"}}"#.to_vec();
    let fake = FakeOpenAi::fixed(200, body);
    let e = failed_call(&mut ready(&fake.url, "2", "5000"));
    assert!(text(&e).contains("Invalid prompt"), "{e}");
    assert_eq!(e["data"]["code"], "invalid_prompt");
}

pub fn an_upstream_error_is_passed_on_without_key_fragments() {
    // As OpenAI words a wrong key, and with other services' keys and a quoted header.
    let body = json!({"error":{
        "message":"Incorrect API key provided: sk-proj-abc1…***xyz9. You can find your API key at https://platform.openai.com/account/api-keys. (also tried pplx-0123456789abcdef, sk-or-v1-feedface0123 and Bearer tok_0123456789abcdefghij)",
        "type":"invalid_request_error","code":"invalid_api_key"}});
    let fake = FakeOpenAi::fixed(401, body.to_string().into_bytes());
    let opts = Opts::upstream(&fake.url)
        .arg("--log-format")
        .arg("json")
        .arg("--debug");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    let e = failed_call(&mut mcp);
    assert!(
        text(&e).contains("Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys."),
        "{e}"
    );
    assert!(text(&e).contains("OPENAI_API_KEY"), "the advice stays: {e}");
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    let fragments = ["sk-proj-abc1", "xyz9", "pplx-0123", "sk-or-v1", "tok_0123"];
    for (what, text) in [("the error", e.to_string()), ("the log", log)] {
        for fragment in fragments {
            assert!(
                !text.contains(fragment),
                "{what} carries {fragment}: {text}"
            );
        }
    }
}

pub fn upstream_truncated_body_and_reset_mid_body() {
    let fake = FakeOpenAi::start(|_, _| Action::Truncate {
        len: 5000,
        sent: br#"{"model":"gpt-5","output":[{"ty"#.to_vec(),
    });
    let e = failed_call(&mut ready(&fake.url, "1", "5000"));
    assert_eq!(e["data"]["retries"], 1, "a broken connection is retried");
    assert_eq!(fake.requests().len(), 2);
}

pub fn upstream_body_of_fifty_megabytes() {
    let huge = {
        let mut b =
            br#"{"output":[{"type":"message","content":[{"type":"output_text","text":""#.to_vec();
        b.extend(std::iter::repeat_n(b'a', 50 * 1024 * 1024));
        b.extend_from_slice(b"\"}]}]}");
        b
    };
    let fake = FakeOpenAi::fixed(200, huge);
    let e = failed_call(&mut ready(&fake.url, "2", "30000"));
    assert!(text(&e).contains("larger than"), "{e}");
    assert_eq!(fake.requests().len(), 1, "not retried");
}

pub fn upstream_that_accepts_and_never_answers() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let e = failed_call(&mut ready(&fake.url, "1", "200"));
    assert!(text(&e).contains("timed out"), "{e}");
    assert_eq!(fake.requests().len(), 2, "a timeout is retried");
}

pub fn upstream_sending_a_byte_at_a_time() {
    let body = fixture("response-no-search.json");
    let fake = FakeOpenAi::start(move |_, _| Action::Trickle {
        body: body.clone(),
        interval: Duration::from_millis(100),
    });
    let e = failed_call(&mut ready(&fake.url, "0", "400"));
    assert!(
        text(&e).contains("timed out"),
        "the attempt deadline covers the whole body: {e}"
    );
}

pub fn upstream_redirect_is_not_followed() {
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(302, b"").with_header("location", "http://127.0.0.1:9/elsewhere")
    });
    let e = failed_call(&mut ready(&fake.url, "2", "5000"));
    assert_eq!(e["data"]["status"], 302);
    assert_eq!(fake.requests().len(), 1);
}

pub fn upstream_tls_failure() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let https = fake.url.replace("http://", "https://");
    let e = failed_call(&mut ready(&https, "2", "5000"));
    assert!(text(&e).contains("TLS"), "{e}");
}
