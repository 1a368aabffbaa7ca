//! Messages that arrive over HTTP, one per request ("exchange"), each answered on its own
//! response. No session: a modern request is served from its `_meta` as on stdio; a
//! legacy one in the version its `MCP-Protocol-Version` header names (2025-03-26 when
//! absent, as the specification allows), and `initialize` is answered without changing
//! anything, so that any instance behind a load balancer can serve any request.

use super::register::Scope;
use super::{ExchangeId, ExchangeOut, Now, Output, Server};
use crate::calls::Requester;
use crate::clients::ClientId;
use crate::jsonrpc::{classify, Incoming, Reply};
use crate::mcp::shape::RequestError;
use crate::mcp::{era_of, Era, ProtocolVersion};
use crate::routing::ReplyTo;
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
        let reply = match classify(message) {
            Ok(Incoming::Request(request)) => {
                let scope = match era_of(&request.params) {
                    Ok(Era::Modern(v)) => Scope::Modern(v),
                    Ok(Era::Legacy) => {
                        let v = version.filter(|v| !v.is_modern());
                        Scope::Stateless(v.unwrap_or(UNNAMED_VERSION))
                    }
                    Err(e) => {
                        let came = (reply_to, trace);
                        return self.refuse_meta(now, request, came, &e, client);
                    }
                };
                return self.on_method(now, request, (reply_to, trace), scope, client);
            }
            Ok(Incoming::Notification(n)) => {
                self.dispatch_notification(now, n, Requester::Exchange(x), client);
                self.out.push(Output::Exchange(x, ExchangeOut::Accepted));
                return;
            }
            Ok(Incoming::Response) => {
                self.out.push(Output::Exchange(x, ExchangeOut::Accepted));
                return;
            }
            Err(rejected) => Reply::Failure {
                id: rejected.id,
                error: rejected.error,
            },
        };
        self.route(reply_to, Some(reply), None);
    }
}
