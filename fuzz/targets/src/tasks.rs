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
    let answer = br#"{"id":"resp_1","model":"gpt-5","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[]}]}]}"#;
    let queued = br#"{"id":"resp_1","status":"queued","output":[]}"#;
    let failed =
        br#"{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"x"}}"#;
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
        let task_id = match ids.get(usize::from(arg) % ids.len().max(1)) {
            Some(t) if arg % 5 != 0 => t.clone(),
            Some(t) => {
                // One character changed: the seal must refuse it.
                let mut forged = t.clone().into_bytes();
                let at = usize::from(arg) % forged.len();
                forged[at] = forged[at].wrapping_add(1);
                String::from_utf8_lossy(&forged).into_owned()
            }
            None => format!("task-{arg:x}"),
        };
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
            6 => {
                for attempt in std::mem::take(&mut open) {
                    let a = attempt.attempt;
                    match arg % 7 {
                        0 => h.reply(a, 200, answer, &[]),
                        1 => h.reply(a, 500, b"{}", &[]),
                        2 => h.reply(a, 200, queued, &[]),
                        3 => h.reply(a, 200, failed, &[]),
                        4 => h.reply(a, 404, b"{}", &[]),
                        5 => h.reply(a, 429, b"{}", &[("retry-after", "1")]),
                        _ => h.fail(a, responses_mcp_core::TransportErrorKind::Io, "reset"),
                    }
                }
            }
            _ => {
                // Time passes; the timer fires late, as a busy host's would.
                h.advance(Duration::from_millis(u64::from(arg) * 100));
                h.feed(Input::Timeout);
            }
        }
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
        for record in h.take_records() {
            let line: Value = serde_json::from_str(&record.to_json()).unwrap_or_default();
            assert_eq!(line["event"], "call", "{line}");
            if background && record.task && record.attempts > 0 && line["response_id"] == "resp_1" {
                ended_records += 1;
                assert!(ended_records <= 1, "a background end counted twice: {line}");
            }
        }
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
