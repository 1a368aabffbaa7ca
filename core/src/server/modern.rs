//! Modern requests (2026-07-28): served statelessly from each request's `_meta`, beside
//! whatever legacy session `initialize` opened on the same process.
//!
//! `server/discover`, `tools/list` and `tools/call` are served; `subscriptions/listen` is
//! acknowledged with the empty set of notifications this server honours and held open
//! until the client cancels it or the server shuts down (then it gets its closing
//! result). Methods the era removed (`ping`, `initialize`, `logging/setLevel`) are not
//! found.

use super::batch::ReplyTo;
use super::dispatch::Dispatched;
use super::{Now, Server};
use crate::jsonrpc::{ErrorKind, Reply, Request, RequestId, RpcError};
use crate::mcp::{shape, Method, ProtocolVersion};
use std::collections::BTreeMap;

/// Most `subscriptions/listen` requests held open at once.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// Open `subscriptions/listen` requests, by id. Nothing is ever sent on them but their
/// acknowledgement and, at shutdown, their closing result.
#[derive(Default)]
pub(super) struct Subscriptions {
    open: BTreeMap<RequestId, ()>,
}

impl Server {
    pub(super) fn on_modern_request(
        &mut self,
        now: Now,
        request: Request,
        reply_to: ReplyTo,
        version: ProtocolVersion,
    ) -> Dispatched {
        self.modern_seen = true;
        let result = match Method::parse(&request.method) {
            Method::ServerDiscover => Ok(shape::discover_result()),
            Method::ToolsList if reply_to == ReplyTo::Direct => {
                self.write_tools_list(&request.id, version);
                return Dispatched::Nothing;
            }
            Method::ToolsList => Ok(shape::tools_list_result(version)),
            Method::ToolsCall => return self.call_tool(now, request, reply_to, version),
            Method::SubscriptionsListen => return self.listen(request.id, reply_to),
            other => Err(shape::method_not_found(other.as_str(), version)),
        };
        Dispatched::answer(request.id, result)
    }

    /// Opens a subscription: acknowledged now, answered only when it is torn down.
    fn listen(&mut self, id: RequestId, reply_to: ReplyTo) -> Dispatched {
        let refuse = |id, message: String| {
            Dispatched::answer(id, Err(RpcError::new(ErrorKind::InvalidRequest, message)))
        };
        match reply_to {
            ReplyTo::Direct => {}
            ReplyTo::Batch { .. } => {
                return refuse(id, "subscriptions/listen cannot be part of a batch".into())
            }
            // This server sends no change notifications, so a stream held open for them
            // would only tie up a connection.
            ReplyTo::Exchange(_) => {
                return refuse(id, "subscriptions/listen is not served over HTTP: this server has no change notifications to send (its tool list is fixed)".into())
            }
        }
        if self.subscriptions.open.contains_key(&id) || self.calls.contains(&id.clone().into()) {
            let error = shape::duplicate_id(&id);
            return Dispatched::answer(id, Err(error));
        }
        if self.subscriptions.open.len() >= MAX_SUBSCRIPTIONS {
            return refuse(
                id,
                format!("too many open subscriptions ({MAX_SUBSCRIPTIONS}); cancel one with notifications/cancelled first"),
            );
        }
        self.write_json(&shape::subscription_acknowledged(&id));
        self.subscriptions.open.insert(id, ());
        Dispatched::Pending
    }

    /// Ends the subscription `id` without a reply (the client cancelled it); whether there
    /// was one.
    pub(super) fn cancel_subscription(&mut self, id: &RequestId) -> bool {
        self.subscriptions.open.remove(id).is_some()
    }

    /// Ends every subscription with its closing result (the server is going away).
    pub(super) fn close_subscriptions(&mut self) {
        for id in std::mem::take(&mut self.subscriptions.open).into_keys() {
            let result = shape::subscription_closed(&id);
            self.send_reply(Reply::Success { id, result });
        }
    }
}
