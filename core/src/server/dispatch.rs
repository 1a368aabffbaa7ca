//! Message dispatch: the MCP lifecycle, `ping`, `tools/list`, `tools/call` admission and
//! notifications. Methods are parsed once into [`Method`]; params once into typed values.

use super::methods::Scope;
use super::store::{refused_by_limit, CallRequest};
use super::{Now, Server};
use crate::calls::{CallKey, Refused, Requester};
use crate::clients::ClientId;
use crate::date::Date;
use crate::jsonrpc::{classify, Incoming, Notification, Reply, Request, RequestId, RpcError};
use crate::ledger::{CallAdmission, CallOf};
use crate::mcp::failure::ToolFailure;
use crate::mcp::ProtocolVersion;
use crate::mcp::{era_of, shape, CallParams, CallParamsError, Era, NotificationMethod};
use crate::routing::{Caller, Context, Dispatched, ReplyTo, TaskStart};
use crate::store::events::StoreEvent;
use serde_json::Value;

impl Server {
    pub(super) fn on_message(&mut self, now: Now, value: Value) {
        match value {
            Value::Array(items) => self.on_batch(now, items),
            single => match self.dispatch(now, single, ReplyTo::Direct) {
                Dispatched::Reply(reply) | Dispatched::Refused { reply, .. } => {
                    self.route(ReplyTo::Direct, Some(reply), None);
                }
                Dispatched::Nothing | Dispatched::Pending | Dispatched::Sent => {}
            },
        }
    }

