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

/// How long a holder's holds stand in the store without a word from it (ms, as the
/// scripts' text holds it): an instance renews `orm:alive:<holder>` every
/// [`HOLDS_RENEW`] while it holds any, so a killed replica's holds lapse within this.
macro_rules! holds_lapse_ms {
    () => {
        "15000"
    };
}

/// How often an instance with holds in the store says it is alive.
pub const HOLDS_RENEW: std::time::Duration = std::time::Duration::from_secs(5);

/// The script of [`StoreOp::Reserve`]: commands both Redis 7 and Valkey have. A calls
/// limit refuses once the minute's count reaches it; a spend limit once the day's spend
/// plus what the calls in flight hold (admitted today or yesterday: a call admitted
/// before midnight is charged to the day it ends in) reaches it, answering the spend and
/// the held apart. Holds are kept per holder (an instance): `KEYS[5..8]` are sets of the
/// holders of a client's (or the service's) day, each holder's holds a hash beside it
/// (`<set>:<holder>`: each hold's estimate by its name, their total in the field `=`);
/// the holds of a holder whose `orm:alive:<holder>` lapsed (a killed replica) are dropped
/// as they are read. Admitted, the call is counted and its estimate (`ARGV[6]`) held in
/// today's hashes of its holder (`ARGV[8]`) under its name (`ARGV[9]`), atomically, so
/// that a burst across every instance sees each call that went before it.
pub const RESERVE_SCRIPT: &str = concat!(
    r"
local function held(set)
  local sum = 0
  for _, holder in ipairs(redis.call('SMEMBERS', set)) do
    local holds = set .. ':' .. holder
    if redis.call('EXISTS', 'orm:alive:' .. holder) == 1 then
      sum = sum + tonumber(redis.call('HGET', holds, '=') or '0')
    else
      redis.call('DEL', holds)
      redis.call('SREM', set, holder)
    end
  end
  return sum
end
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
    local held = held(KEYS[i + 2]) + held(KEYS[i + 4])
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
  redis.call('SET', 'orm:alive:' .. ARGV[8], '1', 'PX', ",
    holds_lapse_ms!(),
    r")
  for i = 5, 6 do
    local holds = KEYS[i] .. ':' .. ARGV[8]
    redis.call('SADD', KEYS[i], ARGV[8])
    if redis.call('HSETNX', holds, ARGV[9], estimate) == 1 then
      redis.call('HINCRBY', holds, '=', estimate)
    end
    redis.call('EXPIRE', KEYS[i], ARGV[7])
    redis.call('EXPIRE', holds, ARGV[7])
  end
end
return {0, 0, 0}
"
);

/// The script of [`StoreOp::Unhold`]: lets go of one call's held estimate (its name,
/// `ARGV[2]`, among its holder's, `ARGV[1]`) from the total, only if that hold is still
/// there: a hold let go twice, or one the store lost in a restart, takes nothing from
/// the holds of other calls.
pub const UNHOLD_SCRIPT: &str = r"
for i = 1, 2 do
  local holds = KEYS[i] .. ':' .. ARGV[1]
  local amount = tonumber(redis.call('HGET', holds, ARGV[2]) or '0')
  if redis.call('HDEL', holds, ARGV[2]) == 1 then
    local left = redis.call('HINCRBY', holds, '=', -amount)
    if left < 0 then
      redis.call('HSET', holds, '=', 0)
    end
  end
end
return 0
";

/// The script that renews a holder's `orm:alive:<holder>` (`KEYS[1]`), while it holds.
pub const ALIVE_SCRIPT: &str = concat!(
    r"
redis.call('SET', KEYS[1], '1', 'PX', ",
    holds_lapse_ms!(),
    r")
return {}
"
);

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
    (estimate, hold): (Picodollars, &HoldName),
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
        hold: hold.clone(),
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
pub fn unhold(client: &str, hold: &HoldName, admitted: u64) -> StoreOp {
    StoreOp::Unhold {
        keys: [held_key(client, admitted), held_key(SERVICE, admitted)],
        hold: hold.clone(),
    }
}

/// Renewing `holder`'s word that it is alive, so that its holds stand.
pub fn alive(holder: &str) -> StoreOp {
    StoreOp::Script {
        script: ALIVE_SCRIPT,
        keys: vec![format!("orm:alive:{holder}")],
        args: Vec::new(),
    }
}

/// A hold's name in the store: its holder (an instance, random per process) and its
/// number among the holder's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldName {
    /// The instance's name among the holders.
    pub holder: String,
    /// The hold's number.
    pub n: u64,
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
