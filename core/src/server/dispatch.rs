//! Message dispatch: the MCP lifecycle, `ping`, `tools/list`, `tools/call` admission and
//! notifications. Methods are parsed once into [`Method`]; params once into typed values.

use super::parked::CallRequest;
use super::register::Scope;
use super::store::refused_by_limit;
use super::{Now, Server};
use crate::calls::{CallKey, Refused, Requester};
use crate::clients::ClientId;
use crate::clients::Clients;
use crate::date::Date;
use crate::jsonrpc::{classify, Incoming, Notification, Reply, Request, RequestId, RpcError};
use crate::ledger::{CallAdmission, CallOf, Ledger, Reservation};
use crate::mcp::failure::ToolFailure;
use crate::mcp::ProtocolVersion;
use crate::mcp::{era_of, shape, CallParams, CallParamsError, Era, NotificationMethod};
use crate::openai::calendar::Calendar;
use crate::routing::{Call, Context, Dispatched, Reach, ReplyTo, TaskStart, Ticket};
use crate::settings::ServerConfig;
use crate::store::events::StoreEvent;
use serde_json::Value;

impl Server {
    pub(super) fn on_message(&mut self, now: Now, value: Value) {
        match value {
            Value::Array(items) => self.on_batch(now, items),
            single => {
                if let Dispatched::Reply(reply) = self.dispatch(now, single, ReplyTo::Direct) {
                    self.route(ReplyTo::Direct, Some(reply), None);
                }
            }
        }
    }

    /// Dispatches one message from stdio: a request is registered and answered through
    /// the register (`Later`); what is no readable request is answered here (`Reply`) or
    /// not at all (`Nothing`).
    pub(super) fn dispatch(&mut self, now: Now, value: Value, reply_to: ReplyTo) -> Dispatched {
        match classify(value) {
            Ok(Incoming::Request(request)) => {
                log::debug!("recv method={} id={}", request.method, request.id);
                let scope = match era_of(&request.params) {
                    Ok(Era::Legacy) => Scope::Session,
                    Ok(Era::Modern(v)) => Scope::Modern(v),
                    Err(e) => {
                        self.modern_seen = true;
                        log::debug!("refusing a modern request: {e}");
                        let came = (reply_to, None);
                        self.refuse_meta(now, request, came, &e, ClientId::DEFAULT);
                        return Dispatched::Later;
                    }
                };
                let came = (reply_to, None);
                self.on_method(now, request, came, scope, ClientId::DEFAULT);
                Dispatched::Later
            }
            Ok(Incoming::Notification(n)) => {
                self.dispatch_notification(now, n, reply_to.requester(), ClientId::DEFAULT);
                Dispatched::Nothing
            }
            Ok(Incoming::Response) => {
                log::debug!("ignoring a response object from the client");
                Dispatched::Nothing
            }
            Err(rejected) => Dispatched::Reply(Reply::Failure {
                id: rejected.id,
                error: rejected.error,
            }),
        }
    }

