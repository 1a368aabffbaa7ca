//! Messages over HTTP: one per exchange, each answered on its own response, no session.

use super::*;
use crate::fixture;
use crate::testing::Harness;
use serde_json::{json, Value};

/// Sends `message` on exchange `x` with the header's `version`.
fn post(h: &mut Harness, x: u64, message: Value, version: Option<ProtocolVersion>) {
    h.post_as(x, crate::clients::ClientId::DEFAULT, version, message);
}

/// What went back on each exchange since the last look (nothing goes to stdout).
fn outs(h: &mut Harness) -> Vec<(u64, ExchangeOut)> {
    assert!(h.frames().is_empty(), "an exchange's answer went to stdout");
    h.take_other()
        .into_iter()
        .filter_map(|o| match o {
            Output::Exchange(ExchangeId(x), out) => Some((x, out)),
            Output::Http(_) | Output::Abort(_) => None,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

fn reply_of(out: &ExchangeOut) -> Value {
    match out {
        ExchangeOut::Reply {
            json,
            error,
            retry_after_secs: None,
        } => {
            let v: Value = serde_json::from_slice(json).unwrap();
            assert_eq!(
                error.map(i64::from),
                v["error"]["code"].as_i64(),
                "the code beside the reply is its own"
            );
            v
        }
        other => panic!("not a reply: {other:?}"),
    }
}

fn call(id: u64, token: Option<u64>) -> Value {
    let mut m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}});
    if let Some(t) = token {
        m["params"]["_meta"] = json!({ "progressToken": t });
    }
    m
}

#[test]
fn legacy_requests_need_no_session() {
    let mut h = Harness::new(Harness::keyed());
    // tools/list before any initialize, in the header's version.
    post(
        &mut h,
        1,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        Some(ProtocolVersion::V2025_06_18),
    );
    let got = outs(&mut h);
    let list = reply_of(&got[0].1);
    assert_eq!(got[0].0, 1);
    assert!(list["result"]["tools"][0].get("outputSchema").is_some());
    // Without the header: 2025-03-26, which has no output schemas.
    post(
        &mut h,
        2,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        None,
    );
    let list = reply_of(&outs(&mut h)[0].1);
    assert!(list["result"]["tools"][0].get("outputSchema").is_none());
    // initialize answers and changes nothing: it can be sent again, on any instance.
    for x in [3, 4] {
        post(
            &mut h,
            x,
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}),
            None,
        );
        let r = reply_of(&outs(&mut h)[0].1);
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    }
    assert_eq!(h.server.protocol_version(), None, "no session was opened");
    post(
        &mut h,
        5,
        json!({"jsonrpc":"2.0","id":9,"method":"ping"}),
        None,
    );
    assert_eq!(
        reply_of(&outs(&mut h)[0].1),
        json!({"jsonrpc":"2.0","id":9,"result":{}})
    );
    post(
        &mut h,
        6,
        json!({"jsonrpc":"2.0","id":9,"method":"resources/list"}),
        None,
    );
    assert_eq!(reply_of(&outs(&mut h)[0].1)["error"]["code"], -32601);
}

#[test]
fn modern_requests_are_served_from_their_meta() {
    let mut h = Harness::new(Harness::keyed());
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    post(
        &mut h,
        1,
        json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":meta}}),
        Some(ProtocolVersion::V2026_07_28),
    );
    let r = reply_of(&outs(&mut h)[0].1);
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    post(
        &mut h,
        2,
        json!({"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"_meta":meta}}),
        Some(ProtocolVersion::V2026_07_28),
    );
    // A listen stream: acknowledged at once, held open, then ended by a cancel POSTed
    // on another request, without a reply.
    let got = outs(&mut h);
    let [(2, ExchangeOut::Notification(ack))] = got.as_slice() else {
        panic!("{got:?}")
    };
    let ack: Value = serde_json::from_slice(ack).unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    post(
        &mut h,
        3,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}),
        None,
    );
    let got = outs(&mut h);
    assert!(got.contains(&(2, ExchangeOut::Ended)), "{got:?}");
    assert!(got.contains(&(3, ExchangeOut::Accepted)), "{got:?}");
    // One whose client leaves is forgotten; one still open at shutdown gets its result.
    let listen = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen","params":{"_meta":meta}});
    post(&mut h, 4, listen(4), Some(ProtocolVersion::V2026_07_28));
    post(&mut h, 5, listen(5), Some(ProtocolVersion::V2026_07_28));
    assert_eq!(outs(&mut h).len(), 2);
    h.feed(Input::ExchangeClosed(ExchangeId(4)));
    h.feed(Input::Drain);
    let got = h.take_other();
    let closing: Vec<&Output> = got
        .iter()
        .filter(|o| matches!(o, Output::Exchange(..)))
        .collect();
    let [Output::Exchange(ExchangeId(5), out)] = closing.as_slice() else {
        panic!("{got:?}")
    };
    assert_eq!(reply_of(out)["id"], 5);
    assert_eq!(got.last(), Some(&Output::Exit));
}

