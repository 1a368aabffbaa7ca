//! The lease on shared tasks and the exit's flush: one renewal per interval whatever the
//! number of tasks, a lapsed lease's tasks read again, orphans counted; a draining
//! instance waits for the store to hold its tasks' ends, and a call stopped at the end
//! of the grace fails its task with a message that says to call again.

use super::shared_tasks::{create, shared, stored};
use super::store::{answer, store_ops as ops};
use crate::fixture;
use crate::settings::ServerConfig;
use crate::store::tasks::lease::{self, RENEW, RENEW_SCRIPT};
use crate::store::tasks::{FINISH_SCRIPT, READ_SCRIPT};
use crate::store::{StoreId, StoreOp, StoreReply};
use crate::testing::Harness;
use crate::{Input, Output};
use serde_json::json;

fn scripts(found: &[(StoreId, StoreOp)]) -> Vec<&'static str> {
    found
        .iter()
        .filter_map(|(_, op)| match op {
            StoreOp::Script { script, .. } => Some(*script),
            _ => None,
        })
        .collect()
}

fn renewals(found: &[(StoreId, StoreOp)]) -> Vec<StoreId> {
    found
        .iter()
        .filter(|(_, op)| matches!(op, StoreOp::Script { script, .. } if *script == RENEW_SCRIPT))
        .map(|(id, _)| *id)
        .collect()
}

fn rows(head: &str) -> StoreReply {
    StoreReply::Rows(vec![vec![head.to_owned()]])
}

#[test]
fn one_renewal_per_interval_holds_every_task_and_stops_with_them() {
    let mut h = shared();
    let (_, first) = create(&mut h);
    let (_, second) = create(&mut h);
    let StoreOp::Script { keys, .. } = lease::renew("x") else {
        unreachable!()
    };
    assert_eq!(keys, ["orm:lease:x"]);
    for _ in 0..3 {
        h.advance(RENEW);
        h.feed(Input::Timeout);
        let found = ops(&mut h);
        assert_eq!(renewals(&found).len(), 1, "{:?}", scripts(&found));
        assert_eq!(found.len(), 1, "nothing per task: {:?}", scripts(&found));
        answer(&mut h, found[0].0, rows("held"));
        assert!(ops(&mut h).is_empty(), "a held lease asks nothing more");
    }
    // Both tasks end: the lease is let go at its next turn.
    for attempt in [first, second] {
        h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    }
    let ends = ops(&mut h);
    assert_eq!(scripts(&ends), [FINISH_SCRIPT, FINISH_SCRIPT]);
    h.advance(RENEW);
    h.feed(Input::Timeout);
    let found = ops(&mut h);
    assert!(renewals(&found).is_empty(), "{:?}", scripts(&found));
    h.advance(RENEW * 4);
    h.feed(Input::Timeout);
    assert!(ops(&mut h).is_empty(), "no renewal without tasks");
}

/// The lease's cost, counted (docs/benchmarks.md): 1,000 tasks running for a minute
/// cost the store one renewal per interval, 12 operations, and nothing per task.
#[test]
fn a_thousand_running_tasks_cost_twelve_store_operations_a_minute() {
    let config = ServerConfig {
        store: Some(crate::settings::StoreSettings {
            on_unavailable: crate::settings::OnUnavailable::Refuse,
        }),
        max_inflight: 1000,
        ..Harness::keyed()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    for _ in 0..1000 {
        create(&mut h);
    }
    let _ = h.take_other();
    let mut operations = 0;
    for _ in 0..60 {
        h.advance(std::time::Duration::from_secs(1));
        h.feed(Input::Timeout);
        for (id, op) in ops(&mut h) {
            assert!(matches!(&op, StoreOp::Script { script, .. } if *script == RENEW_SCRIPT));
            operations += 1;
            answer(&mut h, id, rows("held"));
        }
    }
    assert_eq!(operations, 60 / RENEW.as_secs());
}

#[test]
fn a_lapsed_lease_reads_its_tasks_again_and_stops_what_another_ended() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    h.advance(RENEW);
    h.feed(Input::Timeout);
    let found = ops(&mut h);
    answer(&mut h, renewals(&found)[0], rows("lapsed"));
    let found = ops(&mut h);
    assert_eq!(scripts(&found), [READ_SCRIPT], "its task is read again");
    let outcome =
        crate::tasks::Outcome::new(Err(crate::mcp::shape::TaskError::InstanceStopped.error()))
            .stored();
    answer(
        &mut h,
        found[0].0,
        stored(&task, "default", "failed", Some(&outcome)),
    );
    assert!(
        h.take_other().iter().any(|o| matches!(o, Output::Abort(_))),
        "its call stops"
    );
    // Its local copy failed: nothing is written over the store's end, and the lease
    // is let go.
    assert!(ops(&mut h).is_empty());
    h.advance(RENEW);
    h.feed(Input::Timeout);
    assert!(renewals(&ops(&mut h)).is_empty());
}

