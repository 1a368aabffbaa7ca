//! Tasks served through a shared store: a handle is answered once the store holds the
//! task, `tasks/*` are answered from what the store says, a waiting `tasks/result` is
//! woken by an event, and events stop the calls this instance runs.

use super::store::{answer, store_ops as ops};
use crate::settings::{OnUnavailable, ServerConfig, StoreSettings};
use crate::store::{StoreId, StoreOp, StoreReply};
use crate::testing::Harness;
use crate::{Input, Output};
use serde_json::{json, Value};

pub(super) fn shared() -> Harness {
    shared_with(Harness::keyed().max_message_bytes)
}

fn shared_with(max_message_bytes: usize) -> Harness {
    let config = ServerConfig {
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        max_message_bytes,
        ..Harness::keyed()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    h
}

pub(super) fn stored(id: &str, owner: &str, status: &str, outcome: Option<&str>) -> StoreReply {
    let mut fields: Vec<String> = [
        "id",
        id,
        "owner",
        owner,
        "created",
        "1700000000",
        "updated",
        "1700000001",
        "ttl_ms",
        "600000",
        "status",
        status,
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(outcome) = outcome {
        fields.extend(["outcome".to_owned(), outcome.to_owned()]);
    }
    StoreReply::Rows(vec![vec!["ok".into()], fields])
}

/// Starts a task-augmented call through its reserve and its put; its id and attempt.
pub(super) fn create(h: &mut Harness) -> (String, crate::io::AttemptId) {
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"task":{}}}));
    let (reserve, _) = ops(h).remove(0);
    answer(
        h,
        reserve,
        StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
    );
    let attempts = h.take_http();
    assert_eq!(attempts.len(), 1, "the call runs");

    let found = ops(h);
    let [(put, StoreOp::Script { script, args, .. })] = found.as_slice() else {
        panic!("one put: {found:?}");
    };
    assert_eq!(*script, crate::store::tasks::PUT_SCRIPT);
    let fields = &args[5..];
    assert!(
        fields.windows(2).any(|f| f == ["status", "working"]),
        "{fields:?}"
    );
    assert!(
        fields.windows(2).any(|f| f == ["owner", "default"]),
        "{fields:?}"
    );
    assert!(
        h.frames().is_empty(),
        "the handle waits until the store holds the task"
    );
    answer(h, *put, StoreReply::Rows(vec![vec!["ok".into()]]));
    let created = h.frames().remove(0);
    let id = created["result"]["task"]["taskId"].as_str().unwrap();
    (id.to_owned(), attempts[0].attempt)
}

/// Sends a `tasks/*` request; the store operation it asks.
fn ask(h: &mut Harness, id: u64, method: &str, task: &str) -> (StoreId, StoreOp) {
    h.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task}}));
    let mut found = ops(h);
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

