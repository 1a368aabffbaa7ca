//! The one method table: every request method by the scope it arrives in (the stdio
//! session `initialize` opens, a legacy HTTP request served without a session, or a
//! 2026-07-28 request described by its own `_meta`) and the version it is served in.

use super::{ExchangeOut, Now, Output, Server, Session};
use crate::clients::ClientId;
use crate::jsonrpc::{kind_of, Request, RequestId, RpcError};
use crate::mcp::shape::RequestError;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::routing::{Dispatched, ReplyTo};
use crate::tools::Tool;
use serde_json::Value;

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

impl Server {
    /// `tasks/*`, for the desk.
    fn ask_desk(
        &mut self,
        now: Now,
        request: crate::jsonrpc::Request,
        method: crate::mcp::Method,
        asked: (ReplyTo, crate::clients::ClientId, ProtocolVersion),
    ) -> Dispatched {
        let span = self.asking;
        let name = self.ledger.clients().name(asked.1);
        let dispatched = self
            .desk
            .on_request(now, name, request, method, asked, span);
        self.drain_desk().unwrap_or(dispatched)
    }

    /// Serves `request` as the table below says for its method, scope and version.
    pub(super) fn on_method(
        &mut self,
        now: Now,
        request: Request,
        (reply_to, trace): (ReplyTo, Option<crate::trace_context::TraceParent>),
        scope: Scope,
        client: ClientId,
    ) -> Dispatched {
        let method = Method::parse(&request.method).label();
        let tool = (method == "tools/call")
            .then(|| request.params.get("name").and_then(Value::as_str))
            .flatten()
            .and_then(Tool::from_name)
            .map(Tool::name);
        if self.tracer.is_on() {
            // The caller's context: its `_meta` first, then its HTTP header.
            let parent = crate::mcp::trace_parent(&request.params).or(trace);
            self.asking = self.tracer.begin(parent.as_ref(), now.instant);
        }
        let id = self.asking.is_some().then(|| request.id.clone());
        let dispatched = self.answer_method(now, request, reply_to, scope, client);
        let span = self.asking.take();
        // A reply that leaves later is counted where it leaves (`reply_late`, and a call's
        // end in `route`), with its duration; one sent now takes no time to speak of.
        let error = match &dispatched {
            Dispatched::Reply(reply) | Dispatched::Refused { reply, .. } => {
                Some(crate::routing::error_type(reply))
            }
            Dispatched::Sent => Some(None),
            Dispatched::Nothing | Dispatched::Pending => None,
        };
        if let Some(error) = error {
            let version = match (scope, self.session) {
                (Scope::Stateless(v) | Scope::Modern(v), _)
                | (Scope::Session, Session::Ready(v)) => v.as_str(),
                (Scope::Session, Session::AwaitingInit) => "",
            };
            let op = crate::metrics::Operation {
                method,
                tool,
                error,
                transport: reply_to.transport().network(),
                version,
            };
            if let (Some(span), Some(id)) = (span, &id) {
                let span = super::traced::request(&span, (&op, id), now.instant, Vec::new());
                self.tracer.end(span);
            }
            self.ledger.replied(op, std::time::Duration::ZERO);
        }
        dispatched
    }

