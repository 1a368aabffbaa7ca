//! Tasks kept in the shared store, so that any instance serves them: each task is a hash
//! `orm:t:<id>` that expires with the task, and each client's tasks are listed in a sorted
//! set `orm:tl:<client>` (by creation time) that forgets entries older than the longest
//! ttl. The instance that runs a task's call writes its states; every instance reads them.
//! Changes are announced on [`super::events::CHANNEL`] so that waiting `tasks/result`
//! requests and the running call hear of them at once.
//!
//! Every task names the instance running it (`holder`), whose lease ([`lease`]) says it
//! is alive; a read that finds a working task whose holder's lease lapsed ends it as
//! failed.
//!
//! What the store answers is parsed here ([`read`], [`page`], [`cancelled`],
//! [`finished`]): it may be an older or newer instance's writing, or damaged, so nothing
//! in it is trusted to be well formed.

pub mod lease;

pub use crate::store::error::Unreadable;

use crate::store::error::unreadable;
use crate::store::operation::StoreOp;
use crate::tasks::{Outcome, Status};
use lease::{lapse_ms, orphans_lua};
use std::time::Duration;

/// Fields a stored task has (`orphaned`: added to an answer by the read that ended it).
const FIELDS: [&str; 9] = [
    "id", "owner", "created", "updated", "ttl_ms", "status", "message", "outcome", "orphaned",
];

/// Writes a new task, atomically (`KEYS`: its hash, its owner's list, its holder's lease;
/// `ARGV`: its id, ttl in ms, score, the score below which list entries are older than
/// any task lives, the list's ttl in seconds, then its fields and values) and renews its
/// holder's lease: `{{'ok', 'held'|'lapsed'}}` (whether the lease was alive, as a
/// renewal says), or `{{'taken'}}` when the store holds a task of that id already: a task is never overwritten, so no instance can take another's task (its
/// owner, its answer) by minting its id again.
pub const PUT_SCRIPT: &str = concat!(
    r"
if redis.call('EXISTS', KEYS[1]) == 1 then return {{'taken'}} end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
local had = redis.call('EXISTS', KEYS[3])
redis.call('SET', KEYS[3], '1', 'PX', ",
    lapse_ms!(),
    r")
if had == 1 then return {{'ok', 'held'}} end
return {{'ok', 'lapsed'}}
"
);

/// Reads a task, ending it first when it is an orphan (`ARGV`: as `orphans_lua`'s
/// `ended` takes them): `{{'ok'}, fields}` or `{{'none'}}`.
pub const READ_SCRIPT: &str = concat!(
    orphans_lua!(),
    r"
local t = ended(KEYS[1], ARGV)
if #t == 0 then return {{'none'}} end
return {{'ok'}, t}
"
);

/// Cancels a working task of the client named `ARGV[5]` (`ARGV`: updated, message,
/// channel, event, owner) and announces it; answers `{{'ok', 'changed'|'unchanged'},
/// fields}`, `{{'foreign'}}` (another client's: nothing written, nothing announced) or
/// `{{'none'}}`. The owner is compared here, before any write, so that no client can
/// stop another's call.
pub const CANCEL_SCRIPT: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return {{'none'}} end
if owner ~= ARGV[5] then return {{'foreign'}} end
local changed = 'unchanged'
if redis.call('HGET', KEYS[1], 'status') == 'working' then
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'message', ARGV[2], 'updated', ARGV[1])
  redis.call('PUBLISH', ARGV[3], ARGV[4])
  changed = 'changed'
end
local t = redis.call('HGETALL', KEYS[1])
if #t == 0 then return {{'none'}} end
return {{'ok', changed}, t}
";

/// Records a working task's end (`ARGV`: channel, event, then field and value pairs) and
/// announces it; answers `{{'won'}}`, `{{'lost'}}` (it had ended: cancelled elsewhere) or
/// `{{'none'}}` (the store does not hold it).
pub const FINISH_SCRIPT: &str = r"
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {{'none'}} end
if status ~= 'working' then return {{'lost'}} end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {{'won'}}
";

