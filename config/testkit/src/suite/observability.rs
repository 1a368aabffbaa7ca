//! What a platform team reads (platform issue): the JSON log line of every finished call,
//! over stdio and HTTP, with the client's trace continued and no secret in any line.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;
use std::collections::BTreeMap;

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

/// An answer whose usage costs $0.06025 at the built-in prices (gpt-6.1-terra: 15,000
/// input, 5,000 cached and 1,000 output tokens, 4 searches).
pub(super) fn answered() -> Vec<u8> {
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
    // The application its `initialize` named, and no address or credential on stdio.
    assert_eq!(
        (ok["app"].as_str(), ok["app_version"].as_str()),
        (Some("e2e"), Some("1"))
    );
    assert_eq!(
        (&ok["remote"], &ok["credential"]),
        (&Value::Null, &json!("none"))
    );
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
    // The address it came from and the way in; a stateless legacy request names no
    // application.
    assert_eq!(calls[0]["remote"], "127.0.0.1");
    assert_eq!(calls[0]["credential"], "token");
    assert_eq!(calls[0]["app"], Value::Null);
}

/// One parsed sample: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// `/metrics` read with `token`, parsed by the Prometheus project's own Python parser:
/// every sample as (name, labels, value). `None` when that parser is not installed (and
/// not in CI, where `.ci/test` installs it).
fn scrape(addr: std::net::SocketAddr, token: &str) -> Option<Vec<Sample>> {
    let mut c = HttpConn::open(addr);
    c.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n")
            .as_bytes(),
    );
    let r = c.response();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let python = crate::sdk_python().filter(|p| {
        Command::new(p)
            .args(["-c", "import prometheus_client.parser"])
            .status()
            .is_ok_and(|s| s.success())
    });
    let Some(python) = python else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install prometheus-client (.ci/test does)"
        );
        eprintln!(
            "skipping the Prometheus parser: prometheus-client is not installed (run .ci/test)"
        );
        return None;
    };
    let mut child = Command::new(python)
        .arg(format!("{}/parse_metrics.py", env!("CARGO_MANIFEST_DIR")))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&r.body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "Prometheus' parser refused the text: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&r.body)
    );
    let samples: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        samples
            .into_iter()
            .map(|s| {
                let labels = s["labels"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect();
                (
                    s["name"].as_str().unwrap().to_owned(),
                    labels,
                    s["value"].as_f64().unwrap(),
                )
            })
            .collect(),
    )
}

