//! The core's store operations as one pipeline: whatever waits in the queue when the
//! store's thread is free goes in one round trip (200 calls at once would otherwise wait
//! for 400 round trips in turn), and each operation's answer is read from its own values.
//! Scripts are sent as `EVAL` with their text: Redis and Valkey cache them by digest, and
//! a restarted store never answers `NOSCRIPT`.

use redis::Value;
use responses_mcp_core::store::{StoreOp, StoreReply, RESERVE_SCRIPT, UNHOLD_SCRIPT};

/// Gives a call back, never below zero (a count that expired meanwhile stays gone).
const RELEASE_SCRIPT: &str =
    "if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then return redis.call('DECR', KEYS[1]) end return 0";

/// `ops` as one pipeline, and how many values each one's answer takes.
pub(super) fn pipeline(ops: &[&StoreOp]) -> (redis::Pipeline, Vec<usize>) {
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    let mut takes = Vec::with_capacity(ops.len());
    for op in ops {
        let before = pipe.len();
        match op {
            StoreOp::Reserve { keys, args, hold } => {
                pipe.cmd("EVAL")
                    .arg(RESERVE_SCRIPT)
                    .arg(keys.len())
                    .arg(keys)
                    .arg(args)
                    .arg(&hold.holder)
                    .arg(hold.n);
            }
            StoreOp::Spend {
                keys,
                amount,
                ttl_secs,
            } => {
                for key in keys {
                    pipe.cmd("INCRBY").arg(key).arg(*amount);
                    pipe.cmd("EXPIRE").arg(key).arg(*ttl_secs);
                }
            }
            StoreOp::Release { keys } => {
                for key in keys {
                    pipe.cmd("EVAL").arg(RELEASE_SCRIPT).arg(1).arg(key);
                }
            }
            StoreOp::Unhold { keys, hold } => {
                pipe.cmd("EVAL")
                    .arg(UNHOLD_SCRIPT)
                    .arg(keys.len())
                    .arg(keys)
                    .arg(&hold.holder)
                    .arg(hold.n);
            }
            StoreOp::Script { script, keys, args } => {
                pipe.cmd("EVAL")
                    .arg(*script)
                    .arg(keys.len())
                    .arg(keys)
                    .arg(args);
            }
            StoreOp::Publish { channel, message } => {
                pipe.cmd("PUBLISH").arg(channel).arg(message);
            }
        }
        takes.push(pipe.len() - before);
    }
    (pipe, takes)
}

/// Each operation's answer from the pipeline's values, in order; `failed` says what a
/// value the store refused means (it names no secret).
pub(super) fn replies(
    ops: &[&StoreOp],
    takes: &[usize],
    values: Vec<Value>,
    failed: impl Fn(&redis::RedisError) -> String,
) -> Vec<StoreReply> {
    let mut values = values.into_iter();
    ops.iter()
        .zip(takes)
        .map(|(op, &n)| {
            let mine: Vec<Value> = values.by_ref().take(n).collect();
            if mine.len() < n {
                return StoreReply::Unavailable(
                    "the store answered fewer values than asked".into(),
                );
            }
            reply(op, mine).unwrap_or_else(|e| StoreReply::Unavailable(failed(&e)))
        })
        .collect()
}

/// One operation's answer from its values.
fn reply(op: &StoreOp, values: Vec<Value>) -> redis::RedisResult<StoreReply> {
    for value in &values {
        if let Value::ServerError(e) = value {
            return Err(e.clone().into());
        }
    }
    let first = || values.first().cloned().unwrap_or(Value::Nil);
    Ok(match op {
        StoreOp::Reserve { .. } => {
            let (reached, value, held): (i64, i64, i64) = redis::from_redis_value(first())?;
            StoreReply::Reserve {
                reached,
                value,
                held,
            }
        }
        StoreOp::Script { .. } => StoreReply::Rows(redis::from_redis_value(first())?),
        StoreOp::Spend { .. }
        | StoreOp::Release { .. }
        | StoreOp::Unhold { .. }
        | StoreOp::Publish { .. } => StoreReply::Done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    #[test]
    fn each_operation_reads_its_own_values() {
        let ops = [
            StoreOp::Reserve {
                keys: ["a", "b", "c", "d", "e", "f", "g", "h"].map(String::from),
                args: [1, 2, 3, 4, 120, 5, 172_800],
                hold: responses_mcp_core::store::HoldName {
                    holder: "i".into(),
                    n: 1,
                },
            },
            StoreOp::Spend {
                keys: ["c".into(), "d".into()],
                amount: 5,
                ttl_secs: 9,
            },
            StoreOp::Script {
                script: "return {{'ok'}}",
                keys: Vec::new(),
                args: Vec::new(),
            },
        ];
        let refs: Vec<&StoreOp> = ops.iter().collect();
        let (pipe, takes) = pipeline(&refs);
        assert_eq!(takes, [1, 4, 1]);
        assert_eq!(pipe.len(), 6);
        let values = vec![
            Value::Array(vec![Value::Int(2), Value::Int(7), Value::Int(0)]),
            Value::Int(5),
            Value::Int(1),
            Value::Int(5),
            Value::Int(1),
            Value::Array(vec![Value::Array(vec![s("ok")])]),
        ];
        let got = replies(&refs, &takes, values, |e| e.to_string());
        assert_eq!(
            got,
            [
                StoreReply::Reserve {
                    reached: 2,
                    value: 7,
                    held: 0
                },
                StoreReply::Done,
                StoreReply::Rows(vec![vec!["ok".into()]]),
            ]
        );
    }

    #[test]
    fn a_refused_or_missing_value_fails_only_its_operation() {
        let ops = [
            StoreOp::Publish {
                channel: "c".into(),
                message: "m".into(),
            },
            StoreOp::Reserve {
                keys: ["a", "b", "c", "d", "e", "f", "g", "h"].map(String::from),
                args: [1, 2, 3, 4, 120, 5, 172_800],
                hold: responses_mcp_core::store::HoldName {
                    holder: "i".into(),
                    n: 1,
                },
            },
            StoreOp::Publish {
                channel: "c".into(),
                message: "m".into(),
            },
        ];
        let refs: Vec<&StoreOp> = ops.iter().collect();
        let (_, takes) = pipeline(&refs);
        // The reserve's answer is not two numbers; the last publish has no value at all.
        let got = replies(&refs, &takes, vec![Value::Int(1), s("what")], |_| {
            "no".into()
        });
        assert_eq!(got[0], StoreReply::Done);
        assert!(matches!(got[1], StoreReply::Unavailable(_)), "{:?}", got[1]);
        assert!(matches!(got[2], StoreReply::Unavailable(_)), "{:?}", got[2]);
    }
}
