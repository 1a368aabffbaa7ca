//! A `tools/call` on its way in: what it carries from its own checks to its admission,
//! kept while it is parked for the shared store's answer to its reserve
//! (`store.rs`).

use crate::ledger::CallOf;
use crate::mcp::CallParams;
use crate::routing::Ticket;

/// A `tools/call` that passed its own checks: admitted at once, or parked while its
/// reserve is asked.
#[derive(Clone, Debug)]
pub(super) struct CallRequest {
    pub ticket: Ticket,
    pub call: CallParams,
    pub model_setting: &'static str,
    /// The application, address and credential it came with.
    pub arrival: crate::ledger::Arrival,
}

impl CallRequest {
    pub(super) fn call_of(&self) -> CallOf {
        (self.ticket).call_of(false, Default::default(), self.arrival.clone())
    }
}