    pub(super) fn dispatch(&mut self, now: Now, value: Value, reply_to: ReplyTo) -> Dispatched {
        match classify(value) {
            Ok(Incoming::Request(request)) => self.on_request(now, request, reply_to),
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

    fn on_request(&mut self, now: Now, request: Request, reply_to: ReplyTo) -> Dispatched {
        log::debug!("recv method={} id={}", request.method, request.id);
        match era_of(&request.params) {
            Ok(Era::Legacy) => self.on_method(
                now,
                request,
                (reply_to, None),
                Scope::Session,
                ClientId::DEFAULT,
            ),
            Ok(Era::Modern(v)) => self.on_method(
                now,
                request,
                (reply_to, None),
                Scope::Modern(v),
                ClientId::DEFAULT,
            ),
            Err(e) => {
                self.modern_seen = true;
                log::debug!("refusing a modern request: {e}");
                fail(request.id, shape::meta_error(&e))
            }
        }
    }

    /// Admits a `tools/call` into the call engine, or answers at once why not: a protocol
    /// error when the call names no tool we have, a tool failure (shaped by `version`)
    /// when the tool cannot run.
    pub(super) fn call_tool(
        &mut self,
        now: Now,
        request: Request,
        reply_to: ReplyTo,
        version: ProtocolVersion,
        client: ClientId,
    ) -> Dispatched {
        let Request { id, params, .. } = request;
        let no_profile = |id| Dispatched::answer(id, ToolFailure::MissingProfile.reply(version));
        let call = match CallParams::parse(&params) {
            Ok(call) => call,
            Err(e) => return Dispatched::answer(id, call_params_failure(e, version)),
        };
        if self.config.profiles.for_tool(call.tool).is_none() {
            return no_profile(id);
        }
        let key = CallKey {
            from: reply_to.requester(),
            id: id.clone(),
        };
        let parked = |p: &CallRequest| p.reply_to.requester() == key.from && p.id == key.id;
        if self.calls.contains(&key) || self.parked.values().any(parked) {
            return fail(id.clone(), shape::duplicate_id(&id));
        }
        let model_setting = self.config.profiles.serving(call.tool).model_setting();
        // The application: a modern request names itself; a stdio session did in its
        // `initialize`; a legacy HTTP request is stateless and names nobody.
        let app = params
            .get("_meta")
            .and_then(|m| m.get(crate::mcp::meta::CLIENT_INFO))
            .or(match reply_to {
                ReplyTo::Direct | ReplyTo::Batch { .. } => self.session_app.as_ref(),
                ReplyTo::Exchange(_) => None,
            });
        let arrival = self.arriving.clone().with_app(app);
        let request = CallRequest {
            id,
            reply_to,
            version,
            client,
            call,
            model_setting,
            received: now.instant,
            asked_at: now.unix_secs,
            span: self.asking,
            arrival,
        };
        let checked = request.call_of();
        if let Some((answer, retry_after_secs)) =
            self.refused_now(now, &checked, request.model_setting)
        {
            let reply = Reply::to(request.id, answer);
            return match retry_after_secs {
                Some(retry_after_secs) => Dispatched::Refused {
                    reply,
                    retry_after_secs,
                },
                None => Dispatched::Reply(reply),
            };
        }
        match self.ledger.admit(client, now.unix_secs) {
            CallAdmission::Admitted => self.admitted(now, request, None),
            CallAdmission::Refused(exceeded) => {
                refused_by_limit(&mut self.ledger, &self.config, &request, exceeded, now)
            }
            CallAdmission::Asked(store_id) => {
                self.parked.insert(store_id, request);
                Dispatched::Pending
            }
        }
    }

    /// Starts a call that passed every check: as a task (local or background) when it
    /// asks for one, else as a plain call. `reserved_at`: when the shared store counted
    /// it.
    pub(super) fn admitted(
        &mut self,
        now: Now,
        request: CallRequest,
        reserved_at: Option<u64>,
    ) -> Dispatched {
        let CallRequest {
            id,
            reply_to,
            version,
            client,
            call,
            model_setting,
            span,
            arrival,
            ..
        } = request;
        let today = Date::tokyo(now.unix_secs).to_string();
        let Some(profile) = self.config.profiles.for_tool(call.tool) else {
            return Dispatched::answer(id, ToolFailure::MissingProfile.reply(version));
        };
        let task = self.task_wanted(&call, version);
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
            let name = self.ledger.clients().name(client);
            let ids = self.user_ids.of(&self.config.tasks.key, client, name);
            plan.plan.user = Some(ids.clone());
        }
        if let Some(ttl_ms) = task {
            let start = TaskStart {
                ttl_ms,
                plan,
                progress: call.progress_token,
                today,
                tool: call.tool,
                trace: call.trace,
                client,
                reserved_at,
                span,
                arrival,
            };
            let name = self.ledger.clients().name(client);
            let dispatched = self.desk.start(now, name, (id, reply_to, version), start);
            return self.drain_desk().unwrap_or(dispatched);
        }
        let key = CallKey {
            from: reply_to.requester(),
            id: id.clone(),
        };
        let caller = Caller {
            id,
            reply_to,
            version,
            task: None,
            tool: call.tool,
            trace: call.trace,
            client,
            received: now.instant,
            reserved_at,
            span,
            arrival,
        };
        self.start_call(now, key, caller, plan, call.progress_token, today)
    }

    /// Why a call that passed its own checks cannot run now (the server drains, has no
    /// key, the model was shut down), after recording it as refused: the answer (the
    /// limits are asked next, of the ledger).
    fn refused_now(
        &mut self,
        now: Now,
        call: &CallOf,
        model_setting: &'static str,
    ) -> Option<(Result<Value, RpcError>, Option<u64>)> {
        let retired = || {
            let profile = self.config.profiles.for_tool(call.tool)?;
            let of = (&self.calendar, &self.config);
            super::lookups::retired(of, &profile.model, model_setting, now)
        };
        let reason;
        let failure = if self.closing.is_some() {
            ToolFailure::Draining
        } else if !self.config.credentials_ready {
            ToolFailure::MissingKey {
                service: self.config.api.name(),
                env: &self.config.api_key_env,
            }
        } else if let Some(why) = retired() {
            reason = why;
            ToolFailure::Retired { reason: &reason }
        } else {
            return None;
        };
        let answer = failure.reply(call.version);
        if let Some(why) = failure.refusal() {
            let model = self.config.profiles.model_for(call.tool);
            self.ledger.refused(call, why, model, now.unix_secs);
        }
        Some((answer, None))
    }

    /// Admits a plain `tools/call` into the call engine.
    fn start_call(
        &mut self,
        now: Now,
        key: CallKey,
        caller: Caller,
        plan: crate::calls::Planned,
        progress: Option<crate::mcp::ProgressToken>,
        today: String,
    ) -> Dispatched {
        let (id, version, call) = (caller.id.clone(), caller.version, caller.call_of());
        let started = self
            .calls
            .start(now, key, Context::Call(caller), plan, progress, today);
        self.drain_calls();
        match started {
            Ok(()) => Dispatched::Pending,
            Err(Refused::DuplicateId) => fail(id.clone(), shape::duplicate_id(&id)),
            Err(Refused::Busy { running, queued }) => {
                let now = self.latest_unix();
                let model = self.config.profiles.model_for(call.tool);
                self.ledger
                    .refused(&call, crate::outcome::Refusal::Busy, model, now);
                let failure = ToolFailure::Busy { running, queued };
                Dispatched::answer(id, failure.reply(version))
            }
        }
    }

    /// Whether `call` runs as a task, and with what ttl (ms) if the client asked one:
    /// 2025-11-25 when it asks (`params.task`), 2026-07-28 when it declares the extension.
    fn task_wanted(
        &self,
        call: &crate::mcp::CallParams,
        version: ProtocolVersion,
    ) -> Option<Option<u64>> {
        if version.has_session_tasks() {
            call.task
        } else if version.is_modern() && call.takes_tasks {
            Some(None)
        } else {
            None
        }
    }

    /// Writes a `tools/list` reply from the cached, serialised result: the list is fixed
    /// for the session, and building it as a `Value` per request dominated dispatch.
    pub(super) fn write_tools_list(&mut self, id: &RequestId, version: ProtocolVersion) {
        let json = self.tools_list_reply(id, version);
        self.out.write_frame(&json);
    }

    /// The compact JSON of a `tools/list` reply to `id`, from the cached result.
    pub(super) fn tools_list_reply(&mut self, id: &RequestId, version: ProtocolVersion) -> Vec<u8> {
        // A `Value` always serialises.
        #[allow(clippy::expect_used)]
        let cached = self.tools_list_json.entry(version).or_insert_with(|| {
            serde_json::to_vec(&shape::tools_list_result(
                version,
                self.config.web_search.available(),
            ))
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
                match n.params.get("requestId").and_then(RequestId::from_value) {
                    Some(id) if self.cancel_subscription(from, &id) => {
                        log::debug!("subscription {id} cancelled");
                    }
                    Some(id) => {
                        // Over HTTP a cancel comes on its own request and can only name
                        // the id: it cancels the calls of open exchanges with that id.
                        let keys = match from {
                            Requester::Stdio => vec![CallKey::from(id.clone())],
                            Requester::Exchange(_) => {
                                super::store::exchange_calls(&self.calls, &id, client)
                            }
                            // Tasks are cancelled with tasks/cancel, never by this.
                            Requester::Task(_) => Vec::new(),
                        };
                        if matches!(from, Requester::Exchange(_)) {
                            // The call may run on another instance.
                            let client = self.ledger.clients().name(client).to_owned();
                            let event = StoreEvent::Request {
                                client,
                                id: id.clone(),
                            };
                            self.desk.publish(&event);
                        }
                        let mut cancelled = false;
                        for key in &keys {
                            cancelled |= self.calls.cancel(now, key);
                        }
                        // A call still waiting for its reserve is dropped before it starts.
                        let before = self.parked.len();
                        self.parked.retain(|_, p| {
                            !(matches!(from, Requester::Stdio)
                                && matches!(p.reply_to, ReplyTo::Direct | ReplyTo::Batch { .. })
                                && p.id == id)
                        });
                        cancelled |= self.parked.len() < before;
                        if cancelled {
                            log::debug!("cancelled requestId={id} reason={reason:?}");
                        } else {
                            log::trace!("cancel for unknown or finished request {id}");
                        }
                        self.drain_calls();
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
