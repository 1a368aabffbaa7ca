//! The one method table: every request method by the scope it arrives in (the stdio
//! session `initialize` opens, a legacy HTTP request served without a session, or a
//! 2026-07-28 request described by its own `_meta`) and the version it is served in.

use super::register::{Answer, Scope};
use super::{ExchangeOut, Now, Output, Server, Session};
use crate::clients::ClientId;
use crate::jsonrpc::{kind_of, Request, RequestId, RpcError};
use crate::mcp::shape::RequestError;
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::routing::{Dispatched, ReplyTo, Ticket};
use serde_json::Value;

impl Server {
    /// Registers `request` and serves it as the table below says for its method, scope
    /// and version; its answer leaves through the register, now or later.
    pub(super) fn on_method(
        &mut self,
        now: Now,
        request: Request,
        came: (ReplyTo, Option<crate::trace_context::TraceParent>),
        scope: Scope,
        client: ClientId,
    ) {
        if matches!(scope, Scope::Modern(_)) {
            self.modern_seen = true;
        }
        let (ticket, method) = self.register(now, &request, came, scope, client);
        let dispatched = self.answer_method(now, request, method, &ticket, scope);
        if let Some(answer) = Answer::of(dispatched) {
            self.answer(&ticket, answer);
        }
    }

    /// Handles one registered request in `scope`.
    fn answer_method(
        &mut self,
        now: Now,
        request: Request,
        method: Method,
        ticket: &Ticket,
        scope: Scope,
    ) -> Dispatched {
        let batched = matches!(ticket.reply_to, ReplyTo::Batch { .. });
        let result = match (method, scope, ticket.version) {
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
            (Method::ToolsList, _, Some(v)) => return self.answer_tools_list(ticket, v),
            (Method::ToolsCall, _, Some(_)) => return self.call_tool(now, request, ticket),
            (m @ (Method::ToolsList | Method::ToolsCall), _, None) => {
                Err(RequestError::NotInitialized { method: m.as_str() }.error())
            }
            (Method::SubscriptionsListen, Scope::Modern(_), _) => return self.listen(ticket),
            (
                m @ (Method::TasksGet | Method::TasksCancel | Method::TasksUpdate),
                Scope::Modern(_),
                _,
            ) => {
                if !crate::mcp::declares_tasks(&request.params) {
                    Err(shape::missing_tasks_capability(m.as_str()))
                } else {
                    return self.ask_desk(now, request, m, ticket);
                }
            }
            (
                m @ (Method::TasksGet
                | Method::TasksResult
                | Method::TasksList
                | Method::TasksCancel),
                Scope::Session | Scope::Stateless(_),
                Some(v),
            ) if v.has_session_tasks() => return self.ask_desk(now, request, m, ticket),
            (other, _, v) => Err(shape::method_not_found(
                other.as_str(),
                v.unwrap_or(ProtocolVersion::LATEST_LEGACY),
            )),
        };
        Dispatched::answer(request.id, result)
    }

    /// `tasks/*`, for the desk.
    fn ask_desk(
        &mut self,
        now: Now,
        request: Request,
        method: Method,
        ticket: &Ticket,
    ) -> Dispatched {
        let name = self.clients.name(ticket.client);
        let dispatched = (self.desk).on_request(now, name, request, method, ticket.clone());
        self.drain_desk().unwrap_or(dispatched)
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
    fn answer_tools_list(&mut self, ticket: &Ticket, version: ProtocolVersion) -> Dispatched {
        let id = &ticket.id;
        let searches = self.config.web_search.available();
        let cache = &mut self.tools_list_json;
        match ticket.reply_to {
            ReplyTo::Direct => {
                let json = tools_list_reply(cache, searches, (id, version));
                self.out.write_frame(&json);
                Dispatched::Sent
            }
            ReplyTo::Exchange(x) => {
                let json = tools_list_reply(cache, searches, (id, version));
                let out = ExchangeOut::Reply {
                    json,
                    error: None,
                    retry_after_secs: None,
                };
                self.out.push(Output::Exchange(x, out));
                Dispatched::Sent
            }
            ReplyTo::Batch { .. } => {
                Dispatched::answer(id.clone(), Ok(shape::tools_list_result(version, searches)))
            }
        }
    }
}

/// The compact JSON of a `tools/list` reply to `id`, from the result cached per version
/// in `cache` (`searches`: whether web search is offered): the list is fixed for the
/// session, and building it as a `Value` per request dominated dispatch.
fn tools_list_reply(
    cache: &mut [Option<Vec<u8>>],
    searches: bool,
    (id, version): (&RequestId, ProtocolVersion),
) -> Vec<u8> {
    // A `Value` always serialises.
    #[allow(clippy::expect_used)]
    let cached = cache[version.index()].get_or_insert_with(|| {
        serde_json::to_vec(&shape::tools_list_result(version, searches))
            .expect("a Value is always valid JSON")
    });
    let mut json = Vec::with_capacity(cached.len() + 48);
    json.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    json.extend_from_slice(id.to_value().to_string().as_bytes());
    json.extend_from_slice(br#","result":"#);
    json.extend_from_slice(cached);
    json.push(b'}');
    json
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
