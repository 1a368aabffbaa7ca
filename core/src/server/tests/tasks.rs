//! Tasks: a call answered with a handle, polled, fetched, cancelled, expired; in a
//! 2025-11-25 session and as 2026-07-28 requests with the extension.

use super::*;
use crate::fixture;
use crate::testing::Harness;
use serde_json::{json, Value};
use std::time::Duration;

fn task_call(id: u64, ttl: Option<u64>) -> Value {
    let mut task = json!({});
    if let Some(ttl) = ttl {
        task["ttl"] = ttl.into();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":task}})
}

fn tasks(id: u64, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}})
}

/// A 2025-11-25 session with a task created; its id and the attempt doing the work.
fn created(h: &mut Harness, ttl: Option<u64>) -> (String, AttemptId) {
    let r = h.request(task_call(1, ttl));
    let task = &r["result"]["task"];
    assert_eq!(task["status"], "working", "{r}");
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(task["pollInterval"].as_u64().unwrap() > 0);
    let attempt = h.take_http()[0].attempt;
    (task["taskId"].as_str().unwrap().to_owned(), attempt)
}

#[test]
fn a_task_is_created_polled_fetched_and_listed() {
    let mut h = Harness::ready("2025-11-25");
    let (id, attempt) = created(&mut h, Some(60_000));
    let got = h.request(tasks(2, "tasks/get", &id));
    assert_eq!(
        (
            got["result"]["status"].as_str(),
            got["result"]["ttl"].as_u64()
        ),
        (Some("working"), Some(60_000))
    );
    // tasks/result waits for the end.
    h.send(tasks(3, "tasks/result", &id));
    assert!(h.frames().is_empty());
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let out = h.frames();
    let result = out
        .iter()
        .find(|m| m["id"] == 3)
        .expect("tasks/result answered");
    let payload = &result["result"];
    assert_ne!(payload["isError"], true);
    assert_eq!(
        payload["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    assert!(payload["structuredContent"]["answer"].is_string());
    let note = out
        .iter()
        .find(|m| m["method"] == "notifications/tasks/status")
        .expect("a status notification");
    assert_eq!(note["params"]["status"], "completed");
    // Later polls and fetches see the same end; the list has it.
    let got = h.request(tasks(4, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "completed");
    let again = h.request(tasks(5, "tasks/result", &id));
    assert_eq!(again["result"]["content"], payload["content"]);
    let list = h.request(json!({"jsonrpc":"2.0","id":6,"method":"tasks/list"}));
    assert_eq!(list["result"]["tasks"][0]["taskId"], id);
    assert!(list["result"].get("nextCursor").is_none());
}

#[test]
fn cancelling_a_working_task_stops_its_call_and_answers_its_waiters() {
    let mut h = Harness::ready("2025-11-25");
    let (id, attempt) = created(&mut h, None);
    h.send(tasks(2, "tasks/result", &id));
    h.send(tasks(3, "tasks/cancel", &id));
    // The parked tasks/result gets an error that says why; the cancel gets the task;
    // a stdio client hears of the change.
    let out = h.frames();
    assert_eq!(out[0]["id"], 2);
    assert!(out[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cancelled"));
    assert_eq!(
        (out[1]["id"].as_u64(), out[1]["result"]["status"].as_str()),
        (Some(3), Some("cancelled"))
    );
    assert_eq!(out[2]["method"], "notifications/tasks/status");
    assert_eq!(out.len(), 3, "{out:?}");
    let rest = h.take_other();
    assert!(rest.contains(&Output::Abort(attempt)), "{rest:?}");
    let got = h.request(tasks(4, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "cancelled");
    let again = h.request(tasks(5, "tasks/cancel", &id));
    assert_eq!(again["error"]["code"], -32602, "{again}");
    // Its late completion changes nothing.
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let got = h.request(tasks(6, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "cancelled");
}

#[test]
fn forged_tampered_and_expired_ids_are_invalid_params() {
    let mut h = Harness::ready("2025-11-25");
    let (id, attempt) = created(&mut h, Some(1_000));
    let mut tampered = id.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (n, bad) in [
        "nope",
        "task-0000000000000001ffffffffffffffffffffffffffffffff",
        tampered.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        let r = h.request(tasks(10 + n as u64, "tasks/get", bad));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a task id"));
    }
    // The ttl runs out while it works: the call stops and the id is gone.
    h.advance(Duration::from_millis(1_000));
    h.fire();
    assert!(h.take_other().contains(&Output::Abort(attempt)));
    let r = h.request(tasks(20, "tasks/get", &id));
    assert!(
        r["error"]["message"].as_str().unwrap().contains("expired"),
        "{r}"
    );
}

#[test]
fn sessions_without_tasks_ignore_the_task_field() {
    let mut h = Harness::ready("2025-06-18");
    h.send(task_call(1, None));
    assert!(h.frames().is_empty(), "answered later, as a plain call");
    let attempt = h.take_http()[0].attempt;
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let r = h.frames().remove(0);
    assert!(r["result"]["content"].is_array(), "{r}");
    let r = h.request(tasks(2, "tasks/get", "task-x"));
    assert_eq!(r["error"]["code"], -32601);
}

fn modern_call(id: u64, with_extension: bool) -> Value {
    let mut caps = json!({});
    if with_extension {
        caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":caps}}})
}

fn modern_tasks(id: u64, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id,"inputResponses":{},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":
                     {"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})
}

#[test]
fn modern_clients_that_declare_the_extension_get_a_task_and_its_result_in_tasks_get() {
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::ZERO;
    let mut h = Harness::new(config);
    let r = h.request(modern_call(1, true));
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    assert!(r["result"]["ttlMs"].as_u64().unwrap() > 0);
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let attempt = h.take_http()[0].attempt;
    let got = h.request(modern_tasks(2, "tasks/get", &id));
    assert_eq!(
        (
            got["result"]["status"].as_str(),
            got["result"]["resultType"].as_str()
        ),
        (Some("working"), Some("complete"))
    );
    // A client that does not declare the extension is told which capability it lacks.
    let mut undeclared = modern_tasks(8, "tasks/get", &id);
    undeclared["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let r = h.request(undeclared);
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert!(r["error"]["data"]["requiredCapabilities"]["extensions"]
        ["io.modelcontextprotocol/tasks"]
        .is_object());
    let ack = h.request(modern_tasks(3, "tasks/update", &id));
    assert_eq!(ack["result"]["resultType"], "complete");
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(
        h.frames().is_empty(),
        "no notification without a subscription"
    );
    let got = h.request(modern_tasks(4, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "completed");
    assert_eq!(got["result"]["result"]["resultType"], "complete");
    assert!(got["result"]["result"]["structuredContent"]["answer"].is_string());
    // The era has no tasks/result or tasks/list; cancelling a finished task is acknowledged.
    let r = h.request(modern_tasks(5, "tasks/result", &id));
    assert_eq!(r["error"]["code"], -32601);
    let r = h.request(modern_tasks(6, "tasks/cancel", &id));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    // Without the extension the same call is answered as always.
    h.send(modern_call(7, false));
    assert!(h.frames().is_empty());
    let attempt = h.take_http()[0].attempt;
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let r = h.frames().remove(0);
    assert_eq!(r["result"]["resultType"], "complete");
}

/// OpenAI's 429 for a quota: a tool error, never retried.
const QUOTA: &[u8] = br#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;

#[test]
fn a_tool_error_fails_a_2025_11_25_task_with_its_cause_and_completes_a_modern_one() {
    // 2025-11-25: failed, the status message names the cause, tasks/result the result.
    let mut h = Harness::ready("2025-11-25");
    let (id, attempt) = created(&mut h, None);
    h.reply(attempt, 429, QUOTA, &[]);
    let note = h
        .frames()
        .into_iter()
        .find(|m| m["method"] == "notifications/tasks/status")
        .expect("a status notification");
    assert_eq!(note["params"]["status"], "failed", "{note}");
    let got = h.request(tasks(2, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "failed", "{got}");
    let why = got["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(why.contains("quota"), "{got}");
    let result = h.request(tasks(3, "tasks/result", &id));
    assert_eq!(result["result"]["isError"], true, "{result}");
    // 2026-07-28: completed, with the tool error as its result.
    let mut config = Harness::keyed();
    config.tasks.answer_within = Duration::ZERO;
    let mut h = Harness::new(config);
    let r = h.request(modern_call(1, true));
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let attempt = h.take_http()[0].attempt;
    h.reply(attempt, 429, QUOTA, &[]);
    let got = h.request(modern_tasks(2, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert!(got["result"].get("statusMessage").is_none(), "{got}");
    assert_eq!(got["result"]["result"]["isError"], true, "{got}");
}

#[test]
fn a_full_store_of_working_tasks_refuses_new_ones() {
    let mut config = Harness::keyed();
    config.tasks.max_tasks = 1;
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    let _ = created(&mut h, None);
    let r = h.request(task_call(2, None));
    assert_eq!(r["error"]["code"], -32051, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("tasks"));
}

#[test]
fn a_missing_task_id_or_a_foreign_cursor_is_invalid_params() {
    let mut h = Harness::ready("2025-11-25");
    for params in [json!({}), json!({"taskId": 7})] {
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":params}));
        assert_eq!(r["error"]["code"], -32602);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.taskId"),
            "{r}"
        );
    }
    let r =
        h.request(json!({"jsonrpc":"2.0","id":2,"method":"tasks/list","params":{"cursor":"x"}}));
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without a cursor"),
        "{r}"
    );
}

#[test]
fn waiting_requests_per_task_are_bounded() {
    let mut h = Harness::ready("2025-11-25");
    let (id, _) = created(&mut h, None);
    for n in 0..16 {
        h.send(tasks(100 + n, "tasks/result", &id));
    }
    assert!(h.frames().is_empty(), "sixteen may wait");
    let r = h.request(tasks(200, "tasks/result", &id));
    assert_eq!(r["error"]["code"], -32051, "{r}");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tasks/get"));
}

#[test]
fn a_waiting_tasks_result_whose_client_leaves_frees_its_slot() {
    let mut h = Harness::new(Harness::keyed());
    let v = Some(ProtocolVersion::V2025_11_25);
    h.post_as(1, crate::clients::ClientId::DEFAULT, v, task_call(1, None));
    let created = h.take_other();
    let Some(Output::Exchange(_, ExchangeOut::Reply { json, .. })) =
        created.iter().find(|o| matches!(o, Output::Exchange(..)))
    else {
        panic!("{created:?}")
    };
    let reply: Value = serde_json::from_slice(json).unwrap();
    let id = reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    for x in 2..18 {
        h.post_as(
            x,
            crate::clients::ClientId::DEFAULT,
            v,
            tasks(x, "tasks/result", &id),
        );
        h.feed(Input::ExchangeClosed(ExchangeId(x)));
    }
    let _ = h.take_other();
    // Sixteen clients came and went; a seventeenth may still wait.
    h.post_as(
        40,
        crate::clients::ClientId::DEFAULT,
        v,
        tasks(40, "tasks/result", &id),
    );
    let out = h.take_other();
    assert!(
        !out.iter()
            .any(|o| matches!(o, Output::Exchange(ExchangeId(40), _))),
        "it waits: {out:?}"
    );
}

mod background {
    use super::*;
    use crate::io::HttpMethod;

    fn config(key: u8) -> ServerConfig {
        let mut config = Harness::keyed();
        config.tasks.background = true;
        config.tasks.key = crate::tasks::TaskKey([key; 32]);
        config
    }

    fn state(id: &str, status: &str) -> Vec<u8> {
        json!({"id": id, "object": "response", "status": status, "output": [], "usage": null})
            .to_string()
            .into_bytes()
    }

    fn finished(id: &str) -> Vec<u8> {
        let mut body: Value = serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
        body["id"] = id.into();
        body.to_string().into_bytes()
    }

    /// A 2025-11-25 session with one background task created; its id.
    fn created(h: &mut Harness) -> String {
        h.send(task_call(1, Some(60_000)));
        assert!(
            h.frames().is_empty(),
            "answered once OpenAI has the response"
        );
        let post = h.take_http().remove(0);
        assert_eq!(post.method, HttpMethod::Post);
        assert!(post.url.ends_with("/responses"));
        let body: Value = serde_json::from_slice(&post.body).unwrap();
        assert_eq!(
            (body["background"].clone(), body["store"].clone()),
            (json!(true), json!(true))
        );
        assert!(body.get("stream").is_none());
        assert!(
            body.get("background_options").is_none(),
            "soonest is the default"
        );
        h.reply(post.attempt, 200, &state("resp_1", "queued"), &[]);
        let r = h.frames().remove(0);
        let task = &r["result"]["task"];
        assert_eq!(task["status"], "working", "{r}");
        task["taskId"].as_str().unwrap().to_owned()
    }

    /// Fires deadlines until the follow reads `resp_1`; that read, answered with `body`
    /// (status 200 unless `status` says).
    fn follow_read(h: &mut Harness, status: u16, body: &[u8]) {
        for _ in 0..4 {
            // The wall clock moves with the deadline (the harness's `fire` moves only
            // the monotonic one).
            let at = h.server.poll_timeout().expect("a deadline");
            h.advance(at.saturating_duration_since(h.now.instant));
            h.fire();
            let reads = h.take_http();
            if let Some(read) = reads.first() {
                assert_eq!(reads.len(), 1, "one read at a time");
                assert!(read.url.ends_with("/responses/resp_1"), "{}", read.url);
                h.reply(read.attempt, status, body, &[]);
                return;
            }
        }
        panic!("the run was not read");
    }

    /// A run whose request went away while OpenAI created it (`gone` does that to the
    /// request): cancelled at OpenAI once it exists, charged once, never answered.
    fn unheard_run_is_cancelled_and_charged(http: bool, gone: impl Fn(&mut Harness)) {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        if http {
            h.post_as(
                5,
                crate::clients::ClientId::DEFAULT,
                Some(crate::mcp::ProtocolVersion::V2025_11_25),
                task_call(1, Some(60_000)),
            );
        } else {
            h.send(task_call(1, Some(60_000)));
        }
        let post = h.take_http().remove(0);
        gone(&mut h);
        h.reply(post.attempt, 200, &state("resp_1", "queued"), &[]);
        assert!(h.frames().is_empty(), "nobody is answered");
        let cancels = h.take_http();
        let [cancel] = cancels.as_slice() else {
            panic!("one cancel at OpenAI: {cancels:?}");
        };
        assert_eq!(cancel.method, HttpMethod::Post);
        assert!(
            cancel.url.ends_with("/responses/resp_1/cancel"),
            "{}",
            cancel.url
        );
        h.reply(cancel.attempt, 200, &state("resp_1", "cancelled"), &[]);
        // A read already planned may still go out; it finds the run ended.
        let mut records = h.take_records();
        while let Some(at) = h.server.poll_timeout() {
            h.advance(at.saturating_duration_since(h.now.instant));
            h.fire();
            for read in h.take_http() {
                h.reply(read.attempt, 200, &state("resp_1", "cancelled"), &[]);
            }
            records.extend(h.take_records());
            assert!(h.now.instant < crate::testing::start_instant() + Duration::from_secs(60));
        }
        assert_eq!(records.len(), 1, "charged once: {records:?}");
        assert!(h.frames().is_empty(), "nobody is answered");
        let replied = |o: &crate::Output| {
            matches!(
                o,
                crate::Output::Exchange(_, crate::ExchangeOut::Reply { .. })
            )
        };
        assert!(!h.take_other().iter().any(replied), "not over HTTP either");
    }

    #[test]
    fn a_background_run_its_client_cancelled_while_it_was_created_is_cancelled_at_openai() {
        unheard_run_is_cancelled_and_charged(false, |h| {
            h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                "params":{"requestId":1}}));
        });
    }

    #[test]
    fn a_background_run_whose_http_client_left_or_cancelled_elsewhere_is_cancelled_at_openai() {
        unheard_run_is_cancelled_and_charged(true, |h| {
            h.feed(crate::Input::ExchangeClosed(crate::io::ExchangeId(5)));
        });
        // Its client POSTed the cancel to another replica, which published it.
        unheard_run_is_cancelled_and_charged(true, |h| {
            let event = crate::store::events::StoreEvent::Request {
                client: crate::clients::DEFAULT_NAME.into(),
                id: crate::jsonrpc::RequestId::Int("1".into()),
            };
            h.feed(crate::Input::StoreEvent(&event.to_string()));
        });
    }

    #[test]
    fn an_unread_background_task_is_followed_to_its_end_and_charged_once() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        created(&mut h);
        assert!(h.take_records().is_empty(), "no line while it runs");
        follow_read(&mut h, 200, &state("resp_1", "in_progress"));
        assert!(h.take_records().is_empty());
        follow_read(&mut h, 200, &finished("resp_1"));
        let records = h.take_records();
        let [record] = records.as_slice() else {
            panic!("{records:?}");
        };
        assert_eq!(
            (record.task, record.outcome),
            (true, crate::outcome::Outcome::Ok)
        );
        // OpenAI's figures (the fixture's model has no built-in price).
        let input = record.usage.as_ref().map(|u| u.input_tokens);
        assert_eq!(input, Some(36), "{record:?}");
        assert!(!record.usage_estimated);
        // Ended: no more reads, nothing counted again.
        assert_eq!(h.server.poll_timeout(), None, "nothing left to follow");
        assert!(h.frames().is_empty(), "nobody asked: nobody is answered");
    }

    #[test]
    fn a_followed_task_gone_or_outliving_its_ttl_is_charged_its_estimate() {
        use crate::openai::FailureKind;
        use crate::outcome::Outcome;
        // OpenAI no longer has it.
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        created(&mut h);
        follow_read(&mut h, 404, br#"{"error":{"message":"No response found"}}"#);
        let records = h.take_records();
        let [gone] = records.as_slice() else {
            panic!("{records:?}");
        };
        assert_eq!(gone.outcome, Outcome::Upstream(FailureKind::Expired));
        assert!(
            gone.usage_estimated && gone.cost.is_some_and(|c| c.0 > 0),
            "{gone:?}"
        );
        assert_eq!(h.server.poll_timeout(), None);
        // Still running when its task's 60 s life ends.
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        created(&mut h);
        let mut reads = 0;
        while h.take_records().is_empty() {
            follow_read(&mut h, 200, &state("resp_1", "in_progress"));
            reads += 1;
            assert!(reads <= 40, "followed past its ttl");
        }
        assert!(reads >= 30, "read every 2 s for 60 s: {reads}");
        assert_eq!(h.server.poll_timeout(), None, "given up once charged");
    }

    #[test]
    fn a_completion_window_is_asked_for_and_fits_the_task_its_polls_and_its_price() {
        use crate::tasks::CompletionWindow;
        let mut c = config(1);
        c.tasks.completion_window = CompletionWindow::TwoHours;
        let answer = crate::tools::Tool::Answer;
        let mut profile = c.profiles.for_tool(answer).cloned().unwrap();
        profile.service_tier = Some(crate::vocab::ServiceTier::Priority);
        c.profiles.set(answer, profile);
        let mut h = Harness::new(c);
        h.init("2025-11-25");
        h.send(task_call(1, Some(60_000)));
        let post = h.take_http().remove(0);
        let body: Value = serde_json::from_slice(&post.body).unwrap();
        assert_eq!(
            body["background_options"],
            json!({"completion_window": "2h"}),
            "{body}"
        );
        // Only the standard tier takes a window.
        assert!(body.get("service_tier").is_none(), "{body}");
        h.reply(post.attempt, 200, &state("resp_1", "queued"), &[]);
        let task = h.frames().remove(0)["result"]["task"].clone();
        // Kept for the window and an hour to fetch it, whatever the client asked; polled
        // every 2 h / 240 = 30 s, not every 2 s.
        assert_eq!(task["ttl"], 3 * 3600 * 1000, "{task}");
        assert_eq!(task["pollInterval"], 30_000, "{task}");
        let id = task["taskId"].as_str().unwrap().to_owned();
        h.advance(Duration::from_secs(29));
        h.send(tasks(2, "tasks/get", &id));
        assert!(h.take_http().is_empty(), "read at most every 30 s");
        h.frames();
        h.advance(Duration::from_secs(1));
        h.send(tasks(3, "tasks/result", &id));
        let read = h.take_http().remove(0);
        let mut done: Value = serde_json::from_slice(&finished("resp_1")).unwrap();
        done["model"] = "gpt-6.1-terra".into();
        h.reply(read.attempt, 200, done.to_string().as_bytes(), &[]);
        let result = h
            .frames()
            .into_iter()
            .find(|m| m["id"] == 3)
            .expect("tasks/result answered");
        let cost = &result["result"]["_meta"]["com.github.openai-responses-mcp/usage"]["cost"];
        // The fixture's usage at gpt-6.1-terra's rates, its tokens at 70 % (2 h window).
        let usage: Value = serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
        let u = &usage["usage"];
        let (input, cached, output) = (
            u["input_tokens"].as_f64().unwrap(),
            u["input_tokens_details"]["cached_tokens"]
                .as_f64()
                .unwrap_or(0.0),
            u["output_tokens"].as_f64().unwrap(),
        );
        let standard = ((input - cached) * 1.0 + cached * 0.05 + output * 5.0) / 1e6;
        let tokens = cost["tokens_usd"].as_f64().unwrap_or(f64::NAN);
        assert!(
            (tokens - standard * 0.7).abs() < 1e-8,
            "{cost} vs {standard}"
        );
    }

    #[test]
    fn a_background_task_is_read_from_openai_at_most_once_per_poll_interval() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        let id = created(&mut h);
        assert!(id.starts_with("task-d"));
        // Fresh from creation: polls within the interval are answered without a read.
        let r = h.request(tasks(2, "tasks/get", &id));
        assert_eq!(r["result"]["status"], "working");
        assert!(h.take_http().is_empty());
        // After the interval, one read serves every poll waiting on it.
        h.advance(ServerConfig::default().tasks.poll_interval);
        h.send(tasks(3, "tasks/get", &id));
        h.send(tasks(4, "tasks/get", &id));
        let reads = h.take_http();
        assert_eq!(reads.len(), 1, "one read for two polls");
        assert_eq!(reads[0].method, HttpMethod::Get);
        assert!(
            reads[0].url.ends_with("/responses/resp_1"),
            "{}",
            reads[0].url
        );
        h.reply(reads[0].attempt, 200, &state("resp_1", "in_progress"), &[]);
        let out = h.frames();
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|m| m["result"]["status"] == "working"));
        // tasks/result waits, re-reading each interval, until the response is done.
        h.send(tasks(5, "tasks/result", &id));
        assert!(h.frames().is_empty());
        h.fire();
        let read = h.take_http().remove(0);
        h.reply(read.attempt, 200, &finished("resp_1"), &[]);
        let r = h.frames().remove(0);
        assert_eq!(r["id"], 5);
        assert!(
            r["result"]["structuredContent"]["answer"].is_string(),
            "{r}"
        );
        assert_eq!(
            r["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id
        );
        // Finished: answered from what was read, no more reads.
        let r = h.request(tasks(6, "tasks/get", &id));
        assert_eq!(r["result"]["status"], "completed");
        assert!(h.take_http().is_empty());
    }

    #[test]
    fn another_process_with_the_same_key_serves_the_task_and_one_without_refuses_it() {
        let mut first = Harness::new(config(1));
        first.init("2025-11-25");
        let id = created(&mut first);
        // A restart (or another instance) with the shared key: nothing kept, one read.
        let mut second = Harness::new(config(1));
        second.init("2025-11-25");
        second.send(tasks(1, "tasks/result", &id));
        let read = second.take_http().remove(0);
        assert!(read.url.ends_with("/responses/resp_1"));
        second.reply(read.attempt, 200, &finished("resp_1"), &[]);
        let r = second.frames().remove(0);
        assert!(r["result"]["content"][0]["text"].is_string(), "{r}");
        // Another key: refused before anything is sent upstream.
        let mut stranger = Harness::new(config(2));
        stranger.init("2025-11-25");
        let r = stranger.request(tasks(1, "tasks/get", &id));
        assert_eq!(r["error"]["code"], -32602);
        assert!(stranger.take_http().is_empty());
        // A tampered id likewise.
        let mut tampered = id.clone().into_bytes();
        let at = 10;
        tampered[at] = if tampered[at] == b'0' { b'1' } else { b'0' };
        let r = second.request(tasks(
            2,
            "tasks/get",
            std::str::from_utf8(&tampered).unwrap(),
        ));
        assert_eq!(r["error"]["code"], -32602);
        assert!(second.take_http().is_empty());
    }

    #[test]
    fn cancelling_calls_openai_and_a_response_openai_lost_ends_the_task() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        let id = created(&mut h);
        h.send(tasks(2, "tasks/cancel", &id));
        let post = h.take_http().remove(0);
        assert_eq!(post.method, HttpMethod::Post);
        assert!(
            post.url.ends_with("/responses/resp_1/cancel"),
            "{}",
            post.url
        );
        h.reply(post.attempt, 200, &state("resp_1", "cancelled"), &[]);
        let r = h.frames().remove(0);
        assert_eq!(r["result"]["status"], "cancelled", "{r}");
        // A task whose response OpenAI no longer has.
        let mut other = Harness::new(config(1));
        other.init("2025-11-25");
        other.send(tasks(1, "tasks/get", &id));
        let read = other.take_http().remove(0);
        let missing = br#"{"error":{"message":"No response found with id 'resp_1'.","type":"invalid_request_error","param":null,"code":null}}"#;
        other.reply(read.attempt, 404, missing, &[]);
        let r = other.frames().remove(0);
        // 2025-11-25: a tool error fails the task, and says why.
        assert_eq!(r["result"]["status"], "failed", "a terminal task: {r}");
        let why = r["result"]["statusMessage"].as_str().unwrap_or_default();
        assert!(why.contains("no longer has"), "{r}");
        // Its result is the tool error a call gets, saying what happened and what to do.
        let r = other.request(tasks(2, "tasks/result", &id));
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("no longer has"), "{text}");
        assert!(text.contains("call the tool again"), "{text}");
        assert!(
            other.take_http().is_empty(),
            "an ended task is not read again"
        );
    }

    /// A 2025-11-25 session whose background task was created, read once more: the reply
    /// to that read, and what `tasks/result` then returns.
    fn read_once(body: &[u8]) -> (Value, Value) {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        let id = created(&mut h);
        h.advance(ServerConfig::default().tasks.poll_interval);
        h.send(tasks(2, "tasks/get", &id));
        let read = h.take_http().remove(0);
        h.reply(read.attempt, 200, body, &[]);
        let got = h.frames().remove(0);
        let result = h.request(tasks(3, "tasks/result", &id));
        assert!(h.take_http().is_empty(), "an ended task is not read again");
        (got, result)
    }

    #[test]
    fn a_failed_background_response_ends_its_task_with_what_openai_said() {
        let failed = json!({"id":"resp_1","object":"response","status":"failed",
            "error":{"code":"server_error","message":"The model had an internal failure."},"output":[]});
        let (got, result) = read_once(failed.to_string().as_bytes());
        // 2025-11-25: failed, with the cause; tasks/result still returns the tool error.
        assert_eq!(got["result"]["status"], "failed", "{got}");
        let why = got["result"]["statusMessage"].as_str().unwrap_or_default();
        assert!(why.contains("The model had an internal failure."), "{got}");
        assert_eq!(result["result"]["isError"], true, "{result}");
        let text = result["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("The model had an internal failure."),
            "{text}"
        );
    }

    #[test]
    fn an_incomplete_background_response_says_it_was_cut_short_and_why() {
        let cut = json!({"id":"resp_1","object":"response","status":"incomplete",
            "incomplete_details":{"reason":"max_output_tokens"},"output":[]});
        let (_, result) = read_once(cut.to_string().as_bytes());
        assert_eq!(result["result"]["isError"], true, "{result}");
        let text = result["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("max_output_tokens") && text.contains("cut short"),
            "{text}"
        );
    }

    #[test]
    fn a_cancelled_background_response_is_a_cancelled_task() {
        let (got, result) = read_once(&state("resp_1", "cancelled"));
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
        assert!(
            result["error"]["message"]
                .as_str()
                .unwrap()
                .contains("cancelled"),
            "{result}"
        );
    }

    #[test]
    fn an_expired_background_task_is_refused_without_asking_openai() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        let id = created(&mut h);
        h.advance(Duration::from_secs(61));
        let r = h.request(tasks(2, "tasks/get", &id));
        assert!(
            r["error"]["message"].as_str().unwrap().contains("expired"),
            "{r}"
        );
        assert!(h.take_http().is_empty());
    }

    #[test]
    fn failing_reads_are_retried_at_the_poll_pace_then_the_last_state_is_told() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        let id = created(&mut h);
        let poll = ServerConfig::default().tasks.poll_interval;
        h.advance(poll);
        h.send(tasks(2, "tasks/get", &id));
        // A reset, then 5xx: each retried (request.max_retries, 3), never sooner than a
        // poll interval later; the fourth failure is final.
        let read = h.take_http().remove(0);
        let mut last_get = h.now.instant;
        h.fail(read.attempt, crate::io::TransportErrorKind::Io, "reset");
        for status in [500, 502, 503] {
            assert!(h.take_http().is_empty(), "not at once");
            h.fire();
            let read = h.take_http().remove(0);
            assert!(h.now.instant >= last_get + poll, "paced");
            last_get = h.now.instant;
            assert!(h.frames().is_empty(), "still trying");
            h.reply(read.attempt, status, b"{}", &[]);
        }
        // The poll is answered with the last state known; a poll meanwhile costs no read.
        let r = h.frames().remove(0);
        assert_eq!(
            (r["id"].clone(), r["result"]["status"].clone()),
            (json!(2), json!("working")),
            "{r}"
        );
        let r = h.request(tasks(3, "tasks/get", &id));
        assert_eq!(r["result"]["status"], "working", "{r}");
        assert!(
            h.take_http().is_empty(),
            "paced: {:?}",
            h.now.instant - last_get
        );
        // The next poll after the interval reads again and succeeds.
        h.advance(poll);
        h.send(tasks(4, "tasks/get", &id));
        let read = h.take_http().remove(0);
        h.reply(read.attempt, 200, &finished("resp_1"), &[]);
        assert_eq!(h.frames().remove(0)["result"]["status"], "completed");
    }

    #[test]
    fn without_any_state_a_failing_read_tells_the_poll_to_poll_again() {
        // Another instance, which never saw the task: nothing to fall back on.
        let mut first = Harness::new(config(1));
        first.init("2025-11-25");
        let id = created(&mut first);
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        h.send(tasks(1, "tasks/get", &id));
        for _ in 0..4 {
            let read = h.take_http().remove(0);
            h.reply(read.attempt, 502, b"{}", &[]);
            if let Some(r) = h.frames().pop() {
                let message = r["error"]["message"].as_str().unwrap().to_owned();
                assert!(message.contains("poll again"), "{r}");
                return;
            }
            h.fire();
        }
        panic!("the poll was never answered");
    }

    #[test]
    fn a_create_answered_429_waits_as_long_as_openai_asks() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        h.send(task_call(1, None));
        let post = h.take_http().remove(0);
        let sent = h.now.instant;
        h.reply(post.attempt, 429, br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#, &[("retry-after", "2")]);
        assert!(h.take_http().is_empty(), "not at once");
        h.fire();
        let again = h.take_http().remove(0);
        assert_eq!(h.now.instant - sent, Duration::from_secs(2));
        h.reply(again.attempt, 200, &state("resp_1", "queued"), &[]);
        assert_eq!(h.frames().remove(0)["result"]["task"]["status"], "working");
    }

    #[test]
    fn creates_take_a_slot_like_calls() {
        let mut cfg = config(1);
        cfg.max_inflight = 2;
        let mut h = Harness::new(cfg);
        h.init("2025-11-25");
        for id in 1..=5 {
            h.send(task_call(id, None));
        }
        let posts = h.take_http();
        assert_eq!(posts.len(), 2, "two slots, two creates in flight");
        h.reply(posts[0].attempt, 200, &state("resp_1", "queued"), &[]);
        assert_eq!(
            h.take_http().len(),
            1,
            "a freed slot starts the next create"
        );
        // Reads take no slot: a poll is not held behind the answers it polls for.
        let task = h.frames().remove(0)["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        h.advance(ServerConfig::default().tasks.poll_interval);
        h.send(tasks(9, "tasks/get", &task));
        assert_eq!(h.take_http()[0].method, HttpMethod::Get);
    }

    #[test]
    fn a_refused_parameter_on_a_create_is_fitted_like_a_call() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        h.send(task_call(1, None));
        let post = h.take_http().remove(0);
        let refused = br#"{"error":{"message":"Unsupported parameter: 'text.verbosity' is not supported with this model.","type":"invalid_request_error","param":"text.verbosity","code":"unsupported_parameter"}}"#;
        h.reply(post.attempt, 400, refused, &[]);
        let again = h.take_http().remove(0);
        let body: Value = serde_json::from_slice(&again.body).unwrap();
        assert!(body.get("text").is_none(), "{body}");
        assert_eq!(body["background"], true);
        h.reply(again.attempt, 200, &state("resp_1", "queued"), &[]);
        assert_eq!(h.frames().remove(0)["result"]["task"]["status"], "working");
    }

    #[test]
    fn a_modern_client_gets_a_background_task_and_its_result_in_tasks_get() {
        let mut h = Harness::new(config(1));
        h.send(modern_call(1, true));
        let post = h.take_http().remove(0);
        h.reply(post.attempt, 200, &state("resp_9", "queued"), &[]);
        let r = h.frames().remove(0);
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        h.advance(ServerConfig::default().tasks.poll_interval);
        h.send(modern_tasks(2, "tasks/get", &id));
        let read = h.take_http().remove(0);
        assert!(read.url.ends_with("/responses/resp_9"));
        h.reply(read.attempt, 200, &finished("resp_9"), &[]);
        let got = h.frames().remove(0);
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(got["result"]["result"]["resultType"], "complete");
        let ack = h.request(modern_tasks(3, "tasks/cancel", &id));
        assert_eq!(ack["result"]["resultType"], "complete");
    }

    #[test]
    fn a_failed_background_response_completes_a_modern_task_with_the_tool_error() {
        let mut h = Harness::new(config(1));
        h.send(modern_call(1, true));
        let post = h.take_http().remove(0);
        h.reply(post.attempt, 200, &state("resp_9", "queued"), &[]);
        let id = h.frames().remove(0)["result"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        h.advance(ServerConfig::default().tasks.poll_interval);
        h.send(modern_tasks(2, "tasks/get", &id));
        let read = h.take_http().remove(0);
        let failed = json!({"id":"resp_9","object":"response","status":"failed",
            "error":{"code":"server_error","message":"The model had an internal failure."},"output":[]});
        h.reply(read.attempt, 200, failed.to_string().as_bytes(), &[]);
        let got = h.frames().remove(0);
        // The 2026-07-28 extension: failed is for JSON-RPC errors only.
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert!(got["result"].get("statusMessage").is_none(), "{got}");
        assert_eq!(got["result"]["result"]["isError"], true, "{got}");
    }

    #[test]
    fn a_create_that_may_have_reached_openai_is_not_sent_twice() {
        let mut h = Harness::new(config(1));
        h.init("2025-11-25");
        // Refused before sending: tried again.
        h.send(task_call(1, None));
        let post = h.take_http().remove(0);
        h.fail(
            post.attempt,
            crate::io::TransportErrorKind::Connect,
            "refused",
        );
        assert!(h.take_http().is_empty(), "after a backoff");
        h.fire();
        let again = h.take_http();
        assert_eq!(again.len(), 1, "a connect failure is retried");
        // Broken after sending: not sent again; the call says what happened.
        h.fail(again[0].attempt, crate::io::TransportErrorKind::Io, "reset");
        assert!(h.take_http().is_empty(), "no second background response");
        let r = h.frames().remove(0);
        assert_eq!(r["id"], 1);
        assert_eq!(r["result"]["isError"], true, "{r}");
    }
}

#[test]
fn a_modern_task_call_that_ends_within_the_window_is_answered_with_its_result() {
    let mut h = Harness::new(Harness::keyed());
    h.send(modern_call(1, true));
    assert!(h.frames().is_empty(), "held for the window");
    let attempt = h.take_http()[0].attempt;
    h.advance(Duration::from_millis(10));
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let r = h.frames().remove(0);
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(
        r["result"]["structuredContent"]["answer"].is_string(),
        "{r}"
    );
    assert_eq!(
        h.server.task_count(),
        0,
        "nobody can reach its task: none is kept"
    );
    // Its window ends with nothing left to say.
    while h.server.poll_timeout().is_some() {
        h.fire();
    }
    assert!(h.frames().is_empty());
    // A failure within the window is the plain call's failure too.
    h.send(modern_call(2, true));
    let attempt = h.take_http()[0].attempt;
    h.reply(
        attempt,
        401,
        br#"{"error":{"message":"bad key","code":"invalid_api_key"}}"#,
        &[],
    );
    let r = h.frames().remove(0);
    assert_eq!(r["id"], 2);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(h.server.task_count(), 0);
}

#[test]
fn a_modern_task_call_that_runs_longer_becomes_a_task_polled_more_often_while_young() {
    let mut h = Harness::new(Harness::keyed());
    let window = Duration::from_secs(crate::settings::ANSWER_WITHIN_SECS);
    h.send(modern_call(1, true));
    let attempt = h.take_http()[0].attempt;
    h.advance(window - Duration::from_millis(1));
    h.feed(Input::Timeout);
    assert!(h.frames().is_empty(), "still within the window");
    h.fire();
    let r = h.frames().remove(0);
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    assert_eq!(r["result"]["pollIntervalMs"], 250, "{r}");
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    // The interval grows with the task's age, to the configured one after a minute.
    let mut seen = Vec::new();
    for step in [10, 30, 30] {
        h.advance(Duration::from_secs(step));
        let got = h.request(modern_tasks(2, "tasks/get", &id));
        seen.push(got["result"]["pollIntervalMs"].as_u64().unwrap());
    }
    assert_eq!(seen, [500, 1000, 2000], "at ages 15, 45 and 75 s");
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let got = h.request(modern_tasks(3, "tasks/get", &id));
    assert_eq!(got["result"]["status"], "completed");
    assert!(got["result"]["result"]["structuredContent"]["answer"].is_string());
}

#[test]
fn a_2025_11_25_task_request_gets_its_task_at_once_whatever_the_window() {
    let mut h = Harness::new(Harness::keyed());
    h.init("2025-11-25");
    let r = h.request(task_call(1, None));
    assert_eq!(r["result"]["task"]["status"], "working", "{r}");
    assert_eq!(
        r["result"]["task"]["pollInterval"], 250,
        "a young task is polled often"
    );
}

#[test]
fn a_window_longer_than_the_tasks_life_still_answers_with_the_task() {
    let mut config = Harness::keyed();
    config.tasks.default_ttl = Duration::from_secs(2);
    let mut h = Harness::new(config);
    h.send(modern_call(1, true));
    let _attempt = h.take_http()[0].attempt;
    h.fire();
    let r = h.frames().remove(0);
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    assert_eq!(r["result"]["ttlMs"], 2000);
}

#[test]
fn a_model_that_refused_the_task_lanes_tier_is_not_sent_it_again() {
    let mut config = Harness::keyed();
    config.tasks.service_tier = Some(crate::vocab::ServiceTier::Flex);
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    let tier = |post: &crate::io::HttpRequest| {
        let body: Value = serde_json::from_slice(&post.body).unwrap();
        body.get("service_tier").cloned()
    };
    h.send(task_call(1, None));
    let first = h.take_http().remove(0);
    assert_eq!(tier(&first), Some(json!("flex")), "the lane's tier");
    let refused = br#"{"error":{"message":"Unsupported value: 'service_tier' does not support 'flex' with this model. Supported values are: 'auto' and 'default'.","type":"invalid_request_error","param":"service_tier","code":"unsupported_value"}}"#;
    h.reply(first.attempt, 400, refused, &[]);
    let again = h.take_http().remove(0);
    assert_eq!(tier(&again), Some(json!("auto")), "fitted inside the limit");
    h.reply(again.attempt, 200, &fixture("response-no-search.json"), &[]);
    h.frames();
    // The next task is planned inside what the model said: no 400 paid again.
    h.send(task_call(2, None));
    let next = h.take_http().remove(0);
    assert_eq!(tier(&next), Some(json!("auto")), "not flex again");
}

#[test]
fn a_task_is_sent_at_the_lanes_tier_and_a_plain_call_at_the_profiles() {
    let mut config = Harness::keyed();
    config.tasks.service_tier = Some(crate::vocab::ServiceTier::Flex);
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h.send(task_call(1, None));
    let task: Value = serde_json::from_slice(&h.take_http().remove(0).body).unwrap();
    assert_eq!(task["service_tier"], "flex", "{task}");
    let call = h.call(2, "answer", json!({"query": "q"})).unwrap();
    let call: Value = serde_json::from_slice(&call.body).unwrap();
    assert!(call.get("service_tier").is_none(), "{call}");
}

#[test]
fn task_ids_say_nothing_of_the_process_seed_and_differ_between_seeds() {
    let ids = |seed: u64| -> Vec<String> {
        let mut h = Harness::new(ServerConfig {
            jitter_seed: seed,
            ..Harness::keyed()
        });
        h.init("2025-11-25");
        (1..=3)
            .map(|id| {
                let r = h.request(task_call(id, None));
                r["result"]["task"]["taskId"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    let seed = 0x0123_4567_89ab_cdef_u64;
    let one = ids(seed);
    // Neither the seed nor the number the ids once began at (half the seed), in hex or
    // in decimal, nor any 8-digit run of them.
    let shown = [
        format!("{seed:016x}"),
        format!("{:016x}", seed >> 1),
        seed.to_string(),
        (seed >> 1).to_string(),
    ];
    for id in &one {
        for text in &shown {
            for run in text.as_bytes().windows(8) {
                let run = std::str::from_utf8(run).unwrap();
                assert!(!id.contains(run), "{id} shows {run} of {text}");
            }
        }
    }
    // Two ids of one process share no run of their numbers either: nothing counts.
    let number = |id: &str| id["task-".len()..][..16].to_owned();
    assert_ne!(number(&one[0])[..8], number(&one[1])[..8]);
    // Another seed, other ids.
    let other = ids(seed + 2);
    assert!(
        one.iter().all(|id| !other.contains(id)),
        "{one:?} {other:?}"
    );
}