    /// Admits a `tools/call` into the call engine, or answers at once why not: a protocol
    /// error when the call names no tool we have, a tool failure (shaped by its version)
    /// when the tool cannot run.
    pub(super) fn call_tool(&mut self, now: Now, request: Request, ticket: &Ticket) -> Dispatched {
        let Request { id, params, .. } = request;
        let version = ticket.reply_version();
        let call = match CallParams::parse(&params) {
            Ok(call) => call,
            Err(e) => return Dispatched::answer(id, call_params_failure(e, version)),
        };
        if self.config.profiles.for_tool(call.tool).is_none() {
            return Dispatched::answer(id, ToolFailure::MissingProfile.reply(version));
        }
        let key = CallKey {
            from: ticket.reply_to.requester(),
            id: id.clone(),
        };
        let parked =
            |p: &CallRequest| p.ticket.reply_to.requester() == key.from && p.ticket.id == key.id;
        if self.calls.contains(&key) || self.parked.values().any(parked) {
            return fail(id.clone(), shape::duplicate_id(&id));
        }
        let model_setting = self.config.profiles.serving(call.tool).model_setting();
        // The application: a modern request names itself; a stdio session did in its
        // `initialize`; a legacy HTTP request is stateless and names nobody.
        let app = params
            .get("_meta")
            .and_then(|m| m.get(crate::mcp::meta::CLIENT_INFO))
            .or(match ticket.reply_to {
                ReplyTo::Direct | ReplyTo::Batch { .. } => self.session_app.as_ref(),
                ReplyTo::Exchange(_) => None,
            });
        let arrival = self.arriving.clone().with_app(app);
        let request = CallRequest {
            ticket: ticket.clone(),
            call,
            model_setting,
            arrival,
        };
        let checked = request.call_of();
        let of = (
            &mut self.ledger,
            &self.clients,
            &self.calendar,
            &self.config,
        );
        let closing = self.closing.is_some();
        if let Some(answer) = refused_now(of, closing, now, (&checked, request.model_setting)) {
            return Dispatched::answer(id, answer);
        }
        let profile = self.config.profiles.for_tool(request.call.tool);
        match (self.ledger).admit(&self.clients, &checked, profile, now.unix_secs) {
            CallAdmission::Admitted(reservation) => self.admitted(now, request, reservation),
            CallAdmission::Refused(exceeded) => refused_by_limit(
                (&mut self.ledger, &self.clients),
                &self.config,
                &request,
                exceeded,
                now,
            ),
            CallAdmission::Asked(store_id) => {
                self.parked.insert(store_id, request);
                Dispatched::Later
            }
        }
    }

    /// Starts a call that passed every check: as a task (local or background) when it
    /// asks for one, else as a plain call. `reservation`: what its admission held and
    /// counted.
    pub(super) fn admitted(
        &mut self,
        now: Now,
        request: CallRequest,
        reservation: Reservation,
    ) -> Dispatched {
        let CallRequest {
            ticket,
            call,
            model_setting,
            arrival,
            ..
        } = request;
        let (version, client) = (ticket.reply_version(), ticket.client);
        let today = Date::tokyo(now.unix_secs).to_string();
        let Some(profile) = self.config.profiles.for_tool(call.tool) else {
            let call_of = ticket.call_of(false, reservation, arrival);
            self.ledger.unhold(&call_of);
            return Dispatched::answer(ticket.id, ToolFailure::MissingProfile.reply(version));
        };
        let task = task_wanted(&call, version);
        let mut plan = self.calls.plan(&crate::calls::Ask {
            profile,
            model_setting,
            args: &call.args,
            defaults: &self.config.search_defaults,
            web_search: self.config.web_search,
            api: self.config.api,
            today: &today,
            // Work for a task can wait: its lane's tier (flex) over the profile's.
            lane: task.and(self.config.tasks.service_tier),
        });
        if self.config.api.takes_user_ids() {
            let name = self.clients.name(client);
            let ids = self.user_ids.of(&self.config.tasks.key, client, name);
            plan.plan.user = Some(ids.clone());
        }
        if let Some(ttl_ms) = task {
            let start = TaskStart {
                ttl_ms,
                plan,
                progress: call.progress_token,
                today,
                reservation,
                arrival,
            };
            let name = self.clients.name(ticket.client);
            let dispatched = self.desk.start(now, name, ticket, start);
            return self.drain_desk().unwrap_or(dispatched);
        }
        let call_of = Call {
            ticket,
            task: None,
            reservation,
            arrival,
        };
        self.start_call(now, call_of, plan, call.progress_token, today)
    }

    /// Admits a plain `tools/call` into the call engine.
    fn start_call(
        &mut self,
        now: Now,
        call: Call,
        plan: crate::calls::Planned,
        progress: Option<crate::mcp::ProgressToken>,
        today: String,
    ) -> Dispatched {
        let (id, version, call_of) = (
            call.ticket.id.clone(),
            call.ticket.reply_version(),
            call.call_of(),
        );
        let key = CallKey {
            from: call.ticket.reply_to.requester(),
            id: id.clone(),
        };
        let started = (self.calls).start(now, key, Context::Call(call), plan, progress, today);
        self.drain_calls();
        match started {
            Ok(()) => Dispatched::Later,
            Err(Refused::DuplicateId) => {
                self.ledger.unhold(&call_of);
                fail(id.clone(), shape::duplicate_id(&id))
            }
            Err(Refused::Busy { running, queued }) => {
                let now = self.latest_unix();
                let model = self.config.profiles.model_for(call_of.tool);
                let busy = crate::outcome::Refusal::Busy;
                (self.ledger).refused(&self.clients, &call_of, busy, model, now);
                let failure = ToolFailure::Busy { running, queued };
                Dispatched::answer(id, failure.reply(version))
            }
        }
    }

