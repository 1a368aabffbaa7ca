//! `subscriptions/listen` (2026-07-28): acknowledged with the empty set of notifications
//! this server honours and held open (over HTTP, as an event stream) until the client
//! cancels it or goes away, or the server shuts down (then it gets its closing result).
//! [`Subscriptions`] keeps the open ones as data; the server turns its answers into
//! replies.

use super::register::Answer;
use super::Server;
use super::{ExchangeId, ExchangeOut, Output};
use crate::calls::{CallKey, Requester};
use crate::jsonrpc::{Reply, RequestId};
use crate::mcp::shape;
use crate::mcp::shape::RequestError;
use crate::routing::{Dispatched, ReplyTo, Ticket};
use std::collections::BTreeMap;

/// Most `subscriptions/listen` requests held open at once.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// Open `subscriptions/listen` requests, by who asked and their id. Nothing is ever sent
/// on them but their acknowledgement and, at shutdown, their closing result.
#[derive(Default)]
pub(super) struct Subscriptions {
    open: BTreeMap<CallKey, Ticket>,
}

/// Why a subscription was not opened.
enum Refusal {
    /// One with the same id is open.
    Duplicate,
    /// [`MAX_SUBSCRIPTIONS`] are open.
    Full,
}

impl Subscriptions {
    /// Opens the subscription `ticket` asks for.
    fn handle_listen(&mut self, key: CallKey, ticket: Ticket) -> Result<(), Refusal> {
        if self.open.contains_key(&key) {
            return Err(Refusal::Duplicate);
        }
        if self.open.len() >= MAX_SUBSCRIPTIONS {
            return Err(Refusal::Full);
        }
        self.open.insert(key, ticket);
        Ok(())
    }

    /// Ends the subscriptions a cancel from `from` names by `id`: their tickets.
    /// Over HTTP a cancel comes on its own request, so it names any exchange's
    /// subscription with that id.
    fn handle_cancel(&mut self, from: Requester, id: &RequestId) -> Vec<Ticket> {
        let names = |k: &CallKey| {
            &k.id == id
                && match from {
                    Requester::Stdio => k.from == Requester::Stdio,
                    Requester::Exchange(_) => matches!(k.from, Requester::Exchange(_)),
                    Requester::Internal(_) => false,
                }
        };
        let keys: Vec<CallKey> = self.open.keys().filter(|k| names(k)).cloned().collect();
        keys.iter().filter_map(|k| self.open.remove(k)).collect()
    }

    /// The client of exchange `x` went away: its subscription (if any) is gone.
    pub(super) fn forget(&mut self, x: ExchangeId) {
        self.open.retain(|k, _| k.from != Requester::Exchange(x));
    }

    /// Ends every subscription: their tickets.
    fn close_all(&mut self) -> Vec<Ticket> {
        std::mem::take(&mut self.open).into_values().collect()
    }
}

impl Server {
    /// Opens a subscription: acknowledged now, answered only when it is torn down.
    pub(super) fn listen(&mut self, ticket: &Ticket) -> Dispatched {
        let id = ticket.id.clone();
        if matches!(ticket.reply_to, ReplyTo::Batch { .. }) {
            return Dispatched::answer(id, Err(RequestError::ListenInBatch.error()));
        }
        let key = CallKey {
            from: ticket.reply_to.requester(),
            id: id.clone(),
        };
        if self.calls.contains(&key) {
            let error = shape::duplicate_id(&id);
            return Dispatched::answer(id, Err(error));
        }
        match self.subscriptions.handle_listen(key, ticket.clone()) {
            Err(Refusal::Duplicate) => {
                let error = shape::duplicate_id(&id);
                return Dispatched::answer(id, Err(error));
            }
            Err(Refusal::Full) => {
                let error = RequestError::TooManySubscriptions {
                    max: MAX_SUBSCRIPTIONS,
                };
                return Dispatched::answer(id, Err(error.error()));
            }
            Ok(()) => {}
        }
        let ack = shape::subscription_acknowledged(&id);
        match ticket.reply_to {
            ReplyTo::Exchange(x) => {
                let json = super::outbox::to_json(&ack);
                let out = ExchangeOut::Notification(json);
                self.out.push(Output::Exchange(x, out));
            }
            _ => self.out.write_json(&ack),
        }
        Dispatched::Later
    }

    /// Ends the subscriptions a cancel from `from` names by `id`, without a reply; whether
    /// there was one.
    pub(super) fn cancel_subscription(&mut self, from: Requester, id: &RequestId) -> bool {
        let ended = self.subscriptions.handle_cancel(from, id);
        let any = !ended.is_empty();
        for ticket in ended {
            self.answer(&ticket, Answer::NONE);
        }
        any
    }

    /// Ends every subscription with its closing result (the server is going away).
    pub(super) fn close_subscriptions(&mut self) {
        for ticket in self.subscriptions.close_all() {
            let (id, result) = (ticket.id.clone(), shape::subscription_closed(&ticket.id));
            self.answer(&ticket, Answer::reply(Reply::Success { id, result }));
        }
    }
}
