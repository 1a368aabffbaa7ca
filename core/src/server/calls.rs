//! The call table: `tools/call` from validation to reply, with attempts, timeouts,
//! retries with backoff, cancellation, queueing and progress.
//!
//! ```text
//!            start_call
//!               │ slot free?──no──▶ Queued ──slot frees──┐
//!               ▼                                        │
//!   ┌──────▶ Running(attempt, deadline) ◀────────────────┘
//!   │           │ reply / failure / deadline
//!   │           ├─ answer or permanent failure ──▶ reply, remove
//!   │           ├─ param unsupported ──▶ Running (new attempt, param dropped)
//!   │           └─ transient, retries left ──▶ Backoff(until)
//!   └──────────────────────────────────────────────┘ (until passes)
//! ```
//! A cancel removes the call from any state; it never gets a reply.

use super::config::Profile;
use super::lifecycle::{Dispatched, ReplyTo};
use super::{
    after, AttemptId, HttpReply, HttpRequest, Now, Output, Server, TransportError,
    TransportErrorKind,
};
use crate::date::Date;
use crate::jsonrpc::{code, kind_of, OutgoingNotification, Reply, Request, RequestId, RpcError};
use crate::mcp::ProtocolVersion;
use crate::openai::request::Hints;
use crate::openai::{
    classify_reply, model_supports, parse_answer, Answer, RequestPlan, UnsupportedParam,
    UpstreamFailure, UpstreamVerdict,
};
use crate::tools::{AnswerArgs, Effort, Tool};
use serde_json::{json, Map, Value};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

/// First backoff delay; doubles per retry up to [`MAX_BACKOFF`].
const BASE_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);

type CallId = u64;

pub(super) struct CallTable {
    calls: BTreeMap<CallId, Call>,
    by_request: BTreeMap<RequestId, CallId>,
    by_attempt: BTreeMap<AttemptId, CallId>,
    /// Calls waiting for an upstream slot, oldest first.
    queue: VecDeque<CallId>,
    next_call: CallId,
    next_attempt: u64,
    rng: u64,
    /// Parameters each model rejected, remembered for the life of the process.
    unsupported: BTreeMap<String, BTreeSet<UnsupportedParam>>,
    /// Every deadline set (attempt deadlines, backoff ends, progress ticks), soonest on
    /// top. Entries are never updated in place: one whose call ended or moved on is
    /// dropped when it reaches the top ([`CallTable::prune_timers`]), so the next deadline
    /// is read without scanning the calls.
    timers: BinaryHeap<Reverse<(Instant, CallId)>>,
}

struct Call {
    request_id: RequestId,
    reply_to: ReplyTo,
    tool: Tool,
    version: ProtocolVersion,
    plan: RequestPlan,
    /// Retries used so far (not counting a retry that dropped an unsupported param).
    retries: u32,
    /// Attempts started so far.
    attempts: u32,
    access_date: String,
    state: CallState,
    progress: Option<Progress>,
}

