//! A hostile tenant's look at the holds of issue 56: each test is a finding of the attack
//! on the first version of the holds (655a0ce), failing there and fixed since, or a path
//! found sound that must stay so.

use crate::fixture;
use crate::money::Picodollars;
use crate::testing::Harness;
use serde_json::{json, Value};

use super::caps::{call, capped_with as capped};

/// What one call with no history holds (the first-call bound at the default profile).
fn first_call_hold() -> u64 {
    let mut probe = capped(Harness::keyed(), u64::MAX / 4);
    probe.send(call(1, false));
    probe.server.ledger.held().0 .0
}

#[test]
fn a_task_call_refused_as_busy_lets_its_hold_go() {
    // desk::on_refused (core/src/desk/mod.rs) answers the refusal and drops the task but
    // emits no Charge::Unhold, and server/desk.rs drain_desk does not unhold either: the
    // estimate stays held until it lapses (hold_life, >= 600 s), on the client's day and
    // the instance's. A plain call refused as busy goes through Ledger::refused instead.
    let mut config = Harness::keyed();
    config.max_inflight = 1;
    config.max_queue = 1;
    let mut h = capped(config, u64::MAX / 4);
    for id in 1..=3 {
        h.send(call(id, true));
    }
    let frames = h.frames();
    assert!(
        frames
            .iter()
            .any(|f| f["id"] == 3 && f["result"]["isError"] == true),
        "the third task call is refused as busy: {frames:?}"
    );
    assert_eq!(
        h.server.ledger.held().1,
        2,
        "only the running and the queued task calls hold an estimate"
    );
}

#[test]
fn a_task_call_refused_for_a_full_task_store_lets_its_hold_go() {
    // desk/local.rs Local::start returns TaskError::StoreFull without a Charge::Unhold
    // (nor a refusal in the ledger): whoever fills the task store makes every other
    // client's task calls leak their estimates into their own day and the instance's.
    let mut config = Harness::keyed();
    config.tasks.max_tasks = 1;
    let mut h = capped(config, u64::MAX / 4);
    h.send(call(1, true));
    let _ = h.frames();
    for id in 2..=5 {
        h.send(call(id, true));
    }
    let refused = h.frames();
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert_eq!(
        h.server.ledger.held().1,
        1,
        "only the task whose call runs holds an estimate: {refused:?}"
    );
}

#[test]
fn refused_task_calls_do_not_lock_the_instance_cap() {
    // The consequence of the two leaks above: with an instance cap of a few calls, a
    // burst of task calls the engine refuses (spending nothing) fills the day's held
    // amount, and a plain call of anyone is refused by the instance's spend cap for
    // the hold's life (>= 10 minutes), while nothing at all runs.
    let one = first_call_hold();
    let mut config = Harness::keyed();
    config.max_inflight = 1;
    config.max_queue = 0;
    let mut h = capped(config, one * 4);
    h.send(call(1, true));
    let first = h.take_http().remove(0);
    for id in 2..=8 {
        h.send(call(id, true));
    }
    let _ = h.frames();
    h.reply(first.attempt, 200, &fixture("response-no-search.json"), &[]);
    let _ = h.frames();
    assert_eq!(h.server.ledger.held().1, 0, "nothing runs any more");
    h.send(call(20, false));
    assert_eq!(
        h.take_http().len(),
        1,
        "with nothing running and nothing spent, a call is admitted: {:?}",
        h.frames()
    );
}

#[test]
fn a_background_create_refused_as_busy_lets_its_hold_go() {
    // IfRefused::Answer { task: None } -> background::refusal: no Charge::Unhold.
    let mut config = Harness::keyed();
    config.max_inflight = 1;
    config.max_queue = 0;
    config.tasks.background = true;
    let mut h = capped(config, u64::MAX / 4);
    h.send(call(1, true));
    h.send(call(2, true));
    let frames = h.frames();
    assert!(
        frames.iter().any(|f| f["id"] == 2),
        "the second create is refused as busy: {frames:?}"
    );
    assert_eq!(h.server.ledger.held().1, 1, "only the running create holds");
}

#[test]
fn calls_running_across_midnight_still_hold_after_it() {
    // Used::roll (core/src/clients/limits.rs) zeroes `held` with `spent` when the UTC day
    // changes, and Limits::unhold lets go only in the day of admission; the same in the
    // store (held keys per admission day). A call admitted at 23:59:59 spends on the new
    // day (Ledger::spend at its end), but the new day does not count it while it runs:
    // a burst at 23:59:59 and another at 00:00:00 both fill the cap, and all of them
    // land on the new day: twice the cap, not "at most one call".
    let one = first_call_hold();
    let mut h = capped(Harness::keyed(), one * 3);
    let midnight = (h.now.unix_secs / 86_400 + 1) * 86_400;
    h.now.unix_secs = midnight - 1;
    for id in 1..=10 {
        h.send(call(id, false));
    }
    let before = h.take_http();
    assert_eq!(before.len(), 3, "three estimates fill the day");
    let _ = h.frames();
    h.now.unix_secs = midnight;
    for id in 11..=20 {
        h.send(call(id, false));
    }
    let after = h.take_http();
    assert_eq!(
        after.len(),
        0,
        "the three calls still running will spend on this day: it is full"
    );
}

