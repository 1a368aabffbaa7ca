//! A build without the `store` feature: no store client. Startup refuses
//! `server.store.url` before anything here could be asked for (the configuration crate's
//! `store/absent.rs`).

use responses_mcp_config::store::StoreConnect;
use responses_mcp_core::store::{StoreId, StoreOp};
use responses_mcp_core::Message;

/// The handle a runtime keeps; never made in this build.
pub struct Store {
    never: StoreConnect,
}

impl Store {
    /// Never called: there is no [`StoreConnect`] to start from.
    ///
    /// # Errors
    /// None.
    pub fn start(
        connect: StoreConnect,
        _deliver: impl Fn(Message) + Send + Sync + 'static,
    ) -> std::io::Result<Store> {
        match connect {}
    }

    /// Never called.
    pub fn perform(&self, _id: StoreId, _op: StoreOp) {
        match self.never {}
    }

    /// Never called.
    pub fn finish(self, _within: std::time::Duration) {
        match self.never {}
    }
}
