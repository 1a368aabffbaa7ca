//! Deadlines in one min-heap, so the next one is read without a scan: the call engine's
//! (keyed by call), the task store's expiry, the held task calls' windows, the background
//! polls' (keyed by response id), the shared store's waited-on tasks' checks (keyed by
//! task id) and the OAuth gate's waiting requests. It serves them all, so it sits on the floor
//! below them.
//!
//! Entries are never updated in place. When a call moves on (a new attempt, a backoff, a
//! progress tick) its new deadline is pushed and the old entry goes stale; stale entries
//! are dropped when they reach the top, and the heap is rebuilt when they pile up below.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// Deadlines keyed by `K`, soonest first, possibly with stale entries (see the module
/// docs).
pub struct Timers<K> {
    heap: BinaryHeap<Reverse<(Instant, K)>>,
}

impl<K: Ord> Default for Timers<K> {
    fn default() -> Self {
        Timers {
            heap: BinaryHeap::new(),
        }
    }
}

impl<K: Ord + Clone> Timers<K> {
    /// Records that `call` has something due at `at`.
    pub fn schedule(&mut self, call: K, at: Instant) {
        self.heap.push(Reverse((at, call)));
    }

    /// The soonest entry, stale or not.
    pub fn peek(&self) -> Option<(Instant, &K)> {
        self.heap.peek().map(|Reverse((at, key))| (*at, key))
    }

    /// Drops stale entries from the top; `is_live(at, call)` says whether an entry is
    /// still due. Rebuilds from `live` when stale entries outnumber the live ones by far
    /// (calls that ended long before their deadline leave theirs behind).
    pub fn prune(
        &mut self,
        is_live: impl Fn(Instant, &K) -> bool,
        calls: usize,
        live: impl FnOnce() -> Vec<(Instant, K)>,
    ) {
        while let Some((at, call)) = self.peek() {
            if is_live(at, call) {
                break;
            }
            self.heap.pop();
        }
        if self.heap.len() > 4 * calls + 64 {
            self.heap = live().into_iter().map(Reverse).collect();
        }
    }

    /// Removes and returns the entries due at or before `now`, live or stale.
    pub fn take_due(&mut self, now: Instant) -> Vec<(Instant, K)> {
        let mut due = Vec::new();
        while self.peek().is_some_and(|(at, _)| at <= now) {
            if let Some(Reverse(entry)) = self.heap.pop() {
                due.push(entry);
            }
        }
        due
    }
}
