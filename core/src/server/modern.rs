//! Modern requests (2026-07-28): served statelessly from each request's `_meta`, beside
//! whatever legacy session `initialize` opened on the same process.
//!
//! `server/discover`, `tools/list` and `tools/call` are served; `subscriptions/listen` is
//! acknowledged with the empty set of notifications this server honours and held open
//! (over HTTP, as an event stream) until the client cancels it or goes away, or the
//! server shuts down (then it gets its closing result). Methods the era removed (`ping`, `initialize`, `logging/setLevel`) are not
//! found.

use super::routing::{Dispatched, ReplyTo};
use super::{ExchangeId, ExchangeOut, Output};
use super::{Now, Server};
use crate::calls::{CallKey, Requester};
use crate::jsonrpc::{ErrorKind, Reply, Request, RequestId, RpcError};
use crate::mcp::{shape, Method, ProtocolVersion};
use std::collections::BTreeMap;

/// Most `subscriptions/listen` requests held open at once.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// Open `subscriptions/listen` requests, by who asked and their id. Nothing is ever sent
/// on them but their acknowledgement and, at shutdown, their closing result.
#[derive(Default)]
pub(super) struct Subscriptions {
    open: BTreeMap<CallKey, ReplyTo>,
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
            Method::ToolsList => {
                if let ReplyTo::Exchange(x) = reply_to {
                    let json = self.tools_list_reply(&request.id, version);
                    let out = ExchangeOut::Reply { json, error: None };
                    self.outputs.push_back(Output::Exchange(x, out));
                    // Answered already, from the cached list.
                    return Dispatched::Pending;
                }
                Ok(shape::tools_list_result(
                    version,
                    self.config.web_search.available(),
                ))
            }
            Method::ToolsCall => return self.call_tool(now, request, reply_to, version),
            Method::SubscriptionsListen => return self.listen(request.id, reply_to),
            m @ (Method::TasksGet | Method::TasksCancel | Method::TasksUpdate) => {
                if !crate::mcp::declares_tasks(&request.params) {
                    Err(shape::missing_tasks_capability(m.as_str()))
                } else {
                    return self.on_task_request(now, request, m, reply_to, version);
                }
            }
            other => Err(shape::method_not_found(other.as_str(), version)),
        };
        Dispatched::answer(request.id, result)
    }

    /// Opens a subscription: acknowledged now, answered only when it is torn down.
    fn listen(&mut self, id: RequestId, reply_to: ReplyTo) -> Dispatched {
        let refuse = |id, message: String| {
            Dispatched::answer(id, Err(RpcError::new(ErrorKind::InvalidRequest, message)))
        };
        if matches!(reply_to, ReplyTo::Batch { .. }) {
            return refuse(id, "subscriptions/listen cannot be part of a batch".into());
        }
        let key = CallKey {
            from: reply_to.requester(),
            id: id.clone(),
        };
        if self.subscriptions.open.contains_key(&key) || self.calls.contains(&key) {
            let error = shape::duplicate_id(&id);
            return Dispatched::answer(id, Err(error));
        }
        if self.subscriptions.open.len() >= MAX_SUBSCRIPTIONS {
            return refuse(
                id,
                format!("too many open subscriptions ({MAX_SUBSCRIPTIONS}); cancel one with notifications/cancelled first"),
            );
        }
        let ack = shape::subscription_acknowledged(&id);
        match reply_to {
            ReplyTo::Exchange(x) => {
                let json = crate::server::route::to_json(&ack);
                let out = ExchangeOut::Notification(json);
                self.outputs.push_back(Output::Exchange(x, out));
            }
            _ => self.write_json(&ack),
        }
        self.subscriptions.open.insert(key, reply_to);
        Dispatched::Pending
    }

    /// Ends the subscriptions a cancel from `from` names by `id`, without a reply; whether
    /// there was one. Over HTTP a cancel comes on its own request, so it names any
    /// exchange's subscription with that id.
    pub(super) fn cancel_subscription(&mut self, from: Requester, id: &RequestId) -> bool {
        let keys: Vec<CallKey> = self
            .subscriptions
            .open
            .keys()
            .filter(|k| {
                &k.id == id
                    && match from {
                        Requester::Stdio => k.from == Requester::Stdio,
                        Requester::Exchange(_) => matches!(k.from, Requester::Exchange(_)),
                        Requester::Task(_) => false,
                    }
            })
            .cloned()
            .collect();
        for key in &keys {
            if let Some(reply_to) = self.subscriptions.open.remove(key) {
                self.route(reply_to, None);
            }
        }
        !keys.is_empty()
    }

    /// The client of exchange `x` went away: its subscription (if any) is gone.
    pub(super) fn forget_subscriptions_of(&mut self, x: ExchangeId) {
        self.subscriptions
            .open
            .retain(|k, _| k.from != Requester::Exchange(x));
    }

    /// Ends every subscription with its closing result (the server is going away).
    pub(super) fn close_subscriptions(&mut self) {
        for (key, reply_to) in std::mem::take(&mut self.subscriptions.open) {
            let result = shape::subscription_closed(&key.id);
            self.route(reply_to, Some(Reply::Success { id: key.id, result }));
        }
    }
}
