//! Named clients and their limits (platform issue, who spent it): two clients told apart
//! in logs and metrics, and each limit (calls per minute, spend per day; a client's and
//! the instance's) refusing with what, how much and when, then admitting again once the
//! clock leaves its window. The server's wall clock is frozen and moved by libfaketime,
//! so no test waits for a minute or a day to pass.

use super::observability::answered as priced_answer;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;

const CI_TOKEN: &str = "PLANTED-ci-token-0123456789";
const ALICE_TOKEN: &str = "PLANTED-alice-token-0123456789";
const BO_TOKEN: &str = "PLANTED-bo-token-0123456789";
const SHARED_TOKEN: &str = "PLANTED-shared-token-0123456789";
const OPS_TOKEN: &str = "PLANTED-ops-token-0123456789";

fn call(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}})
}

/// The text and `_meta` details of a refused call's `isError` result.
fn refusal(r: &crate::http_client::HttpResponse) -> (String, Value) {
    let reply = r.json();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let details = reply["result"]["_meta"]["com.github.openai-responses-mcp/error"].clone();
    (text, details)
}

fn answered(r: &crate::http_client::HttpResponse) {
    let reply = r.json();
    assert!(
        reply["result"]["structuredContent"].is_object(),
        "not answered: {reply}"
    );
}