#[test]
fn notifications_responses_and_batches() {
    let mut h = Harness::new(Harness::keyed());
    post(
        &mut h,
        1,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        None,
    );
    post(&mut h, 2, json!({"jsonrpc":"2.0","id":5,"result":{}}), None);
    assert_eq!(
        outs(&mut h),
        [(1, ExchangeOut::Accepted), (2, ExchangeOut::Accepted)]
    );
    post(
        &mut h,
        3,
        json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
        None,
    );
    let r = reply_of(&outs(&mut h)[0].1);
    assert_eq!(r["error"]["code"], -32600);
    assert!(r.get("id").is_none(), "{r}");
    post(&mut h, 4, json!({"jsonrpc":"2.0","id":1}), None);
    assert_eq!(reply_of(&outs(&mut h)[0].1)["error"]["code"], -32600);
}

#[test]
fn two_clients_may_use_the_same_id_and_get_their_own_answers() {
    let mut h = Harness::new(Harness::keyed());
    post(&mut h, 1, call(1, Some(7)), None);
    post(&mut h, 2, call(1, None), None);
    // The same id on stdio is its own id space too.
    h.init("2025-06-18");
    h.send(call(1, None));
    let attempts = h.take_http();
    assert_eq!(attempts.len(), 3, "all three calls run");
    let got = outs(&mut h);
    // Progress for the call that asked for it goes back on its exchange only.
    assert!(!got.is_empty(), "the first progress is sent at once");
    assert!(got
        .iter()
        .all(|(x, o)| *x == 1 && matches!(o, ExchangeOut::Notification(_))));
    let answer = fixture("response-no-search.json");
    h.reply(attempts[1].attempt, 200, &answer, &[]);
    let got = outs(&mut h);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 2);
    let r = reply_of(&got[0].1);
    assert_eq!(r["id"], 1);
    assert!(r["result"]["content"][0]["text"].is_string());
    h.reply(attempts[0].attempt, 200, &answer, &[]);
    let got = outs(&mut h);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 1);
    assert_eq!(reply_of(&got[0].1)["id"], 1);
    h.reply(attempts[2].attempt, 200, &answer, &[]);
    assert_eq!(h.frames().len(), 1, "the stdio call answers on stdout");
}

#[test]
fn a_client_that_goes_away_cancels_its_call() {
    let mut h = Harness::new(Harness::keyed());
    post(&mut h, 1, call(1, None), None);
    let attempt = h.take_http()[0].attempt;
    h.feed(Input::ExchangeClosed(ExchangeId(1)));
    let rest = h.take_other();
    assert!(rest.contains(&Output::Abort(attempt)), "{rest:?}");
    assert!(
        rest.iter()
            .all(|o| !matches!(o, Output::Exchange(_, ExchangeOut::Reply { .. }))),
        "no reply after the client left"
    );
    assert_eq!(h.server.calls_in_flight(), 0);
    // Its late completion is ignored.
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    assert!(outs(&mut h).is_empty());
}

#[test]
fn a_cancel_posted_separately_ends_the_call_without_a_reply() {
    let mut h = Harness::new(Harness::keyed());
    post(&mut h, 1, call(42, None), None);
    let attempt = h.take_http()[0].attempt;
    post(
        &mut h,
        2,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}),
        None,
    );
    let rest = h.take_other();
    assert!(rest.contains(&Output::Abort(attempt)));
    assert!(rest.contains(&Output::Exchange(ExchangeId(1), ExchangeOut::Ended)));
    assert!(rest.contains(&Output::Exchange(ExchangeId(2), ExchangeOut::Accepted)));
    assert!(!rest
        .iter()
        .any(|o| matches!(o, Output::Exchange(_, ExchangeOut::Reply { .. }))));
    // A cancel over HTTP cannot reach the stdio client's calls.
    h.init("2025-06-18");
    h.send(call(43, None));
    let stdio_attempt = h.take_http()[0].attempt;
    post(
        &mut h,
        3,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":43}}),
        None,
    );
    assert!(!h.take_other().contains(&Output::Abort(stdio_attempt)));
    assert_eq!(h.server.calls_in_flight(), 1);
}