#[test]
fn a_history_of_cheap_calls_does_not_open_the_cap_to_a_burst_of_dear_ones() {
    // The hold is the median of the client's own last 15 calls of the tool, whatever the
    // call asks (Ledger::estimate passes Usage::default() as `known`): reasoning effort,
    // query length and max_results are the caller's, so a few cheap calls ("q", effort
    // low) make every later call hold almost nothing, and a burst of 40 calls with effort
    // high and long queries is admitted up to max_inflight + max_queue. The cap holds
    // only as long as the caller keeps asking what it asked before.
    let one = first_call_hold();
    let mut h = capped(Harness::keyed(), one * 3);
    // One cheap answered call (36 tokens in, 87 out).
    h.send(call(1, false));
    let post = h.take_http().remove(0);
    let mut body: Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
    body["model"] = "gpt-6.1-terra".into();
    h.reply(post.attempt, 200, body.to_string().as_bytes(), &[]);
    let _ = h.frames();
    let long = "why ".repeat(3_900);
    for id in 2..=41 {
        h.send(
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":long,"reasoning_effort":"high"}}}),
        );
    }
    let refused = h.frames().len();
    let admitted = 40 - refused;
    assert!(
        admitted <= 3,
        "a cap of three first-call estimates admits {admitted} calls of 3,900 words each, effort high"
    );
}

#[test]
fn a_call_still_queued_keeps_its_hold() {
    // ledger/mod.rs hold_life says "its queue and retries included", but counts only
    // (max_retries + 2) x (timeout + 60 s): a call waiting behind max_inflight for
    // longer (a busy instance, slow answers) has its hold lapse at the next admission
    // while it is still queued, and the cap opens for more calls although it will
    // still run and spend. Here: max_inflight 1, ten calls admitted under a cap of ten
    // estimates; each times out attempt after attempt (~4 minutes a call, charged
    // nothing: see a_call_that_broke_after_reaching_openai_is_charged), the others
    // wait; at 15 minutes the queued calls' holds lapse and a new burst is admitted
    // while seven of the first ten are still to run.
    let one = first_call_hold();
    let mut config = Harness::keyed();
    config.max_inflight = 1;
    let mut h = capped(config, one * 10);
    for id in 1..=10 {
        h.send(call(id, false));
    }
    let _ = h.take_http();
    assert!(h.frames().is_empty(), "ten admitted");
    let start = h.now.unix_secs;
    while h.now.unix_secs < start + 901 {
        let Some(at) = h.server.poll_timeout() else {
            break;
        };
        let step = at.saturating_duration_since(h.now.instant);
        h.advance(step.max(std::time::Duration::from_secs(1)));
        h.feed(crate::Input::Timeout);
        let _ = h.take_http();
    }
    let health = h.server.health();
    let pending = health.running + health.queued;
    let _ = h.frames();
    for id in 20..=29 {
        h.send(call(id, false));
    }
    let refused = h.frames().len();
    let admitted = 10 - refused;
    assert!(
        pending + admitted <= 10,
        "{pending} calls of the first ten still to run, and {admitted} more admitted under a cap of ten estimates"
    );
}

/// A 2026-07-28 task-augmented call (held for its result a moment).
fn modern_task_call(id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":
                     {"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})
}

/// Not a finding (kept as a guard, it passes): held 2026-07-28 task calls cancelled by
/// their client, on stdio and over HTTP, and one whose HTTP client leaves, let their
/// holds go; so do a duplicate id and a call refused by the instance's own cap.
#[test]
fn held_task_calls_cancelled_or_left_let_their_holds_go() {
    let mut config = Harness::keyed();
    config.tasks.answer_within = std::time::Duration::from_secs(5);
    let mut h = capped(config, u64::MAX / 4);
    h.send(modern_task_call("held"));
    h.post_as(
        6,
        crate::clients::ClientId::DEFAULT,
        None,
        modern_task_call("http-held"),
    );
    h.post_as(
        7,
        crate::clients::ClientId::DEFAULT,
        None,
        modern_task_call("http-left"),
    );
    assert_eq!(h.take_http().len(), 3);
    assert_eq!(h.server.ledger.held().1, 3);
    let cancel = |id: &str| json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}});
    h.send(cancel("held"));
    h.post_as(
        8,
        crate::clients::ClientId::DEFAULT,
        None,
        cancel("http-held"),
    );
    h.feed(crate::Input::ExchangeClosed(crate::io::ExchangeId(7)));
    assert_eq!(h.server.ledger.held(), (Picodollars(0), 0));
    h.send(call(1, false));
    h.send(call(1, false));
    assert_eq!(h.server.ledger.held().1, 1, "the duplicate holds nothing");
}

#[test]
fn a_cancel_with_no_history_is_charged_the_profiles_own_first_call_bound() {
    // Ledger::cancelled (and background_started / background_ended) build the bound
    // with recent::first_call(None), while Ledger::estimate and the docs (deployment.md,
    // "the profile's max_output_tokens (else 4,096 output tokens)") use the profile's
    // max_output_tokens: a profile capped at 100 output tokens has its cancels charged
    // 4,096 (and one capped at 32,000 only 4,096).
    let mut profiles = crate::settings::Profiles::default();
    profiles.set(
        crate::tools::Tool::Answer,
        crate::settings::Profile {
            model: "gpt-6.1-terra".into(),
            max_output_tokens: Some(100),
            ..crate::settings::Profile::default()
        },
    );
    let config = crate::settings::ServerConfig {
        profiles,
        call_records: true,
        ..Harness::keyed()
    };
    let mut h = capped(config, u64::MAX / 4);
    h.send(call(1, false));
    let _ = h.take_http();
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let records = h.take_records();
    let output = records
        .iter()
        .find_map(|r| r.usage.as_ref().map(|u| u.output_tokens))
        .unwrap_or_default();
    assert_eq!(output, 100, "{records:?}");
}
