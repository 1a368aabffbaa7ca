//! This instance's tasks: created around a call the engine takes, served from the local
//! store, ended by the call's end, a cancel, expiry or the client's leaving; a modern
//! client's call held for its result a moment.

use super::*;
use crate::io::ExchangeId;
use crate::ledger::Reservation;
use crate::mcp::shape::TaskError;
use crate::tasks::Unknown;

/// A 2025-11-25 task of `a` on stdio, created: its id.
fn created(b: &mut Bench) -> String {
    let a = b.a;
    task_id_of(&result_of(b.start(a, OLD, ReplyTo::Direct)))
}

#[test]
fn a_task_call_is_emitted_for_the_engine_with_its_task_and_what_a_refusal_means() {
    let mut b = Bench::local();
    let id = RequestId::Int("7".into());
    let start = TaskStart {
        ttl_ms: None,
        plan: Default::default(),
        progress: None,
        today: "2025-08-09".into(),
        reservation: Reservation::default(),
        arrival: Default::default(),
    };
    let asked = super::ticket(id.clone(), (ReplyTo::Direct, OLD, b.a), "tools/call", b.now);
    let dispatched = b.desk.start(b.now, "a", asked, start);
    assert!(matches!(dispatched, Dispatched::Later));
    let outs = b.outs();
    assert_eq!(outs.len(), 1, "{outs:?}");
    let DeskOut::Start(start) = &outs[0] else {
        panic!("{outs:?}")
    };
    let Starting::Call { caller, .. } = &start.work else {
        panic!("{start:?}")
    };
    assert_eq!(caller.ticket.id, id);
    let task = caller.task.clone();
    assert!(task.is_some());
    let expected = IfRefused::Answer {
        id,
        version: OLD,
        task,
    };
    assert_eq!(start.if_refused, expected);
    assert_eq!(b.desk.len(), 1, "the task exists while its call starts");
}

#[test]
fn a_call_the_engine_takes_is_answered_with_its_task_at_once() {
    let mut b = Bench::local();
    let result = result_of(b.start(b.a, OLD, ReplyTo::Direct));
    assert_eq!(result["task"]["status"], "working", "{result}");
    assert_eq!(b.desk.len(), 1);
    assert!(b.outs().is_empty());
}

#[test]
fn a_call_the_engine_refuses_leaves_no_task_and_is_answered_as_busy() {
    let mut b = Bench::local();
    b.refuse = Some(Refused::Busy {
        running: 2,
        queued: 2,
    });
    let dispatched = b.start(b.a, OLD, ReplyTo::Direct);
    assert!(now_reply(dispatched).is_some(), "answered now");
    assert_eq!(b.desk.len(), 0);
    assert!(b.outs().is_empty());
}

#[test]
fn a_modern_call_is_held_for_its_window_then_answered_with_its_task() {
    let mut b = Bench::local();
    let x = ReplyTo::Exchange(ExchangeId(1));
    assert!(matches!(b.start(b.a, MODERN, x), Dispatched::Later));
    let window = crate::settings::TaskSettings::default().answer_within;
    assert_eq!(b.desk.poll_timeout(), Some(b.now.instant + window));
    b.advance(window);
    b.desk.on_timeout(b.now);
    let outs = b.outs();
    let replies = replies(&outs);
    assert_eq!(replies.len(), 1, "{outs:?}");
    let (asker, result) = replies[0];
    assert_eq!(asker.reply_to, x);
    let handle = result.as_ref().unwrap();
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(b.desk.len(), 1, "the task outlives its window");
}