/// A page of a client's tasks (`ARGV`: the cursor's id or '', the page size, the task
/// keys' prefix, how many entries to look at, then what `orphans_lua`'s `ended` takes):
/// `{{'ok', next cursor or ''}, fields…}` or `{{'bad-cursor'}}`. Entries whose task
/// expired are skipped; a page may hold fewer than the page size when many are, and then
/// says where to go on. Orphans on the page are ended first.
pub const LIST_SCRIPT: &str = concat!(
    orphans_lua!(),
    r"
local o = {unpack(ARGV, 5)}
local start = 0
if ARGV[1] ~= '' then
  local r = redis.call('ZRANK', KEYS[1], ARGV[1])
  if not r then return {{'bad-cursor'}} end
  start = r + 1
end
local limit = tonumber(ARGV[2])
local scan = tonumber(ARGV[4])
local ids = redis.call('ZRANGE', KEYS[1], start, start + scan - 1)
local out = {{'ok', ''}}
local taken = 0
for i, id in ipairs(ids) do
  if taken == limit then
    out[1][2] = ids[i - 1]
    return out
  end
  local t = ended(ARGV[3] .. id, o)
  if #t > 0 then
    table.insert(out, t)
    taken = taken + 1
  end
end
if #ids == scan then out[1][2] = ids[#ids] end
return out
"
);

/// Entries a page looks at, live or expired.
const SCAN: usize = 500;
const TASK_PREFIX: &str = "orm:t:";

fn task_key(id: &str) -> String {
    format!("{TASK_PREFIX}{id}")
}

fn list_key(client: &str) -> String {
    format!("orm:tl:{client}")
}

/// A task as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTask {
    /// Its sealed id.
    pub id: String,
    /// The name of the client that created it.
    pub owner: String,
    /// Creation and last change, Unix seconds.
    pub created: u64,
    /// Last change, Unix seconds.
    pub updated: u64,
    /// Its life from creation.
    pub ttl: Duration,
    /// Where it is.
    pub status: Status,
    /// Why, when that helps.
    pub message: Option<String>,
    /// The call's result or error, once over.
    pub outcome: Option<Outcome>,
    /// The read that answered it ended it: its holder's lease had lapsed.
    pub orphaned: bool,
}

impl StoredTask {
    /// When its life ends, Unix seconds.
    pub fn ends(&self) -> u64 {
        self.created.saturating_add(self.ttl.as_secs())
    }
}

/// Writing a new working task of `owner` created at `created` (Unix seconds), living
/// `ttl`, run by `holder` (whose lease it renews); `max_ttl` bounds how long its list
/// keeps entries.
pub fn put(
    id: &str,
    (owner, holder): (&str, &str),
    created: u64,
    ttl: Duration,
    max_ttl: Duration,
) -> StoreOp {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let mut args = vec![
        id.to_owned(),
        ttl_ms.to_string(),
        created.to_string(),
        created.saturating_sub(max_ttl.as_secs()).to_string(),
        max_ttl.as_secs().saturating_add(60).to_string(),
    ];
    let fields = [
        ("id", id.to_owned()),
        ("owner", owner.to_owned()),
        ("created", created.to_string()),
        ("updated", created.to_string()),
        ("ttl_ms", ttl_ms.to_string()),
        ("status", Status::Working.as_str().to_owned()),
        ("holder", holder.to_owned()),
    ];
    for (name, value) in fields {
        args.push(name.to_owned());
        args.push(value);
    }
    StoreOp::Script {
        script: PUT_SCRIPT,
        keys: vec![task_key(id), list_key(owner), lease::lease_key(holder)],
        args,
    }
}

