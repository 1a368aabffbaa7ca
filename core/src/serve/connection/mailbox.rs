//! What the server says on one exchange, kept until its connection writes it: bounded,
//! progress may be dropped, the reply never.

use crate::serve::exchange::ExchangeOut;
use std::collections::VecDeque;

/// What the server may say on one exchange before its connection takes it.
pub const MAILBOX: usize = 8;

/// What the server said on one exchange, waiting for its connection to write it. Bounded:
/// progress beyond [`MAILBOX`] is dropped (the next one says more); the reply always fits.
#[derive(Debug, Default)]
pub struct Mailbox {
    outs: VecDeque<ExchangeOut>,
}

impl Mailbox {
    /// Keeps `out` if the rule lets it in; whether it did.
    pub fn push(&mut self, out: ExchangeOut) -> bool {
        let kept = keeps(self.outs.len(), &out);
        if kept {
            self.outs.push_back(out);
        }
        kept
    }

    /// Everything waiting, oldest first.
    pub fn take(&mut self) -> VecDeque<ExchangeOut> {
        std::mem::take(&mut self.outs)
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.outs.is_empty()
    }
}

/// The mailbox rule, for a host whose queue is its own: with `queued` outs waiting, is
/// `out` kept? The reply (or the end) always is; progress only while there is room.
pub fn keeps(queued: usize, out: &ExchangeOut) -> bool {
    !matches!(out, ExchangeOut::Notification(_)) || queued + 1 < MAILBOX
}