#[test]
fn a_put_that_finds_the_lease_lapsed_reads_the_running_tasks_again() {
    let mut h = shared();
    let (first, _) = create(&mut h);
    h.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"task":{}}}));
    let (reserve, _) = ops(&mut h).remove(0);
    answer(
        &mut h,
        reserve,
        StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
    );
    let found = ops(&mut h);
    assert_eq!(found.len(), 1, "{:?}", scripts(&found));
    let lapsed = StoreReply::Rows(vec![vec!["ok".into(), "lapsed".into()]]);
    answer(&mut h, found[0].0, lapsed);
    let second = h.frames().remove(0)["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let reads: Vec<String> = ops(&mut h)
        .into_iter()
        .filter_map(|(_, op)| match op {
            StoreOp::Script { script, keys, .. } if script == READ_SCRIPT => keys.first().cloned(),
            _ => None,
        })
        .collect();
    assert_eq!(reads, [format!("orm:t:{first}"), format!("orm:t:{second}")]);
}

#[test]
fn an_orphan_a_read_ended_is_counted_and_answered_with_its_error() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":task}}));
    let (read, _) = ops(&mut h).remove(0);
    let error = crate::mcp::shape::TaskError::InstanceStopped.error();
    let outcome = crate::tasks::Outcome::new(Err(error.clone())).stored();
    let StoreReply::Rows(mut answer_rows) = stored(&task, "default", "failed", Some(&outcome))
    else {
        unreachable!()
    };
    answer_rows[1].extend(["orphaned".to_owned(), "1".to_owned()]);
    answer(&mut h, read, StoreReply::Rows(answer_rows));
    let got = h.frames().remove(0);
    assert_eq!(got["error"]["message"], error.message.as_str(), "{got}");
    h.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    let _ = h.frames();
    let text = String::from_utf8(h.server.metrics_text()).unwrap();
    assert!(
        text.contains("openai_responses_mcp_tasks_orphaned_total 1"),
        "{text}"
    );
}

/// A store-backed server draining with one task whose call runs; the task's id and
/// the attempt.
fn draining() -> (Harness, String, crate::io::AttemptId) {
    let mut h = shared();
    let (task, attempt) = create(&mut h);
    let _ = h.take_other();
    h.feed(Input::Drain);
    (h, task, attempt)
}

#[test]
fn a_draining_instance_exits_once_the_store_holds_its_tasks_end() {
    let (mut h, _, attempt) = draining();
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let found = ops(&mut h);
    assert_eq!(scripts(&found), [FINISH_SCRIPT]);
    assert!(
        !h.server.is_exited(),
        "the exit waits for the store's acknowledgement"
    );
    let finish = found
        .iter()
        .find(|(_, op)| matches!(op, StoreOp::Script { .. }));
    let Some((id, _)) = finish else {
        panic!("the finish: {found:?}");
    };
    answer(&mut h, *id, rows("won"));
    assert!(h.take_other().contains(&Output::Exit));
}

#[test]
fn a_call_past_the_grace_fails_its_task_in_the_store_and_the_exit_stays_within_it() {
    let (mut h, _, _) = draining();
    let grace = ServerConfig::default().shutdown_grace;
    // The calls are stopped 2 s before the grace ends, leaving the store its share.
    h.advance(grace - std::time::Duration::from_secs(2));
    h.feed(Input::Timeout);
    let found: Vec<_> = ops(&mut h)
        .into_iter()
        .filter(|(id, _)| id.tag == crate::store::StoreTag::Task)
        .collect();
    let [(end, StoreOp::Script { script, args, .. })] = found.as_slice() else {
        panic!("{found:?}");
    };
    assert_eq!(*script, FINISH_SCRIPT);
    let failed = args.windows(2).any(|f| f == ["status", "failed"]);
    let message = crate::mcp::shape::TaskError::InstanceStopped
        .error()
        .message;
    assert!(failed && args.contains(&message), "{args:?}");
    assert!(!h.server.is_exited());
    let _ = end;
    // The store never answers: the exit comes at the grace's end all the same.
    h.feed(Input::Timeout);
    assert!(!h.server.is_exited());
    h.fire();
    assert!(h.server.is_exited());
}

#[test]
fn a_local_task_past_the_grace_answers_its_waiter_before_the_exit() {
    let mut h = Harness::ready("2025-11-25");
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}}),
    );
    let task = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":task}}));
    assert!(h.frames().is_empty());
    h.feed(Input::Drain);
    h.advance(ServerConfig::default().shutdown_grace);
    h.feed(Input::Timeout);
    let out = h.take_other();
    let written: Vec<serde_json::Value> = out
        .iter()
        .filter_map(|o| match o {
            Output::Write(bytes) => Some(crate::testing::decode(bytes)),
            _ => None,
        })
        .collect();
    let result = written.iter().find(|f| f["id"] == 2).expect("answered");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(message.contains("call the tool again"), "{result}");
    let at = |pred: &dyn Fn(&Output) -> bool| out.iter().position(pred);
    let answered = at(&|o| matches!(o, Output::Write(_))).unwrap();
    let exit = at(&|o| *o == Output::Exit).expect("exited");
    assert!(answered < exit, "{out:?}");
}

#[test]
fn an_instance_stopped_at_once_answers_the_requests_waiting_on_it() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    h.send(json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":task}}));
    let (read, _) = ops(&mut h).remove(0);
    answer(&mut h, read, stored(&task, "default", "working", None));
    h.send(json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":task}}));
    assert!(
        h.frames().is_empty(),
        "both wait: on the task, on the store"
    );
    h.feed(Input::Drain);
    h.feed(Input::Shutdown);
    let frames = h.frames();
    for id in [2, 3] {
        let reply = frames.iter().find(|f| f["id"] == id).expect("answered");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("ask again"), "{reply}");
    }
    assert!(h.take_other().contains(&Output::Exit));
}
