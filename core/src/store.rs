//! What many instances share through a store (`server.store.url`): the counts behind the
//! limits, the tasks ([`tasks`]) and the events that tell instances of changes
//! ([`events`]). The core decides what to ask ([`StoreOp`]: the keys, their windows, the limits)
//! and reads the answers ([`StoreReply`]); a runtime performs the operations against Redis
//! or Valkey and reports how each went. Nothing here does IO.
//!
//! Keys are `orm:c:<client>:<minute>` (calls admitted in a UTC minute),
//! `orm:s:<client>:<day>` (estimated spend in picodollars in a UTC day) and
//! `orm:r:<client>:<day>` (the estimates held by the day's calls still in flight, on every
//! instance), with `*` as the client for the whole service (a client's name never holds
//! `*`). Each expires one window after its own, so an instance that crashes mid-call
//! leaks a count for a minute at most, and its calls' held estimates for the rest of
//! their day.
//! A background run's end is claimed once at `orm:b:<response id>`, and its hold (its
//! estimate, added to the days at its start) kept at `orm:h:<response id>` until then.

mod background;
mod error;
pub mod events;
mod keys;
mod operation;
pub mod tasks;

pub use background::{
    claim_background_end, end_claimed, hold_background, sweep_background, swept, EndClaim, HeldRun,
    Swept, CLAIM_SCRIPT, HOLD_SCRIPT, SWEEP_SCRIPT,
};
pub use error::StoreError;
pub use operation::{StoreId, StoreOp, StoreReply, StoreTag};

use crate::clients::{Exceeded, Limit, LimitKind, Scope, DAY, MINUTE};
use crate::money::Picodollars;
use keys::{calls_key, held_key, spend_key, SERVICE};

/// The script of [`StoreOp::Reserve`]: commands both Redis 7 and Valkey have. A calls
/// limit refuses once the minute's count reaches it; a spend limit once the day's spend
/// plus what the calls in flight hold (admitted today or yesterday: a call admitted
/// before midnight is charged to the day it ends in) reaches it, answering the spend and
/// the held apart. Admitted, the call is counted and its estimate (`ARGV[6]`) held in
/// today's hashes under the hold's own field (`ARGV[8]`), their total in the field `=`,
/// atomically, so that a burst across every instance sees each call that went before it.
pub const RESERVE_SCRIPT: &str = r"
for i = 1, 2 do
  local limit = tonumber(ARGV[i])
  if limit >= 0 then
    local used = tonumber(redis.call('GET', KEYS[i]) or '0')
    if used >= limit then
      return {i, used, 0}
    end
  end
end
for i = 3, 4 do
  local limit = tonumber(ARGV[i])
  if limit >= 0 then
    local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
    local held = tonumber(redis.call('HGET', KEYS[i + 2], '=') or '0')
      + tonumber(redis.call('HGET', KEYS[i + 4], '=') or '0')
    if spent + held >= limit then
      return {i, spent, held}
    end
  end
end
for i = 1, 2 do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[5])
end
local estimate = tonumber(ARGV[6])
if estimate > 0 then
  for i = 5, 6 do
    if redis.call('HSETNX', KEYS[i], ARGV[8], estimate) == 1 then
      redis.call('HINCRBY', KEYS[i], '=', estimate)
    end
    redis.call('EXPIRE', KEYS[i], ARGV[7])
  end
end
return {0, 0, 0}
";

/// The script of [`StoreOp::Unhold`]: lets go of one call's held estimate (its field,
/// `ARGV[1]`) from the total, only if that hold is still there: a hold let go twice, or
/// one the store lost in a restart, takes nothing from the holds of other calls.
pub const UNHOLD_SCRIPT: &str = r"
for i = 1, 2 do
  local amount = tonumber(redis.call('HGET', KEYS[i], ARGV[1]) or '0')
  if redis.call('HDEL', KEYS[i], ARGV[1]) == 1 then
    local left = redis.call('HINCRBY', KEYS[i], '=', -amount)
    if left < 0 then
      redis.call('HSET', KEYS[i], '=', 0)
    end
  end
