//! The bad-input catalogue (docs/reference/bad-input.md), stdin side: one test per row,
//! through the core's public API. Every test ends by checking that the server still
//! answers a ping, i.e. that it keeps serving.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use responses_mcp_core::testing::Harness;
use responses_mcp_core::Input;
use serde_json::{json, Value};

/// The shared harness, with the few shorthands this catalogue uses.
struct H(Harness, usize);

impl H {
    fn fresh() -> H {
        H(Harness::new(Harness::keyed()), 0)
    }

    fn ready(version: &str) -> H {
        let mut h = H::fresh();
        let r = h.line(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":version}}).to_string());
        assert_eq!(r[0]["result"]["protocolVersion"], version);
        h
    }

    /// Feeds raw bytes; returns the messages written.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Value> {
        self.0.send_raw(bytes);
        self.0.frames()
    }

    fn line(&mut self, text: &str) -> Vec<Value> {
        self.0.line(text)
    }

    fn close_stdin(&mut self) -> Vec<Value> {
        self.0.feed(Input::StdinClosed);
        self.0.frames()
    }

    /// Attempts started so far.
    fn http(&mut self) -> usize {
        self.1 += self.0.take_http().len();
        self.1
    }

    fn still_serving(&mut self) {
        self.0.still_serving();
    }
}

fn code(m: &Value) -> i64 {
    m["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {m}"))
}

fn message(m: &Value) -> &str {
    m["error"]["message"].as_str().unwrap()
}

