//! Where everything the server sends waits: the outputs in order, stdout's framing, and
//! the open JSON-RPC batches whose replies leave together.

use super::io::Output;
use crate::framing::{encode, Framing};
use crate::jsonrpc::Reply;
use crate::routing::ReplyTo;
use crate::serve::exchange::ExchangeOut;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// See the module docs.
pub(super) struct Outbox {
    queue: VecDeque<Output>,
    /// Framing of replies: the first framing the client used, unless forced to lines.
    framing: Option<Framing>,
    batches: Batches,
}

impl Outbox {
    /// An empty outbox; `lines` forces newline-delimited replies.
    pub(super) fn new(lines: bool) -> Outbox {
        Outbox {
            queue: VecDeque::new(),
            framing: lines.then_some(Framing::Line),
            batches: Batches::default(),
        }
    }

    /// Queues `output`.
    pub(super) fn push(&mut self, output: Output) {
        self.queue.push_back(output);
    }

    /// The next output.
    pub(super) fn pop(&mut self) -> Option<Output> {
        self.queue.pop_front()
    }

    /// The client used `framing`: replies take the first framing seen.
    pub(super) fn framing_seen(&mut self, framing: Framing) {
        self.framing.get_or_insert(framing);
    }

    /// The open batches.
    pub(super) fn batches(&mut self) -> &mut Batches {
        &mut self.batches
    }

    /// Sends `reply` where it belongs; `None` for a request that ends without a reply.
    /// `omit_null_id`: a reply with no readable id leaves `id` out on stdio.
    pub(super) fn route(
        &mut self,
        reply_to: ReplyTo,
        reply: Option<Reply>,
        retry_after_secs: Option<u64>,
        omit_null_id: bool,
    ) {
        match reply_to {
            ReplyTo::Direct => match reply {
                Some(Reply::Failure { id: None, error }) if omit_null_id => {
                    self.write_json(&serde_json::json!({ "jsonrpc": "2.0", "error": error }));
                }
                Some(reply) => self.write_json(&reply),
                None => {}
            },
            ReplyTo::Batch { batch, slot } => {
                self.batches.fill(batch, slot, reply);
                self.flush_batch(batch);
            }
            ReplyTo::Exchange(x) => {
                let out = match reply {
                    // No session: an unreadable id is always left out (2025-11-25 on and
                    // the modern schema; older clients ignore the absence).
                    Some(Reply::Failure { id: None, error }) => ExchangeOut::Reply {
                        error: Some(error.code),
                        json: to_json(&serde_json::json!({ "jsonrpc": "2.0", "error": error })),
                        retry_after_secs,
                    },
                    Some(reply) => ExchangeOut::Reply {
                        error: match &reply {
                            Reply::Failure { error, .. } => Some(error.code),
                            Reply::Success { .. } => None,
                        },
                        json: to_json(&reply),
                        retry_after_secs,
                    },
                    None => ExchangeOut::Ended,
                };
                self.push(Output::Exchange(x, out));
            }
        }
    }

    /// Sends a call's progress `note` to its request at `reply_to`; over HTTP, nothing once
    /// the request was `answered` (a task's handle: no stream is left to carry it).
    pub(super) fn progress(&mut self, reply_to: ReplyTo, note: &impl Serialize, answered: bool) {
        match reply_to {
            ReplyTo::Exchange(_) if answered => {}
            ReplyTo::Exchange(x) => {
                let json = to_json(note);
                self.push(Output::Exchange(x, ExchangeOut::Notification(json)));
            }
            ReplyTo::Direct | ReplyTo::Batch { .. } => self.write_json(note),
        }
    }

    /// Writes batch `batch`'s replies, as one array, once every slot is answered.
    pub(super) fn flush_batch(&mut self, batch: u64) {
        if let Some(replies) = self.batches.take_if_done(batch) {
            if !replies.is_empty() {
                self.write_json(&replies);
            }
        }
    }

    /// Serialises `message` and queues it as one frame.
    pub(super) fn write_json(&mut self, message: &impl Serialize) {
        let json = to_json(message);
        self.write_frame(&json);
    }

    /// Queues compact JSON as one frame in the reply framing.
    pub(super) fn write_frame(&mut self, json: &[u8]) {
        let mut out = Vec::with_capacity(json.len() + 24);
        encode(self.framing.unwrap_or(Framing::Line), json, &mut out);
        self.push(Output::Write(out));
    }
}

/// Compact JSON of an outgoing message.
pub(super) fn to_json(message: &impl Serialize) -> Vec<u8> {
    // Everything the server sends is built from `Value`s, strings and numbers, whose
    // serialisation cannot fail; an error here is a bug, not bad input.
    #[allow(clippy::expect_used)]
    serde_json::to_vec(message).expect("outgoing messages are valid JSON")
}

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