#[test]
fn draining_finishes_calls_in_flight_refuses_new_ones_then_exits() {
    let mut h = Harness::new(Harness::keyed());
    post(&mut h, 1, call(1, None), None);
    let attempt = h.take_http()[0].attempt;
    h.feed(Input::Drain);
    let health = h.server.health();
    assert_eq!(
        (health.running, health.queued, health.draining),
        (1, 0, true)
    );
    // A new call is refused with a reason the model can act on; other requests work.
    post(&mut h, 2, call(2, None), Some(ProtocolVersion::V2025_11_25));
    let refused = reply_of(&outs(&mut h)[0].1);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("shutting down") && text.contains("again"),
        "{text}"
    );
    post(
        &mut h,
        3,
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
        None,
    );
    assert_eq!(reply_of(&outs(&mut h)[0].1)["result"], json!({}));
    assert!(!h.server.is_exited(), "a call is still in flight");
    // The call in flight finishes and is answered; then the server exits.
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let rest = h.take_other();
    assert!(
        matches!(
            &rest[0],
            Output::Exchange(ExchangeId(1), ExchangeOut::Reply { error: None, .. })
        ),
        "{rest:?}"
    );
    assert_eq!(rest.last(), Some(&Output::Exit));
}

#[test]
fn draining_stops_calls_that_outlive_the_grace() {
    let mut h = Harness::new(Harness::keyed());
    post(&mut h, 1, call(1, None), None);
    let _ = h.take_http();
    h.feed(Input::Drain);
    h.advance(ServerConfig::default().shutdown_grace);
    h.fire();
    let rest = h.take_other();
    let Some(Output::Exchange(ExchangeId(1), out)) =
        rest.iter().find(|o| matches!(o, Output::Exchange(..)))
    else {
        panic!("{rest:?}")
    };
    let error = reply_of(out);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("asked to stop"), "{message}");
    assert_eq!(rest.last(), Some(&Output::Exit));
}

#[test]
fn draining_with_nothing_in_flight_exits_at_once() {
    let mut h = Harness::new(Harness::keyed());
    h.feed(Input::Drain);
    assert_eq!(h.take_other(), vec![Output::Exit]);
}

/// Each named client sees only the tasks it created: another's id is not found, and
/// `tasks/list` lists its own; local and background tasks alike.
#[test]
fn a_client_sees_only_its_own_tasks() {
    use crate::clients::ClientId;
    for background in [false, true] {
        let (mut config, a, b) = super::two_named_clients();
        config.tasks.background = background;
        let mut h = Harness::new(config);
        let v = Some(ProtocolVersion::V2025_11_25);
        let mut x = 0;
        let mut ask = |h: &mut Harness, client: ClientId, method: &str, params: Value| {
            x += 1;
            let message = json!({"jsonrpc":"2.0","id":x,"method":method,"params":params});
            h.post_as(x, client, v, message);
            if background && method == "tools/call" {
                let post = h.take_http().remove(0);
                let queued = br#"{"id":"resp_a","status":"queued","output":[]}"#;
                h.reply(post.attempt, 200, queued, &[]);
            }
            let replies: Vec<Value> = outs(h)
                .iter()
                .filter(|(n, _)| *n == x)
                .map(|(_, out)| reply_of(out))
                .collect();
            replies.into_iter().next().unwrap_or_default()
        };
        let call = json!({"name":"answer","arguments":{"query":"q"},"task":{}});
        let created = ask(&mut h, a, "tools/call", call);
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(!id.is_empty(), "{created}");
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let refused = ask(&mut h, b, method, json!({"taskId": id}));
            let message = refused["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("not one of this client's tasks"),
                "{background} {method}: {refused}"
            );
        }
        let own = ask(&mut h, a, "tasks/get", json!({"taskId": id}));
        assert_eq!(own["result"]["status"], "working", "{own}");
        if !background {
            let of_a = ask(&mut h, a, "tasks/list", json!({}));
            let of_b = ask(&mut h, b, "tasks/list", json!({}));
            let count = |r: &Value| r["result"]["tasks"].as_array().map_or(0, Vec::len);
            assert_eq!((count(&of_a), count(&of_b)), (1, 0), "{of_a} {of_b}");
        }
    }
}