#[test]
fn a_modern_call_ending_within_its_window_is_answered_with_its_result_and_leaves_no_task() {
    let mut b = Bench::local();
    let x = ReplyTo::Exchange(ExchangeId(1));
    b.start(b.a, MODERN, x);
    let task_id = key_task(&b);
    assert!(b.desk.is_held(&task_id));
    let answer = json!({"content":[{"type":"text","text":"hi"}]});
    b.desk.call_ended(
        b.now.unix_secs,
        &task_id,
        Some(Ok(answer.clone())),
        (x, MODERN),
    );
    let outs = b.outs();
    let replies = replies(&outs);
    assert_eq!(replies.len(), 1, "{outs:?}");
    assert_eq!(replies[0].1, &Ok(answer));
    assert_eq!(b.desk.len(), 0);
    assert!(!b.desk.is_held(&task_id));
    assert_eq!(
        b.desk.poll_timeout(),
        None,
        "its window no longer wakes anyone"
    );
}

#[test]
fn a_held_call_stopped_without_an_outcome_ends_its_request_unanswered() {
    let mut b = Bench::local();
    let x = ReplyTo::Exchange(ExchangeId(3));
    b.start(b.a, MODERN, x);
    let task_id = key_task(&b);
    b.desk
        .call_ended(b.now.unix_secs, &task_id, None, (x, MODERN));
    let outs = b.outs();
    assert!(
        matches!(outs.as_slice(), [DeskOut::Unanswered(to)] if to.reply_to == x),
        "{outs:?}"
    );
}

#[test]
fn a_client_leaving_before_hearing_of_its_held_task_stops_the_call() {
    let mut b = Bench::local();
    b.start(b.a, MODERN, ReplyTo::Exchange(ExchangeId(4)));
    let task_id = key_task(&b);
    b.desk
        .forget(|t| t.reply_to == crate::routing::ReplyTo::Exchange(ExchangeId(4)));
    let outs = b.outs();
    assert_eq!(cancels(&outs), vec![&key_of(&task_id)]);
    assert_eq!(b.desk.len(), 0);
    assert_eq!(b.desk.poll_timeout(), None);
}

#[test]
fn tasks_get_serves_the_owner_and_no_other_client() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let got = result_of(b.ask(
        b.a,
        "tasks/get",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    assert_eq!(got["status"], "working", "{got}");
    let other = error_of(b.ask(
        b.b,
        "tasks/get",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    let why = Unknown::Foreign;
    let expected = TaskError::NotFound {
        task_id: &task_id,
        why,
    };
    assert_eq!(other, expected.error());
}

#[test]
fn a_request_without_a_task_id_is_refused() {
    let mut b = Bench::local();
    let error = error_of(b.ask(b.a, "tasks/get", json!({}), ReplyTo::Direct));
    let expected = TaskError::MissingId {
        method: "tasks/get",
    };
    assert_eq!(error, expected.error());
}

#[test]
fn tasks_result_waits_for_the_call_and_is_answered_once_with_its_outcome() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let x = ReplyTo::Exchange(ExchangeId(9));
    let waiting = b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
    assert!(matches!(waiting, Dispatched::Later));
    assert!(b.outs().is_empty());
    let answer = json!({"content":[{"type":"text","text":"done"}]});
    b.desk.call_ended(
        b.now.unix_secs,
        &task_id,
        Some(Ok(answer)),
        (ReplyTo::Direct, OLD),
    );
    let outs = b.outs();
    let replies = replies(&outs);
    assert_eq!(replies.len(), 1, "{outs:?}");
    assert_eq!(replies[0].0.reply_to, x);
    let result = replies[0].1.as_ref().unwrap();
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    // The end of a 2025-11-25 task is told to the stdio client that created it.
    assert!(outs.iter().any(|o| matches!(o, DeskOut::Notify(_))));
}

#[test]
fn tasks_result_waiters_are_bounded_per_task() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    for n in 0..crate::desk::local::MAX_WAITERS {
        let x = ReplyTo::Exchange(ExchangeId(n as u64));
        let waiting = b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
        assert!(matches!(waiting, Dispatched::Later));
    }
    let x = ReplyTo::Exchange(ExchangeId(99));
    let error = error_of(b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x));
    let expected = TaskError::TooManyWaiters {
        task_id: &task_id,
        max: crate::desk::local::MAX_WAITERS,
    };
    assert_eq!(error, expected.error());
}

