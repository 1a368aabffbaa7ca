//! The estimates held for calls in flight, from their admission until their end replaces
//! them with what they really cost (or lets them go: a call that never reached OpenAI).
//!
//! ```text
//!   admitted ──▶ held (its client's and the instance's day, here or in the store)
//!                  │
//!                  ├── ended / cancelled / dropped / refused ──▶ let go, the cost charged
//!                  ├── a background run started ──────────────▶ let go, the run's hold charged
//!                  └── outlived its life (a path that forgot) ─▶ let go at the next admission
//! ```
//!
//! Each hold lives at most [`Flights::new`]'s `life` (a day: longer than any call waits
//! and runs), so that a path that never ends one (a bug) holds a client back for a day
//! at most. Bounded at [`MAX_FLIGHTS`]: past it the oldest is let go first.

use crate::clients::ClientId;
use crate::money::Picodollars;
use std::collections::BTreeMap;

/// Holds kept at once; far above any `max_inflight` + `max_tasks`.
pub(super) const MAX_FLIGHTS: usize = 65_536;

/// The key of one call's hold, which the call carries (`Copy`, minted in order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HoldId(u64);

/// One call's hold.
#[derive(Clone, Debug)]
pub(super) struct Flight {
    /// Whose day it is held against.
    pub client: ClientId,
    /// Its client's name, as the store's keys spell it, and the hold's own name there
    /// (`Some`: held in the store).
    pub store: Option<(String, crate::store::HoldName)>,
    /// How much.
    pub amount: Picodollars,
    /// When it was admitted (Unix seconds): the day it is held against.
    pub at: u64,
    /// When it lapses (Unix seconds).
    until: u64,
}

/// See the module docs.
#[derive(Debug)]
pub(super) struct Flights {
    by_id: BTreeMap<HoldId, Flight>,
    next: u64,
    /// How long a hold lives, seconds.
    life: u64,
}

impl Flights {
    /// No holds; each lives at most `life` seconds.
    pub fn new(life: u64) -> Flights {
        Flights {
            by_id: BTreeMap::new(),
            next: 0,
            life: life.max(1),
        }
    }

    /// Holds `amount` for a call of `client` admitted at `at`; the oldest hold, let go
    /// to make room, if the table was full.
    pub fn hold(
        &mut self,
        client: ClientId,
        store: Option<(String, crate::store::HoldName)>,
        amount: Picodollars,
        at: u64,
    ) -> (HoldId, Option<Flight>) {
        let dropped = if self.by_id.len() >= MAX_FLIGHTS {
            self.by_id.pop_first().map(|(_, f)| f)
        } else {
            None
        };
        self.next += 1;
        let id = HoldId(self.next);
        let until = at.saturating_add(self.life);
        self.by_id.insert(
            id,
            Flight {
                client,
                store,
                amount,
                at,
                until,
            },
        );
        (id, dropped)
    }

    /// Whether any hold is the store's.
    pub fn in_store(&self) -> bool {
        self.by_id.values().any(|f| f.store.is_some())
    }

    /// The clients of every hold (an identity with a call in flight is not forgotten).
    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.by_id.values().map(|f| f.client)
    }

    /// The hold `id`, taken off (`None` when it was already let go).
    pub fn take(&mut self, id: HoldId) -> Option<Flight> {
        self.by_id.remove(&id)
    }

    /// The holds that outlived their life at `now`, taken off.
    pub fn lapsed(&mut self, now: u64) -> Vec<Flight> {
        if !self.by_id.values().any(|f| f.until <= now) {
            return Vec::new();
        }
        let (gone, kept) = std::mem::take(&mut self.by_id)
            .into_iter()
            .partition(|(_, f)| f.until <= now);
        self.by_id = kept;
        gone.into_values().collect()
    }

    /// What is held in all.
    #[cfg(test)]
    pub fn total(&self) -> Picodollars {
        self.by_id
            .values()
            .fold(Picodollars(0), |sum, f| sum.plus(f.amount))
    }

    /// How many calls hold an estimate.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_is_taken_once_and_lapses_after_its_life() {
        let mut flights = Flights::new(600);
        let (a, _) = flights.hold(ClientId::DEFAULT, None, Picodollars(5), 1_000);
        let (b, _) = flights.hold(ClientId::DEFAULT, None, Picodollars(7), 1_100);
        assert_eq!(flights.total(), Picodollars(12));
        assert!(flights.take(a).is_some());
        assert!(flights.take(a).is_none(), "a hold is let go once");
        assert!(flights.lapsed(1_699).is_empty());
        let lapsed = flights.lapsed(1_700);
        assert_eq!(lapsed.len(), 1);
        assert_eq!(lapsed[0].amount, Picodollars(7));
        assert!(flights.take(b).is_none());
        assert_eq!(flights.len(), 0);
    }
}