    /// Handles one request in `scope`.
    fn answer_method(
        &mut self,
        now: Now,
        request: Request,
        reply_to: ReplyTo,
        scope: Scope,
        client: ClientId,
    ) -> Dispatched {
        let version = match (scope, self.session) {
            (Scope::Session, Session::Ready(v)) => Some(v),
            (Scope::Session, Session::AwaitingInit) => None,
            (Scope::Stateless(v) | Scope::Modern(v), _) => Some(v),
        };
        if matches!(scope, Scope::Modern(_)) {
            self.modern_seen = true;
        }
        let batched = matches!(reply_to, ReplyTo::Batch { .. });
        let result = match (Method::parse(&request.method), scope, version) {
            (Method::Initialize, Scope::Session, _) if batched => {
                Err(RequestError::InitializeInBatch.error())
            }
            (Method::Ping, Scope::Session | Scope::Stateless(_), _) => Ok(shape::empty_result()),
            (Method::Initialize, Scope::Session, None) => self.initialize(&request),
            (Method::Initialize, Scope::Session, Some(v)) => {
                Err(RequestError::AlreadyInitialized {
                    version: v.as_str(),
                }
                .error())
            }
            (Method::Initialize, Scope::Stateless(_), _) => {
                negotiate(&request).map(shape::initialize_result)
            }
            (Method::ServerDiscover, Scope::Modern(_), _) => Ok(shape::discover_result()),
            (Method::ToolsList, _, Some(v)) => {
                return self.answer_tools_list(request.id, v, reply_to)
            }
            (Method::ToolsCall, _, Some(v)) => {
                return self.call_tool(now, request, reply_to, v, client)
            }
            (m @ (Method::ToolsList | Method::ToolsCall), _, None) => {
                Err(RequestError::NotInitialized { method: m.as_str() }.error())
            }
            (Method::SubscriptionsListen, Scope::Modern(_), _) => {
                return self.listen(request.id, reply_to)
            }
            (
                m @ (Method::TasksGet | Method::TasksCancel | Method::TasksUpdate),
                Scope::Modern(v),
                _,
            ) => {
                if !crate::mcp::declares_tasks(&request.params) {
                    Err(shape::missing_tasks_capability(m.as_str()))
                } else {
                    return self.ask_desk(now, request, m, (reply_to, client, v));
                }
            }
            (
                m @ (Method::TasksGet
                | Method::TasksResult
                | Method::TasksList
                | Method::TasksCancel),
                Scope::Session | Scope::Stateless(_),
                Some(v),
            ) if v.has_session_tasks() => {
                return self.ask_desk(now, request, m, (reply_to, client, v))
            }
            (other, _, v) => Err(shape::method_not_found(
                other.as_str(),
                v.unwrap_or(ProtocolVersion::LATEST_LEGACY),
            )),
        };
        Dispatched::answer(request.id, result)
    }

    fn initialize(&mut self, request: &Request) -> Result<Value, RpcError> {
        let version = negotiate(request)?;
        self.session = Session::Ready(version);
        // The application, for the call log's lines of this session.
        self.session_app = request.params.get("clientInfo").cloned();
        Ok(shape::initialize_result(version))
    }

    /// `tools/list`, from the serialised list cached per version where the reply goes
    /// out alone.
    fn answer_tools_list(
        &mut self,
        id: RequestId,
        version: ProtocolVersion,
        reply_to: ReplyTo,
    ) -> Dispatched {
        match reply_to {
            ReplyTo::Direct => {
                self.write_tools_list(&id, version);
                Dispatched::Sent
            }
            ReplyTo::Exchange(x) => {
                let json = self.tools_list_reply(&id, version);
                let out = ExchangeOut::Reply {
                    json,
                    error: None,
                    retry_after_secs: None,
                };
                self.out.push(Output::Exchange(x, out));
                Dispatched::Sent
            }
            ReplyTo::Batch { .. } => {
                let searches = self.config.web_search.available();
                Dispatched::answer(id, Ok(shape::tools_list_result(version, searches)))
            }
        }
    }
}

/// The version `initialize` settles on: the client's when it is a legacy version we
/// speak, else our latest legacy one.
fn negotiate(request: &Request) -> Result<ProtocolVersion, RpcError> {
    let version = match request.params.get("protocolVersion") {
        Some(Value::String(asked)) => {
            let chosen =
                ProtocolVersion::parse_legacy(asked).unwrap_or(ProtocolVersion::LATEST_LEGACY);
            if chosen.as_str() != asked {
                log::debug!(
                    "client asked for protocol {asked:?}; answering {}",
                    chosen.as_str()
                );
            }
            chosen
        }
        Some(other) => {
            return Err(shape::invalid_version(&format!(
                "protocolVersion must be a string, got {}",
                kind_of(other)
            )))
        }
        None => return Err(shape::invalid_version("protocolVersion is missing")),
    };
    Ok(version)
}