/// A trusted gateway's identity is the call's client: its upstream body says which user
/// by hash, its record names it with the way in; an untrusted peer's header is counted.
#[test]
fn a_gateways_identity_is_the_client_of_its_call_its_upstream_body_and_its_record() {
    use crate::serve::exchange::{Credential, WayIn};
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    let key = config.tasks.key.clone();
    let mut h = Harness::new(config);
    // No clients file: the single token is the gateway's.
    let way = WayIn {
        credential: Credential::StaticToken,
        remote: Some("203.0.113.7".parse().unwrap()),
        identity: Some(Ok("alice".into())),
        header_ignored: false,
    };
    h.feed(Input::Exchange {
        id: ExchangeId(1),
        asked: Asked::Rpc {
            message: call(1, None),
            version: Some(ProtocolVersion::V2025_11_25),
            client: crate::clients::ClientId::DEFAULT,
            trace: None,
            way,
        },
    });
    let sent = h.take_http().remove(0);
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    let expected = super::super::user_ids::user_ids(&key, "x-forwarded-user:alice");
    assert_eq!(body["safety_identifier"], json!(expected.safety_identifier));
    assert_eq!(body["prompt_cache_key"], json!(expected.prompt_cache_key));
    h.reply(sent.attempt, 200, &fixture("response-no-search.json"), &[]);
    let records = h.take_records();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].client, "x-forwarded-user:alice");
    assert_eq!(records[0].arrival.credential, Credential::Gateway);
    assert_eq!(
        records[0].arrival.remote,
        Some("203.0.113.7".parse().unwrap())
    );

    let ignored = WayIn {
        credential: Credential::StaticToken,
        header_ignored: true,
        ..WayIn::default()
    };
    h.feed(Input::Exchange {
        id: ExchangeId(2),
        asked: Asked::Rpc {
            message: json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
            version: Some(ProtocolVersion::V2025_11_25),
            client: crate::clients::ClientId::DEFAULT,
            trace: None,
            way: ignored,
        },
    });
    h.feed(Input::Exchange {
        id: ExchangeId(3),
        asked: Asked::Metrics,
    });
    let text = outs(&mut h)
        .into_iter()
        .find_map(|(x, out)| match (x, out) {
            (3, ExchangeOut::Metrics(text)) => Some(String::from_utf8(text).unwrap()),
            _ => None,
        })
        .unwrap();
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 1"),
        "{text}"
    );
    assert!(text.contains("client=\"x-forwarded-user:alice\""), "{text}");
}