/// Reading task `id` at `at` (Unix seconds), ending it when it is an orphan.
pub fn get(id: &str, at: u64) -> StoreOp {
    StoreOp::Script {
        script: READ_SCRIPT,
        keys: vec![task_key(id)],
        args: lease::orphan_args(at),
    }
}

/// Cancelling task `id` of the client named `owner` at `at` (Unix seconds) because of
/// `why`; the store refuses it when the task is another client's.
pub fn cancel(id: &str, owner: &str, at: u64, why: &str) -> StoreOp {
    let event = super::events::StoreEvent::Cancel {
        task_id: id.to_owned(),
        owner: owner.to_owned(),
    };
    StoreOp::Script {
        script: CANCEL_SCRIPT,
        keys: vec![task_key(id)],
        args: vec![
            at.to_string(),
            why.to_owned(),
            super::events::CHANNEL.to_owned(),
            event.to_string(),
            owner.to_owned(),
        ],
    }
}

/// Recording the end of task `id` at `at` with `status` and `outcome` in its stored form
/// ([`Outcome::stored`]; `None`: stopped without one).
pub fn finish(
    id: &str,
    at: u64,
    (status, message): (Status, Option<&str>),
    outcome: Option<String>,
) -> StoreOp {
    let mut args = vec![
        super::events::CHANNEL.to_owned(),
        super::events::StoreEvent::Ended(id.to_owned()).to_string(),
        "status".into(),
        status.as_str().to_owned(),
        "updated".into(),
        at.to_string(),
        "message".into(),
        message.unwrap_or_default().to_owned(),
    ];
    if let Some(outcome) = outcome {
        args.push("outcome".into());
        args.push(outcome);
    }
    StoreOp::Script {
        script: FINISH_SCRIPT,
        keys: vec![task_key(id)],
        args,
    }
}

/// A page of `owner`'s tasks after `cursor` (a task id), `limit` at most, read at `at`
/// (Unix seconds), its orphans ended.
pub fn list(owner: &str, cursor: Option<&str>, limit: usize, at: u64) -> StoreOp {
    let mut args = vec![
        cursor.unwrap_or_default().to_owned(),
        limit.to_string(),
        TASK_PREFIX.to_owned(),
        SCAN.to_string(),
    ];
    args.extend(lease::orphan_args(at));
    StoreOp::Script {
        script: LIST_SCRIPT,
        keys: vec![list_key(owner)],
        args,
    }
}

/// The task in the answer of [`get`]: `None` when the store does not hold it (expired,
/// or never written).
///
/// # Errors
/// An answer that is not one the script gives.
pub fn read(rows: &[Vec<String>]) -> Result<Option<StoredTask>, Unreadable> {
    match rows {
        [head] if head.first().map(String::as_str) == Some("none") => Ok(None),
        [head, fields] if head.first().map(String::as_str) == Some("ok") => parse(fields).map(Some),
        _ => Err(unreadable("a reply that is not a task")),
    }
}

/// What the answer of [`cancel`] says.
#[derive(Clone, Debug, PartialEq)]
pub enum Cancelled {
    /// The task, and whether this cancel changed it.
    Task(Box<StoredTask>, bool),
    /// Another client's task: the store changed nothing.
    Foreign,
    /// The store does not hold it.
    Missing,
}

/// What the answer of [`cancel`] says.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn cancelled(rows: &[Vec<String>]) -> Result<Cancelled, Unreadable> {
    match rows {
        [head] if head.first().map(String::as_str) == Some("none") => Ok(Cancelled::Missing),
        [head] if head.first().map(String::as_str) == Some("foreign") => Ok(Cancelled::Foreign),
        [head, fields] if head.first().map(String::as_str) == Some("ok") => {
            let changed = head.get(1).map(String::as_str) == Some("changed");
            parse(fields).map(|t| Cancelled::Task(Box::new(t), changed))
        }
        _ => Err(unreadable("a reply that is not a cancelled task")),
    }
}

