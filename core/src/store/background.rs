//! Background runs in the store: a run's hold (its estimate, added to its client's and
//! the service's day when OpenAI takes it on), the claim of its end (once across every
//! instance, the hold given back with it), and the sweep of runs whose end nobody
//! claimed by their task's end and a minute more (their instance died or stopped, and
//! no client read them): the sweeper claims each and keeps its hold as its charge.
//!
//! Keys: `orm:h:<response id>` (the hold, a hash), `orm:b:<response id>` (the claim),
//! `orm:hq` (the holds by when they are due for the sweep, a sorted set).

use super::error::Unreadable;
use super::keys::{spend_key, SERVICE};
use super::operation::StoreOp;
use crate::clients::DAY;
use crate::money::Picodollars;
use crate::openai::Usage;

/// The sorted set of holds by when their run is swept if nobody claimed its end.
const DUE: &str = "orm:hq";

/// Runs one sweep takes at most.
const SWEEP_AT_MOST: usize = 16;

/// The script of [`hold_background`]: the hold added to the client's and the service's
/// day, and remembered with the keys it went to, the usage it estimated and the call it
/// is (so that whichever instance claims or sweeps the run's end gives it back from the
/// right day or charges that same estimate), due for the sweep at `ARGV[8]`.
pub const HOLD_SCRIPT: &str = r"
for i = 1, 2 do
  redis.call('INCRBY', KEYS[i], ARGV[1])
  redis.call('EXPIRE', KEYS[i], ARGV[2])
end
redis.call('HSET', KEYS[3], 'amount', ARGV[1], 'client', KEYS[1], 'service', KEYS[2],
  'input', ARGV[4], 'cached', ARGV[5], 'output', ARGV[6], 'searches', ARGV[7],
  'name', ARGV[10], 'tool', ARGV[11], 'model', ARGV[12], 'created', ARGV[13])
redis.call('EXPIRE', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[8], ARGV[9])
return {}
";

/// The script of [`claim_background_end`]: `won` when this instance claimed the end
/// (followed by the hold's estimated usage when there was one, the hold then gone from
/// the days it was added to), `lost` when another instance had. The hold's day keys are
/// read from the hold, as the task list reads its tasks' keys.
pub const CLAIM_SCRIPT: &str = r"
redis.call('ZREM', KEYS[3], ARGV[2])
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return {{'lost'}} end
local h = redis.call('HMGET', KEYS[2], 'amount', 'client', 'service', 'input', 'cached',
  'output', 'searches')
if not h[1] then return {{'won'}} end
for i = 2, 3 do
  if h[i] and redis.call('EXISTS', h[i]) == 1 then
    redis.call('DECRBY', h[i], h[1])
  end
end
redis.call('DEL', KEYS[2])
return {{'won', h[4] or '0', h[5] or '0', h[6] or '0', h[7] or '0'}}
";

/// The script of [`sweep_background`]: up to `ARGV[2]` runs due by `ARGV[1]`, each
/// claimed (so that a late reader counts it no more) with its hold kept in the days as
/// its charge; a row per run this instance claimed: the response id, the hold's amount,
/// its usage, the client's name, the tool, the model and the creation time.
pub const SWEEP_SCRIPT: &str = r"
local rows = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('SET', 'orm:b:' .. id, '1', 'NX', 'EX', ARGV[3]) then
    local h = redis.call('HMGET', 'orm:h:' .. id, 'amount', 'input', 'cached', 'output',
      'searches', 'name', 'tool', 'model', 'created')
    redis.call('DEL', 'orm:h:' .. id)
    if h[1] then
      rows[#rows + 1] = {id, h[1], h[2] or '0', h[3] or '0', h[4] or '0', h[5] or '0',
        h[6] or '', h[7] or '', h[8] or '', h[9] or '0'}
    end
  end
end
return rows
";

/// A run's hold as [`hold_background`] writes it.
#[derive(Clone, Debug)]
pub struct HeldRun<'a> {
    /// The stored response.
    pub response_id: &'a str,
    /// Whose day it is charged to.
    pub client: &'a str,
    /// Its tool, by name.
    pub tool: &'a str,
    /// The model it was sent to.
    pub model: &'a str,
    /// The estimate.
    pub amount: Picodollars,
    /// The usage the estimate is of.
    pub usage: &'a Usage,
    /// When OpenAI took it on, Unix seconds (the day it is charged to).
    pub created: u64,
    /// When its task's life ends, Unix seconds: it is swept a minute after.
    pub ends: u64,
}

/// What [`CLAIM_SCRIPT`] answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndClaim {
    /// Another instance counts the end.
    Lost,
    /// This instance counts it; `held` is the usage the run's hold estimated, if it had
    /// one (what to charge when OpenAI reported none).
    Won {
        /// The hold's estimate: input, cached input and output tokens, and searches.
        held: Option<Usage>,
    },
}

