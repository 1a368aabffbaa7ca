//! JSON-RPC batches (protocol 2025-03-26 only): entries are dispatched one by one and the
//! replies written together, as one array, once the last call among them has ended.

use super::{Now, Server, Session};
use crate::jsonrpc::Reply;
use crate::mcp::shape::RequestError;
use crate::routing::{Dispatched, ReplyTo};
use serde_json::Value;

/// Most entries accepted in one batch.
pub const MAX_BATCH: usize = 1024;

impl Server {
    pub(super) fn on_batch(&mut self, now: Now, items: Vec<Value>) {
        let (len, max) = (items.len(), MAX_BATCH);
        let problem = match self.session {
            _ if items.is_empty() => Some(RequestError::Batch { len, max }),
            Session::AwaitingInit => Some(RequestError::BatchBeforeInit),
            Session::Ready(v) if !v.has_batches() => Some(RequestError::BatchInVersion {
                version: v.as_str(),
            }),
            _ if len > max => Some(RequestError::Batch { len, max }),
            _ => None,
        };
        if let Some(problem) = problem {
            let error = problem.error();
            self.route(
                ReplyTo::Direct,
                Some(Reply::Failure { id: None, error }),
                None,
            );
            return;
        }
        let batch = self.out.batches().open(items.len());
        for (slot, item) in items.into_iter().enumerate() {
            match self.dispatch(now, item, ReplyTo::Batch { batch, slot }) {
                Dispatched::Reply(reply) | Dispatched::Refused { reply, .. } => {
                    self.out.batches().fill(batch, slot, Some(reply));
                }
                Dispatched::Nothing => self.out.batches().fill(batch, slot, None),
                // A request's answer goes into its slot through the register.
                Dispatched::Later | Dispatched::Sent => {}
            }
        }
        self.out.flush_batch(batch);
    }
}
