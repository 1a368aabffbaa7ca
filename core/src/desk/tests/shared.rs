//! The shared store: a new task's handle waits for the store to hold it, the store's
//! answers become replies and counts, events from other instances stop calls here, and
//! an exit answers whoever still waits.

use super::*;
use crate::mcp::shape::TaskError;
use crate::store::events::StoreEvent;
use crate::store::StoreReply;

fn shared() -> Bench {
    let config = ServerConfig {
        store: Some(crate::settings::StoreSettings::default()),
        ..ServerConfig::default()
    };
    Bench::new(config)
}

/// A store operation the desk asked for since the last look, as text.
fn ops(b: &mut Bench) -> Vec<(crate::store::StoreId, String)> {
    std::iter::from_fn(|| b.desk.poll_op())
        .map(|(id, op)| (id, format!("{op:?}")))
        .collect()
}

#[test]
fn a_new_shared_task_is_answered_once_the_store_holds_it() {
    let mut b = shared();
    let a = b.a;
    assert!(matches!(
        b.start(a, OLD, ReplyTo::Direct),
        Dispatched::Later
    ));
    assert!(
        b.outs().is_empty(),
        "nothing is answered before the store has it"
    );
    let ops = ops(&mut b);
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert!(ops[0].1.contains("\"a\""), "written as a's: {}", ops[0].1);
    assert!(b.desk.holds_exit(), "a handle not yet sent holds the exit");
    let ok = StoreReply::Rows(vec![vec!["ok".into()]]);
    let took = Duration::from_millis(3);
    b.desk.on_store(b.now, FromStore::Reply(ops[0].0, ok, took));
    let outs = b.outs();
    let handle = replies(&outs)[0].1.clone().unwrap();
    assert_eq!(handle["task"]["status"], "working", "{handle}");
    let counted = charges(&outs);
    assert_eq!(
        counted,
        vec![&Charge::StoreObserved {
            took,
            failed: false
        }]
    );
    assert!(!b.desk.holds_exit());
}

#[test]
fn an_exit_answers_a_handle_the_store_never_acknowledged() {
    let mut b = shared();
    let a = b.a;
    b.start(a, OLD, ReplyTo::Direct);
    ops(&mut b);
    b.desk.exiting();
    let outs = b.outs();
    let expected = TaskError::InstanceStopped.error();
    assert_eq!(replies(&outs)[0].1, &Err(expected));
}

#[test]
fn a_cancel_from_another_instance_stops_only_its_owners_call() {
    let mut b = shared();
    let a = b.a;
    b.start(a, OLD, ReplyTo::Direct);
    let put = ops(&mut b).remove(0).0;
    let ok = StoreReply::Rows(vec![vec!["ok".into()]]);
    b.desk
        .on_store(b.now, FromStore::Reply(put, ok, Duration::ZERO));
    let handle = replies(&b.outs())[0].1.clone().unwrap();
    let task_id = task_id_of(&handle);
    let foreign = StoreEvent::Cancel {
        task_id: task_id.clone(),
        owner: "b".into(),
    };
    b.desk.on_store(b.now, FromStore::Event(foreign));
    assert!(
        cancels(&b.outs()).is_empty(),
        "b's cancel never stops a's call"
    );
    let owned = StoreEvent::Cancel {
        task_id: task_id.clone(),
        owner: "a".into(),
    };
    b.desk.on_store(b.now, FromStore::Event(owned));
    assert_eq!(cancels(&b.outs()), vec![&key_of(&task_id)]);
}

#[test]
fn tasks_list_asks_the_store_for_the_clients_own_tasks() {
    let mut b = shared();
    let listing = b.ask(b.b, "tasks/list", json!({}), ReplyTo::Direct);
    assert!(matches!(listing, Dispatched::Later));
    let ops = ops(&mut b);
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert!(
        ops[0].1.contains("\"orm:tl:b\""),
        "listed as b's: {}",
        ops[0].1
    );
}
