//! The register of requests (lsp-server's `ReqQueue` is the model): the [`Ticket`]s of
//! the requests not yet answered, where a request is served ([`Scope`]) and what its
//! answer is ([`Answer`]). Data only: the server opens and closes tickets where a
//! request begins and ends (`requests.rs`). A ticket closes once.

use crate::io::ExchangeId;
use crate::jsonrpc::Reply;
use crate::mcp::ProtocolVersion;
use crate::routing::{Dispatched, ReplyTo, Ticket};
use std::collections::BTreeMap;

/// Where a request is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scope {
    /// Within the stdio session; its version is the session's once initialized.
    Session,
    /// A legacy HTTP request, served without a session in this version.
    Stateless(ProtocolVersion),
    /// A 2026-07-28 request.
    Modern(ProtocolVersion),
}

/// The requests not yet answered, by their ticket's number.
#[derive(Default)]
pub(super) struct Register {
    next: u64,
    open: BTreeMap<u64, Ticket>,
}

impl Register {
    /// Opens `ticket` under the next number.
    pub(super) fn open(&mut self, mut ticket: Ticket) -> Ticket {
        self.next += 1;
        ticket.no = self.next;
        self.open.insert(ticket.no, ticket.clone());
        ticket
    }

    /// Closes `ticket`: whether it was still open.
    pub(super) fn close(&mut self, ticket: &Ticket) -> bool {
        self.open.remove(&ticket.no).is_some()
    }

    /// Whether `ticket` still waits for its answer.
    pub(super) fn is_open(&self, ticket: &Ticket) -> bool {
        self.open.contains_key(&ticket.no)
    }

    /// The tickets of the requests not yet answered.
    pub(super) fn tickets(&self) -> impl Iterator<Item = &Ticket> {
        self.open.values()
    }

    /// How many requests wait for their answer.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// Closes the tickets of exchange `x` and hands them back.
    pub(super) fn forget(&mut self, x: ExchangeId) -> Vec<Ticket> {
        self.close_where(|t| t.reply_to == ReplyTo::Exchange(x))
    }

    /// Closes the tickets `named` picks and hands them back.
    pub(super) fn close_where(&mut self, named: impl Fn(&Ticket) -> bool) -> Vec<Ticket> {
        let gone: Vec<u64> = (self.open.iter())
            .filter(|(_, t)| named(t))
            .map(|(no, _)| *no)
            .collect();
        gone.iter().filter_map(|no| self.open.remove(no)).collect()
    }
}

/// What the answer to a request is: a reply, one already sent, or none (cancelled, or
/// its client left).
pub(super) struct Answer {
    pub reply: Option<Reply>,
    /// A success already written (from a cache): counted, nothing to route.
    pub sent: bool,
    /// Over HTTP, `Retry-After` when a limit refused the call.
    pub retry_after: Option<u64>,
    /// What a call used, for its span.
    pub usage: Vec<(&'static str, crate::spans::Value)>,
}

impl Answer {
    /// No reply: the request was cancelled, or its client left.
    pub(super) const NONE: Answer = Answer {
        reply: None,
        sent: false,
        retry_after: None,
        usage: Vec::new(),
    };

    /// A success already written.
    pub(super) const SENT: Answer = Answer {
        reply: None,
        sent: true,
        retry_after: None,
        usage: Vec::new(),
    };

    /// `reply`, nothing more.
    pub(super) fn reply(reply: Reply) -> Answer {
        Answer {
            reply: Some(reply),
            ..Answer::NONE
        }
    }

    /// The answer `dispatched` is, if it is one now.
    pub(super) fn of(dispatched: Dispatched) -> Option<Answer> {
        match dispatched {
            Dispatched::Reply(reply) => Some(Answer::reply(reply)),
            Dispatched::Refused {
                reply,
                retry_after_secs,
            } => Some(Answer {
                retry_after: Some(retry_after_secs),
                ..Answer::reply(reply)
            }),
            Dispatched::Nothing => Some(Answer::NONE),
            Dispatched::Sent => Some(Answer::SENT),
            Dispatched::Later => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ClientId;
    use crate::jsonrpc::RequestId;

    fn ticket(id: u64, reply_to: ReplyTo) -> Ticket {
        Ticket {
            no: 0,
            id: RequestId::Int(id.to_string()),
            reply_to,
            method: "ping",
            tool: None,
            version: None,
            client: ClientId::DEFAULT,
            received: crate::testing::start_instant(),
            trace: None,
            span: None,
        }
    }

    #[test]
    fn a_ticket_closes_once_and_a_closed_exchanges_tickets_close_with_it() {
        let mut register = Register::default();
        // The same id twice (two exchanges may both use 1): two tickets all the same.
        let a = register.open(ticket(1, ReplyTo::Exchange(ExchangeId(7))));
        let b = register.open(ticket(1, ReplyTo::Exchange(ExchangeId(8))));
        let c = register.open(ticket(2, ReplyTo::Direct));
        assert_ne!(a.no, b.no);
        assert!(register.close(&c));
        assert!(!register.close(&c), "a ticket closes once");
        let gone = register.forget(ExchangeId(7));
        assert_eq!(gone.iter().map(|t| t.no).collect::<Vec<_>>(), [a.no]);
        assert!(!register.close(&a), "forgotten with its exchange");
        assert!(register.forget(ExchangeId(7)).is_empty());
        assert!(register.close(&b));
        assert_eq!(register.len(), 0);
    }
}
