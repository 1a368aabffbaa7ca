//! The ledger's side of a bounded roster: which identities it keeps something for (a
//! background run's hold, a reserve or a claim awaiting the store, counts its limits
//! still read), so that the roster does not forget them, and the clearing of an id the
//! roster forgot, so that the identity that next takes it starts from nothing.

use super::Ledger;
use crate::clients::{ClientId, Clients};

impl Ledger {
    /// Calls `add` with every identity of `clients` whose id the ledger keeps something
    /// for at `now` (Unix seconds).
    pub fn clients_held(&self, clients: &Clients, now: u64, add: &mut dyn FnMut(ClientId)) {
        self.holds.clients().for_each(&mut *add);
        self.flights.clients().for_each(&mut *add);
        if let Some(shared) = &self.shared {
            shared.asked.values().for_each(|asked| add(asked.client));
            shared
                .claims
                .values()
                .for_each(|claim| add(claim.call.client));
        }
        let limit = clients.identity_limit();
        for id in clients.identities() {
            if self.limits.holds(id, limit, now) {
                add(id);
            }
        }
    }

    /// The roster forgot `client` (it held nothing here): what its id counted is cleared.
    pub fn forget_client(&mut self, client: ClientId) {
        self.limits.forget(client);
    }
}