/// Only the gateway's credential names the user: a client the clients file marks
/// `gateway: true`, by its token or by the OAuth identity it claims. Beside any other
/// credential (another client's token, the single token once there is a clients file,
/// an OAuth identity of its own) the claim is ignored, even a malformed one, and
/// counted; the gateway's malformed claim is refused with 400.
#[test]
fn only_the_gateways_credential_names_the_user_in_the_identity_header() {
    use crate::clients::{ClientId, Clients, NamedClient};
    use crate::serve::exchange::{Credential, WayIn};
    use crate::serve::gateway::BadIdentity;
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    let named = |name: &str, identity: &str, gateway| NamedClient {
        name: name.into(),
        limit: crate::clients::Limit::default(),
        identity: Some(identity.into()),
        gateway,
    };
    config.clients = Clients::new(vec![
        named("gw", "svc-gw", true),
        named("ci", "svc-ci", false),
    ])
    .unwrap();
    let (gw, ci) = (config.clients.id(0).unwrap(), config.clients.id(1).unwrap());
    let carol = config.clients.identify("sub", "carol").unwrap();
    let mut h = Harness::new(config);
    let bad = || {
        Err(BadIdentity {
            header: "x-forwarded-user".into(),
            why: "it is empty",
        })
    };
    let claim = |name: &str| Some(Ok(name.to_owned()));
    let cases: Vec<(ClientId, Credential, _, (&str, Credential))> = vec![
        (
            gw,
            Credential::ClientsFile,
            claim("alice"),
            ("x-forwarded-user:alice", Credential::Gateway),
        ),
        (
            gw,
            Credential::OAuth,
            claim("bob"),
            ("x-forwarded-user:bob", Credential::Gateway),
        ),
        // Compared as sent: folding case or Unicode forms is the gateway's.
        (
            gw,
            Credential::ClientsFile,
            claim("Alice"),
            ("x-forwarded-user:Alice", Credential::Gateway),
        ),
        (
            gw,
            Credential::ClientsFile,
            None,
            ("gw", Credential::ClientsFile),
        ),
        (
            ci,
            Credential::ClientsFile,
            claim("alice"),
            ("ci", Credential::ClientsFile),
        ),
        (
            ci,
            Credential::ClientsFile,
            Some(bad()),
            ("ci", Credential::ClientsFile),
        ),
        (
            ci,
            Credential::OAuth,
            claim("alice"),
            ("ci", Credential::OAuth),
        ),
        (
            carol,
            Credential::OAuth,
            claim("alice"),
            ("sub:carol", Credential::OAuth),
        ),
        (
            ClientId::DEFAULT,
            Credential::StaticToken,
            claim("alice"),
            ("default", Credential::StaticToken),
        ),
    ];
    for (i, (client, credential, identity, (want, named_as))) in cases.into_iter().enumerate() {
        let x = i as u64 + 1;
        h.feed(Input::Exchange {
            id: ExchangeId(x),
            asked: Asked::Rpc {
                message: call(x, None),
                version: Some(ProtocolVersion::V2025_11_25),
                client,
                trace: None,
                way: WayIn {
                    credential,
                    identity,
                    ..WayIn::default()
                },
            },
        });
        let sent = h.take_http().remove(0);
        h.reply(sent.attempt, 200, &fixture("response-no-search.json"), &[]);
        let records = h.take_records();
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(
            (records[0].client.as_str(), records[0].arrival.credential),
            (want, named_as),
            "case {x}"
        );
    }
    // The gateway's own malformed claim: 400 naming the header, and nothing sent.
    h.feed(Input::Exchange {
        id: ExchangeId(20),
        asked: Asked::Rpc {
            message: call(20, None),
            version: Some(ProtocolVersion::V2025_11_25),
            client: gw,
            trace: None,
            way: WayIn {
                credential: Credential::ClientsFile,
                identity: Some(bad()),
                ..WayIn::default()
            },
        },
    });
    assert!(h.take_http().is_empty(), "a malformed claim went upstream");
    h.feed(Input::Exchange {
        id: ExchangeId(21),
        asked: Asked::Metrics,
    });
    let mut refused = None;
    let mut metrics = None;
    for (x, out) in outs(&mut h) {
        match (x, out) {
            (20, ExchangeOut::Refused(denial)) => refused = Some(denial),
            (21, ExchangeOut::Metrics(text)) => metrics = Some(String::from_utf8(text).unwrap()),
            _ => {}
        }
    }
    let refused = refused.expect("the malformed claim was not refused");
    assert_eq!(refused.status, 400);
    assert!(
        refused.message.contains("x-forwarded-user"),
        "{}",
        refused.message
    );
    let text = metrics.unwrap();
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 5"),
        "{text}"
    );
}

#[test]
fn a_cancel_over_http_ends_only_its_own_clients_subscriptions() {
    let (config, a, b) = super::two_named_clients();
    let mut h = Harness::new(config);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let as_client = |h: &mut Harness, x: u64, client, message: Value| {
        h.post_as(x, client, None, message);
    };
    // Both clients listen under the same id; `a` cancels it.
    let listen =
        json!({"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{"_meta":meta}});
    as_client(&mut h, 1, a, listen.clone());
    as_client(&mut h, 2, b, listen);
    assert_eq!(outs(&mut h).len(), 2, "both acknowledged");
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}});
    as_client(&mut h, 3, a, cancel);
    let got = outs(&mut h);
    assert!(got.contains(&(1, ExchangeOut::Ended)), "{got:?}");
    assert!(
        !got.contains(&(2, ExchangeOut::Ended)),
        "b's stream is b's: {got:?}"
    );
    // b's stream is still open: it gets its closing result at shutdown.
    h.feed(Input::Drain);
    let got = h.take_other();
    let closed = |o: &Output| matches!(o, Output::Exchange(ExchangeId(2), out) if reply_of(out)["id"] == "s");
    assert!(got.iter().any(closed), "{got:?}");
}