end
return 0
";

fn limit_arg<T: Into<u64>>(limit: Option<T>) -> i64 {
    limit.map_or(-1, |l| i64::try_from(l.into()).unwrap_or(i64::MAX))
}

/// The reserve of a call of `client` at `now` (Unix seconds) under its own limit and the
/// service's, holding its `estimate` under `hold` (a name no other hold of the fleet has)
/// while it runs.
pub fn reserve(
    client: &str,
    (own, service): (Limit, Limit),
    now: u64,
    (estimate, hold): (Picodollars, &str),
) -> StoreOp {
    let spend = |l: Limit| l.spend_per_day.map(|p| p.0);
    StoreOp::Reserve {
        keys: [
            calls_key(client, now),
            calls_key(SERVICE, now),
            spend_key(client, now),
            spend_key(SERVICE, now),
            held_key(client, now),
            held_key(SERVICE, now),
            held_key(client, now.saturating_sub(DAY)),
            held_key(SERVICE, now.saturating_sub(DAY)),
        ],
        args: [
            limit_arg(own.calls_per_minute),
            limit_arg(service.calls_per_minute),
            limit_arg(spend(own)),
            limit_arg(spend(service)),
            i64::try_from(2 * MINUTE).unwrap_or(i64::MAX),
            i64::try_from(estimate.0).unwrap_or(i64::MAX),
            i64::try_from(2 * DAY).unwrap_or(i64::MAX),
        ],
        hold: hold.to_owned(),
    }
}

/// What a reserve's answer (`reached`, and the value of its key; for a spend limit, the
/// spend and the held apart) means, for a call under `limits` at `now`: `Ok` reserved,
/// `Err` the limit reached. An answer that names no limit it was asked for is read as
/// reserved only when it says so (`0`); anything else is the store's error.
pub fn reserved(
    (reached, value, held): (i64, i64, i64),
    (own, service): (Limit, Limit),
    now: u64,
) -> Result<Result<(), Exceeded>, StoreError> {
    let value = u64::try_from(value).unwrap_or(0);
    let held = u64::try_from(held).unwrap_or(0);
    let calls = |limit: Limit| limit.calls_per_minute.map(LimitKind::CallsPerMinute);
    let spend = |limit: Limit| {
        limit.spend_per_day.map(|max| LimitKind::SpendPerDay {
            limit: max,
            spent: Picodollars(value),
            held: Picodollars(held),
        })
    };
    let (scope, kind) = match reached {
        0 => return Ok(Ok(())),
        1 => (Scope::Client, calls(own)),
        2 => (Scope::Instance, calls(service)),
        3 => (Scope::Client, spend(own)),
        4 => (Scope::Instance, spend(service)),
        _ => (Scope::Instance, None),
    };
    match kind {
        Some(kind) => Ok(Err(Exceeded::at(scope, kind, now))),
        None => Err(StoreError::UnaskedLimit(reached)),
    }
}

/// Letting go of hold `hold`, made at `admitted` (Unix seconds) by a call of `client`
/// that ended or never started.
pub fn unhold(client: &str, hold: &str, admitted: u64) -> StoreOp {
    StoreOp::Unhold {
        keys: [held_key(client, admitted), held_key(SERVICE, admitted)],
        hold: hold.to_owned(),
    }
}

/// Adding `cost`, spent by a call of `client` that ended at `now`, to the day's spend.
pub fn spend(client: &str, cost: Picodollars, now: u64) -> StoreOp {
    StoreOp::Spend {
        keys: [spend_key(client, now), spend_key(SERVICE, now)],
        amount: i64::try_from(cost.0).unwrap_or(i64::MAX),
        ttl_secs: i64::try_from(2 * DAY).unwrap_or(i64::MAX),
    }
}

/// Giving back the call of `client` reserved in the minute of `admitted` (Unix seconds).
pub fn release(client: &str, admitted: u64) -> StoreOp {
    StoreOp::Release {
        keys: [calls_key(client, admitted), calls_key(SERVICE, admitted)],
    }
}

#[cfg(test)]
mod tests;
