//! The requests waiting for the identity provider's keys: in the order they came, each
//! with its deadline on a heap (so the next one is read without a scan) and the bytes it
//! holds (its raw request: nothing of a caller nobody admitted is parsed).

use crate::oauth::token::BearerToken;
use crate::timers::Timers;
use std::collections::BTreeMap;
use std::time::Instant;

/// Requests waiting for keys, at most.
const MAX_WAITING: usize = 1024;
/// Bytes the waiting requests hold, at most.
pub const MAX_WAITING_BYTES: usize = 16 << 20;

/// A request waiting for keys.
pub(super) struct Waiting<P> {
    pub deadline: Instant,
    pub token: BearerToken,
    pub parked: P,
    pub bytes: usize,
}

/// See the module docs.
pub(super) struct WaitingRoom<P> {
    /// By number: the order they came in.
    waiting: BTreeMap<u64, Waiting<P>>,
    next: u64,
    /// Their deadlines, soonest first; the top is kept live (entries of requests gone
    /// are stale below it).
    deadlines: Timers<u64>,
}

impl<P> Default for WaitingRoom<P> {
    fn default() -> Self {
        WaitingRoom {
            waiting: BTreeMap::new(),
            next: 0,
            deadlines: Timers::default(),
        }
    }
}

impl<P> WaitingRoom<P> {
    /// Whether `bytes` more fit beside those waiting.
    pub fn has_room(&self, bytes: usize) -> bool {
        self.waiting.len() < MAX_WAITING && self.bytes().saturating_add(bytes) <= MAX_WAITING_BYTES
    }

    /// `waiting` waits.
    pub fn enter(&mut self, waiting: Waiting<P>) {
        let n = self.next;
        self.next += 1;
        self.deadlines.schedule(n, waiting.deadline);
        self.waiting.insert(n, waiting);
    }

    /// Everyone, no longer waiting, in the order they came.
    pub fn take_all(&mut self) -> Vec<Waiting<P>> {
        self.deadlines = Timers::default();
        std::mem::take(&mut self.waiting).into_values().collect()
    }

    /// Those whose deadline is at or before `now`, no longer waiting.
    pub fn take_due(&mut self, now: Instant) -> Vec<Waiting<P>> {
        let due: Vec<Waiting<P>> = self
            .deadlines
            .take_due(now)
            .into_iter()
            .filter_map(|(at, n)| {
                let live = self.waiting.get(&n).is_some_and(|w| w.deadline == at);
                live.then(|| self.waiting.remove(&n)).flatten()
            })
            .collect();
        self.prune();
        due
    }

    /// Drops those `gone` says are gone (their client left).
    pub fn forget(&mut self, mut gone: impl FnMut(&P) -> bool) {
        self.waiting.retain(|_, w| !gone(&w.parked));
        self.prune();
    }

    /// The soonest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        let next = self.deadlines.peek().map(|(at, _)| at);
        debug_assert_eq!(
            next,
            self.waiting.values().map(|w| w.deadline).min(),
            "the deadlines' heap is out of step with the waiting requests"
        );
        next
    }

    /// Bytes the waiting requests hold.
    pub fn bytes(&self) -> usize {
        self.waiting.values().map(|w| w.bytes).sum()
    }

    /// Drops the deadlines of requests no longer waiting from the top of the heap.
    fn prune(&mut self) {
        let waiting = &self.waiting;
        self.deadlines.prune(
            |at, n| waiting.get(n).is_some_and(|w| w.deadline == at),
            waiting.len(),
            || waiting.iter().map(|(n, w)| (w.deadline, *n)).collect(),
        );
    }
}
