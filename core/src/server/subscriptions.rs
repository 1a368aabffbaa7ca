//! The open `subscriptions/listen` requests (2026-07-28), as data: [`Subscriptions`]
//! opens, names and closes them; the server turns what it hands back into replies
//! (`listen.rs`).

use crate::calls::{CallKey, Requester};
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::routing::Ticket;
use std::collections::BTreeMap;

/// Most `subscriptions/listen` requests held open at once.
pub const MAX_SUBSCRIPTIONS: usize = 64;
/// Most held open at once by one client the server tells apart (a named client, an
/// OAuth or gateway identity), so that one of them cannot take every place. The default
/// client (stdio, or HTTP callers not told apart) may take them all.
pub const MAX_SUBSCRIPTIONS_PER_CLIENT: usize = 16;

/// Open `subscriptions/listen` requests, by who asked and their id. Nothing is ever sent
/// on them but their acknowledgement and, at shutdown, their closing result.
#[derive(Default)]
pub(super) struct Subscriptions {
    open: BTreeMap<CallKey, Ticket>,
}

/// Why a subscription was not opened.
pub(super) enum Refusal {
    /// One with the same id is open.
    Duplicate,
    /// [`MAX_SUBSCRIPTIONS`] are open.
    Full,
    /// Its client holds [`MAX_SUBSCRIPTIONS_PER_CLIENT`].
    ClientFull,
}

impl Subscriptions {
    /// Opens the subscription `ticket` asks for.
    pub(super) fn handle_listen(&mut self, key: CallKey, ticket: Ticket) -> Result<(), Refusal> {
        if self.open.contains_key(&key) {
            return Err(Refusal::Duplicate);
        }
        if self.open.len() >= MAX_SUBSCRIPTIONS {
            return Err(Refusal::Full);
        }
        let client = ticket.client;
        let held = self.open.values().filter(|t| t.client == client).count();
        if client != ClientId::DEFAULT && held >= MAX_SUBSCRIPTIONS_PER_CLIENT {
            return Err(Refusal::ClientFull);
        }
        self.open.insert(key, ticket);
        Ok(())
    }

    /// Ends the subscriptions a cancel names (`named`, the server's one reading of whom
    /// a cancel reaches): their tickets.
    pub(super) fn handle_cancel(&mut self, named: impl Fn(&Ticket) -> bool) -> Vec<Ticket> {
        let keys: Vec<CallKey> = (self.open.iter())
            .filter(|(_, ticket)| named(ticket))
            .map(|(k, _)| k.clone())
            .collect();
        keys.iter().filter_map(|k| self.open.remove(k)).collect()
    }

    /// The tickets of the open subscriptions.
    pub(super) fn tickets(&self) -> impl Iterator<Item = &Ticket> {
        self.open.values()
    }

    /// The client of exchange `x` went away: its subscription (if any) is gone.
    pub(super) fn forget(&mut self, x: ExchangeId) {
        self.open.retain(|k, _| k.from != Requester::Exchange(x));
    }

    /// Ends every subscription: their tickets.
    pub(super) fn close_all(&mut self) -> Vec<Ticket> {
        std::mem::take(&mut self.open).into_values().collect()
    }
}