#[test]
fn tasks_are_answered_from_what_the_store_holds() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    let (read, op) = ask(&mut h, 2, "tasks/get", &task);
    assert!(
        matches!(&op, StoreOp::Script { keys, .. } if keys == &[format!("orm:t:{task}")]),
        "{op:?}"
    );
    answer(&mut h, read, stored(&task, "default", "working", None));
    let got = h.frames().remove(0);
    assert_eq!(got["result"]["status"], "working", "{got}");
    // Another client's task, or none: not found, saying which.
    let (read, _) = ask(&mut h, 3, "tasks/get", &task);
    answer(&mut h, read, stored(&task, "someone-else", "working", None));
    let got = h.frames().remove(0);
    assert!(
        got["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not one of this client's tasks"),
        "{got}"
    );
    let (read, _) = ask(&mut h, 4, "tasks/get", &task);
    answer(&mut h, read, StoreReply::Rows(vec![vec!["none".into()]]));
    let got = h.frames().remove(0);
    assert!(
        got["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has expired"),
        "{got}"
    );
    // The store down: an error that says to ask again, and the server goes on.
    let (read, _) = ask(&mut h, 5, "tasks/get", &task);
    answer(
        &mut h,
        read,
        StoreReply::Unavailable("connection refused".into()),
    );
    let got = h.frames().remove(0);
    let message = got["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("shared store") && message.contains("ask again"),
        "{got}"
    );
    // An id this server never sealed never reaches the store.
    h.send(json!({"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"task-forged"}}));
    assert!(h.frames().remove(0)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not a task id"));
    assert!(ops(&mut h).is_empty());
}

#[test]
fn a_waiting_result_is_woken_by_the_end_announced_on_the_channel() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    let (read, _) = ask(&mut h, 2, "tasks/result", &task);
    answer(&mut h, read, stored(&task, "default", "working", None));
    assert!(h.frames().is_empty(), "it waits");
    // Another instance ended it and says so (this one's lease had lapsed): read once for
    // the call this instance runs, once for the waiting request.
    h.feed(Input::StoreEvent(&format!("ended {task}")));
    let found = ops(&mut h);
    let [(own, StoreOp::Script { .. }), (reread, StoreOp::Script { .. })] = found.as_slice() else {
        panic!("two reads: {found:?}");
    };
    let outcome = r#"{"result":{"content":[{"type":"text","text":"{}"}],"isError":false}}"#;
    answer(
        &mut h,
        *reread,
        stored(&task, "default", "completed", Some(outcome)),
    );
    let result = h.frames().remove(0);
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "{}", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        Value::from(task.as_str()),
        "{result}"
    );
    // The store holds its end: the call here stops, and nothing of it is written again.
    assert!(!h.take_other().iter().any(|o| matches!(o, Output::Abort(_))));
    answer(
        &mut h,
        *own,
        stored(&task, "default", "completed", Some(outcome)),
    );
    assert!(
        h.take_other().iter().any(|o| matches!(o, Output::Abort(_))),
        "the call is stopped"
    );
    assert!(ops(&mut h).is_empty(), "no end is written over another's");
}

#[test]
fn an_end_announced_for_a_task_still_working_in_the_store_changes_nothing() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    h.feed(Input::StoreEvent(&format!("ended {task}")));
    let found = ops(&mut h);
    let [(own, _)] = found.as_slice() else {
        panic!("one read: {found:?}");
    };
    answer(&mut h, *own, stored(&task, "default", "working", None));
    assert!(!h.take_other().iter().any(|o| matches!(o, Output::Abort(_))));
    assert!(ops(&mut h).is_empty());
}

#[test]
fn a_cancel_on_the_channel_stops_the_call_this_instance_runs() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    for stops_nothing in [
        "cancel task-of-nobody default".to_owned(),
        // Another client's name: the task is not its (a store that mixed ids up, or an
        // event from a hostile publisher), so its call runs on.
        format!("cancel {task} mallory"),
        // Whose call it may stop is not said.
        format!("cancel {task}"),
    ] {
        h.feed(Input::StoreEvent(&stops_nothing));
        assert!(
            !h.take_other().iter().any(|o| matches!(o, Output::Abort(_))),
            "{stops_nothing} stops nothing"
        );
    }
    h.feed(Input::StoreEvent(&format!("cancel {task} default")));
    let outputs = h.take_other();
    assert!(
        outputs.iter().any(|o| matches!(o, Output::Abort(_))),
        "the upstream request stops: {outputs:?}"
    );
}

