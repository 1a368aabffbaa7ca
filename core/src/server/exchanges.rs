//! Messages that arrive over HTTP, one per request ("exchange"), each answered on its own
//! response. No session: a modern request is served from its `_meta` as on stdio; a
//! legacy one in the version its `MCP-Protocol-Version` header names (2025-03-26 when
//! absent, as the specification allows), and `initialize` is answered without changing
//! anything, so that any instance behind a load balancer can serve any request.

use super::dispatch::fail;
use super::methods::Scope;
use super::{ExchangeId, ExchangeOut, Now, Output, Server};
use crate::calls::{CallKey, Requester};
use crate::clients::ClientId;
use crate::jsonrpc::{classify, Incoming, Reply};
use crate::mcp::shape::RequestError;
use crate::mcp::{era_of, shape, Era, ProtocolVersion};
use crate::routing::{Dispatched, ReplyTo};
use serde_json::Value;

/// The version of a legacy request that names none (the specification's default).
const UNNAMED_VERSION: ProtocolVersion = ProtocolVersion::V2025_03_26;

impl Server {
    pub(super) fn on_exchange(
        &mut self,
        now: Now,
        x: ExchangeId,
        message: Value,
        (version, trace): (
            Option<ProtocolVersion>,
            Option<crate::trace_context::TraceParent>,
        ),
        client: ClientId,
    ) {
        let reply_to = ReplyTo::Exchange(x);
        if message.is_array() {
            let error = RequestError::BatchOverHttp.error();
            self.route(reply_to, Some(Reply::Failure { id: None, error }), None);
            return;
        }
        let dispatched = match classify(message) {
            Ok(Incoming::Request(request)) => match era_of(&request.params) {
                Ok(Era::Modern(v)) => {
                    self.on_method(now, request, (reply_to, trace), Scope::Modern(v), client)
                }
                Ok(Era::Legacy) => {
                    let v = version
                        .filter(|v| !v.is_modern())
                        .unwrap_or(UNNAMED_VERSION);
                    self.on_method(now, request, (reply_to, trace), Scope::Stateless(v), client)
                }
                Err(e) => fail(request.id, shape::meta_error(&e)),
            },
            Ok(Incoming::Notification(n)) => {
                self.dispatch_notification(now, n, Requester::Exchange(x), client);
                self.out.push(Output::Exchange(x, ExchangeOut::Accepted));
                return;
            }
            Ok(Incoming::Response) => {
                self.out.push(Output::Exchange(x, ExchangeOut::Accepted));
                return;
            }
            Err(rejected) => Dispatched::Reply(Reply::Failure {
                id: rejected.id,
                error: rejected.error,
            }),
        };
        match dispatched {
            Dispatched::Reply(reply) => self.route(reply_to, Some(reply), None),
            Dispatched::Refused {
                reply,
                retry_after_secs,
            } => self.route(reply_to, Some(reply), Some(retry_after_secs)),
            Dispatched::Nothing => self.route(reply_to, None, None),
            Dispatched::Pending | Dispatched::Sent => {}
        }
    }

    /// The client went away: its call (if any) is cancelled; nothing more is sent for it.
    pub(super) fn on_exchange_closed(&mut self, now: Now, x: ExchangeId) {
        self.forget_subscriptions_of(x);
        self.forget_gated(x);
        self.desk.forget(x);
        self.drain_desk();
        self.parked
            .retain(|_, p| p.reply_to != ReplyTo::Exchange(x));
        let keys: Vec<CallKey> = self.calls.keys_from(Requester::Exchange(x));
        for key in &keys {
            if self.calls.cancel(now, key) {
                log::debug!("client of {key} went away; call cancelled");
            }
        }
        self.drain_calls();
    }
}
