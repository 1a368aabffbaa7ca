//! The deadlines of every call in one min-heap, so the next one is read without a scan.
//!
//! Entries are never updated in place. When a call moves on (a new attempt, a backoff, a
//! progress tick) its new deadline is pushed and the old entry goes stale; stale entries
//! are dropped when they reach the top, and the heap is rebuilt when they pile up below.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// An internal call number; never the client's request id.
pub type CallId = u64;

/// Deadlines, soonest first, possibly with stale entries (see the module docs).
#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Instant, CallId)>>,
}

impl Timers {
    /// Records that `call` has something due at `at`.
    pub fn schedule(&mut self, call: CallId, at: Instant) {
        self.heap.push(Reverse((at, call)));
    }

    /// The soonest entry, stale or not.
    pub fn peek(&self) -> Option<(Instant, CallId)> {
        self.heap.peek().map(|Reverse(entry)| *entry)
    }

    /// Drops stale entries from the top; `is_live(at, call)` says whether an entry is
    /// still due. Rebuilds from `live` when stale entries outnumber the live ones by far
    /// (calls that ended long before their deadline leave theirs behind).
    pub fn prune(
        &mut self,
        is_live: impl Fn(Instant, CallId) -> bool,
        calls: usize,
        live: impl FnOnce() -> Vec<(Instant, CallId)>,
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
    pub fn take_due(&mut self, now: Instant) -> Vec<(Instant, CallId)> {
        let mut due = Vec::new();
        while let Some((at, call)) = self.peek() {
            if at > now {
                break;
            }
            self.heap.pop();
            due.push((at, call));
        }
        due
    }
}
