//! What the accept thread, the connection threads and the main loop share: a leaf, so that
//! `connection` need not import the endpoint above it.

use responses_mcp_config::http::HttpServe;
use responses_mcp_core::serve::access::Access;
use responses_mcp_core::serve::connection::Mailbox;
use responses_mcp_core::serve::listener::Listener;
use responses_mcp_core::Message;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// What the accept thread, the connection threads and the main loop share.
pub(super) struct Shared {
    pub(super) serve: HttpServe,
    pub(super) access: Access,
    pub(super) events: SyncSender<Message>,
    /// The connections, the drain and each open exchange's mailbox.
    pub(super) listener: Mutex<Listener<Arc<Slot>>>,
}

/// What the server said on one exchange, waiting for its connection thread.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) outs: Mutex<Mailbox>,
    pub(super) ready: Condvar,
}

/// A poisoned lock only means another thread panicked mid-update of plain data.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