#[test]
fn an_end_is_written_to_the_store_and_a_result_too_big_to_send_is_not_kept() {
    for (max, kept) in [(1 << 20, true), (400, false)] {
        let mut h = shared_with(max);
        let (task, attempt) = create(&mut h);
        h.reply(
            attempt,
            200,
            &crate::fixture("response-web-search.json"),
            &[],
        );
        let found = ops(&mut h);
        let finish = found
            .iter()
            .find_map(|(_, op)| match op {
                StoreOp::Script { keys, args, .. } if keys == &[format!("orm:t:{task}")] => {
                    Some(args.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("the end is written: {found:?}"));
        assert_eq!(finish[1], format!("ended {task}"), "and announced");
        let field = |name: &str| {
            finish
                .iter()
                .position(|a| a == name)
                .map(|i| finish[i + 1].clone())
        };
        let outcome = field("outcome").unwrap();
        if kept {
            assert_eq!(field("status").as_deref(), Some("completed"));
            assert!(outcome.starts_with(r#"{"result":"#), "{outcome}");
        } else {
            assert_eq!(field("status").as_deref(), Some("failed"));
            assert!(outcome.contains("larger than a reply may be"), "{outcome}");
            assert!(outcome.len() < 400, "{outcome}");
        }
    }
}

#[test]
fn a_task_whose_id_the_store_holds_already_is_refused_and_its_call_stopped() {
    let mut h = shared();
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
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
    assert_eq!(h.take_http().len(), 1, "the call runs");
    let (put, _) = ops(&mut h).remove(0);
    answer(&mut h, put, StoreReply::Rows(vec![vec!["taken".into()]]));
    let refused = h.frames().remove(0);
    assert_eq!(refused["id"], 1);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("held by another task"), "{refused}");
    assert!(
        h.take_other().iter().any(|o| matches!(o, Output::Abort(_))),
        "its upstream request stops"
    );
}

#[test]
fn a_cancel_the_store_finds_foreign_is_refused_and_stops_nothing() {
    let mut h = shared();
    let (task, _) = create(&mut h);
    let (cancel, op) = ask(&mut h, 2, "tasks/cancel", &task);
    let StoreOp::Script { script, args, .. } = &op else {
        panic!("{op:?}")
    };
    assert_eq!(*script, crate::store::tasks::CANCEL_SCRIPT);
    assert_eq!(args[4], "default", "the asker's name goes to the script");
    answer(
        &mut h,
        cancel,
        StoreReply::Rows(vec![vec!["foreign".into()]]),
    );
    let refused = h.frames().remove(0);
    assert_eq!(refused["id"], 2);
    assert!(refused["error"].is_object(), "{refused}");
    assert!(
        !h.take_other().iter().any(|o| matches!(o, Output::Abort(_))),
        "the call runs on"
    );
}

#[test]
fn a_task_call_cancelled_on_another_instance_while_the_store_takes_its_task_stops() {
    let mut h = shared();
    h.feed(Input::Exchange {
        id: crate::io::ExchangeId(1),
        asked: crate::Asked::Rpc {
            message: json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                "params":{"name":"answer","arguments":{"query":"q"},"task":{}}}),
            version: crate::mcp::ProtocolVersion::parse("2025-11-25"),
            client: crate::clients::ClientId::DEFAULT,
            trace: None,
            way: Default::default(),
        },
    });
    let (reserve, _) = ops(&mut h).remove(0);
    let reserved = StoreReply::Reserve {
        reached: 0,
        value: 0,
        held: 0,
    };
    answer(&mut h, reserve, reserved);
    assert_eq!(h.take_http().len(), 1, "the call runs");
    let (put, _) = ops(&mut h).remove(0);
    // Its client cancelled the request before it heard of the task, on another
    // instance: nobody will ever have its handle, so its call stops.
    h.feed(Input::StoreEvent("request [\"default\",1]"));
    assert_eq!(h.server.calls_in_flight(), 0, "its call stops");
    let ended = ops(&mut h);
    assert!(
        ended
            .iter()
            .any(|(_, op)| matches!(op, StoreOp::Script { script, .. }
            if *script == crate::store::tasks::CANCEL_SCRIPT)),
        "the store hears its task ended: {ended:?}"
    );
    answer(&mut h, put, StoreReply::Rows(vec![vec!["ok".into()]]));
    let got = h.take_other();
    let replied = |o: &Output| matches!(o, Output::Exchange(_, crate::ExchangeOut::Reply { .. }));
    assert!(
        !got.iter().any(replied),
        "its handle is never sent: {got:?}"
    );
    assert_eq!(h.server.register.len(), 0, "no ticket is left open");
}
