//! Tasks: a `tools/call` answered with a handle at once, its outcome fetched later
//! (MCP 2025-11-25 `tasks`, and the 2026-07-28 `io.modelcontextprotocol/tasks` extension).
//!
//! The store is local and bounded: in count, in bytes of kept outcomes, in time (each task
//! lives its ttl, capped). When full, the oldest finished task goes first; when every task
//! is still working, a new one is refused. Ids are sealed ([`crate::sha256`]): an HMAC over the
//! task's number under the server's key, so an id this process did not mint (forged,
//! tampered, or from another process without the shared key) is refused before any lookup.

pub mod background;
mod outcome;
pub(crate) mod seal;
mod status;

pub use outcome::Outcome;
pub use seal::{BackgroundRef, ClientDigest, Owner};
pub use status::Status;

use crate::clients::ClientId;
use crate::io::CallKey;
use crate::io::Now;
use crate::jsonrpc::RpcError;
use crate::timers::Timers;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use crate::settings::{CompletionWindow, TaskKey, TaskSettings};

/// The poll interval advertised for a task `age_secs` old: short while its answer may come
/// any moment, growing with its age to `ceiling` (`tasks.poll_interval_ms`) after a minute.
/// A task under a minute old is asked to poll at least once a second, so its answer
/// reaches the client within a second of arriving; most answers come within a minute.
pub fn poll_interval(age_secs: u64, ceiling: Duration) -> Duration {
    let schedule = match age_secs {
        0..10 => Duration::from_millis(250),
        10..30 => Duration::from_millis(500),
        30..60 => Duration::from_secs(1),
        _ => ceiling,
    };
    schedule.min(ceiling)
}

/// One task. `W` is whoever waits for its outcome (a parked `tasks/result`).
#[derive(Debug)]
pub struct Task<W> {
    /// The sealed id clients use.
    pub id: String,
    /// Creation time, Unix seconds.
    pub created: u64,
    /// Last change, Unix seconds.
    pub updated: u64,
    /// Its life from creation.
    pub ttl: Duration,
    /// When it is dropped.
    pub expires: Instant,
    /// Where it is.
    pub status: Status,
    /// Why it is where it is, when that helps.
    pub message: Option<String>,
    /// The call's result or error, once over.
    pub outcome: Option<Outcome>,
    /// The call doing the work, while working.
    pub(crate) call: Option<CallKey>,
    /// Requests waiting for the outcome.
    pub waiters: Vec<W>,
    /// The client that created it: the only one that sees it.
    pub owner: ClientId,
    /// Bytes its outcome takes.
    bytes: usize,
}

impl<W> Task<W> {
    /// A task built from what is known of it elsewhere (a background task's reference
    /// and its last read state), for shaping it into a message.
    /// `expires` is not read from a view; any instant will do.
    pub fn view(
        id: String,
        (created, updated): (u64, u64),
        ttl: Duration,
        expires: Instant,
        (status, message): (Status, Option<String>),
        outcome: Option<Outcome>,
    ) -> Task<W> {
        Task {
            id,
            created,
            updated,
            ttl,
            expires,
            status,
            message,
            outcome,
            call: None,
            waiters: Vec::new(),
            owner: ClientId::DEFAULT,
            bytes: 0,
        }
    }
}

/// Why a task id is not served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// Not an id this server minted (or it was altered).
    NotMinted,
    /// Minted here, but expired or evicted.
    Gone,
    /// Another client's task.
    Foreign,
}

/// The store is full of working tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    /// Tasks held.
    pub tasks: usize,
}

/// The bounded task store. See the module docs.
pub struct TaskStore<W> {
    settings: TaskSettings,
    tasks: BTreeMap<u64, Task<W>>,
    /// Every task's expiry, soonest first (entries of removed tasks go stale; the top is
    /// kept live), so the next one is read without a scan.
    expiry: Timers<u64>,
    next: u64,
    bytes: usize,
}

/// A task dropped at the end of its ttl: its call to stop, its waiters to answer.
pub struct Expired<W> {
    /// The id.
    pub id: String,
    /// The call still running, to cancel.
    pub(crate) call: Option<CallKey>,
    /// Requests that waited for it.
    pub waiters: Vec<W>,
}