impl Call {
    /// Everything due for the call: its attempt's deadline or its backoff's end, and its
    /// next progress notification.
    fn deadlines(&self) -> impl Iterator<Item = Instant> {
        let state = match self.state {
            CallState::Running { deadline, .. } => Some(deadline),
            CallState::Backoff { until } => Some(until),
            CallState::Queued => None,
        };
        state
            .into_iter()
            .chain(self.progress.as_ref().map(|p| p.next_at))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallState {
    Queued,
    Running {
        attempt: AttemptId,
        deadline: Instant,
    },
    Backoff {
        until: Instant,
    },
}

struct Progress {
    token: Value,
    sent: u64,
    next_at: Instant,
    message: String,
}

impl CallTable {
    pub(super) fn new(seed: u64) -> Self {
        CallTable {
            calls: BTreeMap::new(),
            by_request: BTreeMap::new(),
            by_attempt: BTreeMap::new(),
            queue: VecDeque::new(),
            next_call: 0,
            next_attempt: 0,
            rng: seed | 1,
            unsupported: BTreeMap::new(),
            timers: BinaryHeap::new(),
        }
    }

    /// Records that `call_id` has something due at `at`.
    fn schedule(&mut self, call_id: CallId, at: Instant) {
        self.timers.push(Reverse((at, call_id)));
    }

    /// Whether `call_id` still has something due exactly at `at`.
    fn is_current(&self, at: Instant, call_id: CallId) -> bool {
        self.calls
            .get(&call_id)
            .is_some_and(|c| c.deadlines().any(|d| d == at))
    }

    /// Drops stale entries from the top of the timer heap, and rebuilds it when stale
    /// entries deeper down outnumber the live ones (calls that ended long before their
    /// deadline leave theirs behind).
    pub(super) fn prune_timers(&mut self) {
        while let Some(&Reverse((at, call_id))) = self.timers.peek() {
            if self.is_current(at, call_id) {
                break;
            }
            self.timers.pop();
        }
        if self.timers.len() > 4 * self.calls.len() + 64 {
            let live = self
                .calls
                .iter()
                .flat_map(|(id, c)| c.deadlines().map(move |at| Reverse((at, *id))));
            self.timers = live.collect();
        }
    }

    /// Calls with something due at or before `now`, in call order; their entries leave
    /// the heap.
    fn take_due(&mut self, now: Instant) -> BTreeSet<CallId> {
        let mut due = BTreeSet::new();
        while let Some(&Reverse((at, call_id))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            if self.is_current(at, call_id) {
                due.insert(call_id);
            }
        }
        due
    }

    pub(super) fn len(&self) -> usize {
        self.calls.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    fn running(&self) -> usize {
        self.by_attempt.len()
    }

    /// The soonest deadline of any call. Valid after [`CallTable::prune_timers`].
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let next = self.timers.peek().map(|Reverse((at, _))| *at);
        debug_assert_eq!(
            next,
            self.scan_next_deadline(),
            "the timer heap is out of step"
        );
        next
    }

    /// The soonest deadline by looking at every call: what the heap must agree with.
    fn scan_next_deadline(&self) -> Option<Instant> {
        self.calls.values().flat_map(Call::deadlines).min()
    }

    /// A uniform draw from [0, 1) (xorshift64*), for backoff jitter.
    fn jitter(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Server {
    pub(super) fn start_call(
        &mut self,
        now: Now,
        request: Request,
        reply_to: ReplyTo,
        version: ProtocolVersion,
    ) -> Dispatched {
        let Request { id, params, .. } = request;
        let fail = |id: RequestId, error: RpcError| {
            Dispatched::Reply(Reply::Failure {
                id: Some(id),
                error,
            })
        };
        let tool = match params.get("name") {
            Some(Value::String(name)) => match Tool::from_name(name) {
                Some(tool) => tool,
                None => {
                    return fail(
                        id,
                        RpcError::new(code::INVALID_PARAMS, format!("Unknown tool: {name}")),
                    )
                }
            },
            Some(other) => {
                let msg = format!(
                    "tools/call: name must be a tool name string, got {}",
                    kind_of(other)
                );
                return fail(id, RpcError::new(code::INVALID_PARAMS, msg));
            }
            None => {
                let msg = "tools/call: missing tool name (params.name); see tools/list";
                return fail(id, RpcError::new(code::INVALID_PARAMS, msg));
            }
        };
        let invalid_args = |reason: String| {
            RpcError::new(
                code::INVALID_ARGUMENTS,
                format!("{tool}: invalid arguments"),
            )
            .with_data(json!({ "reason": reason }))
        };
        let empty = Map::new();
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(other) => {
                return fail(
                    id,
                    invalid_args(format!(
                        "arguments must be an object, got {}",
                        kind_of(other)
                    )),
                )
            }
        };
        let Some((profile_name, profile)) = self.config.profiles.for_tool(tool) else {
            return fail(
                id,
                RpcError::new(code::MISSING_PROFILE, "model_profiles.answer is required"),
            );
        };
        let profile = profile.clone();
        let args = match tool.parse_args(arguments) {
            Ok(args) => args,
            Err(reason) => return fail(id, invalid_args(reason)),
        };
        log::debug!(
            "tools/call name={tool} argsKeys=[{}] queryLen={}",
            arguments
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(","),
            args.query.chars().count()
        );
        if self.calls.by_request.contains_key(&id) {
            let msg =
                format!("request id {id} is already in use by a call in flight; use a new id");
            return fail(id, RpcError::new(code::INVALID_REQUEST, msg));
        }
        if !self.config.api_key_present {
            let env = &self.config.api_key_env;
            let error = RpcError::new(
                code::UPSTREAM_FAILED,
                format!("openai responses failed: no API key; set the {env} environment variable for the server"),
            )
            .with_data(json!({ "retries": 0, "status": null, "type": "missing_api_key", "code": null }));
            return fail(id, error);
        }
        if self.calls.running() >= self.config.max_inflight
            && self.calls.queue.len() >= self.config.max_queue
        {
            let msg = format!(
                "server busy: {} calls running and {} queued; retry later",
                self.calls.running(),
                self.calls.queue.len()
            );
            return fail(id, RpcError::new(code::OVERLOADED, msg));
        }

        // Decide the request once; retries reuse it.
        let today = Date::tokyo(now.unix_secs).to_string();
        let plan = self.request_plan(&profile, &args, &today);
        let supports = model_supports(&plan.model);
        log::debug!(
            "answer: profile={profile_name} model={} supports={{verbosity:{}, reasoning:{}}}",
            plan.model,
            supports.verbosity,
            supports.reasoning
        );
        log::debug!(
            "answer: request summary tools=web_search(on) reasoning={} text.verbosity={}",
            on_off(plan.effort.is_some()),
            on_off(plan.verbosity.is_some())
        );
        let progress = progress_token(&params).map(|token| Progress {
            token,
            sent: 0,
            next_at: now.instant,
            message: String::new(),
        });
        let call_id = self.calls.next_call;
        self.calls.next_call += 1;
        if let Some(p) = &progress {
            self.calls.schedule(call_id, p.next_at);
        }
        self.calls.by_request.insert(id.clone(), call_id);
        self.calls.calls.insert(
            call_id,
            Call {
                request_id: id,
                reply_to,
                tool,
                version,
                plan,
                retries: 0,
                attempts: 0,
                access_date: today,
                state: CallState::Queued,
                progress,
            },
        );
        if self.calls.running() < self.config.max_inflight {
            self.start_attempt(now, call_id);
        } else {
            self.calls.queue.push_back(call_id);
            self.set_progress(now, call_id, "waiting for a free slot".into());
        }
        Dispatched::Pending
    }

    /// What a call sends: the profile's model and settings, overridden by the call's
    /// arguments and the search defaults, minus what the model does not take or has
    /// rejected before.
    fn request_plan(&self, profile: &Profile, args: &AnswerArgs, today: &str) -> RequestPlan {
        let defaults = &self.config.search_defaults;
        let domains = args
            .domains
            .clone()
            .unwrap_or_else(|| defaults.domains.clone());
        let hints = Hints {
            today: today.to_owned(),
            recency_days: args.recency_days.or(defaults.recency_days),
            max_results: args.max_results.or(defaults.max_results),
            style: args.style,
            domains: &domains,
        };
        let supports = model_supports(&profile.model);
        let rejected = self.calls.unsupported.get(&profile.model);
        let rejects = |p: UnsupportedParam| rejected.is_some_and(|r| r.contains(&p));
        let mut effort = args.reasoning_effort.or(profile.reasoning_effort);
        if effort == Some(Effort::Minimal) {
            // The API rejects `minimal` together with web_search, which we always send.
            log::debug!("reasoning effort minimal cannot be combined with web_search; sending low");
            effort = Some(Effort::Low);
        }
        RequestPlan {
            model: profile.model.clone(),
            input: RequestPlan::input_text(&args.query, &hints),
            effort: effort
                .filter(|_| supports.reasoning && !rejects(UnsupportedParam::ReasoningEffort)),
            verbosity: args
                .verbosity
                .or(profile.verbosity)
                .filter(|_| supports.verbosity && !rejects(UnsupportedParam::Verbosity)),
            allowed_domains: domains,
        }
    }

    fn start_attempt(&mut self, now: Now, call_id: CallId) {
        let attempt = AttemptId(self.calls.next_attempt);
        self.calls.next_attempt += 1;
        let Some(call) = self.calls.calls.get_mut(&call_id) else {
            return;
        };
        call.attempts += 1;
        let deadline = after(now.instant, self.config.timeout);
        call.state = CallState::Running { attempt, deadline };
        let body = call.plan.body_with(&self.instructions_json);
        let url = format!("{}/responses", self.config.base_url.trim_end_matches('/'));
        log::debug!(
            "openai: attempt {} for call {} ({attempt})",
            call.attempts,
            call.request_id
        );
        self.calls.by_attempt.insert(attempt, call_id);
        self.outputs
            .push_back(Output::Http(HttpRequest { attempt, url, body }));
        let first = call.attempts == 1;
        self.calls.schedule(call_id, deadline);
        let message = if first {
            "searching the web and waiting for OpenAI"
        } else {
            "waiting for OpenAI"
        };
        self.set_progress(now, call_id, message.into());
    }

    pub(super) fn on_http_reply(&mut self, now: Now, attempt: AttemptId, reply: HttpReply) {
        let Some(call_id) = self.calls.by_attempt.remove(&attempt) else {
            log::trace!("ignoring the reply of finished attempt {attempt}");
            return;
        };
        match classify_reply(reply.status, &reply.headers, &reply.body) {
            UpstreamVerdict::Success(body) => {
                let Some(call) = self.calls.calls.get(&call_id) else {
                    return;
                };
                let parsed = parse_answer(
                    &body,
                    self.config.max_citations,
                    &call.plan.model,
                    &call.access_date,
                );
                match parsed {
                    Ok(answer) => self.finish(call_id, Ok(answer)),
                    Err(failure) => self.finish(call_id, Err(failure)),
                }
            }
            UpstreamVerdict::Retry(failure, wait) => {
                self.retry_or_fail(now, call_id, failure, wait)
            }
            UpstreamVerdict::Unsupported(param, failure) => {
                self.drop_param(now, call_id, param, failure)
            }
            UpstreamVerdict::Fail(failure) => self.finish(call_id, Err(failure)),
        }
    }

    pub(super) fn on_http_failed(&mut self, now: Now, attempt: AttemptId, error: TransportError) {
        let Some(call_id) = self.calls.by_attempt.remove(&attempt) else {
            log::trace!("ignoring the failure of finished attempt {attempt}");
            return;
        };
        let (name, retry) = match error.kind {
            TransportErrorKind::Connect => ("connect", true),
            TransportErrorKind::Io => ("io", true),
            TransportErrorKind::Tls => ("tls", false),
            TransportErrorKind::BodyTooLarge => ("body_too_large", false),
            TransportErrorKind::Invalid => ("invalid_request", false),
        };
        let failure = UpstreamFailure::local(name, error.detail);
        if retry {
            self.retry_or_fail(now, call_id, failure, None);
        } else {
            self.finish(call_id, Err(failure));
        }
    }

    pub(super) fn calls_on_timeout(&mut self, now: Now) {
        // What each due call was when the timer fired, before handling any of them.
        let due: Vec<(CallId, CallState, bool)> = self
            .calls
            .take_due(now.instant)
            .into_iter()
            .filter_map(|id| {
                let c = self.calls.calls.get(&id)?;
                let progress_due = c
                    .progress
                    .as_ref()
                    .is_some_and(|p| p.next_at <= now.instant);
                Some((id, c.state, progress_due))
            })
            .collect();
        for (call_id, state, progress_due) in due {
            match state {
                CallState::Running { attempt, deadline } if deadline <= now.instant => {
                    self.calls.by_attempt.remove(&attempt);
                    self.outputs.push_back(Output::Abort(attempt));
                    let secs = self.config.timeout.as_secs_f64();
                    let failure =
                        UpstreamFailure::local("timeout", format!("no reply within {secs} s"));
                    self.retry_or_fail(now, call_id, failure, None);
                }
                CallState::Backoff { until } if until <= now.instant => {
                    self.start_attempt(now, call_id)
                }
                _ => {
                    if progress_due {
                        self.tick_progress(now, call_id);
                    }
                }
            }
        }
    }

    fn retry_or_fail(
        &mut self,
        now: Now,
        call_id: CallId,
        failure: UpstreamFailure,
        wait: Option<Duration>,
    ) {
        log::debug!(
            "openai(client): error attempt={} status={} name={} code={} msg={:?}",
            self.calls.calls.get(&call_id).map_or(0, |c| c.attempts),
            failure.status.map_or("-".into(), |s| s.to_string()),
            failure.name,
            failure.code.as_deref().unwrap_or("-"),
            failure.message
        );
        let max_retries = self.config.max_retries;
        let Some(call) = self.calls.calls.get(&call_id) else {
            return;
        };
        if call.retries >= max_retries {
            self.finish(call_id, Err(failure));
            return;
        }
        let retry = call.retries + 1;
        let wait = wait.unwrap_or_else(|| {
            let exp = BASE_BACKOFF
                .saturating_mul(1u32 << (retry - 1).min(16))
                .min(MAX_BACKOFF);
            // Full jitter over the upper quarter keeps retries spread out but predictable.
            exp.mul_f64(1.0 - 0.25 * self.calls.jitter())
        });
        let reason = match failure.status {
            Some(s) => format!("HTTP {s}"),
            None => failure.name.to_owned(),
        };
        if let Some(call) = self.calls.calls.get_mut(&call_id) {
            call.retries = retry;
            let until = after(now.instant, wait);
            call.state = CallState::Backoff { until };
            self.calls.schedule(call_id, until);
        }
        log::debug!(
            "openai: retry {retry}/{max_retries} in {} ms after {reason}",
            wait.as_millis()
        );
        self.set_progress(
            now,
            call_id,
            format!("retrying in {:.1} s after {reason}", wait.as_secs_f64()),
        );
    }

    fn drop_param(
        &mut self,
        now: Now,
        call_id: CallId,
        param: UnsupportedParam,
        failure: UpstreamFailure,
    ) {
        let Some(call) = self.calls.calls.get_mut(&call_id) else {
            return;
        };
        let had = match param {
            UnsupportedParam::ReasoningEffort => call.plan.effort.take().is_some(),
            UnsupportedParam::Verbosity => call.plan.verbosity.take().is_some(),
        };
        if !had {
            self.finish(call_id, Err(failure));
            return;
        }
        log::debug!(
            "openai: model {} rejects {param:?}; retrying without it and remembering that",
            call.plan.model
        );
        self.calls
            .unsupported
            .entry(call.plan.model.clone())
            .or_default()
            .insert(param);
        self.start_attempt(now, call_id);
    }

    fn finish(&mut self, call_id: CallId, outcome: Result<Answer, UpstreamFailure>) {
        let Some(call) = self.remove_call(call_id) else {
            return;
        };
        let reply = match outcome {
            Ok(answer) => Reply::Success {
                id: call.request_id,
                result: tool_result(&answer, call.version),
            },
            Err(failure) => {
                let mut data = json!({
                    "retries": call.retries,
                    "status": failure.status,
                    "type": failure.error_type,
                    "code": failure.code,
                });
                if self.config.debug {
                    data["message"] = failure.message.clone().into();
                    data["name"] = failure.name.into();
                }
                let advice = failure.advice(&self.config.api_key_env);
                let message = format!("openai responses failed: {}; {advice}", failure.message);
                log::debug!(
                    "tools/call {} failed after {} retries: {}",
                    call.tool,
                    call.retries,
                    failure.name
                );
                Reply::Failure {
                    id: Some(call.request_id),
                    error: RpcError::new(code::UPSTREAM_FAILED, message).with_data(data),
                }
            }
        };
        self.route(call.reply_to, Some(reply));
    }

    /// Forgets a call, aborting its attempt, and lets a queued call take its slot.
    fn remove_call(&mut self, call_id: CallId) -> Option<Call> {
        let call = self.calls.calls.remove(&call_id)?;
        self.calls.by_request.remove(&call.request_id);
        match call.state {
            CallState::Running { attempt, .. } => {
                if self.calls.by_attempt.remove(&attempt).is_some() {
                    self.outputs.push_back(Output::Abort(attempt));
                }
            }
            CallState::Queued => self.calls.queue.retain(|c| *c != call_id),
            CallState::Backoff { .. } => {}
        }
        Some(call)
    }

    /// Starts queued calls while slots are free. Called after anything that frees a slot.
    pub(super) fn start_queued(&mut self, now: Now) {
        while self.calls.running() < self.config.max_inflight {
            let Some(next) = self.calls.queue.pop_front() else {
                break;
            };
            self.start_attempt(now, next);
        }
    }

    /// `notifications/cancelled`: the call ends silently.
    pub(super) fn cancel(&mut self, id: &RequestId, reason: Option<&str>) {
        let Some(&call_id) = self.calls.by_request.get(id) else {
            log::trace!("cancel for unknown or finished request {id}");
            return;
        };
        let reason: String = reason.unwrap_or("-").chars().take(200).collect();
        log::debug!("cancelled requestId={id} reason={reason:?}");
        if let Some(call) = self.remove_call(call_id) {
            // A batch still needs to know this slot will stay empty.
            if let ReplyTo::Batch { .. } = call.reply_to {
                self.route(call.reply_to, None);
            }
        }
    }

    /// Ends every call: with an error reply when `reason` is given, silently otherwise.
    pub(super) fn abort_all(&mut self, reason: Option<&str>) {
        let ids: Vec<CallId> = self.calls.calls.keys().copied().collect();
        for call_id in ids {
            let Some(call) = self.remove_call(call_id) else {
                continue;
            };
            let reply = reason.map(|r| Reply::Failure {
                id: Some(call.request_id),
                error: RpcError::new(code::UPSTREAM_FAILED, format!("openai responses failed: {r}"))
                    .with_data(json!({"retries": call.retries, "status": null, "type": "shutdown", "code": null})),
            });
            self.route(call.reply_to, reply);
        }
    }

    fn set_progress(&mut self, now: Now, call_id: CallId, message: String) {
        let Some(p) = self
            .calls
            .calls
            .get_mut(&call_id)
            .and_then(|c| c.progress.as_mut())
        else {
            return;
        };
        p.message = message;
        if p.next_at <= now.instant {
            self.tick_progress(now, call_id);
        }
    }

    fn tick_progress(&mut self, now: Now, call_id: CallId) {
        let interval = self.config.progress_interval;
        let Some(call) = self.calls.calls.get_mut(&call_id) else {
            return;
        };
        let version = call.version;
        let Some(p) = call.progress.as_mut() else {
            return;
        };
        p.sent += 1;
        p.next_at = after(now.instant, interval);
        let next_at = p.next_at;
        let mut params = json!({ "progressToken": p.token, "progress": p.sent });
        if version.has_progress_message() && !p.message.is_empty() {
            params["message"] = p.message.clone().into();
        }
        self.calls.schedule(call_id, next_at);
        self.write_json(&OutgoingNotification {
            method: "notifications/progress",
            params,
        });
    }
}

/// The `tools/call` result: the JSON text, plus `structuredContent` where the version has it.
fn tool_result(answer: &Answer, version: ProtocolVersion) -> Value {
    let text = serde_json::to_string(answer).unwrap_or_default();
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if version.has_titles_and_structured_output() {
        result["structuredContent"] = serde_json::to_value(answer).unwrap_or(Value::Null);
    }
    result
}

fn progress_token(params: &Map<String, Value>) -> Option<Value> {
    let token = params.get("_meta")?.get("progressToken")?;
    match token {
        Value::String(_) => Some(token.clone()),
        Value::Number(_) if RequestId::from_value(token).is_some() => Some(token.clone()),
        other => {
            log::debug!(
                "ignoring a progressToken that is {}, not a string or an integer",
                kind_of(other)
            );
            None
        }
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}
