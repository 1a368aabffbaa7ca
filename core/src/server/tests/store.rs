//! Limits shared through a store: a call waits for its reserve, and goes on, is refused
//! with the limit's error, or with the store's when it does not answer; its spend is added
//! when it ends, and a call that fails before spending is given back.

use crate::clients::Limit;
use crate::fixture;
use crate::money::Picodollars;
use crate::outcome::{Outcome, Refusal};
use crate::serve::exchange::ExchangeOut;
use crate::settings::{OnUnavailable, ServerConfig, StoreSettings};
use crate::store::{StoreId, StoreOp, StoreReply};
use crate::testing::Harness;
use crate::Output;
use serde_json::{json, Value};
use std::time::Duration;

fn shared(on_unavailable: OnUnavailable, spend: Option<u64>) -> Harness {
    let config = ServerConfig {
        store: Some(StoreSettings { on_unavailable }),
        instance_limit: Limit {
            calls_per_minute: Some(10),
            spend_per_day: spend.map(Picodollars),
        },
        ..Harness::keyed()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h
}

/// $1,000 in picodollars: a spend cap no test reaches.
const THOUSAND_USD: u64 = 1_000_000_000_000_000;

fn call(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"}}})
}

/// The store operations asked since the last look.
pub(super) fn store_ops(h: &mut Harness) -> Vec<(StoreId, StoreOp)> {
    h.take_other()
        .into_iter()
        .filter_map(|o| match o {
            Output::Store(id, op) => Some((id, op)),
            _ => None,
        })
        .collect()
}

pub(super) fn answer(h: &mut Harness, id: StoreId, reply: StoreReply) {
    let took = Duration::from_millis(1);
    h.feed(crate::Input::StoreReply { id, reply, took });
}

#[test]
fn a_call_waits_for_its_reserve_then_runs_and_its_spend_is_added() {
    // A spend cap ($1,000): the call holds its estimate while it waits and runs.
    let mut h = shared(OnUnavailable::Refuse, Some(THOUSAND_USD));
    h.send(call(1));
    assert!(h.frames().is_empty(), "the call waits for the store");
    assert!(
        h.take_http().is_empty(),
        "nothing goes to OpenAI before the reserve"
    );
    let ops = store_ops(&mut h);
    let [(id, StoreOp::Reserve { args, .. })] = ops.as_slice() else {
        panic!("one reserve: {ops:?}");
    };
    assert_eq!(args[1], 10, "the instance's calls per minute is checked");
    answer(
        &mut h,
        *id,
        StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
    );
    let attempt = h.take_http().remove(0).attempt;
    let mut body: Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
    body["model"] = "gpt-6.1-terra".into();
    h.reply(attempt, 200, body.to_string().as_bytes(), &[]);
    let reply = h.frames().remove(0);
    assert!(reply["result"]["content"].is_array(), "{reply}");
    let ops = store_ops(&mut h);
    assert!(
        matches!(
            ops.as_slice(),
            [(_, StoreOp::Unhold { .. }), (_, StoreOp::Spend { amount, .. })] if *amount > 0
        ),
        "the estimate held since admission is let go, the real cost spent: {ops:?}"
    );
}

#[test]
fn a_reached_limit_refuses_with_its_error_and_when_to_come_back() {
    let mut h = shared(OnUnavailable::Refuse, None);
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    answer(
        &mut h,
        id,
        StoreReply::Reserve {
            reached: 2,
            value: 10,
            held: 0,
        },
    );
    assert!(h.take_http().is_empty());
    let reply = h.frames().remove(0);
    let details = &reply["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        (&details["limit"], &details["scope"], &details["refusal"]),
        (
            &json!("calls_per_minute"),
            &json!("instance"),
            &json!("limit_calls_per_minute")
        ),
        "{reply}"
    );
    let records = h.take_records();
    assert_eq!(
        records.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [Outcome::Refused(Refusal::CallsPerMinute)]
    );
}

#[test]
fn without_the_store_money_limits_refuse_and_others_follow_on_unavailable() {
    let down = || StoreReply::Unavailable("connection refused".into());
    // No spend limit, `refuse`: refused, naming the store; /ready says so.
    let mut h = shared(OnUnavailable::Refuse, None);
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    answer(&mut h, id, down());
    let reply = h.frames().remove(0);
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("could not reach the store") && text.contains("connection refused"),
        "{text}"
    );
    assert_eq!(h.server.health().refusal(), Some(Refusal::StoreUnavailable));
    h.feed(crate::Input::StoreHealth(true));
    assert_eq!(h.server.health().refusal(), None, "the store is back");
    // No spend limit, `allow`: the call runs, uncounted.
    let mut h = shared(OnUnavailable::Allow, None);
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    answer(&mut h, id, down());
    assert_eq!(h.take_http().len(), 1, "admitted without the store");
    // A spend limit: refused even with `allow` (a money cap fails closed).
    let mut h = shared(OnUnavailable::Allow, Some(1_000_000));
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    answer(&mut h, id, down());
    assert!(h.take_http().is_empty());
    let reply = h.frames().remove(0);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
}

