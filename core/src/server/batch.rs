//! JSON-RPC batches (protocol 2025-03-26 only): entries are dispatched one by one and the
//! replies written together, as one array, once the last call among them has ended.

use super::{Now, Server, Session};
use crate::jsonrpc::Reply;
use crate::mcp::shape::RequestError;
use crate::routing::{Dispatched, ReplyTo};
use serde_json::Value;
use std::collections::BTreeMap;

/// Most entries accepted in one batch.
pub const MAX_BATCH: usize = 1024;

/// Batches waiting for their asynchronous entries.
#[derive(Default)]
pub(super) struct Batches {
    next: u64,
    open: BTreeMap<u64, Batch>,
}

/// One open batch. Invariant: `pending` counts the slots not yet filled.
struct Batch {
    slots: Vec<Option<Reply>>,
    pending: usize,
}

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

impl Batches {
    pub(super) fn open(&mut self, size: usize) -> u64 {
        let id = self.next;
        self.next += 1;
        let slots = std::iter::repeat_with(|| None).take(size).collect();
        self.open.insert(
            id,
            Batch {
                slots,
                pending: size,
            },
        );
        id
    }

    pub(super) fn fill(&mut self, batch: u64, slot: usize, reply: Option<Reply>) {
        if let Some(b) = self.open.get_mut(&batch) {
            if let Some(s) = b.slots.get_mut(slot) {
                *s = reply;
                b.pending = b.pending.saturating_sub(1);
            }
        }
    }

    pub(super) fn take_if_done(&mut self, batch: u64) -> Option<Vec<Reply>> {
        if self.open.get(&batch)?.pending > 0 {
            return None;
        }
        let b = self.open.remove(&batch)?;
        Some(b.slots.into_iter().flatten().collect())
    }
}
