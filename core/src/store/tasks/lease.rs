//! The lease each instance holds on the tasks it runs, so that a replica's death is
//! noticed: the instance keeps one key, `orm:lease:<holder>`, alive in the store
//! ([`renew`], every [`RENEW`]); each of its tasks names it as `holder`. A working task
//! whose holder's key is gone is an orphan: whichever instance reads it ([`super::get`],
//! [`super::list`]) ends it as failed, atomically, and announces its end, so that every
//! instance waiting on it hears at once.
//!
//! The lapse is measured by the store alone (the key's `PX` time to live): instances'
//! clocks a few seconds apart change nothing, and one renewal covers all of an
//! instance's tasks, however many. A holder is minted per process ([`holder`]), so an
//! instance that comes back (restarted, or unfrozen) never revives its predecessor's
//! lease; and an ended task is never made working again by anyone (a finish changes only
//! a working task).

use crate::store::error::{unreadable, Unreadable};
use crate::store::operation::StoreOp;
use std::time::Duration;

/// The lease's life in the store, in ms, as the scripts' text holds it.
macro_rules! lapse_ms {
    () => {
        "15000"
    };
}
pub(super) use lapse_ms;

/// How long a lease lives without renewal: a dead instance's tasks are ended by the
/// first read after this (and a waiting `tasks/result` re-reads every 2 s), within 30 s
/// of its death.
pub const LAPSE: Duration = Duration::from_millis(15_000);

/// How often an instance running shared tasks renews its lease: three renewals fit in
/// a lapse, so two lost ones in a row do not end its tasks.
pub const RENEW: Duration = Duration::from_secs(5);

const LEASE_PREFIX: &str = "orm:lease:";

/// The key of `holder`'s lease.
pub fn lease_key(holder: &str) -> String {
    format!("{LEASE_PREFIX}{holder}")
}

/// The holder's name of a process whose random seed is `seed`: 16 hex digits.
pub fn holder(seed: u64) -> String {
    format!("{seed:016x}")
}

/// Renews the lease (`KEYS`: its key): `{{'held'}}`, or `{{'lapsed'}}` when the key had
/// expired (the store did not hear from this instance for a lapse: other instances may
/// have ended its tasks).
pub const RENEW_SCRIPT: &str = concat!(
    r"
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ",
    lapse_ms!(),
    r")
if had == 1 then return {{'held'}} end
return {{'lapsed'}}
"
);

/// The Lua functions the reading scripts share. `ended(key, o)` reads a task's hash and,
/// when it is a working orphan, ends it first (`o`: the lease keys' prefix, the time,
/// the message, the stored outcome, the channel, the end event's prefix) and adds
/// `orphaned 1` to the fields answered. A task an earlier build wrote names no holder
/// and is never taken for an orphan, so a fleet mid-upgrade ends nothing wrongly.
macro_rules! orphans_lua {
    () => {
        r"
local function orphan(key, o)
  if redis.call('HGET', key, 'status') ~= 'working' then return false end
  local holder = redis.call('HGET', key, 'holder')
  if not holder or redis.call('EXISTS', o[1] .. holder) == 1 then return false end
  local id = redis.call('HGET', key, 'id') or ''
  redis.call('HSET', key, 'status', 'failed', 'message', o[3], 'outcome', o[4], 'updated', o[2])
  redis.call('PUBLISH', o[5], o[6] .. id)
  return true
end
local function ended(key, o)
  local t = redis.call('HGETALL', key)
  if #t > 0 and orphan(key, o) then
    t = redis.call('HGETALL', key)
    table.insert(t, 'orphaned')
    table.insert(t, '1')
  end
  return t
end
"
    };
}
pub(super) use orphans_lua;

/// The arguments [`orphans_lua`]'s `ended` takes, for a read at `at` (Unix seconds).
pub(super) fn orphan_args(at: u64) -> Vec<String> {
    let error = crate::mcp::shape::TaskError::InstanceStopped.error();
    vec![
        LEASE_PREFIX.to_owned(),
        at.to_string(),
        error.message.clone(),
        crate::tasks::Outcome::new(Err(error)).stored(),
        crate::store::events::CHANNEL.to_owned(),
        crate::store::events::StoreEvent::Ended(String::new()).to_string(),
    ]
}

/// Renewing `holder`'s lease for another [`LAPSE`].
pub fn renew(holder: &str) -> StoreOp {
    StoreOp::Script {
        script: RENEW_SCRIPT,
        keys: vec![lease_key(holder)],
        args: Vec::new(),
    }
}

/// Whether the answer of [`renew`] says the lease was still held (`false`: it had
/// lapsed, and is held again from now on).
///
/// # Errors
/// An answer that is not one the script gives.
pub fn renewed(rows: &[Vec<String>]) -> Result<bool, Unreadable> {
    match rows.first().and_then(|r| r.first()).map(String::as_str) {
        Some("held") => Ok(true),
        Some("lapsed") => Ok(false),
        _ => Err(unreadable("a reply that is not a lease's renewal")),
    }
}
