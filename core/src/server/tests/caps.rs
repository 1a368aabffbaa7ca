//! A spend cap holds however many calls arrive at once: each admitted call holds its
//! estimate until its end replaces it, so a burst is refused after the call that filled
//! the day, foreground and background, and every path lets its hold go.

use crate::fixture;
use crate::money::Picodollars;
use crate::outcome::{Outcome, Refusal};
use crate::testing::Harness;
use serde_json::{json, Value};

/// A keyed server whose instance may spend `cap` picodollars a day, initialized.
fn capped(cap: u64, background: bool) -> Harness {
    let mut config = Harness::keyed();
    config.tasks.background = background;
    capped_with(config, cap)
}

/// A server for `config` whose instance may spend `cap` picodollars a day, initialized.
pub(super) fn capped_with(mut config: crate::settings::ServerConfig, cap: u64) -> Harness {
    config.instance_limit.spend_per_day = Some(Picodollars(cap));
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h
}

/// `answer` asked with id `id`, as a task when `task`.
pub(super) fn call(id: u64, task: bool) -> Value {
    let mut message = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"}}});
    if task {
        message["params"]["task"] = json!({"ttl": 60_000});
    }
    message
}

#[test]
fn a_burst_under_a_daily_cap_reaches_openai_once() {
    // $0.0001 a day: far below one call.
    let mut h = capped(100_000_000, false);
    for id in 1..=40 {
        h.send(call(id, false));
    }
    let sent = h.take_http();
    assert_eq!(
        sent.len(),
        1,
        "one call fills the day; the rest wait for nothing"
    );
    let refused = h.frames();
    assert_eq!(refused.len(), 39);
    for reply in &refused {
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("held by its calls still running"),
            "the refusal says what is held: {text}"
        );
    }
    let outcomes: Vec<_> = h.take_records().iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, vec![Outcome::Refused(Refusal::SpendPerDay); 39]);
    assert!(
        h.server.ledger.held().0 .0 > 0,
        "the running call holds its estimate"
    );
    h.reply(
        sent[0].attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    assert_eq!(h.frames().len(), 1);
    assert_eq!(
        h.server.ledger.held(),
        (Picodollars(0), 0),
        "its end let it go"
    );
}

#[test]
fn a_burst_of_background_tasks_under_a_daily_cap_starts_one_run() {
    let mut h = capped(100_000_000, true);
    for id in 1..=40 {
        h.send(call(id, true));
    }
    let sent = h.take_http();
    assert_eq!(sent.len(), 1, "one background create: {sent:?}");
    let refused = h.frames();
    assert_eq!(refused.len(), 39, "{refused:?}");
    let queued = json!({"id":"resp_1","object":"response","status":"queued","output":[]});
    h.reply(sent[0].attempt, 200, queued.to_string().as_bytes(), &[]);
    assert!(h.frames()[0]["result"]["task"]["taskId"].is_string());
    assert_eq!(
        h.server.ledger.held(),
        (Picodollars(0), 0),
        "the run's own hold replaced the call's"
    );
    h.send(call(41, true));
    assert!(h.take_http().is_empty(), "the run's hold fills the day");
}

#[test]
fn below_the_cap_calls_are_admitted_until_their_holds_fill_it() {
    // Room for a few first calls' estimates (gpt-6.1-terra, the first-call bound).
    let mut probe = capped(u64::MAX, false);
    probe.send(call(1, false));
    let one = probe.server.ledger.held().0 .0;
    assert!(one > 0);
    let mut h = capped(one * 3, false);
    for id in 1..=10 {
        h.send(call(id, false));
    }
    assert_eq!(h.take_http().len(), 3, "three estimates fill the day");
}

#[test]
fn every_way_a_call_ends_lets_its_hold_go() {
    // Answered, failed upstream, cancelled after it was sent, and busy.
    let mut config = Harness::keyed();
    config.instance_limit.spend_per_day = Some(Picodollars(u64::MAX / 4));
    config.max_inflight = 1;
    config.max_queue = 1;
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h.send(call(1, false));
    h.send(call(2, false));
    h.send(call(3, false));
    let busy = h.frames();
    assert_eq!(busy.len(), 1, "the third is refused as busy: {busy:?}");
    assert_eq!(
        h.server.ledger.held().1,
        2,
        "the running and the queued hold"
    );
    let first = h.take_http().remove(0);
    let refused = br#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#;
    h.reply(first.attempt, 400, refused, &[]);
    assert_eq!(h.server.ledger.held().1, 1);
    let _ = h.take_http();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    assert_eq!(h.server.ledger.held(), (Picodollars(0), 0));
    // A task call, answered through its task.
    h.send(call(4, true));
    let post = h.take_http().remove(0);
    assert_eq!(h.server.ledger.held().1, 1);
    h.reply(post.attempt, 200, &fixture("response-no-search.json"), &[]);
    assert_eq!(h.server.ledger.held(), (Picodollars(0), 0));
}

#[test]
fn a_cancelled_call_is_charged_from_its_own_clients_history() {
    let mut h = capped(u64::MAX / 4, false);
    // One answered call of its own: the ground of its next estimate.
    h.send(call(1, false));
    let post = h.take_http().remove(0);
    let mut body: Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
    body["model"] = "gpt-6.1-terra".into();
    h.reply(post.attempt, 200, body.to_string().as_bytes(), &[]);
    let answered = h.take_records();
    let own = answered[0].cost.unwrap_or_default();
    assert!(own.0 > 0, "{answered:?}");
    h.send(call(2, false));
    let _ = h.take_http();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    let records = h.take_records();
    let cancelled = records
        .iter()
        .find(|r| r.outcome == Outcome::Cancelled)
        .unwrap_or_else(|| panic!("{records:?}"));
    let charged = cancelled.cost.unwrap_or_default();
    // Its own median call, raised to the input it was known to send; far from the
    // first-call bound a client with no history is charged.
    assert!(charged.0 >= own.0, "{charged:?} {own:?}");
    let mut fresh = capped(u64::MAX / 4, false);
    fresh.send(call(1, false));
    let bound = fresh.server.ledger.held().0;
    assert!(charged.0 < bound.0 / 10, "{charged:?} {bound:?}");
}
