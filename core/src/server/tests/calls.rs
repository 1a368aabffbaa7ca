//! Tool calls over time: retries, timeouts, cancellation, queueing, progress, shutdown.

use super::{answer_of, body_of};
use crate::fixture;
use crate::io::*;
use crate::settings::*;
use crate::testing::Harness;
use crate::{Input, Output};
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn rate_limit_waits_for_retry_after_then_succeeds() {
    let mut h = Harness::ready("2025-06-18");
    let first = h.call(1, "answer", json!({"query":"q"})).unwrap();
    let t0 = h.now.instant;
    h.reply(
        first.attempt,
        429,
        &fixture("error-429-rate-limit-exceeded.json"),
        &[("retry-after", "2")],
    );
    assert!(h.frames().is_empty());
    assert!(h.take_http().is_empty());
    assert_eq!(h.server.poll_timeout(), Some(t0 + Duration::from_secs(2)));
    h.fire();
    let second = h.take_http().pop().expect("a second attempt");
    assert_eq!(second.body, first.body);
    h.reply(
        second.attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    assert_eq!(answer_of(&h.frames()[0])["used_search"], false);
}

#[test]
fn server_errors_are_retried_until_the_limit_with_growing_backoff() {
    let mut h = Harness::ready("2025-06-18");
    let mut attempt = h.call(1, "answer", json!({"query":"q"})).unwrap().attempt;
    let mut waits = Vec::new();
    for _ in 0..3 {
        let at = h.now.instant;
        h.reply(attempt, 500, &fixture("error-500-server-error.json"), &[]);
        assert!(h.frames().is_empty());
        waits.push(h.server.poll_timeout().unwrap() - at);
        h.fire();
        attempt = h.take_http().pop().unwrap().attempt;
    }
    assert!(waits.windows(2).all(|w| w[0] < w[1]), "{waits:?}");
    h.reply(attempt, 500, &fixture("error-500-server-error.json"), &[]);
    let f = h.frames();
    assert_eq!(f[0]["error"]["code"], -32050);
    assert_eq!(f[0]["error"]["data"]["retries"], 3);
    assert_eq!(f[0]["error"]["data"]["status"], 500);
    assert_eq!(f[0]["error"]["data"]["type"], "server_error");
    assert!(f[0]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("openai responses failed"));
    assert!(
        f[0]["error"]["data"].get("message").is_none(),
        "debug-only fields stay out"
    );
}

#[test]
fn permanent_failures_are_not_retried() {
    let mut h = Harness::ready("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.reply(
        http.attempt,
        429,
        &fixture("error-429-insufficient-quota.json"),
        &[],
    );
    let f = h.frames();
    assert_eq!(f[0]["error"]["data"]["retries"], 0);
    assert!(f[0]["error"]["message"].as_str().unwrap().contains("quota"));
    let http = h.call(2, "answer", json!({"query":"q"})).unwrap();
    h.reply(http.attempt, 401, br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#, &[]);
    assert!(h.frames()[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("OPENAI_API_KEY"));
}

#[test]
fn timeout_aborts_the_attempt_and_retries() {
    let mut h = Harness::new(ServerConfig {
        timeout: Duration::from_secs(10),
        max_retries: 1,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let first = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.fire();
    assert!(h.take_other().contains(&Output::Abort(first.attempt)));
    h.fire(); // backoff
    let second = h.take_http().pop().unwrap();
    // A late reply to the aborted attempt is ignored.
    h.reply(first.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames().is_empty());
    h.fire(); // second timeout, no retries left
    let f = h.frames();
    assert_eq!(f[0]["error"]["code"], -32050);
    assert!(
        f[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timeout")
            || f[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no reply within")
    );
    assert!(h.take_other().contains(&Output::Abort(second.attempt)));
}

/// A whole read (a service without a stream, or `responses.stream: false`) sends nothing
/// until the answer is ready: a minute of silence is no stall, and only the attempt's
/// deadline ends it.
#[test]
fn a_whole_read_waits_out_the_idle_timeout_until_its_deadline() {
    let mut h = Harness::new(ServerConfig {
        stream: false,
        timeout: Duration::from_secs(120),
        idle_timeout: Duration::from_secs(10),
        max_retries: 0,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let slow = h.call(1, "answer", json!({"query":"q"})).unwrap();
    assert_eq!(body_of(&slow).get("stream"), None);
    let t0 = h.now.instant;
    assert_eq!(
        h.server.poll_timeout(),
        Some(t0 + Duration::from_secs(120)),
        "no idle deadline"
    );
    h.advance(Duration::from_secs(75));
    h.feed(Input::Timeout);
    assert!(!h.take_other().contains(&Output::Abort(slow.attempt)));
    h.reply(slow.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert_eq!(answer_of(&h.frames()[0])["used_search"], false);

    let silent = h.call(2, "answer", json!({"query":"q"})).unwrap();
    h.fire();
    assert_eq!(h.now.instant, t0 + Duration::from_secs(75 + 120));
    let message = h.frames()[0]["error"]["message"].to_string();
    assert!(message.contains("no reply within 120 s"), "{message}");
    assert!(h.take_other().contains(&Output::Abort(silent.attempt)));
}

#[test]
fn a_refused_effort_is_moved_to_the_nearest_supported_once_and_remembered() {
    let mut h = Harness::ready("2025-06-18");
    let args = json!({"query":"q", "reasoning_effort": "xhigh"});
    let first = h.call(1, "answer", args.clone()).unwrap();
    assert_eq!(body_of(&first)["reasoning"]["effort"], "xhigh");
    // The real 400: "Supported values are: 'none', 'low', 'medium', and 'high'."
    h.reply(
        first.attempt,
        400,
        &fixture("error-400-unsupported-reasoning-effort.json"),
        &[],
    );
    let second = h.take_http().pop().expect("retried at once");
    assert_eq!(body_of(&second)["reasoning"]["effort"], "high");
    assert!(
        body_of(&second).get("text").is_some(),
        "the rest is unchanged"
    );
    h.reply(
        second.attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    let reply = h.frames().remove(0);
    let usage = &reply["result"]["_meta"][crate::mcp::shape::META_USAGE];
    assert_eq!(
        usage["adjusted"],
        json!([{"param": "reasoning.effort", "from": "xhigh", "to": "high"}]),
        "{reply}"
    );
    assert_eq!(usage["attempts"], 2);
    // The next call does not pay the 400 again, and says what it changed.
    let third = h.call(2, "answer", args).unwrap();
    assert_eq!(body_of(&third)["reasoning"]["effort"], "high");
    h.reply(third.attempt, 200, &fixture("response-no-search.json"), &[]);
    let usage = &h.frames()[0]["result"]["_meta"][crate::mcp::shape::META_USAGE];
    assert_eq!(usage["attempts"], 1);
    assert_eq!(usage["adjusted"][0]["to"], "high");
}

#[test]
fn a_refused_parameter_without_alternatives_is_left_out_and_a_useless_400_fails() {
    let mut h = Harness::ready("2025-06-18");
    let first = h.call(1, "answer", json!({"query":"q"})).unwrap();
    assert!(body_of(&first).get("text").is_some());
    let refusal = json!({"error": {"message": "Unsupported parameter: 'text.verbosity' is not supported with this model.",
        "type": "invalid_request_error", "param": "text.verbosity", "code": "unsupported_parameter"}});
    h.reply(first.attempt, 400, refusal.to_string().as_bytes(), &[]);
    let second = h.take_http().pop().expect("retried without it");
    assert!(body_of(&second).get("text").is_none());
    // The same refusal again changes nothing: the call fails with the API's message.
    h.reply(second.attempt, 400, refusal.to_string().as_bytes(), &[]);
    assert!(h.take_http().is_empty(), "no third attempt");
    let f = h.frames();
    let message = f[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("Unsupported parameter"), "{message}");
}

#[test]
fn cancel_aborts_and_suppresses_the_reply() {
    let mut h = Harness::ready("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}));
    assert_eq!(h.take_other(), vec![Output::Abort(http.attempt)]);
    h.reply(http.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames().is_empty());
    assert_eq!(h.server.poll_timeout(), None);
    // Cancel during backoff: no further attempt.
    let http = h.call(2, "answer", json!({"query":"q"})).unwrap();
    h.reply(http.attempt, 503, b"", &[]);
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    assert_eq!(h.server.poll_timeout(), None);
    assert!(h.take_http().is_empty() && h.frames().is_empty());
    // The id can be reused afterwards.
    assert!(h.call(1, "answer", json!({"query":"q"})).is_some());
}

#[test]
fn duplicate_in_flight_id_is_rejected_and_the_first_call_continues() {
    let mut h = Harness::ready("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}));
    assert_eq!(r["error"]["code"], -32600);
    h.reply(http.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames()[0].get("result").is_some());
}

#[test]
fn calls_beyond_max_inflight_wait_in_the_queue() {
    let mut h = Harness::new(ServerConfig {
        max_inflight: 2,
        max_queue: 1,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let a = h.call(1, "answer", json!({"query":"a"})).unwrap();
    let _b = h.call(2, "answer", json!({"query":"b"})).unwrap();
    assert!(
        h.call(3, "answer", json!({"query":"c"})).is_none(),
        "queued"
    );
    let r = h.request(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"answer","arguments":{"query":"d"}}}));
    assert_eq!(r["error"]["code"], -32051);
    h.reply(a.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert_eq!(h.frames()[0]["id"], 1);
    let c = h.take_http().pop().expect("the queued call starts");
    assert!(body_of(&c)["input"].as_str().unwrap().starts_with('c'));
}

#[test]
fn progress_notifications_increase_and_stop_before_the_reply() {
    let mut h = Harness::ready("2025-06-18");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":"tok"}}}));
    let http = h.take_http().pop().unwrap();
    for _ in 0..3 {
        h.advance(Duration::from_secs(5));
        h.feed(Input::Timeout);
    }
    h.reply(http.attempt, 200, &fixture("response-no-search.json"), &[]);
    h.advance(Duration::from_secs(30));
    h.feed(Input::Timeout);
    let f = h.frames();
    let (progress, rest): (Vec<&Value>, Vec<&Value>) = f
        .iter()
        .partition(|m| m["method"] == "notifications/progress");
    assert_eq!(progress.len(), 4, "{f:?}");
    let values: Vec<u64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_u64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(progress
        .iter()
        .all(|p| p["params"]["progressToken"] == "tok" && p["params"]["message"].is_string()));
    assert_eq!(rest.len(), 1);
    assert_eq!(f.last().unwrap()["id"], 1, "the reply comes last");
}

#[test]
fn eof_lets_calls_finish_then_exits() {
    let mut h = Harness::ready("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.feed(Input::StdinClosed);
    assert!(!h.server.is_exited());
    h.reply(http.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(h.frames()[0].get("result").is_some());
    assert_eq!(h.take_other(), vec![Output::Exit]);
}

#[test]
fn eof_grace_period_expiry_aborts_and_exits() {
    let mut h = Harness::new(ServerConfig {
        shutdown_grace: Duration::from_secs(1),
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.feed(Input::StdinClosed);
    h.fire();
    assert_eq!(h.frames()[0]["error"]["code"], -32050);
    assert_eq!(
        h.take_other(),
        vec![Output::Abort(http.attempt), Output::Exit]
    );
}

#[test]
fn shutdown_aborts_without_replies() {
    let mut h = Harness::ready("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.feed(Input::Shutdown);
    assert!(h.frames().is_empty());
    assert_eq!(
        h.take_other(),
        vec![Output::Abort(http.attempt), Output::Exit]
    );
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    assert!(h.take_other().is_empty());
}

#[test]
fn eof_with_nothing_in_flight_exits_at_once() {
    let mut h = Harness::ready("2025-06-18");
    h.send_raw(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    h.feed(Input::StdinClosed);
    assert_eq!(
        h.frames()[0]["id"],
        9,
        "the final unterminated line is served"
    );
    assert_eq!(h.take_other(), vec![Output::Exit]);
}

#[test]
fn transport_failures() {
    let mut h = Harness::new(ServerConfig {
        max_retries: 0,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
    h.feed(Input::HttpFailed(
        http.attempt,
        TransportError {
            kind: TransportErrorKind::Tls,
            detail: "bad cert".into(),
        },
    ));
    let f = h.frames();
    assert!(f[0]["error"]["message"].as_str().unwrap().contains("TLS"));
}

#[test]
fn a_queued_call_can_be_cancelled() {
    let mut h = Harness::new(ServerConfig {
        max_inflight: 1,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let a = h.call(1, "answer", json!({"query":"a"})).unwrap();
    assert!(
        h.call(2, "answer", json!({"query":"b"})).is_none(),
        "queued"
    );
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    assert!(
        h.take_other().is_empty(),
        "nothing to abort for a queued call"
    );
    h.reply(a.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert_eq!(h.frames().len(), 1, "only call 1 is answered");
    assert!(h.take_http().is_empty(), "the cancelled call never starts");
}

#[test]
fn unknown_id_is_left_out_under_2025_11_25() {
    let mut h = Harness::ready("2025-11-25");
    h.send_raw(b"{oops\n");
    let f = h.frames();
    assert_eq!(f[0]["error"]["code"], -32700);
    assert!(f[0].get("id").is_none());
}

#[test]
fn a_model_openai_shut_down_is_refused_without_a_request_where_the_table_applies() {
    let config = |enforce| {
        let mut profiles = crate::settings::Profiles::default();
        profiles.set(
            crate::tools::Tool::Answer,
            crate::settings::Profile {
                model: "o4-mini".into(),
                ..crate::settings::Profile::default()
            },
        );
        ServerConfig {
            profiles,
            enforce_retirements: enforce,
            ..Harness::keyed()
        }
    };
    let mut h = Harness::new(config(true));
    // The harness's clock is past o4-mini's shutdown (2026-10-23).
    h.now.unix_secs = 1_795_000_000; // 2026-11-18
    h.init("2025-11-25");
    assert!(
        h.call(1, "answer_quick", json!({"query":"q"})).is_none(),
        "nothing sent"
    );
    let reply = h.frames().remove(0);
    assert_eq!(reply["result"]["isError"], true);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("o4-mini was shut down by OpenAI on 2026-10-23"),
        "{text}"
    );
    assert!(
        text.contains("set model_profiles.answer.model to gpt-5.6-terra"),
        "{text}"
    );
    // Elsewhere (Azure deployments, gateways) the name is sent, and a 404 gets advice.
    let mut h = Harness::new(config(false));
    h.now.unix_secs = 1_795_000_000;
    h.init("2025-11-25");
    let http = h.call(1, "answer", json!({"query":"q"})).expect("sent");
    let not_found = json!({"error": {"message": "The model `o4-mini` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": null, "code": "model_not_found"}});
    h.reply(http.attempt, 404, not_found.to_string().as_bytes(), &[]);
    let reply = h.frames().remove(0);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("does not exist"), "{text}");
    assert!(
        text.contains("set model_profiles.answer.model to gpt-5.6-terra"),
        "{text}"
    );
}

#[test]
fn a_model_the_provider_does_not_know_names_the_setting_to_change() {
    let mut profiles = crate::settings::Profiles::default();
    for (tool, model) in [
        (crate::tools::Tool::Answer, "gpt-5.6-terra"),
        (crate::tools::Tool::AnswerQuick, "gpt-nope"),
    ] {
        let profile = crate::settings::Profile {
            model: model.into(),
            ..crate::settings::Profile::default()
        };
        profiles.set(tool, profile);
    }
    let mut h = Harness::new(ServerConfig {
        profiles,
        ..Harness::keyed()
    });
    h.init("2025-06-18");
    let http = h.call(1, "answer_quick", json!({"query":"q"})).unwrap();
    let not_found = json!({"error": {"message": "The model `gpt-nope` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": null, "code": "model_not_found"}});
    h.reply(http.attempt, 404, not_found.to_string().as_bytes(), &[]);
    let message = h.frames()[0]["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("set model_profiles.answer_quick.model to a model it lists"),
        "{message}"
    );
    assert!(message.contains("doctor"), "{message}");
}

mod lookups {
    use super::*;

    /// A keyed server that looks its models up, with `base_url` (OpenAI's by default).
    fn looking(base_url: Option<&str>) -> Harness {
        let mut config = Harness::keyed();
        config.model_lookups = true;
        if let Some(url) = base_url {
            config.base_url = url.into();
            config.enforce_retirements = false;
        }
        Harness::new(config)
    }

    #[test]
    fn the_lookup_starts_a_second_after_the_first_reply_and_never_holds_it() {
        let mut h = looking(None);
        let t0 = h.now.instant;
        h.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize",
            "params":{"protocolVersion":"2025-06-18","capabilities":{}}}));
        let outputs = h.take_other();
        assert!(
            matches!(&outputs[..], [Output::Write(_)]),
            "the reply alone: {outputs:?}"
        );
        let after = crate::openai::calendar::FIRST_LOOKUP_AFTER;
        assert_eq!(h.server.poll_timeout(), Some(t0 + after));
        h.fire();
        let outputs = h.take_other();
        let [Output::Http(get)] = &outputs[..] else {
            panic!("{outputs:?}")
        };
        assert_eq!(get.method, HttpMethod::Get);
        assert_eq!(get.url, "https://api.openai.com/v1/models/gpt-6.1-terra");
        // Looked up once; again a day later.
        h.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert!(h.take_http().is_empty());
        h.reply(
            get.attempt,
            200,
            br#"{"id":"gpt-6.1-terra","shutdown_date":null}"#,
            &[],
        );
        assert_eq!(
            h.server.poll_timeout(),
            Some(h.now.instant + crate::openai::calendar::LOOKUP_EVERY)
        );
        h.fire();
        assert_eq!(h.take_http().len(), 1, "the daily lookup");
    }

    /// A session whose model lookup answered `status` with `body`; the call then made.
    fn call_after_lookup(h: &mut Harness, status: u16, body: &str) -> Option<Value> {
        h.init("2025-11-25");
        h.fire();
        let get = h.take_http().remove(0);
        h.reply(get.attempt, status, body.as_bytes(), &[]);
        h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"answer","arguments":{"query":"q"}}}));
        let frames = h.frames();
        frames.into_iter().next()
    }

    #[test]
    fn a_past_provider_date_refuses_calls_on_any_base_url() {
        // 2025-08-09 is the harness's day: a date before it is past.
        let mut h = looking(Some("https://gateway.example/v1"));
        let refused = call_after_lookup(
            &mut h,
            200,
            r#"{"id":"gpt-6.1-terra","shutdown_date":"2025-08-01"}"#,
        )
        .expect("refused at once");
        assert!(h.take_http().is_empty(), "no request for a shut-down model");
        let text = refused["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("gpt-6.1-terra was shut down on 2025-08-01")
                && text.contains("set model_profiles.answer.model"),
            "{text}"
        );
    }

    #[test]
    fn a_coming_null_or_missing_date_changes_nothing() {
        for (status, body) in [
            (
                200,
                r#"{"id":"gpt-6.1-terra","shutdown_date":"2025-08-20"}"#,
            ),
            (
                200,
                r#"{"id":"gpt-6.1-terra","shutdown_date":"2030-01-01"}"#,
            ),
            (200, r#"{"id":"gpt-6.1-terra","shutdown_date":null}"#),
            (404, r#"{"error":{"message":"not found"}}"#),
            (200, "<html>"),
        ] {
            let mut h = looking(None);
            assert!(call_after_lookup(&mut h, status, body).is_none(), "{body}");
            assert_eq!(h.take_http().len(), 1, "the call goes out: {body}");
        }
    }

    #[test]
    fn a_lookup_that_hangs_holds_nothing_back() {
        let mut h = looking(None);
        h.init("2025-06-18");
        h.fire();
        let _hanging = h.take_http().remove(0);
        let http = h.call(1, "answer", json!({"query":"q"})).unwrap();
        h.reply(http.attempt, 200, &fixture("response-no-search.json"), &[]);
        assert_eq!(h.frames().len(), 1, "answered while the lookup hangs");
        // Stdin closes: the server exits without waiting for the lookup.
        h.feed(Input::StdinClosed);
        assert!(h.take_other().contains(&Output::Exit));
    }
}

mod lookups_at_shutdown {
    use super::*;

    #[test]
    fn a_pending_lookup_never_wakes_a_closing_server() {
        // Found by the server fuzz target: stdin closed before the first lookup was due,
        // with a call in flight; the lookup's time stayed in the past and woke the server
        // at once, again and again.
        let mut config = Harness::keyed();
        config.model_lookups = true;
        let mut h = Harness::new(config);
        h.init("2025-06-18");
        let _call = h.call(1, "answer", json!({"query":"q"})).unwrap();
        h.feed(Input::StdinClosed);
        let after = crate::openai::calendar::FIRST_LOOKUP_AFTER;
        h.advance(after * 2);
        h.feed(Input::Timeout);
        let next = h.server.poll_timeout().expect("the call's own deadlines");
        assert!(next > h.now.instant, "woken for nothing");
        assert!(h.take_http().is_empty(), "no lookup once closing");
    }
}
