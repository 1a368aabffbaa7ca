//! Calls admitted through the shared store: a `tools/call` whose limits the store checks
//! waits here, request, until its reserve is answered; then it goes on as if admitted at
//! once, or gets the refusal the store's answer means.

use super::parked::CallRequest;
use super::{Now, Server};
use crate::ledger::Reserved;
use crate::mcp::failure::ToolFailure;
use crate::routing::{Dispatched, Reach};
use crate::store::events::StoreEvent;
use crate::store::{StoreId, StoreReply};
use std::time::Duration;

impl Server {
    /// The store answered operation `id`.
    pub(super) fn on_store_reply(
        &mut self,
        now: Now,
        id: StoreId,
        reply: StoreReply,
        took: Duration,
    ) {
        if id.tag == crate::store::StoreTag::Task {
            let told = crate::desk::FromStore::Reply(id, reply, took);
            self.desk.on_store(now, told);
            self.drain_desk();
            return;
        }
        // A call whose client left meanwhile is given back if the store counted it.
        let request = self.parked.remove(&id);
        if let Some(span) = request.as_ref().and_then(|r| r.ticket.span) {
            let failed = matches!(reply, StoreReply::Unavailable(_));
            let start = now.instant.checked_sub(took).unwrap_or(now.instant);
            let trip = self.tracer.child(&span, start);
            self.tracer
                .end(super::traced::store_round_trip(&trip, now.instant, failed));
        }
        let wanted = request.is_some();
        // A sweep's runs may name identities this roster does not know now.
        self.keep_room(now);
        let clients = &mut self.clients;
        let decision = (self.ledger).store_answered(clients, id, reply, took, wanted);
        let (Some(decision), Some(request)) = (decision, request) else {
            return;
        };
        let ticket = request.ticket.clone();
        let call = request.call_of();
        let dispatched = match decision {
            Reserved::Admitted(reservation) => self.admitted(now, request, reservation),
            Reserved::Refused(exceeded) => refused_by_limit(
                (&mut self.ledger, &self.clients),
                &self.config,
                &request,
                exceeded,
                now,
            ),
            Reserved::Unavailable(cause) => {
                let failure = ToolFailure::StoreUnavailable { cause: &cause };
                let answer = failure.reply(ticket.reply_version());
                let why = crate::outcome::Refusal::StoreUnavailable;
                self.ledger.refused(
                    &self.clients,
                    &call,
                    why,
                    self.config.profiles.model_for(call.tool),
                    now.unix_secs,
                );
                Dispatched::answer(ticket.id.clone(), answer)
            }
        };
        if let Some(answer) = super::register::Answer::of(dispatched) {
            self.answer(&ticket, answer);
        }
    }

    /// A message on the store's channel: a request's cancel ends its subscription, its
    /// call or what waits under its id, if that is here; a task's end or cancel is the
    /// desk's.
    pub(super) fn on_store_event(&mut self, now: Now, message: &str) {
        match StoreEvent::parse(message) {
            Some(StoreEvent::Request { client, id }) => {
                // Only a client this instance knows by that very name.
                let Some(client) = self.clients.known(&client) else {
                    return;
                };
                // What the client's cancel reaches, had it come here.
                let reach = Reach::Client(client);
                if self.cancel_subscription(|t| t.named_by_cancel(reach, &id)) {
                    log::debug!("subscription {id} cancelled through the shared store");
                } else if self.cancel_reached(now, &id, reach) {
                    log::debug!("cancelled requestId={id} through the shared store");
                }
            }
            Some(event) => {
                self.desk
                    .on_store(now, crate::desk::FromStore::Event(event));
                self.drain_desk();
            }
            None => log::trace!("ignoring a message on the store's channel"),
        }
    }
}

/// The answer to `request` when a limit refuses it (`exceeded`), recorded as refused:
/// the limit's tool error and when to come back. Whether the instance's own count or the
/// shared store's said so.
pub(super) fn refused_by_limit(
    (ledger, clients): (&mut crate::ledger::Ledger, &crate::clients::Clients),
    config: &crate::settings::ServerConfig,
    request: &CallRequest,
    exceeded: crate::clients::Exceeded,
    now: Now,
) -> Dispatched {
    let failure = ToolFailure::Limited {
        exceeded,
        client: clients.name(request.ticket.client),
        now: now.unix_secs,
    };
    let answer = failure.reply(request.ticket.reply_version());
    let call = request.call_of();
    let model = config.profiles.model_for(call.tool);
    ledger.refused(clients, &call, exceeded.kind.into(), model, now.unix_secs);
    Dispatched::Refused {
        reply: crate::jsonrpc::Reply::to(request.ticket.id.clone(), answer),
        retry_after_secs: exceeded.retry_after_secs,
    }
}
