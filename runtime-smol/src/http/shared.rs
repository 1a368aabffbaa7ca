//! What the accept task, the connection tasks and the main task share: a leaf, so that
//! `connection` need not import the endpoint above it.

use responses_mcp_config::http::HttpServe;
use responses_mcp_core::serve::access::Access;
use responses_mcp_core::serve::listener::Listener;
use responses_mcp_core::{ExchangeOut, Message};
use smol::channel::{Receiver, Sender};
use std::cell::RefCell;

/// What the accept task, the connection tasks and the main task share.
pub(super) struct Shared {
    pub(super) serve: HttpServe,
    pub(super) access: Access,
    /// Where exchanges go: the main task's channel.
    pub(super) events: Sender<Message>,
    /// The connections, the drain and each open exchange's mailbox.
    pub(super) listener: RefCell<Listener<Sender<ExchangeOut>>>,
    /// Closed when the listener drains: wakes the accept loop and idle connections.
    pub(super) stopped: Receiver<()>,
}
