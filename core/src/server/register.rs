//! The register of requests (lsp-server's `ReqQueue` is the model): each request is
//! registered once on arrival and gets a [`Ticket`]; [`Server::answer`] is the one place a
//! request ends: its span ends, it is counted in `mcp.server.operation.duration` and its
//! reply (or, for a request cancelled or whose client left, none) is routed. A ticket is
//! answered once: a second answer, or an answer after its exchange closed, does nothing.

use super::{Now, Server, Session};
use crate::calls::Requester;
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::jsonrpc::{Reply, Request};
use crate::mcp::{Method, ProtocolVersion};
use crate::metrics::{ErrorType, Operation};
use crate::routing::{error_type, Dispatched, ReplyTo, Ticket};
use crate::tools::Tool;
use serde_json::Value;
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
    fn open(&mut self, mut ticket: Ticket) -> Ticket {
        self.next += 1;
        ticket.no = self.next;
        self.open.insert(ticket.no, ticket.clone());
        ticket
    }

    /// Closes `ticket`: whether it was still open.
    fn close(&mut self, ticket: &Ticket) -> bool {
        self.open.remove(&ticket.no).is_some()
    }

    /// How many requests wait for their answer.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// Closes the tickets of exchange `x` and hands them back.
    fn forget(&mut self, x: ExchangeId) -> Vec<Ticket> {
        let gone: Vec<u64> = (self.open.iter())
            .filter(|(_, t)| t.reply_to == ReplyTo::Exchange(x))
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

impl Server {
    /// Registers `request`, arrived in `scope` at `reply_to` from `client`: its ticket,
    /// with its span begun when traces are on.
    pub(super) fn register(
        &mut self,
        now: Now,
        request: &Request,
        (reply_to, trace): (ReplyTo, Option<crate::trace_context::TraceParent>),
        scope: Scope,
        client: ClientId,
    ) -> (Ticket, Method) {
        let method = Method::parse(&request.method);
        let tool = (method == Method::ToolsCall)
            .then(|| request.params.get("name").and_then(Value::as_str))
            .flatten()
            .and_then(Tool::from_name);
        let version = match (scope, self.session) {
            (Scope::Session, Session::Ready(v)) => Some(v),
            (Scope::Session, Session::AwaitingInit) => None,
            (Scope::Stateless(v) | Scope::Modern(v), _) => Some(v),
        };
        // The caller's context: its `_meta` first, then its HTTP header.
        let trace = crate::mcp::trace_parent(&request.params).or(trace);
        let span = (self.tracer.is_on())
            .then(|| self.tracer.begin(trace.as_ref(), now.instant))
            .flatten();
        let ticket = Ticket {
            no: 0,
            id: request.id.clone(),
            reply_to,
            method: method.label(),
            tool,
            version,
            client,
            received: now.instant,
            trace,
            span,
        };
        (self.register.open(ticket), method)
    }

    /// Answers `ticket` with `answer`, once: its span ends, it is counted with how long
    /// it waited, and the reply is routed. Nothing when it was answered or forgotten.
    pub(super) fn answer(&mut self, ticket: &Ticket, answer: Answer) {
        if !self.register.close(ticket) {
            return;
        }
        let error = match &answer.reply {
            _ if answer.sent => None,
            Some(reply) => error_type(reply),
            None => Some(ErrorType::Cancelled),
        };
        self.count(ticket, error, answer.usage);
        if !answer.sent {
            self.route(ticket.reply_to, answer.reply, answer.retry_after);
        }
    }

    /// The client of exchange `x` went away: the one place a closed exchange is
    /// forgotten. Its requests end here, unanswered and counted; then every owner drops
    /// what it kept for them (a call is cancelled), and what they answer after is
    /// answered no more.
    pub(super) fn on_exchange_closed(&mut self, now: Now, x: ExchangeId) {
        for ticket in self.register.forget(x) {
            self.count(&ticket, Some(ErrorType::Cancelled), Vec::new());
        }
        self.subscriptions.forget(x);
        if let Some(gate) = &mut self.gate {
            gate.forget(|id| *id == x);
        }
        self.desk.forget(x);
        self.drain_desk();
        (self.parked).retain(|_, p| p.ticket.reply_to != ReplyTo::Exchange(x));
        for key in &self.calls.keys_from(Requester::Exchange(x)) {
            if self.calls.cancel(now, key) {
                log::debug!("client of {key} went away; call cancelled");
            }
        }
        self.drain_calls();
    }

    /// Ends `ticket`'s span and counts it, with `error` as its `error.type`.
    fn count(
        &mut self,
        ticket: &Ticket,
        error: Option<ErrorType>,
        usage: Vec<(&'static str, crate::spans::Value)>,
    ) {
        let version = ticket.version.or_else(|| self.protocol_version());
        let op = Operation {
            method: ticket.method,
            tool: ticket.tool.map(Tool::name),
            error,
            transport: ticket.reply_to.transport().network(),
            version: version.map_or("", ProtocolVersion::as_str),
        };
        let now = self.last_now.map_or(ticket.received, |n| n.instant);
        if let Some(span) = ticket.span {
            let span = super::traced::request(&span, (&op, &ticket.id), now, usage);
            self.tracer.end(span);
        }
        let took = now.saturating_duration_since(ticket.received);
        self.ledger.replied(op, took);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
