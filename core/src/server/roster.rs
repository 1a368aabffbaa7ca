//! The roster kept bounded ([`crate::clients`]): before a request may name a new
//! identity, a full roster forgets the least recently seen identities that hold nothing
//! here, a batch at a time, and what was kept by their ids is cleared. What holds an
//! identity: a request not yet answered (a call, a parked reserve, a task's waiter, a
//! held window, a subscription), work in the engine for it (a task's call, a background
//! create, read or cancel), a task it owns, a background run charged to it, what the
//! ledger keeps for it, and an OAuth request verified as it whose body is still read.
//! A roster full of holders refuses new identities and `/ready` says so, until one of
//! them holds nothing: looked at again at most every [`RECHECK`] (a flood of newcomers
//! then costs no scan each), on the next input or at that deadline.

use super::Server;
use crate::clients::{ClientId, MAX_IDENTITIES};
use crate::io::{after, ExchangeId, Now};
use crate::routing::{Context, Job};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often a roster full of holders is looked at again.
const RECHECK: Duration = Duration::from_millis(100);

/// Identities forgotten at once when the roster is full: the scan of what holds an
/// identity is paid once per this many new identities.
const FORGET_AT_ONCE: usize = MAX_IDENTITIES / 16;

/// OAuth requests told which client they are, their bodies not yet read: each keeps its
/// identity in the roster until it asks or its exchange closes, so that its id is never
/// given to another identity meanwhile. Bounded by the open exchanges (the listener's
/// `max_connections`), not by a number of its own: dropping one would let its id go.
#[derive(Default)]
pub(super) struct Verifying(BTreeMap<ExchangeId, ClientId>);

impl Verifying {
    /// Exchange `x` is served as `client` once its body is read.
    pub(super) fn insert(&mut self, x: ExchangeId, client: ClientId) {
        self.0.insert(x, client);
    }

    /// Exchange `x` asked, or went away.
    pub(super) fn remove(&mut self, x: ExchangeId) {
        self.0.remove(&x);
    }
}

impl Server {
    /// Makes room for a new identity when the roster is full, forgetting those that hold
    /// nothing at `now`; notes whether it is full of holders (and then looks again only
    /// once [`RECHECK`] has passed).
    pub(super) fn keep_room(&mut self, now: Now) {
        if !self.clients.is_full() {
            self.roster_full = None;
            return;
        }
        if self
            .roster_full
            .is_some_and(|at| now.instant < after(at, RECHECK))
        {
            return;
        }
        if self
            .roster_scanned
            .is_some_and(|at| now.instant < after(at, RECHECK))
        {
            // The last scan found few to forget: newcomers wait for the next, rather
            // than each paying a scan of the whole roster.
            return;
        }
        let held = self.identities_held();
        let ledger = &mut self.ledger;
        let identity_limit = self.clients.identity_limit();
        let mut forgotten = |id: ClientId, name: &str| {
            ledger.forget_client(id, name, identity_limit, now.unix_secs);
        };
        let gone = (self.clients).forget_idle_telling(
            |id| held.contains(&id),
            FORGET_AT_ONCE,
            &mut forgotten,
        );
        self.roster_scanned = (gone.len() < FORGET_AT_ONCE).then_some(now.instant);
        for id in gone {
            self.user_ids.forget(id);
            self.desk.forget_client(id);
        }
        let full = self.clients.is_full();
        if full && self.roster_full.is_none() {
            log::warn!(
                "all {} identities this instance tells apart hold a request, a call, a task or a day's spend: new identities are refused, and /ready says not ready, until one of them holds nothing",
                self.clients.identity_count()
            );
        }
        self.roster_full = full.then_some(now.instant);
    }

    /// When a roster full of holders is looked at again.
    pub(super) fn roster_recheck(&self) -> Option<Instant> {
        self.roster_full.map(|at| after(at, RECHECK))
    }

    /// The ids that hold something, of identities and others alike.
    fn identities_held(&self) -> BTreeSet<ClientId> {
        let mut held = BTreeSet::new();
        let mut add = |id: ClientId| {
            held.insert(id);
        };
        self.register.tickets().for_each(|t| add(t.client));
        self.subscriptions.tickets().for_each(|t| add(t.client));
        self.parked.values().for_each(|p| add(p.ticket.client));
        for context in self.calls.contexts() {
            context_clients(context, &mut add);
        }
        self.desk.clients_held(&mut add);
        self.ledger.clients_held(&self.clients, &mut add);
        self.verifying.0.values().for_each(|id| add(*id));
        held
    }
}

/// The clients a piece of the engine's work is for.
fn context_clients(context: &Context, add: &mut impl FnMut(ClientId)) {
    match context {
        Context::Call(call) => add(call.ticket.client),
        Context::Background(Job::Create { pending, call, .. }) => {
            add(pending.client);
            add(pending.ticket.client);
            add(call.client);
        }
        Context::Background(Job::Read { waiter, .. }) => {
            if let Some(waiter) = waiter {
                add(waiter.client);
                add(waiter.ticket.client);
            }
        }
        Context::Background(Job::Cancel { pending, .. }) => {
            add(pending.client);
            add(pending.ticket.client);
        }
        Context::Lookup(_) | Context::Identity => {}
    }
}
