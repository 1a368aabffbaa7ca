//! The identities of their own (OAuth or gateway identities no named client claims) that
//! the roster tells apart at once: at most [`MAX_IDENTITIES`], each in a slot numbered
//! after the default and the named clients. A full roster makes room by forgetting the
//! least recently seen identities that hold nothing; which ids hold something is the
//! caller's to say ([`Identities::forget_idle`]), since what an identity holds (calls,
//! tasks, a day's spend) lives elsewhere.
//!
//! Invariants: a live name has one id and an id one live name (`by_name` and `slots`
//! agree); `by_seen` holds each live id once, under its latest sighting; a slot is free
//! (in `free`) exactly when it is empty; a name is labelled in metrics for life once it
//! is among the first [`LABELLED_IDENTITIES`] seen, and no other name ever takes its label.

use super::id::ClientId;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Identities of their own told apart at once. Each costs about a kilobyte here and
/// beside it (its name twice over, its limits' counts, its user ids), so a full roster
/// stays near 16 MiB whatever a gateway sends.
pub const MAX_IDENTITIES: usize = 16_384;

/// Metric labels of their own for this many identities (the first seen, for the life of
/// the process); the rest share `_OTHER`, so a scrape stays small whatever the number of
/// users.
pub const LABELLED_IDENTITIES: usize = 32;

/// One identity in its slot.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    name: Arc<str>,
    /// Its latest sighting, on the roster's own clock: its key in `by_seen`.
    seen: u64,
    /// Whether it has a metrics label of its own.
    labelled: bool,
}

/// See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Identities {
    /// The number of the first slot's id.
    first: usize,
    /// Slots at most.
    most: usize,
    slots: Vec<Option<Identity>>,
    /// Empty slots, reused before a new one is added.
    free: Vec<usize>,
    by_name: BTreeMap<Arc<str>, ClientId>,
    /// Live ids by their latest sighting, least recent first.
    by_seen: BTreeMap<u64, ClientId>,
    /// Counts sightings: the order of `by_seen`.
    clock: u64,
    /// The names with a label of their own, first seen first.
    labelled: Vec<Arc<str>>,
}

impl Identities {
    /// An empty roster whose first id is numbered `first`, as large as ids allow (ids
    /// stop below `u16::MAX`) up to [`MAX_IDENTITIES`].
    pub(super) fn new(first: usize) -> Identities {
        Identities {
            first,
            most: MAX_IDENTITIES.min(usize::from(u16::MAX).saturating_sub(first)),
            slots: Vec::new(),
            free: Vec::new(),
            by_name: BTreeMap::new(),
            by_seen: BTreeMap::new(),
            clock: 0,
            labelled: Vec::new(),
        }
    }

    /// At most `most` identities at once (never more than [`Identities::new`] allowed);
    /// for tests and the fuzz target, which need a small roster to fill.
    pub(super) fn limit_to(&mut self, most: usize) {
        self.most = self.most.min(most);
    }

    /// The id of `name` if it is live, without counting a sighting.
    pub(super) fn get(&self, name: &str) -> Option<ClientId> {
        self.by_name.get(name).copied()
    }

    /// The id of `name`, seen now: its own if it is live, else a free slot's. `None` when
    /// every slot is taken (the caller makes room with [`Identities::forget_idle`]).
    pub(super) fn see(&mut self, name: &str) -> Option<ClientId> {
        if let Some(id) = self.get(name) {
            self.touch(id);
            return Some(id);
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None if self.slots.len() < self.most => {
                self.slots.push(None);
                self.slots.len() - 1
            }
            None => return None,
        };
        let id = ClientId(u16::try_from(self.first + slot).ok()?);
        let name: Arc<str> = Arc::from(name);
        let labelled = self.labelled.contains(&name)
            || (self.labelled.len() < LABELLED_IDENTITIES && {
                self.labelled.push(Arc::clone(&name));
                true
            });
        self.clock += 1;
        self.by_seen.insert(self.clock, id);
        self.by_name.insert(Arc::clone(&name), id);
        self.slots[slot] = Some(Identity {
            name,
            seen: self.clock,
            labelled,
        });
        Some(id)
    }

    /// Counts a sighting of live `id`: it becomes the most recently seen.
    fn touch(&mut self, id: ClientId) {
        let Some(slot) = self.slot_of(id) else {
            return;
        };
        let Some(identity) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        self.by_seen.remove(&identity.seen);
        self.clock += 1;
        identity.seen = self.clock;
        self.by_seen.insert(self.clock, id);
    }

    fn slot_of(&self, id: ClientId) -> Option<usize> {
        id.index().checked_sub(self.first)
    }

    fn identity(&self, id: ClientId) -> Option<&Identity> {
        self.slots.get(self.slot_of(id)?)?.as_ref()
    }

    /// Whether `id` is a live identity of this roster.
    pub(super) fn contains(&self, id: ClientId) -> bool {
        self.identity(id).is_some()
    }

    /// The name of live `id`.
    pub(super) fn name(&self, id: ClientId) -> Option<&str> {
        self.identity(id).map(|i| &*i.name)
    }

    /// Whether live `id` has a metrics label of its own (`None`: not live).
    pub(super) fn labelled(&self, id: ClientId) -> Option<bool> {
        self.identity(id).map(|i| i.labelled)
    }

    /// Whether a new identity would find no slot.
    pub(super) fn is_full(&self) -> bool {
        self.free.is_empty() && self.slots.len() >= self.most
    }

    /// Live identities.
    pub(super) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// The live ids, least recently seen first.
    pub(super) fn ids(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.by_seen.values().copied()
    }

    /// Forgets up to `most` identities that `held` says hold nothing, least recently
    /// seen first: their ids, free for others from now on (whatever was kept by them
    /// elsewhere is the caller's to clear).
    pub(super) fn forget_idle(
        &mut self,
        held: impl Fn(ClientId) -> bool,
        most: usize,
        forgotten: &mut dyn FnMut(ClientId, &str),
    ) -> Vec<ClientId> {
        let idle: Vec<(u64, ClientId)> = (self.by_seen.iter())
            .filter(|(_, id)| !held(**id))
            .take(most)
            .map(|(seen, id)| (*seen, *id))
            .collect();
        for (seen, id) in &idle {
            self.by_seen.remove(seen);
            let Some(slot) = self.slot_of(*id) else {
                continue;
            };
            if let Some(identity) = self.slots.get_mut(slot).and_then(Option::take) {
                forgotten(*id, &identity.name);
                self.by_name.remove(&identity.name);
                self.free.push(slot);
            }
        }
        idle.into_iter().map(|(_, id)| id).collect()
    }
}
