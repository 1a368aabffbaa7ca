//! OpenAI background mode: the desk emits the create, reads and cancels as work for the
//! engine, turns their ends into replies, and emits what the ledger counts (a run's hold
//! when OpenAI takes it on, its end once it is read ended).

use super::*;
use crate::calls::{Report, Stored, StoredState, Work};
use crate::mcp::shape::TaskError;
use crate::openai::{FailureKind, UpstreamFailure};
use crate::routing::Job;
use crate::tasks::Unknown;

fn background() -> Bench {
    let mut config = ServerConfig::default();
    config.tasks.background = true;
    Bench::new(config)
}

fn report() -> Report {
    Report {
        usage: None,
        adjustments: Vec::new(),
        model: crate::openai::report::ModelSource {
            model: "gpt-5".into(),
            setting: "",
        },
        attempts: 1,
        wall: Duration::ZERO,
        upstream: Default::default(),
        estimated: false,
    }
}

/// The stored work the desk emitted since the last look.
fn stored_work(b: &mut Bench) -> Vec<(Job, Work, IfRefused)> {
    b.outs()
        .into_iter()
        .filter_map(|o| match o {
            DeskOut::Start(start) => match start.work {
                Starting::Stored { job, work } => Some((job, work, start.if_refused)),
                Starting::Call { .. } => None,
            },
            _ => None,
        })
        .collect()
}

/// Starts a task of `a` and has OpenAI take it on as `resp_1`: its handle.
fn created(b: &mut Bench) -> Value {
    let a = b.a;
    b.start(a, OLD, ReplyTo::Direct);
    let (job, _, _) = stored_work(b).pop().unwrap();
    let stored = Stored {
        id: Some("resp_1".into()),
        state: StoredState::Working,
    };
    b.desk.on_stored(b.now, job, Ok(stored), (0, &report()));
    let outs = b.outs();
    let replies = replies(&outs);
    replies[0].1.clone().unwrap()
}

#[test]
fn a_background_task_starts_as_a_create_for_the_engine_answered_later() {
    let mut b = background();
    let a = b.a;
    assert!(matches!(
        b.start(a, OLD, ReplyTo::Direct),
        Dispatched::Later
    ));
    let work = stored_work(&mut b);
    assert_eq!(work.len(), 1);
    let (job, kind, if_refused) = &work[0];
    assert!(matches!(job, Job::Create { .. }), "{job:?}");
    assert_eq!(kind, &Work::Create);
    assert!(matches!(if_refused, IfRefused::Answer { task: None, .. }));
    assert_eq!(b.desk.len(), 0, "no task of this instance's store");
}

#[test]
fn a_create_the_engine_refuses_is_answered_now() {
    let mut b = background();
    b.refuse = Some(Refused::Busy {
        running: 1,
        queued: 0,
    });
    let a = b.a;
    assert!(now_reply(b.start(a, OLD, ReplyTo::Direct)).is_some());
    assert!(b.outs().is_empty());
}

#[test]
fn a_created_run_is_answered_with_its_task_held_in_the_ledger_and_followed() {
    let mut b = background();
    let a = b.a;
    b.start(a, OLD, ReplyTo::Direct);
    let (job, _, _) = stored_work(&mut b).pop().unwrap();
    let stored = Stored {
        id: Some("resp_1".into()),
        state: StoredState::Working,
    };
    b.desk.on_stored(b.now, job, Ok(stored), (0, &report()));
    let outs = b.outs();
    let handle = replies(&outs)[0].1.clone().unwrap();
    assert_eq!(handle["task"]["status"], "working", "{handle}");
    let held = charges(&outs);
    assert!(
        matches!(held.as_slice(), [Charge::Held(h)] if h.response_id == "resp_1" && h.call.client == a),
        "{held:?}"
    );
    assert!(b.desk.poll_timeout().is_some(), "the run is polled");
}

#[test]
fn a_create_that_fails_is_counted_as_an_ended_call_and_answered_with_why() {
    let mut b = background();
    let a = b.a;
    b.start(a, OLD, ReplyTo::Direct);
    let (job, _, _) = stored_work(&mut b).pop().unwrap();
    let failure = UpstreamFailure::local(FailureKind::InvalidResponse, "no");
    b.desk.on_stored(b.now, job, Err(failure), (2, &report()));
    let outs = b.outs();
    let charged = charges(&outs);
    assert!(
        matches!(charged.as_slice(), [Charge::Ended(e)] if e.0.client == a && e.1.failure == Some(FailureKind::InvalidResponse)),
        "{charged:?}"
    );
    let answer = replies(&outs)[0].1.clone().unwrap();
    assert_eq!(answer["isError"], true, "{answer}");
}

#[test]
fn a_followed_run_is_read_when_due_and_a_refused_read_waits_for_the_next_poll() {
    let mut b = background();
    created(&mut b);
    let due = b.desk.poll_timeout().unwrap();
    b.advance(due - b.now.instant);
    b.refuse = Some(Refused::Busy {
        running: 1,
        queued: 0,
    });
    b.desk.on_timeout(b.now);
    assert!(b.engine().is_none(), "a read answers nobody now");
    assert!(b.outs().is_empty());
    let next = b.desk.poll_timeout().unwrap();
    assert!(next > b.now.instant, "read again at the next poll");
    b.refuse = None;
    b.advance(next - b.now.instant);
    b.desk.on_timeout(b.now);
    b.engine();
    let work = stored_work(&mut b);
    assert!(
        matches!(work.as_slice(), [(Job::Read { .. }, Work::Read(id), IfRefused::ReadLater(_))] if id == "resp_1"),
        "{work:?}"
    );
}

#[test]
fn a_run_read_ended_is_settled_once_in_the_ledger_and_its_waiter_answered() {
    let mut b = background();
    let handle = created(&mut b);
    let task_id = task_id_of(&handle);
    let x = ReplyTo::Exchange(crate::io::ExchangeId(2));
    let waiting = b.ask(b.a, "tasks/result", json!({"taskId": task_id}), x);
    assert!(matches!(waiting, Dispatched::Later));
    let work = stored_work(&mut b);
    let (job, _, _) = work.into_iter().next().unwrap();
    let failure = UpstreamFailure::local(FailureKind::Expired, "failed");
    let ended = StoredState::Ended(Err(failure), Default::default());
    let stored = Stored {
        id: None,
        state: ended,
    };
    b.desk.on_stored(b.now, job, Ok(stored), (0, &report()));
    let outs = b.outs();
    let settled = charges(&outs);
    assert!(
        matches!(settled.as_slice(), [Charge::Settled(s)] if s.0 == "resp_1"),
        "{settled:?}"
    );
    let replies = replies(&outs);
    assert_eq!(replies.len(), 1, "{outs:?}");
    assert_eq!(replies[0].0.reply_to, x);
}

#[test]
fn a_background_task_is_another_clients_to_nobody() {
    let mut b = background();
    let task_id = task_id_of(&created(&mut b));
    let error = error_of(b.ask(
        b.b,
        "tasks/get",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    let expected = TaskError::NotFound {
        task_id: &task_id,
        why: Unknown::Foreign,
    };
    assert_eq!(error, expected.error());
    let state = result_of(b.ask(
        b.a,
        "tasks/get",
        json!({"taskId": task_id}),
        ReplyTo::Direct,
    ));
    assert_eq!(state["status"], "working", "{state}");
}
