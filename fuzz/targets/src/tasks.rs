//! The `tasks` fuzz target.

use responses_mcp_core::testing::Harness;
use responses_mcp_core::{HttpMethod, Input, Output, ServerConfig};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// Tasks under a random script in a 2025-11-25 session, with either backing: create
/// tasks (ttl from the input), poll, fetch, list and cancel them by issued, mutated or
/// random ids, answer their attempts (answers, background states queued and failed, 404,
/// 429, 5xx) or fail them, let time pass. Every write is one valid JSON-RPC message; no
/// request id is answered twice; the store never holds more than its limit; answers and
/// background creates never exceed `max_inflight`; ids that were not issued never reach a
/// task.
pub fn tasks(data: &[u8]) {
    use responses_mcp_core::tasks::TaskSettings;
    let mut config = ServerConfig {
        credentials_ready: true,
        max_inflight: 2,
        max_queue: 2,
        ..ServerConfig::default()
    };
    // The first byte picks the backing: the local store, or OpenAI background mode
    // (ids sealed over response ids, reads and cancels upstream).
    let background = data.first().is_some_and(|b| b % 2 == 1);
    config.tasks = TaskSettings {
        max_tasks: 3,
        max_bytes: 4096,
        max_ttl: Duration::from_secs(20),
        background,
        ..TaskSettings::default()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    // Upstream requests sent and not yet answered or aborted.
    let mut open: Vec<responses_mcp_core::HttpRequest> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut answered: BTreeSet<u64> = BTreeSet::new();
    // Background tasks whose end was recorded: every one is the fake's `resp_1`, so the
    // ledger, which counts an end once per response, records at most one.
    let mut ended_records = 0;
    let mut next = 1u64;
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let id = next;
        next += 1;
        let task_id = task_id(&ids, arg);
        match op % 8 {
            0 | 1 => {
                let ttl = u64::from(arg) * 200;
                h.send(
                    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                    "params":{"name":"answer","arguments":{"query":"q"},"task":{"ttl":ttl}}}),
                );
            }
            2..=5 => {
                let method = ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"]
                    [usize::from(op % 8 - 2)];
                h.send(serde_json::json!({"jsonrpc":"2.0","id":id,"method":method,
                    "params":{"taskId":task_id,"cursor":task_id}}));
            }
            6 => answer_all(&mut h, std::mem::take(&mut open), arg),
            _ => {
                // Time passes; the timer fires late, as a busy host's would.
                h.advance(Duration::from_millis(u64::from(arg) * 100));
                h.feed(Input::Timeout);
            }
        }
        check_frames(&mut h, &mut ids, &mut answered);
        ended_records += check_records(&mut h, background);
        assert!(ended_records <= 1, "a background end counted twice");
        open.extend(h.take_http());
        for output in h.take_other() {
            if let Output::Abort(attempt) = output {
                open.retain(|r| r.attempt != attempt);
            }
        }
        // Answers and background creates share the slots (max_inflight 2).
        let creates = open
            .iter()
            .filter(|r| r.method == HttpMethod::Post && r.url.ends_with("/responses"))
            .count();
        assert!(creates <= 2, "{creates} answers or creates in flight");
        assert!(h.server.task_count() <= 3, "the store outgrew its limit");
    }
}

/// What the fake upstream answers: a whole answer, a background response queued or
/// failed.
const ANSWER: &[u8] = br#"{"id":"resp_1","model":"gpt-5","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[]}]}]}"#;
const QUEUED: &[u8] = br#"{"id":"resp_1","status":"queued","output":[]}"#;
const FAILED: &[u8] =
    br#"{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"x"}}"#;

/// A task id the script names: one issued, one issued with a character changed (the
/// seal must refuse it), or, before any was issued, a made-up one.
fn task_id(ids: &[String], arg: u8) -> String {
    match ids.get(usize::from(arg) % ids.len().max(1)) {
        Some(t) if arg % 5 != 0 => t.clone(),
        Some(t) => {
            let mut forged = t.clone().into_bytes();
            let at = usize::from(arg) % forged.len();
            forged[at] = forged[at].wrapping_add(1);
            String::from_utf8_lossy(&forged).into_owned()
        }
        None => format!("task-{arg:x}"),
    }
}

/// Every open upstream request answered alike, as `arg` picks.
fn answer_all(h: &mut Harness, open: Vec<responses_mcp_core::HttpRequest>, arg: u8) {
    for attempt in open {
        let a = attempt.attempt;
        match arg % 7 {
            0 => h.reply(a, 200, ANSWER, &[]),
            1 => h.reply(a, 500, b"{}", &[]),
            2 => h.reply(a, 200, QUEUED, &[]),
            3 => h.reply(a, 200, FAILED, &[]),
            4 => h.reply(a, 404, b"{}", &[]),
            5 => h.reply(a, 429, b"{}", &[("retry-after", "1")]),
            _ => h.fail(a, responses_mcp_core::TransportErrorKind::Io, "reset"),
        }
    }
}

/// Every frame written is JSON-RPC, answers its request once and hides no panic; the
/// task ids it issues are kept for the script.
fn check_frames(h: &mut Harness, ids: &mut Vec<String>, answered: &mut BTreeSet<u64>) {
    for frame in h.frames() {
        assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
        if let Some(task) = frame.pointer("/result/task/taskId").and_then(Value::as_str) {
            ids.push(task.to_owned());
        }
        if let Some(n) = frame.get("id").and_then(Value::as_u64) {
            assert!(answered.insert(n), "request {n} answered twice: {frame}");
        }
        if let Some(message) = frame.pointer("/error/message").and_then(Value::as_str) {
            assert!(!message.contains("panicked"), "{message}");
        }
    }
}

/// Every record is a call's; returns how many of them record the end of a background task of
/// the fake's `resp_1`.
fn check_records(h: &mut Harness, background: bool) -> usize {
    let mut ended = 0;
    for record in h.take_records() {
        let line: Value = serde_json::from_str(&record.to_json()).unwrap_or_default();
        assert_eq!(line["event"], "call", "{line}");
        if background && record.task && record.attempts > 0 && line["response_id"] == "resp_1" {
            ended += 1;
        }
    }
    ended
}