#[test]
fn one_named_client_holds_at_most_its_share_of_subscriptions() {
    use crate::server::subscriptions::{MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_PER_CLIENT};
    let (config, a, b) = super::two_named_clients();
    let mut h = Harness::new(config);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let mut x = 0;
    let mut listen = |h: &mut Harness, client, id: usize| {
        x += 1;
        h.post_as(x, client, None, json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen","params":{"_meta":meta}}));
        let got = outs(h);
        assert_eq!(got.len(), 1, "{got:?}");
        match &got[0].1 {
            ExchangeOut::Notification(_) => None,
            out => Some(
                reply_of(out)["error"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            ),
        }
    };
    for id in 0..MAX_SUBSCRIPTIONS_PER_CLIENT {
        assert_eq!(
            listen(&mut h, a, id),
            None,
            "a's listen {id} is acknowledged"
        );
    }
    let refused = listen(&mut h, a, MAX_SUBSCRIPTIONS_PER_CLIENT).unwrap_or_default();
    assert!(
        refused.contains("this client already holds 16"),
        "{refused}"
    );
    assert!(
        refused.contains("cancel one"),
        "it says what to do: {refused}"
    );
    // The others still have their places: b its share, the default client the rest.
    for id in 0..MAX_SUBSCRIPTIONS_PER_CLIENT {
        assert_eq!(
            listen(&mut h, b, id),
            None,
            "b's listen {id} is acknowledged"
        );
    }
    let rest = MAX_SUBSCRIPTIONS - 2 * MAX_SUBSCRIPTIONS_PER_CLIENT;
    for id in 0..rest {
        assert_eq!(
            listen(&mut h, crate::clients::ClientId::DEFAULT, id),
            None,
            "default's listen {id}"
        );
    }
    let full = listen(&mut h, crate::clients::ClientId::DEFAULT, rest).unwrap_or_default();
    assert!(full.contains("too many open subscriptions (64)"), "{full}");
}

#[test]
fn a_cancel_heard_through_the_store_ends_its_clients_subscription_here() {
    use crate::server::subscriptions::MAX_SUBSCRIPTIONS_PER_CLIENT;
    let (config, a, b) = super::two_named_clients();
    let mut h = Harness::new(config);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let listen = |h: &mut Harness, x: u64, client, id: &str| {
        h.post_as(x, client, None, json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen","params":{"_meta":meta}}));
        outs(h)
    };
    // `a` holds its whole share, `b` one stream under the same id as a's first.
    for n in 0..MAX_SUBSCRIPTIONS_PER_CLIENT {
        let x = n as u64 + 1;
        let got = listen(&mut h, x, a, &format!("s{n}"));
        assert!(
            matches!(got.as_slice(), [(_, ExchangeOut::Notification(_))]),
            "{got:?}"
        );
    }
    let got = listen(&mut h, 100, b, "s0");
    assert!(
        matches!(got.as_slice(), [(100, ExchangeOut::Notification(_))]),
        "{got:?}"
    );
    // Client `a` POSTed its cancel of `s0` to another replica, which published it.
    let id = crate::jsonrpc::RequestId::Str("s0".into());
    let event = crate::store::events::StoreEvent::Request {
        client: "a".into(),
        id,
    };
    h.feed(Input::StoreEvent(&event.to_string()));
    let got = outs(&mut h);
    assert_eq!(
        got,
        vec![(1, ExchangeOut::Ended)],
        "a's stream ends, unanswered"
    );
    // Its place is free: `a` may listen again.
    let got = listen(&mut h, 200, a, "again");
    assert!(
        matches!(got.as_slice(), [(200, ExchangeOut::Notification(_))]),
        "{got:?}"
    );
    // b's stream is b's: it still gets its closing result at shutdown.
    h.feed(Input::Drain);
    let got = h.take_other();
    let closed = |x: u64| move |o: &Output| matches!(o, Output::Exchange(ExchangeId(y), out) if *y == x && reply_of(out)["id"] == "s0");
    assert!(got.iter().any(closed(100)), "{got:?}");
    assert!(!got.iter().any(closed(1)), "{got:?}");
}
