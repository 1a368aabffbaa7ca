//! The background runs this instance started and charged a hold for, until their end
//! settles it: bounded, the oldest given up first (its hold then stays charged).

use crate::clients::ClientId;
use crate::money::Picodollars;
use crate::openai::Usage;
use std::collections::{BTreeMap, VecDeque};

/// Runs held at once; the desk follows at most as many.
pub(crate) const MAX_HELD: usize = 4096;

/// One run's hold.
#[derive(Clone, Debug)]
pub(super) struct Hold {
    /// Whose day it was charged to.
    pub client: ClientId,
    /// How much.
    pub amount: Picodollars,
    /// When (Unix seconds): the day it was charged to.
    pub at: u64,
    /// The usage it estimated, charged again when the run's own is never reported.
    pub usage: Usage,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct Holds {
    by_id: BTreeMap<String, Hold>,
    /// Response ids, oldest first.
    order: VecDeque<String>,
}

impl Holds {
    /// Holds `hold` for `response_id`; the oldest one given up to make room, if any.
    pub fn insert(&mut self, response_id: &str, hold: Hold) -> Option<(String, Hold)> {
        let mut dropped = None;
        if self.by_id.len() >= MAX_HELD {
            while let Some(oldest) = self.order.pop_front() {
                if let Some(old) = self.by_id.remove(&oldest) {
                    dropped = Some((oldest, old));
                    break;
                }
            }
        }
        if self.by_id.insert(response_id.to_owned(), hold).is_none() {
            self.order.push_back(response_id.to_owned());
        }
        dropped
    }

    /// The client each hold is charged to.
    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.by_id.values().map(|h| h.client)
    }

    /// The hold of `response_id`, taken off.
    pub fn remove(&mut self, response_id: &str) -> Option<Hold> {
        let hold = self.by_id.remove(response_id)?;
        if self.order.len() > 2 * self.by_id.len() + 16 {
            let by_id = &self.by_id;
            self.order.retain(|id| by_id.contains_key(id));
        }
        Some(hold)
    }
}
