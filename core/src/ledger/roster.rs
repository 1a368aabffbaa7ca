//! The ledger's side of a bounded roster: which identities it keeps something for (a
//! background run's hold, a reserve or a claim awaiting the store, counts its limits
//! still read), so that the roster does not forget them, and the clearing of an id the
//! roster forgot, so that the identity that next takes it starts from nothing.

use super::Ledger;
use crate::clients::{ClientId, Clients, Limit};

impl Ledger {
    /// Calls `add` with every identity of `clients` whose id the ledger keeps something
    /// for.
    pub fn clients_held(&self, clients: &Clients, add: &mut dyn FnMut(ClientId)) {
        self.holds.clients().for_each(&mut *add);
        self.flights.clients().for_each(&mut *add);
        if let Some(shared) = &self.shared {
            shared.asked.values().for_each(|asked| add(asked.client));
            shared
                .claims
                .values()
                .for_each(|claim| add(claim.call.client));
        }
        for id in clients.identities() {
            if self.limits.holds(id) {
                add(id);
            }
        }
    }

    /// The roster forgets `client`, named `name` (it held nothing here): what its id
    /// counted is cleared, and what its limits still read is kept under its name until
    /// it returns ([`Ledger::admit`] gives it back), so a day's spend never pins an
    /// identity to the roster.
    pub fn forget_client(&mut self, client: ClientId, name: &str, limit: Limit, now: u64) {
        if let Some(counts) = self.limits.forget(client, limit, now) {
            self.kept.keep(name, counts);
        }
    }
}
