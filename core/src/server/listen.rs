//! `subscriptions/listen` (2026-07-28): acknowledged with the empty set of notifications
//! this server honours and held open (over HTTP, as an event stream) until the client
//! cancels it or goes away, or the server shuts down (then it gets its closing result).
//! The open ones are kept in [`Subscriptions`](super::subscriptions::Subscriptions).

use super::register::Answer;
use super::subscriptions::{Refusal, MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTIONS_PER_CLIENT};
use super::{ExchangeOut, Output, Server};
use crate::calls::CallKey;
use crate::jsonrpc::Reply;
use crate::mcp::shape;
use crate::mcp::shape::RequestError;
use crate::routing::{Dispatched, ReplyTo, Ticket};

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
            Err(Refusal::ClientFull) => {
                let error = RequestError::ClientSubscriptions {
                    max: MAX_SUBSCRIPTIONS_PER_CLIENT,
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

    /// Ends the subscriptions a cancel names (`named`), without a reply; whether there
    /// was one.
    pub(super) fn cancel_subscription(&mut self, named: impl Fn(&Ticket) -> bool) -> bool {
        let ended = self.subscriptions.handle_cancel(named);
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