pub fn named_clients_are_told_apart_and_their_limits_refuse_then_recover() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let dir = temp_dir("clients");
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 2\n  - name: alice\n    token_sha256: {}\n    spend_per_day_usd: 0.05\n  - name: ops\n    token_sha256: {}\n    metrics: true\n",
        sha256_hex(CI_TOKEN),
        sha256_hex(ALICE_TOKEN),
        sha256_hex(OPS_TOKEN)
    );
    std::fs::write(dir.join("clients.yaml"), clients).unwrap();
    let opts = Opts::http(&fake.url)
        .config(&dir, "server: {http: {clients_file: clients.yaml}}\n")
        .env("MCP_HTTP_TOKEN", SHARED_TOKEN)
        .arg("--log-format")
        .arg("json");
    let Some((opts, clock)) = opts.frozen_clock("2026-11-26 23:58:30") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let mut server = Mcp::spawn(opts);
    let addr = listening(&server);
    let as_client = |token: &str| format!("Bearer {token}");
    let (ci, alice, shared) = (
        as_client(CI_TOKEN),
        as_client(ALICE_TOKEN),
        as_client(SHARED_TOKEN),
    );
    let headers = |auth: &str| -> Vec<(&'static str, String)> {
        vec![
            ("MCP-Protocol-Version", "2025-11-25".to_owned()),
            ("Authorization", auth.to_owned()),
        ]
    };
    let post = |c: &mut HttpConn, id: u64, auth: &str| {
        let h = headers(auth);
        let h: Vec<(&str, &str)> = h.iter().map(|(n, v)| (*n, v.as_str())).collect();
        c.post(&call(id), &h)
    };
    let mut c = HttpConn::open(addr);

    // ci: two calls a minute. The third is refused until 23:59:00, 30 s away.
    answered(&post(&mut c, 1, &ci));
    answered(&post(&mut c, 2, &ci));
    let refused = post(&mut c, 3, &ci);
    assert_eq!(refused.status, 200);
    assert_eq!(refused.header("retry-after"), Some("30"));
    let (text, details) = refusal(&refused);
    assert_eq!(
        text,
        "Client \"ci\" reached its limit of 2 calls per minute, so the server did not call OpenAI. The limit resets at 2026-11-26T23:59:00Z (in 30 s): call the tool again then, or ask the server's operator to raise calls_per_minute for \"ci\" in the clients file."
    );
    assert_eq!(
        details,
        json!({"kind": "limit", "limit": "calls_per_minute", "scope": "client", "client": "ci",
            "value": 2, "spent_usd": null, "held_usd": null, "resets_at": "2026-11-26T23:59:00Z", "retry_after_secs": 30,
            "retryAfterSeconds": 30, "refusal": "limit_calls_per_minute"})
    );
    // Other clients are not held back by ci's limit; the shared token is `default`.
    answered(&post(&mut c, 4, &shared));

    // alice: $0.05 a day. The first call costs $0.06025 and is admitted (the day's
    // spend was below the limit); the next is refused until midnight UTC, 90 s away.
    answered(&post(&mut c, 5, &alice));
    let refused = post(&mut c, 6, &alice);
    assert_eq!(refused.header("retry-after"), Some("90"));
    let (text, details) = refusal(&refused);
    assert!(
        text.starts_with("Client \"alice\" reached its limit of $0.05 of estimated OpenAI spend per day (UTC; $0.06 spent today), so the server did not call OpenAI. The limit resets at 2026-11-27T00:00:00Z (in 90 s)"),
        "{text}"
    );
    assert_eq!(details["limit"], "spend_per_day_usd");
    assert_eq!(details["spent_usd"], 0.06025);
    let upstream_calls = fake.requests().len();

    // 23:59:00: ci's minute is over, alice's day is not.
    clock.set("2026-11-26 23:59:00");
    answered(&post(&mut c, 7, &ci));
    let refused = post(&mut c, 8, &alice);
    assert_eq!(refused.header("retry-after"), Some("60"));
    // Midnight: alice's new day.
    clock.set("2026-11-27 00:00:00");
    answered(&post(&mut c, 9, &alice));
    // Refused calls never reached OpenAI.
    assert_eq!(fake.requests().len(), upstream_calls + 2);

    // A wrong token is refused as before, and names no client.
    let wrong = post(&mut c, 10, "Bearer PLANTED-ci-token-012345678");
    assert_eq!(wrong.status, 401);

    // The metrics name every client's spend: not for ci's token, which calls tools,
    // but for the client the file marks `metrics: true`.
    let mut m = HttpConn::open(addr);
    m.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {ci}\r\n\r\n").as_bytes(),
    );
    let refused = m.response();
    let why = String::from_utf8_lossy(&refused.body);
    assert_eq!(refused.status, 403, "{why}");
    assert!(
        why.contains("metrics: true") && !why.contains("alice"),
        "{why}"
    );
    let ops = as_client(OPS_TOKEN);
    m.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {ops}\r\n\r\n").as_bytes(),
    );
    let metrics = String::from_utf8(m.response().body).unwrap();
    for (client, outcome, n) in [
        ("ci", "ok", 3),
        ("ci", "refused_limit_calls_per_minute", 1),
        ("alice", "ok", 2),
        ("alice", "refused_limit_spend_per_day", 2),
        ("default", "ok", 1),
    ] {
        let line = format!(
            "openai_responses_mcp_calls_total{{tool=\"answer\",client=\"{client}\",outcome=\"{outcome}\"}} {n}"
        );
        assert!(metrics.contains(&line), "no {line} in\n{metrics}");
    }
    assert!(
        metrics.contains("openai_responses_mcp_refusals_total{reason=\"limit_spend_per_day\"} 2"),
        "{metrics}"
    );
    for client in ["ci", "alice", "default"] {
        assert!(
            metrics.lines().any(
                |l| l.starts_with("openai_responses_mcp_estimated_cost_usd_total")
                    && l.contains(&format!("client=\"{client}\""))
            ),
            "no cost for {client}:\n{metrics}"
        );
    }
    drop(c);
    drop(m);
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(server.wait_exit(PATIENCE).code(), Some(0));
    let stderr = server.stderr_to_end();
    for secret in [
        CI_TOKEN,
        ALICE_TOKEN,
        SHARED_TOKEN,
        OPS_TOKEN,
        &sha256_hex(CI_TOKEN),
    ] {
        assert!(!stderr.contains(secret), "{secret} was logged:\n{stderr}");
    }
    let calls: Vec<Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "call")
        .collect();
    let by = |client: &str, outcome: &str| {
        calls
            .iter()
            .filter(|l| l["client"] == client && l["outcome"] == outcome)
            .count()
    };
    assert_eq!(
        (by("ci", "ok"), by("ci", "refused_limit_calls_per_minute")),
        (3, 1),
        "{calls:?}"
    );
    assert_eq!(
        (
            by("alice", "ok"),
            by("alice", "refused_limit_spend_per_day")
        ),
        (2, 2)
    );
    assert_eq!(by("default", "ok"), 1);
}