/// A run [`SWEEP_SCRIPT`] gave this instance: charged its hold, which stays in the days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swept {
    /// The stored response.
    pub response_id: String,
    /// The hold, now the run's charge.
    pub amount: Picodollars,
    /// The usage it estimated.
    pub usage: Usage,
    /// Whose it is.
    pub client: String,
    /// Its tool, by name.
    pub tool: String,
    /// The model it was sent to.
    pub model: String,
    /// When OpenAI took it on, Unix seconds.
    pub created: u64,
}

/// Charging `run`'s estimate to the day's spend until its end is claimed
/// ([`HOLD_SCRIPT`]): admission then counts the runs still going, whichever instance
/// admits.
pub fn hold_background(run: &HeldRun<'_>) -> StoreOp {
    StoreOp::Script {
        script: HOLD_SCRIPT,
        keys: vec![
            spend_key(run.client, run.created),
            spend_key(SERVICE, run.created),
            hold_key(run.response_id),
            DUE.to_owned(),
        ],
        args: vec![
            run.amount.0.to_string(),
            (2 * DAY).to_string(),
            (2 * DAY).to_string(),
            run.usage.input_tokens.to_string(),
            run.usage.cached_input_tokens.to_string(),
            run.usage.output_tokens.to_string(),
            run.usage.web_searches.to_string(),
            run.ends.saturating_add(SWEEP_AFTER_SECS).to_string(),
            run.response_id.to_owned(),
            run.client.to_owned(),
            run.tool.to_owned(),
            run.model.to_owned(),
            run.created.to_string(),
        ],
    }
}

/// How long after its task's end a run nobody claimed is swept: the instance following
/// it reads it at least this often, so a live one claims it first.
pub const SWEEP_AFTER_SECS: u64 = 60;

/// Claiming the count of background response `response_id`'s end (remembered two days,
/// longer than a background task lives), its hold given back with it.
pub fn claim_background_end(response_id: &str) -> StoreOp {
    StoreOp::Script {
        script: CLAIM_SCRIPT,
        keys: vec![
            format!("orm:b:{response_id}"),
            hold_key(response_id),
            DUE.to_owned(),
        ],
        args: vec![(2 * DAY).to_string(), response_id.to_owned()],
    }
}

/// Sweeping the runs due by `now` ([`SWEEP_SCRIPT`]).
pub fn sweep_background(now: u64) -> StoreOp {
    StoreOp::Script {
        script: SWEEP_SCRIPT,
        keys: vec![DUE.to_owned()],
        args: vec![
            now.to_string(),
            SWEEP_AT_MOST.to_string(),
            (2 * DAY).to_string(),
        ],
    }
}

fn hold_key(response_id: &str) -> String {
    format!("orm:h:{response_id}")
}

fn unreadable(rows: &[Vec<String>]) -> Unreadable {
    Unreadable(format!("{rows:?}").chars().take(120).collect())
}

fn usage_of(cells: [&String; 4]) -> Option<Usage> {
    let count = |s: &String| s.parse::<u64>().ok();
    Some(Usage {
        input_tokens: count(cells[0])?,
        cached_input_tokens: count(cells[1])?,
        output_tokens: count(cells[2])?,
        web_searches: u32::try_from(count(cells[3])?).unwrap_or(u32::MAX),
        ..Usage::default()
    })
}

/// Reads [`CLAIM_SCRIPT`]'s answer.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn end_claimed(rows: &[Vec<String>]) -> Result<EndClaim, Unreadable> {
    match rows {
        [row] => match row.as_slice() {
            [lost] if lost == "lost" => Ok(EndClaim::Lost),
            [won] if won == "won" => Ok(EndClaim::Won { held: None }),
            [won, input, cached, output, searches] if won == "won" => {
                let held = usage_of([input, cached, output, searches]);
                held.map(|usage| EndClaim::Won { held: Some(usage) })
                    .ok_or_else(|| unreadable(rows))
            }
            _ => Err(unreadable(rows)),
        },
        _ => Err(unreadable(rows)),
    }
}

/// Reads [`SWEEP_SCRIPT`]'s answer: the runs this instance swept, at most the sweep's
/// size.
///
/// # Errors
/// An answer that is not one the script gives.
pub fn swept(rows: &[Vec<String>]) -> Result<Vec<Swept>, Unreadable> {
    if rows.len() > SWEEP_AT_MOST {
        return Err(unreadable(rows));
    }
    rows.iter()
        .map(|row| match row.as_slice() {
            [id, amount, input, cached, output, searches, client, tool, model, created] => {
                let usage = usage_of([input, cached, output, searches]);
                let amount = amount.parse().ok().map(Picodollars);
                let created = created.parse().ok();
                match (usage, amount, created) {
                    (Some(usage), Some(amount), Some(created)) => Ok(Swept {
                        response_id: id.clone(),
                        amount,
                        usage,
                        client: client.clone(),
                        tool: tool.clone(),
                        model: model.clone(),
                        created,
                    }),
                    _ => Err(unreadable(rows)),
                }
            }
            _ => Err(unreadable(rows)),
        })
        .collect()
}