fn ping(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

fn framed(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

// ---- framing ----

#[test]
fn framing_utf8_bom_is_skipped() {
    let mut h = H::fresh();
    let r = h.feed(format!("\u{feff}{}\n", ping(1)).as_bytes());
    assert_eq!(r[0]["result"], json!({}));
    h.still_serving();
}

/// Regression: two marks then a message got the message answered when the first mark came
/// in a read of its own, and a parse error when everything came at once. Only the mark at
/// the very start of the stream is skipped, however stdin is split.
#[test]
fn framing_a_second_byte_order_mark_is_data_however_the_bytes_arrive() {
    let bytes = format!("\u{feff}\u{feff}{}\n", ping(1)).into_bytes();
    let mut outcomes = Vec::new();
    for cut in [0, 3, 4, 6] {
        let mut h = H::fresh();
        let mut r = h.feed(&bytes[..cut]);
        r.extend(h.feed(&bytes[cut..]));
        h.still_serving();
        outcomes.push(r);
    }
    assert!(outcomes.iter().all(|r| r == &outcomes[0]), "{outcomes:?}");
    assert_eq!(code(&outcomes[0][0]), -32700);
}

#[test]
fn framing_crlf_and_lf_lines() {
    let mut h = H::fresh();
    let r = h.feed(format!("{}\r\n{}\n", ping(1), ping(2)).as_bytes());
    assert_eq!(r.len(), 2);
    h.still_serving();
}

#[test]
fn framing_blank_lines_are_skipped() {
    let mut h = H::fresh();
    let r = h.feed(format!("\n\r\n  \n{}\n\n", ping(1)).as_bytes());
    assert_eq!(r.len(), 1);
    h.still_serving();
}

#[test]
fn framing_content_length_too_short() {
    let mut h = H::fresh();
    let body = ping(1);
    let r = h.feed(format!("Content-Length: 10\r\n\r\n{body}\n").as_bytes());
    assert_eq!(code(&r[0]), -32700, "the 10-byte prefix is not JSON");
    h.still_serving();
}

#[test]
fn framing_content_length_too_long_waits_then_reports_at_eof() {
    let mut h = H::fresh();
    let body = ping(1);
    let r = h.feed(format!("Content-Length: {}\r\n\r\n{body}", body.len() + 5).as_bytes());
    assert!(r.is_empty(), "waits for the promised bytes");
    let r = h.close_stdin();
    assert_eq!(code(&r[0]), -32700);
    assert!(message(&r[0]).contains("input ended inside"));
}

#[test]
fn framing_missing_blank_line_after_headers() {
    let mut h = H::fresh();
    let r = h.feed(format!("Content-Length: 40\r\n{}\n", ping(1)).as_bytes());
    assert_eq!(code(&r[0]), -32700);
    assert!(message(&r[0]).contains("missing blank line"));
    assert_eq!(r[1]["id"], 1, "the body is served as a line");
}

#[test]
fn framing_negative_content_length() {
    let mut h = H::fresh();
    let r = h.feed(b"Content-Length: -5\r\n\r\n{}\n");
    assert!(message(&r[0]).contains("negative"));
    h.still_serving();
}

#[test]
fn framing_non_numeric_content_length() {
    let mut h = H::fresh();
    let r = h.feed(b"Content-Length: ten\r\n\r\n{}\n");
    assert!(message(&r[0]).contains("not a number"));
    h.still_serving();
}

#[test]
fn framing_huge_content_length() {
    let mut h = H::fresh();
    let r = h.feed(b"Content-Length: 99999999999999999999999\r\n\r\n{}\n");
    assert!(message(&r[0]).contains("out of range"));
    h.still_serving();
    let mut h = H::fresh();
    let r = h.feed(b"Content-Length: 5000000\r\n\r\n");
    assert_eq!(
        code(&r[0]),
        -32600,
        "over the 4 MiB cap: skipped as it streams past"
    );
    h.feed(&vec![b'x'; 5_000_000]);
    h.still_serving();
}

#[test]
fn framing_duplicated_content_length() {
    let mut h = H::fresh();
    let body = ping(1);
    let r = h.feed(
        format!(
            "Content-Length: {0}\r\nContent-Length: {0}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    assert_eq!(r[0]["id"], 1, "equal duplicates are fine");
    let r = h.feed(b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}\n");
    assert!(message(&r[0]).contains("conflicting"));
    h.still_serving();
}

#[test]
fn framing_lowercase_header_names() {
    let mut h = H::fresh();
    let body = ping(1);
    let r = h.feed(
        format!(
            "content-length: {}\r\ncontent-type: application/json\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    assert_eq!(r[0]["id"], 1);
}

#[test]
fn framing_message_split_across_many_reads() {
    let mut h = H::fresh();
    let bytes = framed(&ping(7));
    let mut out = Vec::new();
    for b in &bytes {
        out.extend(h.feed(std::slice::from_ref(b)));
    }
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], 7);
}

#[test]
fn framing_many_messages_in_one_read() {
    let mut h = H::fresh();
    let text: String = (0..500).map(|i| ping(i) + "\n").collect();
    assert_eq!(h.feed(text.as_bytes()).len(), 500);
}

#[test]
fn framing_frame_larger_than_the_cap() {
    let mut h = H::fresh();
    let mut big = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":""#.to_vec();
    big.extend(vec![b'a'; 4 * 1024 * 1024]);
    big.extend_from_slice(b"\"}}\n");
    let r = h.feed(&big);
    assert_eq!((code(&r[0]), r[0]["id"].clone()), (-32600, Value::Null));
    assert!(message(&r[0]).contains("4194304-byte limit"));
    h.still_serving();
}

#[test]
fn framing_endless_line_without_newline() {
    let mut h = H::fresh();
    let mut errors = 0;
    h.feed(b"{");
    for _ in 0..200 {
        errors += h.feed(&[b'z'; 64 * 1024]).len();
    }
    assert_eq!(errors, 1, "one error for the line, then silence");
    h.feed(b"\n");
    h.still_serving();
}

#[test]
fn framing_invalid_utf8() {
    let mut h = H::fresh();
    let r = h.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n");
    assert_eq!(code(&r[0]), -32700);
    h.still_serving();
}

#[test]
fn framing_nul_bytes() {
    let mut h = H::fresh();
    let r = h.feed(b"\0\0\0\n{\"jsonrpc\":\"2.0\",\0\"id\":1}\n");
    assert!(r.iter().all(|m| code(m) == -32700), "{r:?}");
    h.still_serving();
}

#[test]
fn framing_mixing_both_framings_in_one_stream() {
    let mut h = H::fresh();
    let mut bytes = format!("{}\n", ping(1)).into_bytes();
    bytes.extend(framed(&ping(2)));
    bytes.extend(format!("{}\n", ping(3)).as_bytes());
    let r = h.feed(&bytes);
    let ids: Vec<i64> = r.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3]);
}

// ---- JSON-RPC ----

#[test]
fn jsonrpc_invalid_json() {
    let mut h = H::fresh();
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#);
    assert_eq!((code(&r[0]), r[0]["id"].clone()), (-32700, Value::Null));
    h.still_serving();
}

#[test]
fn jsonrpc_json_that_is_not_an_object() {
    let mut h = H::ready("2025-06-18");
    for text in ["42", "\"hello\"", "null", "true"] {
        let r = h.line(text);
        assert_eq!(code(&r[0]), -32600, "{text}");
        assert!(message(&r[0]).contains("expected a JSON object"));
    }
    h.still_serving();
}

#[test]
fn jsonrpc_missing_or_wrong_jsonrpc() {
    let mut h = H::fresh();
    for text in [
        r#"{"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
    ] {
        let r = h.line(text);
        assert_eq!(
            (code(&r[0]), r[0]["id"].clone()),
            (-32600, json!(1)),
            "{text}"
        );
    }
    h.still_serving();
}

#[test]
fn jsonrpc_ids_of_every_bad_type() {
    let mut h = H::fresh();
    for id in ["1.5", "null", "{}", "[1]", "true", "1e400"] {
        let r = h.line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(code(&r[0]), -32600, "{id}");
        assert!(message(&r[0]).contains("id must be a string or an integer"));
    }
    h.still_serving();
}

#[test]
fn jsonrpc_huge_integer_and_very_long_string_ids_are_echoed() {
    let mut h = H::fresh();
    let big = "123456789012345678901234567890123456789";
    let r =
        h.feed(format!("{{\"jsonrpc\":\"2.0\",\"id\":{big},\"method\":\"ping\"}}\n").as_bytes());
    assert_eq!(
        serde_json::to_string(&r[0]["id"]).unwrap(),
        big,
        "stays an integer, digit for digit"
    );
    let long = "x".repeat(100_000);
    let r = h.line(&format!(
        r#"{{"jsonrpc":"2.0","id":"{long}","method":"ping"}}"#
    ));
    assert_eq!(r[0]["id"], json!(long));
}

#[test]
fn jsonrpc_method_not_a_string() {
    let mut h = H::fresh();
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"method":["ping"]}"#);
    assert_eq!(code(&r[0]), -32600);
    assert!(message(&r[0]).contains("method must be a string"));
}

#[test]
fn jsonrpc_params_not_an_object() {
    let mut h = H::ready("2025-06-18");
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1,2]}"#);
    assert_eq!(code(&r[0]), -32602);
    assert!(message(&r[0]).contains("params must be an object"));
}