pub fn the_instance_limit_holds_stdio_calls_in_every_era() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let opts = Opts::upstream(&fake.url).env("MCP_LIMIT_CALLS_PER_MINUTE", "1");
    let Some((opts, clock)) = opts.frozen_clock("2026-11-26 12:00:10") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    // 2025-06-18 sessions get tool failures as JSON-RPC errors.
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    let first = mcp.call(1, "answer", json!({"query": "q"}));
    assert!(first["result"]["structuredContent"].is_object(), "{first}");
    let refused = mcp.call(2, "answer_quick", json!({"query": "q"}));
    let error = &refused["error"];
    assert_eq!(
        error["message"],
        "This server reached its limit, shared by all its clients, of 1 calls per minute, so the server did not call OpenAI. The limit resets at 2026-11-26T12:01:00Z (in 50 s): call the tool again then, or ask the server's operator to raise server.limits.calls_per_minute.",
        "{refused}"
    );
    assert_eq!(error["data"]["scope"], "instance");
    assert_eq!(error["data"]["client"], "default");
    assert_eq!(error["data"]["retry_after_secs"], 50);
    assert_eq!(error["data"]["retryAfterSeconds"], 50);
    clock.set("2026-11-26 12:01:00");
    let again = mcp.call(3, "answer", json!({"query": "q"}));
    assert!(again["result"]["structuredContent"].is_object(), "{again}");
    assert_eq!(fake.requests().len(), 2);
}

pub fn the_instance_spend_limit_holds_until_the_utc_day_ends() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let opts = Opts::upstream(&fake.url).env("MCP_LIMIT_SPEND_PER_DAY_USD", "0.1");
    let Some((opts, clock)) = opts.frozen_clock("2026-11-26 22:00:00") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-11-25");
    // $0.06025 each: the second call is admitted at $0.06, the third refused at $0.12.
    for id in 1..=2 {
        let r = mcp.call(id, "answer", json!({"query": "q"}));
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    let refused = mcp.call(3, "answer", json!({"query": "q"}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "This server reached its limit, shared by all its clients, of $0.10 of estimated OpenAI spend per day (UTC; $0.12 spent today), so the server did not call OpenAI. The limit resets at 2026-11-27T00:00:00Z (in 2 h 0 min): call the tool again then, or ask the server's operator to raise server.limits.spend_per_day_usd."
    );
    // A new minute changes nothing; a new UTC day does.
    clock.set("2026-11-26 23:59:59");
    let still = mcp.call(4, "answer", json!({"query": "q"}));
    assert_eq!(still["result"]["isError"], true, "{still}");
    clock.set("2026-11-27 00:00:00");
    let again = mcp.call(5, "answer", json!({"query": "q"}));
    assert!(again["result"]["structuredContent"].is_object(), "{again}");
    assert_eq!(fake.requests().len(), 3);
}

/// Named clients see only their own tasks: another client's task id is not found by
/// `tasks/get`, `tasks/result` or `tasks/cancel`, and `tasks/list` lists a client's own;
/// for local tasks and for tasks backed by OpenAI's background mode.
pub fn each_named_client_sees_only_its_own_tasks() {
    for yaml in [
        "",
        "tasks: {openai_background: true, poll_interval_ms: 100}\n",
    ] {
        let openai = crate::fake_openai::Background::new(
            &fixture("response-no-search.json"),
            Duration::from_secs(30),
        );
        // Local tasks' calls hang (so their tasks work on); background ones are stored.
        let fake = FakeOpenAi::start(move |r, _| {
            if r.method == "GET" || r.body["background"] == true {
                openai.answer_for(r)
            } else {
                Action::Hang
            }
        });
        let dir = temp_dir("owners");
        let clients = format!(
            "clients:\n  - name: ci\n    token_sha256: {}\n  - name: alice\n    token_sha256: {}\n",
            sha256_hex(CI_TOKEN),
            sha256_hex(ALICE_TOKEN)
        );
        std::fs::write(dir.join("clients.yaml"), clients).unwrap();
        let config = format!("server: {{http: {{clients_file: clients.yaml}}}}\n{yaml}");
        let server = Mcp::spawn(
            Opts::http(&fake.url)
                .config(&dir, &config)
                .env("MCP_TASKS_SECRET", "a-secret-for-the-owners-test"),
        );
        let addr = listening(&server);
        let mut c = HttpConn::open(addr);
        let post = |c: &mut HttpConn, token: &str, m: Value| {
            let auth = format!("Bearer {token}");
            let h = [
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Authorization", auth.as_str()),
            ];
            c.post(&m, &h).json()
        };
        let mut task = call(1);
        task["params"]["task"] = json!({});
        let created = post(&mut c, CI_TOKEN, task);
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {created}"))
            .to_owned();
        for (n, method) in [(2, "tasks/get"), (3, "tasks/result"), (4, "tasks/cancel")] {
            let m = json!({"jsonrpc":"2.0","id":n,"method":method,"params":{"taskId":id}});
            let refused = post(&mut c, ALICE_TOKEN, m);
            let message = refused["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("not one of this client's tasks"),
                "{yaml}{method}: {refused}"
            );
        }
        let get = json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":id}});
        let own = post(&mut c, CI_TOKEN, get);
        assert_eq!(own["result"]["status"], "working", "{own}");
        if yaml.is_empty() {
            let list = json!({"jsonrpc":"2.0","id":6,"method":"tasks/list","params":{}});
            let count = |r: &Value| r["result"]["tasks"].as_array().map_or(0, Vec::len);
            let (of_ci, of_alice) = (
                post(&mut c, CI_TOKEN, list.clone()),
                post(&mut c, ALICE_TOKEN, list),
            );
            assert_eq!(
                (count(&of_ci), count(&of_alice)),
                (1, 0),
                "{of_ci} {of_alice}"
            );
        }
        let stderr = server.stderr();
        for secret in [CI_TOKEN, ALICE_TOKEN] {
            assert!(!stderr.contains(secret));
        }
    }
}

/// The call lines (`--log-format json`) in `stderr` of background tasks.
fn task_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "call" && l["task"] == true)
        .collect()
}