/// The value of the one sample named `name` whose labels include `with`; 0 when none.
fn value(
    samples: &[(String, BTreeMap<String, String>, f64)],
    name: &str,
    with: &[(&str, &str)],
) -> f64 {
    let matching: Vec<f64> = samples
        .iter()
        .filter(|(n, labels, _)| {
            n == name
                && with
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| *v)
        .collect();
    assert!(matching.len() <= 1, "{name} {with:?} matches {matching:?}");
    matching.first().copied().unwrap_or(0.0)
}

pub fn metrics_count_what_was_done_in_prometheus_text() {
    // Answers, except: "fail" meets two 500s (one retry), "hang" never gets a reply.
    let fake = FakeOpenAi::start(|r, _| {
        let body = r.body.to_string();
        if body.contains("please-hang") {
            Action::Hang
        } else if body.contains("please-fail") {
            Action::json(500, &fixture("error-500-server-error.json"))
        } else {
            Action::json(200, &answered())
        }
    });
    let dir = temp_dir("metrics");
    let yaml = "server: {max_inflight: 1, max_queue: 0}\nrequest: {max_retries: 1}\n";
    let opts = Opts::http(&fake.url)
        .config(&dir, yaml)
        .env("MCP_HTTP_TOKEN", TOKEN);
    let server = Mcp::spawn(opts);
    let addr = listening(&server);
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    let call = |id: u64, tool: &str, query: &str| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":{"query":query}}})
    };
    let mut c = HttpConn::open(addr);
    // tools/list is answered from a cache: counted all the same, each time.
    for id in 30..33 {
        let list = json!({"jsonrpc":"2.0","id":id,"method":"tools/list"});
        assert!(c.post(&list, &headers).json()["result"]["tools"].is_array());
    }
    for id in 1..=2 {
        let r = c.post(&call(id, "answer", "fine"), &headers);
        assert!(
            r.json()["result"]["structuredContent"].is_object(),
            "{:?}",
            r.json()
        );
    }
    let failed = c.post(&call(3, "answer_quick", "please-fail"), &headers);
    assert_eq!(failed.json()["result"]["isError"], true);
    // A task, answered: kept as completed.
    let mut task = call(4, "answer", "fine");
    task["params"]["task"] = json!({"ttl": 60_000});
    let created = c.post(&task, &headers).json();
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Polled until done, so that tasks/result is answered at once.
    let poll = json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId": task_id}});
    let start = Instant::now();
    while c.post(&poll, &headers).json()["result"]["status"] != "completed" {
        assert!(start.elapsed() < PATIENCE, "the task never completed");
        thread::sleep(Duration::from_millis(20));
    }
    let get = json!({"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId": task_id}});
    let result = c.post(&get, &headers).json();
    assert!(
        result["result"]["structuredContent"].is_object(),
        "{result}"
    );
    // One call holds the only slot; the next is refused as busy.
    let mut busy = HttpConn::open(addr);
    busy.send_raw(&crate::http_client::post_bytes(
        addr,
        &call(6, "answer", "please-hang"),
        &headers,
    ));
    let start = Instant::now();
    while !fake
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("please-hang"))
    {
        assert!(
            start.elapsed() < PATIENCE,
            "the hanging call never reached the fake"
        );
        thread::sleep(Duration::from_millis(5));
    }
    let refused = c.post(&call(7, "answer_detailed", "fine"), &headers).json();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let Some(samples) = scrape(addr, TOKEN) else {
        return;
    };
    let op = "mcp_server_operation_duration_seconds_count";
    let tcp = ("network_transport", "tcp");
    let v = ("mcp_protocol_version", "2025-11-25");
    let ok_answers = value(
        &samples,
        op,
        &[
            ("mcp_method_name", "tools/call"),
            ("gen_ai_tool_name", "answer"),
            tcp,
            v,
        ],
    );
    // Two plain answers and the task's handle, none with an error label.
    let with_errors: f64 = samples
        .iter()
        .filter(|(n, l, _)| {
            n == op
                && l.get("gen_ai_tool_name").map(String::as_str) == Some("answer")
                && l.contains_key("error_type")
        })
        .map(|(_, _, v)| v)
        .sum();
    assert_eq!((ok_answers, with_errors), (3.0, 0.0), "{samples:?}");
    let tool_error = |tool| {
        value(
            &samples,
            op,
            &[
                ("gen_ai_tool_name", tool),
                ("error_type", "tool_error"),
                tcp,
                v,
            ],
        )
    };
    assert_eq!(
        (tool_error("answer_quick"), tool_error("answer_detailed")),
        (1.0, 1.0)
    );
    assert_eq!(
        value(&samples, op, &[("mcp_method_name", "tasks/result"), tcp, v]),
        1.0
    );
    assert_eq!(
        value(&samples, op, &[("mcp_method_name", "tools/list"), tcp, v]),
        3.0
    );
    let calls = |tool, outcome| {
        value(
            &samples,
            "openai_responses_mcp_calls_total",
            &[("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("answer", "ok"), 3.0);
    assert_eq!(calls("answer_quick", "upstream_http_error"), 1.0);
    assert_eq!(calls("answer_detailed", "refused_busy"), 1.0);
    assert_eq!(
        value(
            &samples,
            "openai_responses_mcp_refusals_total",
            &[("reason", "busy")]
        ),
        1.0
    );
    let attempts = |status| {
        value(
            &samples,
            "openai_responses_mcp_upstream_attempts_total",
            &[("status", status)],
        )
    };
    assert_eq!((attempts("200"), attempts("500")), (3.0, 2.0));
    assert_eq!(
        value(&samples, "openai_responses_mcp_upstream_retries_total", &[]),
        1.0
    );
    assert_eq!(
        value(&samples, "openai_responses_mcp_calls_in_flight", &[]),
        1.0,
        "the hanging call"
    );
    assert_eq!(
        value(
            &samples,
            "openai_responses_mcp_tasks",
            &[("state", "completed")]
        ),
        1.0
    );
    let model = ("model", "gpt-6.1-terra-2026-10-26");
    let tokens = |kind| {
        value(
            &samples,
            "openai_responses_mcp_tokens_total",
            &[model, ("kind", kind)],
        )
    };
    assert_eq!(
        (tokens("input"), tokens("cached_input"), tokens("output")),
        (60_000.0, 15_000.0, 3_000.0)
    );
    assert_eq!(
        value(
            &samples,
            "openai_responses_mcp_web_searches_total",
            &[model]
        ),
        12.0
    );
    // Three calls at 15,000 × $1 + 5,000 × $0.05 + 1,000 × $5 per million, 4 searches at $0.01.
    let each = (15_000.0 + 5_000.0 * 0.05 + 1_000.0 * 5.0) / 1e6 + 0.04;
    let cost = value(
        &samples,
        "openai_responses_mcp_estimated_cost_usd_total",
        &[model, ("client", "default")],
    );
    assert!((cost - 3.0 * each).abs() < 1e-9, "{cost} != {}", 3.0 * each);
    // No query text, id or token in any label.
    for (name, labels, _) in &samples {
        for v in labels.values() {
            assert!(
                !v.contains("please")
                    && !v.contains("fine")
                    && !v.contains(TOKEN)
                    && !v.contains(&task_id),
                "{name} {labels:?}"
            );
        }
    }
    // Without the token, nothing.
    let mut anon = HttpConn::open(addr);
    anon.send_raw(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
    assert_eq!(anon.response().status, 401);
    drop(busy);
    drop(server);
}

pub fn a_stdio_server_serves_metrics_on_its_own_listener() {
    let fake = FakeOpenAi::fixed(200, answered());
    let opts = Opts::upstream(&fake.url)
        .arg("--metrics-listen")
        .arg("127.0.0.1:0")
        .env("MCP_HTTP_TOKEN", TOKEN);
    let mut mcp = Mcp::spawn(opts);
    let addr = crate::http_client::metrics_listening(&mcp);
    mcp.initialize("2025-11-25");
    let reply = mcp.call(1, "answer", json!({"query": QUERY}));
    assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    // Only /metrics, /health and /ready here: no MCP, whatever the token.
    let mut c = HttpConn::open(addr);
    let auth = format!("Bearer {TOKEN}");
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let r = c.post(
        &ping,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", &auth),
        ],
    );
    assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(c.get("/health").status, 200);
    if let Some(samples) = scrape(addr, TOKEN) {
        let op = "mcp_server_operation_duration_seconds_count";
        let pipe = [
            ("mcp_method_name", "tools/call"),
            ("gen_ai_tool_name", "answer"),
            ("network_transport", "pipe"),
            ("mcp_protocol_version", "2025-11-25"),
        ];
        assert_eq!(value(&samples, op, &pipe), 1.0, "{samples:?}");
        let init = [
            ("mcp_method_name", "initialize"),
            ("network_transport", "pipe"),
        ];
        assert_eq!(value(&samples, op, &init), 1.0, "{samples:?}");
    }
    // The listener asks for the token too.
    let mut anon = HttpConn::open(addr);
    anon.send_raw(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
    assert_eq!(anon.response().status, 401);
    // Closing stdin still ends the server, listener and all.
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
}

/// A background task leaves one call line, when this instance first reads it ended: its
/// tool, its tokens and its cost (computed by hand from `answered`), however often it
/// is read after; the metrics count it once.
pub fn a_background_task_leaves_one_line_when_it_ends() {
    let openai = crate::fake_openai::Background::new(&answered(), Duration::from_millis(300));
    let fake = openai.serve();
    let dir = temp_dir("bg-log");
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .config(&dir, yaml)
            .arg("--log-format")
            .arg("json"),
    );
    mcp.initialize("2025-11-25");
    let (created, _) = mcp.ask(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer_quick","arguments":{"query": QUERY},"task":{}}}),
    );
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let on_task = |n: u64, method: &str| json!({"jsonrpc":"2.0","id":n,"method":method,"params":{"taskId":id}});
    let (result, _) = mcp.ask(on_task(2, "tasks/result"));
    assert!(result["result"]["content"].is_array(), "{result}");
    for n in 3..6 {
        let (state, _) = mcp.ask(on_task(n, "tasks/get"));
        assert_eq!(state["result"]["status"], "completed", "{state}");
    }
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let lines = json_lines(&mcp.stderr_to_end(), None);
    let calls = call_lines(&lines);
    assert_eq!(calls.len(), 1, "{lines:?}");
    let line = calls[0];
    assert_eq!(
        (&line["tool"], &line["task"], &line["outcome"]),
        (&json!("answer_quick"), &json!(true), &json!("ok")),
        "{line}"
    );
    assert_eq!(
        (&line["input_tokens"], &line["output_tokens"]),
        (&json!(20_000), &json!(1_000))
    );
    // 15,000 input at $1/M, 5,000 cached at $0.05/M, 1,000 output at $5/M, and the
    // fixture's searches at $10 per thousand: the soonest window is the list price.
    let searches = line["web_searches"].as_f64().unwrap_or(f64::NAN);
    let hand = 15_000.0 * 1e-6 + 5_000.0 * 0.05e-6 + 1_000.0 * 5e-6 + searches * 0.01;
    let cost = line["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((cost - hand).abs() < 1e-9, "{cost} vs {hand}: {line}");
}

/// Every request's reply counted once in `mcp_server_operation_duration_seconds`, by
/// method, version and transport: a mix of every method in both eras, over HTTP and over
/// stdio (scraped from `--metrics-listen`); held and parked replies included.
pub fn every_method_in_both_eras_is_counted_once() {
    use crate::http_client::modern_headers;
    let fake =
        FakeOpenAi::start(|_, _| Action::json(200, &answered()).after(Duration::from_millis(20)));
    let legacy = |id: u64, method: &str, params: Value| json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    let query = json!({"name":"answer","arguments":{"query":"q"}});
    let task_call = json!({"name":"answer","arguments":{"query":"q"},"task":{}});
    // What each scrape must show: (method, version, count).
    let legacy_mix = [
        ("initialize", 1.0),
        ("ping", 1.0),
        ("tools/list", 2.0),
        ("tools/call", 2.0),
        ("tasks/result", 1.0),
        ("tasks/get", 1.0),
        ("tasks/list", 1.0),
    ];

    // Over HTTP: the legacy mix, then the modern one (a held task call among them).
    let server = Mcp::spawn(Opts::http(&fake.url).env("MCP_HTTP_TOKEN", TOKEN));
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let auth = format!("Bearer {TOKEN}");
    let h = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    let init = json!({"protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"e2e","version":"1"}});
    let mut post = |m: Value| c.post(&m, &h).json();
    assert!(post(legacy(1, "initialize", init.clone()))["result"].is_object());
    assert!(post(legacy(2, "ping", json!({})))["result"].is_object());
    for id in 3..5 {
        assert!(post(legacy(id, "tools/list", json!({})))["result"]["tools"].is_array());
    }
    assert!(post(legacy(5, "tools/call", query.clone()))["result"]["content"].is_array());
    let created = post(legacy(6, "tools/call", task_call.clone()));
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let result = post(legacy(7, "tasks/result", json!({"taskId": id})));
    assert!(result["result"]["content"].is_array(), "{result}");
    assert!(post(legacy(8, "tasks/get", json!({"taskId": id})))["result"].is_object());
    assert!(post(legacy(9, "tasks/list", json!({})))["result"]["tasks"].is_array());
    let modern_mix: [(Value, &str); 4] = [
        (
            modern(json!(10), "server/discover", json!({})),
            "server/discover",
        ),
        (modern(json!(11), "tools/list", json!({})), "tools/list"),
        (modern(json!(12), "tools/call", query.clone()), "tools/call"),
        (
            {
                let mut held = modern(json!(13), "tools/call", query.clone());
                held["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
                    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
                held
            },
            "tools/call",
        ),
    ];
    for (m, _) in &modern_mix {
        let mut headers = modern_headers(m);
        headers.push(("Authorization", auth.clone()));
        let hs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = c.post(m, &hs).json();
        check_reply("2026-07-28", m, &reply);
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    }
    if let Some(samples) = scrape(addr, TOKEN) {
        let count = |method, version| operations(&samples, method, version, "tcp");
        for (method, n) in legacy_mix {
            assert_eq!(count(method, "2025-11-25"), n, "{method}: {samples:?}");
        }
        for (method, n) in [
            ("server/discover", 1.0),
            ("tools/list", 1.0),
            ("tools/call", 2.0),
        ] {
            assert_eq!(count(method, "2026-07-28"), n, "{method}: {samples:?}");
        }
        let calls: f64 = samples
            .iter()
            .filter(|(n, _, _)| n == "openai_responses_mcp_calls_total")
            .map(|(_, _, v)| v)
            .sum();
        assert_eq!(calls, 4.0, "two plain calls and two for tasks: {samples:?}");
    }

    // Over stdio, scraped from the metrics listener: the legacy session's mix.
    let opts = Opts::upstream(&fake.url)
        .arg("--metrics-listen")
        .arg("127.0.0.1:0")
        .env("MCP_HTTP_TOKEN", TOKEN);
    let mut mcp = Mcp::spawn(opts);
    let metrics = crate::http_client::metrics_listening(&mcp);
    mcp.initialize("2025-11-25");
    assert!(mcp.request(legacy(2, "ping", json!({})))["result"].is_object());
    for id in 3..5 {
        assert!(mcp.request(legacy(id, "tools/list", json!({})))["result"]["tools"].is_array());
    }
    assert!(mcp.request(legacy(5, "tools/call", query))["result"]["content"].is_array());
    let (created, _) = mcp.ask(legacy(6, "tools/call", task_call));
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (result, _) = mcp.ask(legacy(7, "tasks/result", json!({"taskId": id})));
    assert!(result["result"]["content"].is_array(), "{result}");
    let (got, _) = mcp.ask(legacy(8, "tasks/get", json!({"taskId": id})));
    assert!(got["result"].is_object(), "{got}");
    let (listed, _) = mcp.ask(legacy(9, "tasks/list", json!({})));
    assert!(listed["result"]["tasks"].is_array(), "{listed}");
    if let Some(samples) = scrape(metrics, TOKEN) {
        for (method, n) in legacy_mix {
            let counted = operations(&samples, method, "2025-11-25", "pipe");
            assert_eq!(counted, n, "{method}: {samples:?}");
        }
    }
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
}

/// The replies to `method` in `version` over `transport` (`tcp` or `pipe`) that
/// `mcp_server_operation_duration_seconds` counted, over all their other labels.
fn operations(samples: &[Sample], method: &str, version: &str, transport: &str) -> f64 {
    let with = [
        ("mcp_method_name", method),
        ("mcp_protocol_version", version),
        ("network_transport", transport),
    ];
    samples
        .iter()
        .filter(|(name, labels, _)| {
            name == "mcp_server_operation_duration_seconds_count"
                && with
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| v)
        .sum()
}
