//! The `store_replies` fuzz target.

use responses_mcp_core::clients::Limit;
use responses_mcp_core::money::Picodollars;
use responses_mcp_core::settings::{OnUnavailable, StoreSettings};
use responses_mcp_core::store::{StoreOp, StoreReply};
use responses_mcp_core::testing::Harness;
use responses_mcp_core::{Input, Output, ServerConfig};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// A server whose limits live in a shared store, under a script of calls, cancels and
/// arbitrary answers of the store (any limit number and value, failures, answers of the
/// wrong kind, answers to operations never asked, answers twice): never a panic; every
/// request answered at most once; nothing reaches OpenAI unless a reserve admitted it;
/// every answer to a call is its result or a tool error.
pub fn store_replies(data: &[u8]) {
    let on_unavailable = if data.first().is_some_and(|b| b % 2 == 1) {
        OnUnavailable::Allow
    } else {
        OnUnavailable::Refuse
    };
    let money = data.get(1).is_some_and(|b| b % 2 == 1);
    let config = ServerConfig {
        credentials_ready: true,
        store: Some(StoreSettings { on_unavailable }),
        instance_limit: Limit {
            calls_per_minute: Some(3),
            spend_per_day: money.then_some(Picodollars(1)),
        },
        ..ServerConfig::default()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    let mut asked: Vec<responses_mcp_core::store::StoreId> = Vec::new();
    let mut answered: BTreeSet<u64> = BTreeSet::new();
    let mut admitted = 0usize;
    let mut sent = 0usize;
    let mut next = 1u64;
    let mut bytes = data.iter().skip(2).copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        match op % 6 {
            0 | 1 => {
                h.send(
                    serde_json::json!({"jsonrpc":"2.0","id":next,"method":"tools/call",
                    "params":{"name":"answer","arguments":{"query":"q"}}}),
                );
                next += 1;
            }
            2 => {
                let id = u64::from(arg) % next.max(1);
                h.send(
                    serde_json::json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                    "params":{"requestId":id}}),
                );
            }
            3 => h.feed(Input::StoreHealth(arg % 2 == 0)),
            _ => {
                // An answer to an operation asked (or not), of any kind.
                let id = asked
                    .get(usize::from(arg) % asked.len().max(1))
                    .copied()
                    // Never asked: a number of any owner's.
                    .unwrap_or_else(|| crate::store_ids::unasked(arg));
                let reply = store_reply(arg);
                let admits = admits(&reply, on_unavailable, money);
                admitted += usize::from(admits);
                let took = Duration::from_millis(u64::from(arg));
                h.feed(Input::StoreReply { id, reply, took });
            }
        }
        check_frames(&mut h, &mut answered);
        sent += h.take_http().len();
        // Every answer may admit a call at most once: no more requests than admissions.
        assert!(
            sent <= admitted,
            "{sent} requests upstream, {admitted} admissions"
        );
        for output in h.take_other() {
            if let Output::Store(id, op) = output {
                if matches!(op, StoreOp::Reserve { .. }) {
                    asked.push(id);
                }
            }
        }
    }
}

/// A store's answer of any kind, as `arg` picks: admitted, refused by any limit number,
/// out-of-range numbers, unavailable, or the wrong kind.
fn store_reply(arg: u8) -> StoreReply {
    match arg % 5 {
        0 => StoreReply::Reserve {
            reached: 0,
            value: 0,
            held: 0,
        },
        1 => StoreReply::Reserve {
            reached: i64::from(arg % 7) - 1,
            value: i64::from(arg) * 1_000_000 - 3,
            held: 0,
        },
        2 => StoreReply::Unavailable("connection refused".into()),
        3 => StoreReply::Done,
        _ => StoreReply::Reserve {
            reached: i64::MAX,
            value: i64::MIN,
            held: 0,
        },
    }
}

/// What the answer may admit: a reserve that says so; a limit it was asked about
/// refuses; anything else counts as the store failing, which admits only under `allow`
/// without a spend limit.
fn admits(reply: &StoreReply, on_unavailable: OnUnavailable, money: bool) -> bool {
    match reply {
        StoreReply::Reserve { reached: 0, .. } => true,
        StoreReply::Reserve { reached: 2, .. } => false,
        StoreReply::Reserve { reached: 4, .. } if money => false,
        _ => on_unavailable == OnUnavailable::Allow && !money,
    }
}

/// Every request is answered once, with its result or a tool error.
fn check_frames(h: &mut Harness, answered: &mut BTreeSet<u64>) {
    for frame in h.frames() {
        if let Some(n) = frame.get("id").and_then(Value::as_u64) {
            assert!(answered.insert(n), "request {n} answered twice: {frame}");
            let result = &frame["result"];
            assert!(
                result["content"].is_array() || frame["error"].is_object(),
                "{frame}"
            );
        }
    }
}