impl<W> TaskStore<W> {
    /// An empty store.
    pub fn new(settings: TaskSettings) -> Self {
        Self::starting_at(settings, 1)
    }

    /// An empty store whose first task is number `first` (instances sharing a store
    /// start far apart, so that their ids differ).
    pub fn starting_at(settings: TaskSettings, first: u64) -> Self {
        TaskStore {
            settings,
            tasks: BTreeMap::new(),
            expiry: Timers::default(),
            next: first.max(1),
            bytes: 0,
        }
    }

    /// Whether `id` is a local task id this server sealed (held or not).
    pub fn minted(&self, id: &str) -> bool {
        self.open(id).is_some()
    }

    /// The settings.
    pub fn settings(&self) -> &TaskSettings {
        &self.settings
    }

    /// Tasks held.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// The owner of each task held (a client that owns a task is never forgotten).
    pub fn owners(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.tasks.values().map(|t| t.owner)
    }

    /// Tasks held, by status name (every status present, zeros included).
    pub fn count_by_status(&self) -> Vec<(&'static str, usize)> {
        let mut counts = [0; Status::ALL.len()];
        for task in self.tasks.values() {
            if let Some(i) = Status::ALL.iter().position(|s| *s == task.status) {
                counts[i] += 1;
            }
        }
        Status::ALL.iter().map(|s| s.as_str()).zip(counts).collect()
    }

    /// The ids of the tasks still working, oldest first.
    pub fn working(&self) -> impl Iterator<Item = &str> {
        self.tasks
            .values()
            .filter(|t| t.status == Status::Working)
            .map(|t| t.id.as_str())
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// A new working task living `ttl_ms` (capped; the default when `None`). Makes room
    /// by dropping the oldest finished tasks; refused when every task is working.
    pub fn create(
        &mut self,
        now: Now,
        ttl_ms: Option<u64>,
        owner: ClientId,
    ) -> Result<&mut Task<W>, Full> {
        while self.tasks.len() >= self.settings.max_tasks {
            if !self.evict_oldest_finished() {
                return Err(Full {
                    tasks: self.tasks.len(),
                });
            }
        }
        let ttl = ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(self.settings.default_ttl)
            .min(self.settings.max_ttl);
        let seq = self.next;
        self.next += 1;
        let task = Task {
            id: self.seal(seq),
            created: now.unix_secs,
            updated: now.unix_secs,
            ttl,
            expires: crate::io::after(now.instant, ttl),
            status: Status::Working,
            message: None,
            outcome: None,
            call: None,
            waiters: Vec::new(),
            owner,
            bytes: 0,
        };
        self.expiry.schedule(seq, task.expires);
        Ok(self.tasks.entry(seq).or_insert(task))
    }

    /// The task `id` names.
    pub fn get(&mut self, id: &str) -> Result<&mut Task<W>, Unknown> {
        let seq = self.open(id).ok_or(Unknown::NotMinted)?;
        self.tasks.get_mut(&seq).ok_or(Unknown::Gone)
    }

    /// The task `id` names, when `client` created it.
    pub fn get_for(&mut self, id: &str, client: ClientId) -> Result<&mut Task<W>, Unknown> {
        let task = self.get(id)?;
        if task.owner == client {
            Ok(task)
        } else {
            Err(Unknown::Foreign)
        }
    }

    /// Records the call's end with the status (and its message) the era gives it;
    /// returns its waiters. A cancelled task stays cancelled.
    pub fn finish(
        &mut self,
        id: &str,
        at_unix: u64,
        outcome: Result<Value, RpcError>,
        (status, message): (Status, Option<String>),
    ) -> Vec<W> {
        let Some(seq) = self.open(id) else {
            return Vec::new();
        };
        let Some(task) = self.tasks.get_mut(&seq) else {
            return Vec::new();
        };
        task.call = None;
        if task.status.is_terminal() {
            return std::mem::take(&mut task.waiters);
        }
        let outcome = Outcome::new(outcome);
        task.status = status;
        task.message = message;
        let bytes = outcome.bytes();
        task.bytes = bytes;
        task.outcome = Some(outcome);
        task.updated = at_unix;
        self.bytes += bytes;
        let waiters = std::mem::take(&mut task.waiters);
        while self.bytes > self.settings.max_bytes && self.evict_oldest_finished() {}
        waiters
    }

    /// Marks the task cancelled; returns the call to stop and the waiters.
    pub(crate) fn cancel(
        &mut self,
        id: &str,
        at_unix: u64,
        why: &str,
    ) -> (Option<CallKey>, Vec<W>) {
        let Ok(task) = self.get(id) else {
            return (None, Vec::new());
        };
        if task.status.is_terminal() {
            return (None, Vec::new());
        }
        task.status = Status::Cancelled;
        task.message = Some(why.to_owned());
        task.updated = at_unix;
        (task.call.take(), std::mem::take(&mut task.waiters))
    }

    /// Forgets the waiters `gone` says have left (their requests closed).
    pub fn forget_waiters(&mut self, gone: impl Fn(&W) -> bool) {
        for task in self.tasks.values_mut() {
            task.waiters.retain(|w| !gone(w));
        }
    }

    /// Forgets a task whose call could not start.
    pub fn discard(&mut self, id: &str) {
        if let Some(seq) = self.open(id) {
            self.remove(seq);
        }
    }

    /// Drops the tasks whose ttl has run out.
    pub fn expire(&mut self, now: Instant) -> Vec<Expired<W>> {
        let due = self.expiry.take_due(now);
        let expired = due
            .into_iter()
            .filter_map(|(_, seq)| self.remove(seq))
            .map(|t| Expired {
                id: t.id,
                call: t.call,
                waiters: t.waiters,
            })
            .collect();
        self.prune_expiry();
        expired
    }

    /// When the next task expires.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let next = self.expiry.peek().map(|(at, _)| at);
        debug_assert_eq!(
            next,
            self.tasks.values().map(|t| t.expires).min(),
            "the expiry heap is out of step with the tasks"
        );
        next
    }