/// What the answer of [`put`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The task was written; whether its holder's lease was alive until then (`false`:
    /// it had lapsed, as [`lease::renewed`] says).
    Put {
        /// The lease was alive.
        held: bool,
    },
    /// The store holds a task of that id already: nothing was written.
    Taken,
}

/// What the answer of [`put`] says.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn written(rows: &[Vec<String>]) -> Result<Written, Unreadable> {
    let head = rows.first().map(Vec::as_slice).unwrap_or_default();
    match head.first().map(String::as_str) {
        // An answer without the lease's word (an earlier build's script): held.
        Some("ok") => Ok(Written::Put {
            held: head.get(1).map(String::as_str) != Some("lapsed"),
        }),
        Some("taken") => Ok(Written::Taken),
        _ => Err(unreadable("a reply that is not a task's creation")),
    }
}

/// What the answer of [`finish`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// The end is recorded.
    Won,
    /// The task had ended already (cancelled through another instance).
    Lost,
    /// The store does not hold the task.
    Missing,
}

/// What the answer of [`finish`] says.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn finished(rows: &[Vec<String>]) -> Result<Finished, Unreadable> {
    match rows.first().and_then(|r| r.first()).map(String::as_str) {
        Some("won") => Ok(Finished::Won),
        Some("lost") => Ok(Finished::Lost),
        Some("none") => Ok(Finished::Missing),
        _ => Err(unreadable("a reply that is not a task's end")),
    }
}

/// A page of tasks and the cursor of the rest.
pub type Page = (Vec<StoredTask>, Option<String>);

/// A page of tasks from the answer of [`list`], and the cursor of the rest; `Ok(None)`
/// when the cursor names no listed task.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn page(rows: &[Vec<String>]) -> Result<Option<Page>, Unreadable> {
    let Some((head, tasks)) = rows.split_first() else {
        return Err(unreadable("an empty reply"));
    };
    match head.first().map(String::as_str) {
        Some("bad-cursor") => Ok(None),
        Some("ok") => {
            let next = head.get(1).filter(|c| !c.is_empty()).cloned();
            let tasks = tasks.iter().map(|t| parse(t)).collect::<Result<_, _>>()?;
            Ok(Some((tasks, next)))
        }
        _ => Err(unreadable("a reply that is not a page of tasks")),
    }
}

/// A task from its hash's fields and values, in pairs.
fn parse(flat: &[String]) -> Result<StoredTask, Unreadable> {
    let mut found: [Option<&str>; FIELDS.len()] = [None; FIELDS.len()];
    for pair in flat.chunks(2) {
        let [name, value] = pair else {
            return Err(unreadable("a field without a value"));
        };
        if let Some(i) = FIELDS.iter().position(|f| f == name) {
            found[i] = Some(value);
        }
    }
    let [id, owner, created, updated, ttl_ms, status, message, outcome, orphaned] = found;
    let number = |v: Option<&str>, name: &str| {
        v.and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| unreadable(&format!("a task without a number `{name}`")))
    };
    let status = status
        .and_then(|s| Status::ALL.iter().copied().find(|k| k.as_str() == s))
        .ok_or_else(|| unreadable("a task without a known status"))?;
    let outcome = match outcome {
        None => None,
        Some(text) => Some(
            Outcome::from_stored(text).ok_or_else(|| unreadable("a task's unreadable outcome"))?,
        ),
    };
    Ok(StoredTask {
        id: id
            .ok_or_else(|| unreadable("a task without an id"))?
            .to_owned(),
        owner: owner
            .ok_or_else(|| unreadable("a task without an owner"))?
            .to_owned(),
        created: number(created, "created")?,
        updated: number(updated, "updated")?,
        ttl: Duration::from_millis(number(ttl_ms, "ttl_ms")?),
        status,
        message: message.filter(|m| !m.is_empty()).map(str::to_owned),
        outcome,
        orphaned: orphaned == Some("1"),
    })
}

#[cfg(test)]
mod tests;