/// Regression: a notification whose params were not an object was answered with an error
/// whose id was null. Notifications are never answered.
#[test]
fn jsonrpc_notifications_with_params_of_any_type_get_no_reply() {
    for ready in [false, true] {
        let mut h = if ready {
            H::ready("2025-06-18")
        } else {
            H::fresh()
        };
        for params in ["[1,2]", "\"s\"", "7", "true", "1.5"] {
            for method in [
                "notifications/cancelled",
                "notifications/initialized",
                "x/y",
            ] {
                let line = format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#);
                assert_eq!(h.line(&line), Vec::<Value>::new(), "{line}");
            }
        }
        h.still_serving();
    }
}

#[test]
fn jsonrpc_notification_carrying_an_id() {
    let mut h = H::ready("2025-06-18");
    let r = h.line(r#"{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}"#);
    assert_eq!(
        (code(&r[0]), r[0]["id"].clone()),
        (-32601, json!(5)),
        "with an id it is a request, and unknown"
    );
    h.still_serving();
}

#[test]
fn jsonrpc_response_object_sent_to_the_server() {
    let mut h = H::ready("2025-06-18");
    assert!(h.line(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).is_empty());
    assert!(h
        .line(r#"{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"x"}}"#)
        .is_empty());
    h.still_serving();
}

#[test]
fn jsonrpc_nesting_ten_thousand_deep() {
    let mut h = H::fresh();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}{}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let r = h.line(&deep);
    assert_eq!(code(&r[0]), -32700);
    assert!(message(&r[0]).contains("recursion limit"));
    h.still_serving();
}

#[test]
fn jsonrpc_three_mib_query_string() {
    let mut h = H::ready("2025-06-18");
    let q = "q".repeat(3 * 1024 * 1024);
    let r = h.line(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":q}}}).to_string());
    assert_eq!(code(&r[0]), -32001);
    assert!(r[0]["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("longer than 16000"));
    assert_eq!(h.http(), 0);
}

#[test]
fn jsonrpc_duplicate_keys_last_wins() {
    let mut h = H::fresh();
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"nope","method":"ping"}"#);
    assert_eq!(
        (r[0]["id"].clone(), r[0]["result"].clone()),
        (json!(2), json!({}))
    );
}

#[test]
fn jsonrpc_empty_batch() {
    let mut h = H::ready("2025-03-26");
    let r = h.line("[]");
    assert_eq!(code(&r[0]), -32600);
    assert!(message(&r[0]).contains("empty batch"));
}

#[test]
fn jsonrpc_batch_of_ten_thousand_entries() {
    let mut h = H::ready("2025-03-26");
    let batch: Vec<Value> = (0..10_000)
        .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"ping"}))
        .collect();
    let r = h.line(&Value::Array(batch).to_string());
    assert_eq!(code(&r[0]), -32600);
    assert!(message(&r[0]).contains("exceeds the limit of 1024"));
    let batch: Vec<Value> = (0..1024)
        .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"ping"}))
        .collect();
    let r = h.line(&Value::Array(batch).to_string());
    assert_eq!(r[0].as_array().unwrap().len(), 1024);
}

// ---- MCP ----

