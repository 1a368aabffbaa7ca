//! Where a request begins and ends: [`Server::register`] gives each request its ticket on
//! arrival; [`Server::answer`] is the one place a request ends: its span ends, it is
//! counted in `mcp.server.operation.duration` and its reply (or, for a request cancelled
//! or whose client left, none) is routed. A ticket is answered once: a second answer, or
//! an answer after its exchange closed, does nothing.

use super::register::{Answer, Scope};
use super::{Now, Server, Session};
use crate::calls::{CallKey, Requester};
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::jsonrpc::{Request, RequestId};
use crate::mcp::{Method, ProtocolVersion};
use crate::metrics::{ErrorType, Operation};
use crate::routing::{error_type, Context, Reach, ReplyTo, Ticket};
use crate::tools::Tool;
use serde_json::Value;
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

    /// Registers `request`, whose `_meta` names no version we serve (`e`), and answers
    /// it with why: counted and traced as every request is, in no version of its own.
    pub(super) fn refuse_meta(
        &mut self,
        now: Now,
        request: Request,
        came: (ReplyTo, Option<crate::trace_context::TraceParent>),
        e: &crate::mcp::MetaError,
        client: ClientId,
    ) {
        let (ticket, _) = self.register(now, &request, came, Scope::Session, client);
        let error = crate::mcp::shape::meta_error(e);
        let reply = crate::jsonrpc::Reply::Failure {
            id: Some(request.id),
            error,
        };
        self.answer(&ticket, Answer::reply(reply));
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
        self.verifying.remove(x);
        for ticket in self.register.forget(x) {
            self.count(&ticket, Some(ErrorType::Cancelled), Vec::new());
        }
        self.subscriptions.forget(x);
        if let Some(gate) = &mut self.gate {
            gate.forget(|id| *id == x);
        }
        self.desk
            .forget(move |t| t.reply_to == ReplyTo::Exchange(x));
        self.drain_desk();
        (self.parked).retain(|_, p| p.ticket.reply_to != ReplyTo::Exchange(x));
        for key in &self.calls.keys_from(Requester::Exchange(x)) {
            if self.calls.cancel(now, key) {
                log::debug!("client of {key} went away; call cancelled");
            }
        }
        self.drain_calls();
    }

    /// A cancel of request `id` reaching `reach` (from its client here, or from another
    /// replica through the store): its calls stop, and what still waits under that id
    /// ends here, unanswered and counted, and waits no more (a held task call stops, a
    /// `tasks/result` gives up its place, a call parked for its reserve never starts),
    /// so that nothing answers it later. Whether there was one. Subscriptions are the
    /// caller's to end first.
    #[cold]
    pub(super) fn cancel_reached(&mut self, now: Now, id: &RequestId, reach: Reach) -> bool {
        let keys = match reach {
            Reach::Stdio => vec![CallKey::from(id.clone())],
            Reach::Client(client) => self.calls.exchanges_with_id(id, |context| {
                matches!(context, Context::Call(call) if call.ticket.is_http_request_of(client))
            }),
        };
        let mut cancelled = false;
        for key in &keys {
            cancelled |= self.calls.cancel(now, key);
        }
        self.drain_calls();
        let waiting = self.register.close_where(|t| t.named_by_cancel(reach, id));
        for ticket in &waiting {
            self.count(ticket, Some(ErrorType::Cancelled), Vec::new());
            // Nothing is written; a batch learns its slot stays empty.
            self.route(ticket.reply_to, None, None);
        }
        let gone = |t: &Ticket| waiting.iter().any(|c| c.no == t.no);
        self.desk.forget(gone);
        self.drain_desk();
        self.parked.retain(|_, p| !gone(&p.ticket));
        cancelled || !waiting.is_empty()
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
