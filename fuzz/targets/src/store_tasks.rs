//! The `store_tasks` fuzz target.

use responses_mcp_core::settings::{OnUnavailable, StoreSettings};
use responses_mcp_core::store::tasks::{cancelled, finished, page, read};
use responses_mcp_core::store::{StoreId, StoreOp, StoreReply};
use responses_mcp_core::testing::Harness;
use responses_mcp_core::{Input, Output, ServerConfig};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

/// Rows of strings from bytes: `\n` ends a row, `\t` a string (as lossy UTF-8).
fn rows(data: &[u8]) -> Vec<Vec<String>> {
    data.split(|b| *b == b'\n')
        .map(|row| {
            row.split(|b| *b == b'\t')
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .collect()
}

/// A server whose tasks live in a shared store, under a script of task calls,
/// `tasks/*` requests, the store's answers (arbitrary rows, failures, answers of the
/// wrong kind, to operations never asked) and messages on its channel (arbitrary text):
/// never a panic; every request answered at most once, with a result or an error. The
/// parsers of the store's answers read the same bytes as rows.
pub fn store_tasks(data: &[u8]) {
    let (head, tail) = data.split_at(data.len().min(1));
    parse_as_store_answers(tail);
    let config = ServerConfig {
        credentials_ready: true,
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Allow,
        }),
        ..ServerConfig::default()
    };
    let mut h = Harness::new(config);
    let modern = head.first().is_some_and(|b| b % 2 == 1);
    h.init("2025-11-25");
    let mut asked: Vec<StoreId> = Vec::new();
    let mut task_ids: Vec<String> = vec!["task-0".into()];
    let mut answered: BTreeSet<u64> = BTreeSet::new();
    let mut next = 1u64;
    for chunk in tail.split(|b| *b == 0xff) {
        let (op, arg) = (
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
        );
        let rest = chunk.get(2..).unwrap_or_default();
        let task = task_ids[usize::from(arg) % task_ids.len()].clone();
        match op % 7 {
            0 | 1 => {
                h.send(request(op, arg, next, &task, modern));
                next += 1;
            }
            2 => h.feed(Input::StoreEvent(&String::from_utf8_lossy(rest))),
            3 => h.feed(Input::StoreEvent(&match arg % 3 {
                0 => format!("ended {task}"),
                1 => format!("cancel {task} default"),
                _ => format!("cancel {task} other"),
            })),
            4 => h.feed(Input::StoreSubscribed),
            5 => h.feed(Input::Timeout),
            _ => {
                let id = asked
                    .get(usize::from(arg) % asked.len().max(1))
                    .copied()
                    // Never asked: a number of any owner's.
                    .unwrap_or_else(|| crate::store_ids::unasked(arg));
                let reply = match arg % 4 {
                    0 | 1 => StoreReply::Rows(rows(rest)),
                    2 => StoreReply::Unavailable("connection refused".into()),
                    _ => StoreReply::Done,
                };
                h.feed(Input::StoreReply {
                    id,
                    reply,
                    took: Duration::from_millis(1),
                });
            }
        }
        check_frames(&mut h, &mut answered, &mut task_ids);
        let _ = h.take_http();
        for output in h.take_other() {
            if let Output::Store(id, op) = output {
                if !matches!(op, StoreOp::Spend { .. } | StoreOp::Release { .. }) {
                    asked.push(id);
                }
            }
        }
    }
}

/// The parsers of the store's answers and channel messages, on arbitrary rows and text.
fn parse_as_store_answers(tail: &[u8]) {
    let parsed = rows(tail);
    let _ = (
        read(&parsed),
        cancelled(&parsed),
        finished(&parsed),
        page(&parsed),
        responses_mcp_core::store::tasks::lease::renewed(&parsed),
    );
    let _ = responses_mcp_core::store::events::StoreEvent::parse(&String::from_utf8_lossy(tail));
}

/// Request `id`: a task-augmented `tools/call` (op 0), or a `tasks/*` request about `task`.
fn request(op: u8, arg: u8, id: u64, task: &str, modern: bool) -> Value {
    if op % 7 == 0 {
        let mut params = json!({"name":"answer","arguments":{"query":"q"},"task":{}});
        if modern {
            params["_meta"] = json!({"progressToken": id});
        }
        return json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params});
    }
    let method = ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"][usize::from(arg) % 4];
    let params = if method == "tasks/list" {
        json!({"cursor": task})
    } else {
        json!({"taskId": task})
    };
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

/// Every request is answered once, with a result or an error; the task ids issued are
/// kept for the script.
fn check_frames(h: &mut Harness, answered: &mut BTreeSet<u64>, task_ids: &mut Vec<String>) {
    for frame in h.frames() {
        if let Some(n) = frame.get("id").and_then(Value::as_u64) {
            assert!(answered.insert(n), "request {n} answered twice: {frame}");
            assert!(
                frame["result"].is_object() || frame["error"].is_object(),
                "{frame}"
            );
            if let Some(id) = frame["result"]["task"]["taskId"].as_str() {
                task_ids.push(id.to_owned());
            }
        }
    }
}