    /// A notification from `client`; `from` says whose calls a cancel may name.
    pub(super) fn dispatch_notification(
        &mut self,
        now: Now,
        n: Notification,
        from: Requester,
        client: ClientId,
    ) {
        match NotificationMethod::parse(&n.method) {
            NotificationMethod::Initialized => log::debug!("client initialized"),
            NotificationMethod::Cancelled => {
                let reason: String = n
                    .params
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("-")
                    .chars()
                    .take(200)
                    .collect();
                let id = n.params.get("requestId").and_then(RequestId::from_value);
                // Tasks are cancelled with tasks/cancel, never by this.
                match id.zip(Reach::of(from, client)) {
                    Some((id, reach))
                        if self.cancel_subscription(|t| t.named_by_cancel(reach, &id)) =>
                    {
                        log::debug!("subscription {id} cancelled");
                    }
                    Some((id, reach)) => {
                        if let Reach::Client(client) = reach {
                            // The call may run on another instance.
                            let client = self.clients.name(client).to_owned();
                            let event = StoreEvent::Request {
                                client,
                                id: id.clone(),
                            };
                            self.desk.publish(&event);
                        }
                        if self.cancel_reached(now, &id, reach) {
                            log::debug!("cancelled requestId={id} reason={reason:?}");
                        } else {
                            log::trace!("cancel for unknown or finished request {id}");
                        }
                    }
                    None => {
                        log::debug!("ignoring notifications/cancelled without a usable requestId")
                    }
                }
            }
            NotificationMethod::Other(other) => log::debug!("ignoring notification {other}"),
        }
    }
}

/// Why a call that passed its own checks cannot run now (the server drains, has no
/// key, the model was shut down), after recording it as refused: the answer (the
/// limits are asked next, of the ledger).
fn refused_now(
    (ledger, clients, calendar, config): (&mut Ledger, &Clients, &Calendar, &ServerConfig),
    closing: bool,
    now: Now,
    (call, model_setting): (&CallOf, &'static str),
) -> Option<Result<Value, RpcError>> {
    let retired = || {
        let profile = config.profiles.for_tool(call.tool)?;
        super::lookups::retired((calendar, config), &profile.model, model_setting, now)
    };
    let reason;
    let failure = if closing {
        ToolFailure::Draining
    } else if !config.credentials_ready {
        ToolFailure::MissingKey {
            service: config.api.name(),
            env: &config.api_key_env,
        }
    } else if let Some(why) = retired() {
        reason = why;
        ToolFailure::Retired { reason: &reason }
    } else {
        return None;
    };
    let answer = failure.reply(call.version);
    if let Some(why) = failure.refusal() {
        let model = config.profiles.model_for(call.tool);
        ledger.refused(clients, call, why, model, now.unix_secs);
    }
    Some(answer)
}

/// Whether `call` runs as a task, and with what ttl (ms) if the client asked one:
/// 2025-11-25 when it asks (`params.task`), 2026-07-28 when it declares the extension.
fn task_wanted(call: &crate::mcp::CallParams, version: ProtocolVersion) -> Option<Option<u64>> {
    if version.has_session_tasks() {
        call.task
    } else if version.is_modern() && call.takes_tasks {
        Some(None)
    } else {
        None
    }
}

/// The answer to a `tools/call` whose params do not hold: a tool failure when only the
/// arguments are wrong, a protocol error otherwise.
fn call_params_failure(e: CallParamsError, version: ProtocolVersion) -> Result<Value, RpcError> {
    match e {
        CallParamsError::Arguments { tool, error } => ToolFailure::Arguments {
            tool,
            error: &error,
        }
        .reply(version),
        e => Err(shape::call_params_error(&e)),
    }
}

pub(super) fn fail(id: RequestId, error: RpcError) -> Dispatched {
    Dispatched::Reply(Reply::Failure {
        id: Some(id),
        error,
    })
}