#[test]
fn a_call_that_fails_before_spending_is_given_back() {
    // A spend cap ($1,000): the call holds its estimate while it waits and runs.
    let mut h = shared(OnUnavailable::Refuse, Some(THOUSAND_USD));
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    answer(
        &mut h,
        id,
        StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
    );
    let attempt = h.take_http().remove(0).attempt;
    let refused = br#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#;
    h.reply(attempt, 400, refused, &[]);
    assert_eq!(h.frames().len(), 1);
    let ops = store_ops(&mut h);
    assert!(
        matches!(
            ops.as_slice(),
            [(_, StoreOp::Unhold { .. }), (_, StoreOp::Release { .. })]
        ),
        "{ops:?}"
    );
}

#[test]
fn a_call_cancelled_while_it_waits_never_starts() {
    // A spend cap ($1,000): the call holds its estimate while it waits and runs.
    let mut h = shared(OnUnavailable::Refuse, Some(THOUSAND_USD));
    h.send(call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    answer(
        &mut h,
        id,
        StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
    );
    assert!(h.take_http().is_empty(), "a cancelled call is not sent");
    assert!(h.frames().is_empty(), "and gets no reply");
    let ops = store_ops(&mut h);
    assert!(
        matches!(
            ops.as_slice(),
            [(_, StoreOp::Release { .. }), (_, StoreOp::Unhold { .. })]
        ),
        "the store's count and hold are given back: {ops:?}"
    );
}

#[test]
fn a_call_its_http_client_cancels_while_it_waits_never_starts() {
    // A spend cap ($1,000): the call holds its estimate while it waits and runs.
    let mut h = shared(OnUnavailable::Refuse, Some(THOUSAND_USD));
    let post = |h: &mut Harness, x: u64, message: Value| {
        h.post_as(x, crate::clients::ClientId::DEFAULT, None, message);
    };
    post(&mut h, 1, call(1));
    let (id, _) = store_ops(&mut h).remove(0);
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
    post(&mut h, 2, cancel);
    let reserved = StoreReply::Reserve {
        reached: 0,
        value: 0,
        held: 0,
    };
    answer(&mut h, id, reserved);
    assert!(h.take_http().is_empty(), "a cancelled call is not sent");
    // The cancel is published for the other instances first.
    let ops = store_ops(&mut h);
    assert!(
        matches!(
            ops.as_slice(),
            [
                (_, StoreOp::Publish { .. }),
                (_, StoreOp::Release { .. }),
                (_, StoreOp::Unhold { .. })
            ]
        ),
        "the store's count and hold are given back: {ops:?}"
    );
}

#[test]
fn a_call_cancelled_on_another_instance_while_it_waits_never_starts() {
    // A spend cap ($1,000): the call holds its estimate while it waits and runs.
    let mut h = shared(OnUnavailable::Refuse, Some(THOUSAND_USD));
    let post = |h: &mut Harness, x: u64, message: Value, client| {
        h.post_as(x, client, None, message);
    };
    post(&mut h, 1, call(1), crate::clients::ClientId::DEFAULT);
    let (id, _) = store_ops(&mut h).remove(0);
    // Another client's cancel of the same id, and one naming a client unknown here,
    // leave it waiting; its own client's, POSTed to another instance, reaches it.
    let event = |client: &str| {
        let id = crate::jsonrpc::RequestId::Int("1".into());
        let client = client.to_owned();
        crate::store::events::StoreEvent::Request { client, id }.to_string()
    };
    h.feed(crate::Input::StoreEvent(&event("nobody-here")));
    h.feed(crate::Input::StoreEvent(&event("default")));
    let reserved = StoreReply::Reserve {
        reached: 0,
        value: 0,
        held: 0,
    };
    answer(&mut h, id, reserved);
    assert!(h.take_http().is_empty(), "a cancelled call is not sent");
    assert!(h.frames().is_empty(), "and gets no reply");
    let other = h.take_other();
    let answered = |o: &Output| matches!(o, Output::Exchange(_, ExchangeOut::Reply { .. }));
    assert!(!other.iter().any(answered), "not even over HTTP: {other:?}");
    let ended = |o: &Output| matches!(o, Output::Exchange(x, ExchangeOut::Ended) if x.0 == 1);
    assert!(
        other.iter().any(ended),
        "its exchange ends empty: {other:?}"
    );
    let ops: Vec<_> = other
        .into_iter()
        .filter_map(|o| match o {
            Output::Store(id, op) => Some((id, op)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(
            ops.as_slice(),
            [(_, StoreOp::Release { .. }), (_, StoreOp::Unhold { .. })]
        ),
        "the store's count and hold are given back, and nothing is published again: {ops:?}"
    );
}

#[test]
/// A request's cancel from the store names its client and its id exactly: a name in
/// another case or spacing, an id of another type or spelling, or a malformed message
/// reaches nothing; the right one reaches only that client's HTTP request.
fn a_cancel_through_the_store_names_its_client_and_id_exactly() {
    let (config, a, _) = super::two_named_clients();
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let post = |h: &mut Harness, x: u64, id: Value, client| {
        let message = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"answer","arguments":{"query":"q"},"_meta":meta}});
        h.post_as(x, client, None, message);
    };
    h.send(call(7));
    post(&mut h, 1, json!(7), crate::clients::ClientId::DEFAULT);
    post(&mut h, 2, json!(7), a);
    post(&mut h, 3, json!("7"), crate::clients::ClientId::DEFAULT);
    assert_eq!(h.take_http().len(), 4);
    assert_eq!(h.server.calls_in_flight(), 4);
    let feed = |h: &mut Harness, m: &str| {
        h.feed(crate::Input::StoreEvent(m));
        h.server.calls_in_flight()
    };
    for m in [
        "request [\"Default\",7]",
        "request [\"default \",7]",
        "request [\" default\",7]",
        "request [\"a\\u0000\",7]",
        "request [\"A\",7]",
        "request [\"ａ\",7]",
        "request [\"default\",7.0]",
        "request [\"default\",70e-1]",
        "request [\"default\",\"07\"]",
        "request [\"default\",[7]]",
        "request [\"default\",null]",
        "request [\"default\",7,8]",
        "request [\"default\"]",
        "request [\"default\",7",
        "request\t[\"default\",7]",
        "REQUEST [\"default\",7]",
        "request [\"x:y\",7]",
        "request [\"\",7]",
        "request [\"other\",7]",
        "request [\"default\",-7]",
        "request [\"default\",99999999999999999999999999999999999999999999999999]",
        "request {\"client\":\"default\",\"id\":7}",
        "cancel 7 default",
        "ended 7",
    ] {
        assert_eq!(feed(&mut h, m), 4, "{m}");
    }
    let deep = format!(
        "request [\"default\",{}7{}]",
        "[".repeat(3000),
        "]".repeat(3000)
    );
    assert_eq!(feed(&mut h, &deep), 4);
    let big = format!("request [\"default\",\"{}\"]", "7".repeat(5000));
    assert_eq!(feed(&mut h, &big), 4);
    assert_eq!(
        feed(&mut h, "request [\"default\",\"7\"]"),
        3,
        "the string id"
    );
    assert_eq!(feed(&mut h, "request [\"a\",7]"), 2, "a's");
    assert_eq!(
        feed(&mut h, "request [\"default\",7]"),
        1,
        "default's over HTTP"
    );
    assert_eq!(
        feed(&mut h, "request [\"default\",7]"),
        1,
        "never the stdio one"
    );
    let got = h.take_other();
    let replied = |o: &Output| matches!(o, Output::Exchange(_, ExchangeOut::Reply { .. }));
    assert!(!got.iter().any(replied), "{got:?}");
    assert!(h.frames().is_empty());
}