#[test]
fn mcp_requests_before_initialize() {
    let mut h = H::fresh();
    assert_eq!(
        code(&h.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)[0]),
        -32600
    );
    assert_eq!(
        code(
            &h.line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"answer"}}"#)
                [0]
        ),
        -32600
    );
    assert_eq!(
        code(&h.line(r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#)[0]),
        -32601
    );
    h.still_serving();
}

#[test]
fn mcp_second_initialize() {
    let mut h = H::ready("2025-06-18");
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#);
    assert_eq!(code(&r[0]), -32600);
    assert!(
        message(&r[0]).contains("2025-06-18"),
        "keeps the first version"
    );
}

#[test]
fn mcp_odd_protocol_version_shapes() {
    let mut h = H::fresh();
    let r = h.line(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":20250618}}"#,
    );
    assert_eq!(code(&r[0]), -32602);
    assert!(r[0]["error"]["data"]["supported"].is_array());
    let r = h.line(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#);
    assert_eq!(code(&r[0]), -32602);
    let r =
        h.line(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":""}}"#);
    assert_eq!(r[0]["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn mcp_tools_call_without_name() {
    let mut h = H::ready("2025-06-18");
    let r = h.line(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"query":"q"}}}"#,
    );
    assert_eq!(code(&r[0]), -32602);
    assert!(message(&r[0]).contains("missing tool name"));
    let r = h.line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}"#);
    assert_eq!(code(&r[0]), -32602);
}

#[test]
fn mcp_tools_call_with_non_object_arguments() {
    let mut h = H::ready("2025-06-18");
    for args in [r#""q""#, "[1]", "5", "true"] {
        let r = h.line(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"answer","arguments":{args}}}}}"#));
        assert_eq!(code(&r[0]), -32001, "{args}");
        assert!(r[0]["error"]["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("arguments must be an object"));
    }
}

#[test]
fn mcp_tools_call_with_unknown_argument_names() {
    let mut h = H::ready("2025-06-18");
    let r = h.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q","temperature":1}}}"#);
    assert!(r[0]["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("unknown argument \"temperature\""));
}

/// Models often send numbers and lists as strings: what can only mean one thing is read
/// as that, and the call goes upstream.
#[test]
fn mcp_tools_call_with_arguments_as_models_send_them() {
    let mut h = H::ready("2025-06-18");
    let meant = [
        json!({"query":"q","domains":"example.com"}),
        json!({"query":"q","domains":"[\"a.com\",\"b.org\"]"}),
        json!({"query":"q","domains":"a.com, b.org"}),
        json!({"query":"q","max_results":"5","recency_days":"30"}),
    ];
    for (i, args) in meant.into_iter().enumerate() {
        let r = h.line(&json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call","params":{"name":"answer","arguments":args}}).to_string());
        assert_eq!(
            r,
            Vec::<Value>::new(),
            "{args}: no error, the call is in flight"
        );
    }
    assert_eq!(h.http(), 4);
}

#[test]
fn mcp_tools_call_with_wrong_types_for_every_argument() {
    let mut h = H::ready("2025-06-18");
    let wrong = [
        ("query", json!(["q"])),
        ("recency_days", json!("seven")),
        ("recency_days", json!(-1)),
        ("max_results", json!("five")),
        ("max_results", json!(true)),
        ("max_results", json!(1000)),
        ("domains", json!({"a":1})),
        ("domains", json!([1])),
        ("style", json!(1)),
        ("verbosity", json!(null)),
        ("reasoning_effort", json!("maximum")),
    ];
    for (name, value) in wrong {
        let mut args = json!({"query":"q"});
        args[name] = value.clone();
        let r = h.line(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":args}}).to_string());
        assert_eq!(code(&r[0]), -32001, "{name}={value}");
        assert!(
            r[0]["error"]["data"]["reason"]
                .as_str()
                .unwrap()
                .starts_with(name),
            "{name}: {}",
            r[0]
        );
    }
    assert_eq!(h.http(), 0);
}

#[test]
fn mcp_cancel_for_unknown_ids() {
    let mut h = H::ready("2025-06-18");
    for id in ["12345", "\"nope\"", "null", "{}"] {
        assert!(h.line(&format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#)).is_empty());
    }
    assert!(h
        .line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#)
        .is_empty());
    h.still_serving();
}

#[test]
fn mcp_progress_tokens_of_odd_types() {
    let mut h = H::ready("2025-06-18");
    for (i, token) in ["1.5", "null", "{}", "[]", "true"].iter().enumerate() {
        let r = h.line(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}},"_meta":{{"progressToken":{token}}}}}}}"#
        ));
        assert!(
            r.is_empty(),
            "no progress for an unusable token, and the call runs: {r:?}"
        );
    }
    assert_eq!(h.http(), 5);
}