#[test]
fn tasks_cancel_stops_the_call_and_answers_its_waiters() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let x = ReplyTo::Exchange(ExchangeId(5));
    b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
    let state = result_of(b.ask(
        b.a,
        "tasks/cancel",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    assert_eq!(state["status"], "cancelled", "{state}");
    let outs = b.outs();
    assert_eq!(cancels(&outs), vec![&key_of(&task_id)]);
    let replies = replies(&outs);
    assert_eq!(replies.len(), 1, "{outs:?}");
    let expected = TaskError::CancelledWithoutResult { task_id: &task_id };
    assert_eq!(replies[0].1, &Err(expected.error()));
    // Its call's end, when the engine reports it, changes nothing more.
    b.desk
        .call_ended(b.now.unix_secs, &task_id, None, (ReplyTo::Direct, OLD));
    assert!(replies_in(&mut b).is_empty());
}

#[test]
fn cancelling_an_ended_task_is_refused_in_2025_11_25() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let answer = json!({"content":[]});
    b.desk.call_ended(
        b.now.unix_secs,
        &task_id,
        Some(Ok(answer)),
        (ReplyTo::Direct, OLD),
    );
    b.outs();
    let error = error_of(b.ask(
        b.a,
        "tasks/cancel",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    let expected = TaskError::AlreadyEnded {
        task_id: &task_id,
        status: "completed",
    };
    assert_eq!(error, expected.error());
}

#[test]
fn a_task_past_its_life_is_gone_its_call_stopped_and_its_waiters_told() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let x = ReplyTo::Exchange(ExchangeId(6));
    b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
    b.advance(Duration::from_secs(61));
    b.desk.on_timeout(b.now);
    let outs = b.outs();
    assert_eq!(cancels(&outs), vec![&key_of(&task_id)]);
    let expected = TaskError::NotFound {
        task_id: &task_id,
        why: Unknown::Gone,
    };
    assert_eq!(replies(&outs)[0].1, &Err(expected.error()));
    assert_eq!(b.desk.len(), 0);
}

#[test]
fn tasks_list_shows_each_client_only_its_own() {
    let mut b = Bench::local();
    created(&mut b);
    created(&mut b);
    let bb = b.b;
    b.start(bb, OLD, ReplyTo::Direct);
    let list = result_of(b.ask(b.a, "tasks/list", json!({}), ReplyTo::Direct));
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(2), "{list}");
    let list = result_of(b.ask(b.b, "tasks/list", json!({}), ReplyTo::Direct));
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(1), "{list}");
}

#[test]
fn calls_stopped_at_the_end_of_the_grace_fail_their_tasks_as_stopped() {
    let mut b = Bench::local();
    let task_id = created(&mut b);
    let x = ReplyTo::Exchange(ExchangeId(8));
    b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
    b.desk.stopping();
    b.desk.call_ended(
        b.now.unix_secs,
        &task_id,
        None,
        (ReplyTo::Exchange(ExchangeId(2)), OLD),
    );
    let outs = b.outs();
    let expected = TaskError::InstanceStopped.error();
    assert_eq!(replies(&outs)[0].1, &Err(expected));
    assert!(
        !outs.iter().any(|o| matches!(o, DeskOut::Notify(_))),
        "no stream is left to notify over HTTP"
    );
}

/// The one task of the bench's desk whose call is held.
fn key_task(b: &Bench) -> String {
    let held = b.desk.local.held.deadlines().map(|(_, id)| id.to_owned());
    held.last().unwrap()
}

/// The late replies the desk emitted since the last look.
fn replies_in(b: &mut Bench) -> Vec<DeskOut> {
    b.outs()
        .into_iter()
        .filter(|o| matches!(o, DeskOut::Reply(..)))
        .collect()
}