    /// Drops the entries of removed tasks from the top of the expiry heap.
    fn prune_expiry(&mut self) {
        let tasks = &self.tasks;
        self.expiry.prune(
            |at, seq| tasks.get(seq).is_some_and(|t| t.expires == at),
            tasks.len(),
            || tasks.iter().map(|(seq, t)| (t.expires, *seq)).collect(),
        );
    }

    /// Up to `limit` tasks after `cursor` (oldest first), and the cursor of the rest.
    pub fn page(
        &self,
        cursor: Option<&str>,
        limit: usize,
        owner: ClientId,
    ) -> Result<(Vec<&Task<W>>, Option<String>), Unknown> {
        let after = match cursor {
            None => 0,
            Some(c) => self.open(c).ok_or(Unknown::NotMinted)?,
        };
        let mut page: Vec<&Task<W>> = self
            .tasks
            .range(after + 1..)
            .map(|(_, t)| t)
            .filter(|t| t.owner == owner)
            .take(limit + 1)
            .collect();
        let next = if page.len() > limit {
            page.truncate(limit);
            page.last().map(|t| t.id.clone())
        } else {
            None
        };
        Ok((page, next))
    }

    fn evict_oldest_finished(&mut self) -> bool {
        let oldest = self
            .tasks
            .iter()
            .find(|(_, t)| t.status.is_terminal())
            .map(|(s, _)| *s);
        match oldest {
            Some(seq) => {
                log::debug!("task store full: dropping the oldest finished task");
                self.remove(seq);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, seq: u64) -> Option<Task<W>> {
        let task = self.tasks.remove(&seq)?;
        self.bytes -= task.bytes;
        self.prune_expiry();
        Some(task)
    }

    /// A background task's sealed id.
    pub fn seal_background(&self, r: &BackgroundRef) -> String {
        seal::seal_background(&self.settings.key, r)
    }

    /// The reference inside a background id, when the seal holds; `Err(NotMinted)`
    /// otherwise (ids of the local store included).
    pub fn open_background(&self, id: &str) -> Result<BackgroundRef, Unknown> {
        seal::open_background(&self.settings.key, id).ok_or(Unknown::NotMinted)
    }

    fn seal(&self, seq: u64) -> String {
        seal::seal(&self.settings.key, seq)
    }

    fn open(&self, id: &str) -> Option<u64> {
        seal::open(&self.settings.key, id)
    }
}

#[cfg(test)]
mod tests;