/// What `/metrics` says `client` spent today, in dollars.
fn spent_today(c: &mut HttpConn, client: &str) -> f64 {
    let metrics = super::http::get_with_token(c, "/metrics", SHARED_TOKEN);
    let text = String::from_utf8_lossy(&metrics.body).into_owned();
    let prefix = format!("openai_responses_mcp_spend_today_usd{{client=\"{client}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no spend of {client} today: {text}"))
}

/// Every background run is charged, whatever its client does: under a $0.00001 daily
/// cap, a task never read and one cancelled mid-run each count against their owner at
/// once (its next call refused while the run goes on), and at their end leave one call
/// line with OpenAI's figures (the unread one) or the estimate (the cancelled one, of
/// which OpenAI says nothing), the day's spend being that charge; a control client
/// without a cap is admitted throughout.
/// What a call with no history of its own client costs at the built-in price of the
/// default model (gpt-6.1-terra): 32,000 input tokens, 4,096 output tokens, one search.
const FIRST_CALL_USD: f64 = 0.06248;

pub fn background_tasks_are_charged_read_or_not_under_a_spend_cap() {
    let openai =
        crate::fake_openai::Background::new(&priced_answer(), Duration::from_millis(2_500));
    // Plain calls are answered at once; background ones are stored and run 2.5 s.
    let fake = FakeOpenAi::start(move |r, _| {
        let create = r.method == "POST" && r.path.ends_with("/responses");
        if create && r.body["background"] != true {
            Action::json(200, &priced_answer())
        } else {
            openai.answer_for(r)
        }
    });
    let dir = temp_dir("bg-charged");
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    spend_per_day_usd: 0.00001\n  - name: bo\n    token_sha256: {}\n    spend_per_day_usd: 0.00001\n  - name: alice\n    token_sha256: {}\n",
        sha256_hex(CI_TOKEN),
        sha256_hex(BO_TOKEN),
        sha256_hex(ALICE_TOKEN)
    );
    std::fs::write(dir.join("clients.yaml"), clients).unwrap();
    let yaml = "server: {http: {clients_file: clients.yaml}}\n\
                tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let server = Mcp::spawn(
        Opts::http(&fake.url)
            .config(&dir, yaml)
            .env("MCP_HTTP_TOKEN", SHARED_TOKEN)
            .env("MCP_TASKS_SECRET", "a-secret-for-the-charges-test")
            .arg("--log-format")
            .arg("json"),
    );
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let post = |c: &mut HttpConn, token: &str, m: &Value| {
        let auth = format!("Bearer {token}");
        let h = [
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", auth.as_str()),
        ];
        c.post(m, &h)
    };
    let task_of = |c: &mut HttpConn, token: &str, id: u64| {
        let mut m = call(id);
        m["params"]["task"] = json!({});
        let created = post(c, token, &m).json();
        created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {created}"))
            .to_owned()
    };
    let spend_refused = |r: &crate::http_client::HttpResponse| {
        let (_, details) = refusal(r);
        assert_eq!(details["limit"], "spend_per_day_usd", "{details}");
    };

    // The control client has no cap: admitted (its call is the profile's recent cost).
    answered(&post(&mut c, ALICE_TOKEN, &call(6)));
    // ci starts a task and never reads it: its next call is refused at once.
    let _unread = task_of(&mut c, CI_TOKEN, 1);
    spend_refused(&post(&mut c, CI_TOKEN, &call(2)));
    // bo starts one and cancels it mid-run (it runs 2.5 s).
    let cancelled = task_of(&mut c, BO_TOKEN, 3);
    let cancel =
        json!({"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":cancelled}});
    let state = post(&mut c, BO_TOKEN, &cancel).json();
    assert_eq!(state["result"]["status"], "cancelled", "{state}");
    spend_refused(&post(&mut c, BO_TOKEN, &call(5)));

    // Each run leaves one line once it ended, the unread one without any read by ci.
    super::http::waits_for("both background runs' lines", || {
        task_lines(&server.stderr()).len() >= 2
    });
    let lines = task_lines(&server.stderr());
    assert_eq!(lines.len(), 2, "{lines:?}");
    let line_of = |client: &str| {
        lines
            .iter()
            .find(|l| l["client"] == client)
            .unwrap_or_else(|| panic!("no line of {client}: {lines:?}"))
            .clone()
    };
    let (unread, stopped) = (line_of("ci"), line_of("bo"));
    assert_eq!(
        (
            &unread["outcome"],
            &unread["input_tokens"],
            &unread["output_tokens"]
        ),
        (&json!("ok"), &json!(20_000), &json!(1_000)),
        "{unread}"
    );
    assert_ne!(unread["usage_estimated"], true, "{unread}");
    // OpenAI's figures: $0.06025 at the built-in prices (the soonest window's list price).
    let unread_cost = unread["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((unread_cost - 0.06025).abs() < 1e-9, "{unread}");
    assert_eq!(
        (&stopped["outcome"], &stopped["usage_estimated"]),
        (&json!("cancelled"), &json!(true)),
        "{stopped}"
    );
    // OpenAI said nothing of it, and bo has no call of its own to go by: the estimate is
    // the first-call bound (32,000 tokens in, 4,096 out, one search), never alice's calls.
    let stopped_cost = stopped["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!((stopped_cost - FIRST_CALL_USD).abs() < 1e-9, "{stopped}");
    assert_eq!(
        (&stopped["input_tokens"], &stopped["output_tokens"]),
        (&json!(32_000), &json!(4_096)),
        "{stopped}"
    );
    eprintln!(
        "unread: ${unread_cost} charged after {} ms; cancelled: ${stopped_cost} estimated",
        unread["duration_ms"]
    );
    // The day's spend is the charge, once; the owners stay refused, alice admitted.
    let mut m = HttpConn::open(addr);
    assert!((spent_today(&mut m, "ci") - unread_cost).abs() < 1e-9);
    assert!((spent_today(&mut m, "bo") - stopped_cost).abs() < 1e-9);
    spend_refused(&post(&mut c, CI_TOKEN, &call(7)));
    spend_refused(&post(&mut c, BO_TOKEN, &call(8)));
    answered(&post(&mut c, ALICE_TOKEN, &call(9)));
    // ci never asked about its task: no read of it was a client's (the follow's only).
    let stderr = server.stderr();
    for secret in [CI_TOKEN, BO_TOKEN, ALICE_TOKEN] {
        assert!(!stderr.contains(secret));
    }
}
