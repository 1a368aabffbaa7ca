//! Tasks backed by OpenAI background mode (`tasks.openai_background`): the task *is* a
//! stored OpenAI response. Creating one POSTs the request with `background: true,
//! store: true` and answers with a task id sealed over the response id, its creation
//! time and ttl; `tasks/get`, `tasks/result` and `tasks/cancel` read `GET
//! /responses/{id}` and call `POST /responses/{id}/cancel`. No state is needed to serve
//! a task: any instance holding the same key serves any task, also after a restart.
//! What is kept here is a cache of the last state read per response, so that clients
//! polling fast cost at most one upstream read per poll interval.

use super::batch::ReplyTo;
use super::dispatch::Dispatched;
use super::{Now, Output, Server};
use crate::jsonrpc::{ErrorKind, Reply, Request, RequestId, RpcError};
use crate::mcp::{shape, Method, ProtocolVersion};
use crate::openai::{classify_reply, parse_answer, FailureKind, UpstreamFailure, UpstreamVerdict};
use crate::server::{AttemptId, HttpMethod, HttpReply, HttpRequest, TransportError};
use crate::tasks::{BackgroundRef, Outcome, Status, Task};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Background attempts are numbered from here, apart from the call engine's.
const FIRST_ATTEMPT: u64 = 1 << 62;
/// Tries of one upstream request before its waiters get the failure.
const MAX_TRIES: u32 = 3;
/// Requests one response may hold waiting.
const MAX_WAITING: usize = 16;

/// The background backing's state. See the module docs.
#[derive(Default)]
pub(super) struct Background {
    next: u64,
    /// Upstream requests in flight.
    fetches: BTreeMap<AttemptId, Fetch>,
    /// Responses with a read in flight.
    reading: BTreeSet<String>,
    /// The last state read, per response id; the oldest go first beyond the cap.
    seen: BTreeMap<String, Seen>,
    order: VecDeque<String>,
    /// Requests waiting for a response's next state.
    waiting: BTreeMap<String, Vec<Pending>>,
    /// When to read a response again for its waiters.
    polls: BTreeMap<String, Instant>,
}

struct Fetch {
    kind: Kind,
    deadline: Instant,
    tries: u32,
    request: HttpRequest,
}

enum Kind {
    /// Creating the response of a task-augmented `tools/call`.
    Create {
        pending: Pending,
        created: u64,
        ttl_ms: u64,
        model: String,
        date: String,
    },
    /// Reading a response's state.
    Read { response_id: String },
    /// Cancelling it, for this request.
    Cancel {
        response_id: String,
        pending: Pending,
    },
}

/// A request waiting for an upstream answer.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    reply_to: ReplyTo,
    id: RequestId,
    method: Method,
    version: ProtocolVersion,
    reference: Option<BackgroundRef>,
}

/// A response's last known state.
#[derive(Clone)]
struct Seen {
    status: Status,
    outcome: Option<Outcome>,
    updated: u64,
    read_at: Instant,
}

impl Server {
    /// A task-augmented `tools/call` in background mode: POSTs the request for OpenAI to
    /// run and store; answered once OpenAI has given the response its id.
    pub(super) fn start_background_task(
        &mut self,
        now: Now,
        request_id: RequestId,
        reply_to: ReplyTo,
        version: ProtocolVersion,
        start: super::tasks::TaskStart,
    ) -> Dispatched {
        let super::tasks::TaskStart {
            ttl_ms,
            plan,
            today: date,
            ..
        } = start;
        let settings = &self.config.tasks;
        let ttl = ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(settings.default_ttl)
            .min(settings.max_ttl);
        // The limits the model is known to have are applied; one it refuses later fails
        // the task (the response lives at OpenAI, with no attempt here to repeat).
        let mut plan = plan.plan;
        plan.stream = false;
        let model = plan.model.clone();
        // The body as any call sends it, plus the two fields background mode needs.
        let mut body = plan.body(&self.config.instructions);
        body.pop();
        body.extend_from_slice(br#","background":true,"store":true}"#);
        let pending = Pending {
            reply_to,
            id: request_id,
            method: Method::ToolsCall,
            version,
            reference: None,
        };
        let kind = Kind::Create {
            pending,
            created: now.unix_secs,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            model,
            date,
        };
        let url = self.responses_url(None);
        self.fetch(now, kind, HttpMethod::Post, url, body, 1);
        Dispatched::Pending
    }

    /// `tasks/*` for a background task `reference`.
    pub(super) fn on_background_task(
        &mut self,
        now: Now,
        request: Request,
        method: Method,
        reply_to: ReplyTo,
        version: ProtocolVersion,
        reference: BackgroundRef,
    ) -> Dispatched {
        let pending = Pending {
            reply_to,
            id: request.id,
            method: method.clone(),
            version,
            reference: Some(reference.clone()),
        };
        let seen = self.background.seen.get(&reference.response_id).cloned();
        match method {
            Method::TasksUpdate => Dispatched::answer(
                pending.id,
                Ok(shape::complete(shape::empty_result(), version)),
            ),
            Method::TasksCancel => match seen {
                Some(seen) if seen.status.is_terminal() => {
                    let view = self.view(&reference, &seen);
                    Dispatched::answer(pending.id, cancel_answer(&view, self.poll(), version))
                }
                _ => {
                    let response_id = reference.response_id.clone();
                    let url = self.responses_url(Some((&response_id, "/cancel")));
                    let kind = Kind::Cancel {
                        response_id,
                        pending,
                    };
                    // An empty JSON object: both clients label every POST body JSON.
                    self.fetch(now, kind, HttpMethod::Post, url, b"{}".to_vec(), 1);
                    Dispatched::Pending
                }
            },
            _ => {
                let fresh = seen.as_ref().is_some_and(|s| {
                    s.status.is_terminal()
                        || now.instant < super::after(s.read_at, self.config.tasks.poll_interval)
                });
                let settled = seen.as_ref().is_some_and(|s| s.status.is_terminal());
                match seen {
                    Some(seen) if fresh && (method != Method::TasksResult || settled) => {
                        let view = self.view(&reference, &seen);
                        let answer = answer_for(&pending, &view, self.poll());
                        Dispatched::answer(pending.id, answer)
                    }
                    _ => {
                        let waiting = self
                            .background
                            .waiting
                            .entry(reference.response_id.clone())
                            .or_default();
                        if waiting.len() >= MAX_WAITING {
                            let error = RpcError::new(
                                ErrorKind::Overloaded,
                                "too many requests are waiting on this task; poll tasks/get less often",
                            );
                            return Dispatched::answer(pending.id, Err(error));
                        }
                        waiting.push(pending);
                        if fresh {
                            // A tasks/result on a working task: read again in a while.
                            self.schedule_read(now, &reference.response_id);
                        } else {
                            self.read(now, &reference.response_id);
                        }
                        Dispatched::Pending
                    }
                }
            }
        }
    }

    /// Whether `attempt` is one of the background backing's.
    pub(super) fn owns_background(&self, attempt: AttemptId) -> bool {
        self.background.fetches.contains_key(&attempt)
    }

    /// A background attempt ended.
    pub(super) fn on_background_reply(
        &mut self,
        now: Now,
        attempt: AttemptId,
        reply: Result<HttpReply, TransportError>,
    ) {
        let Some(fetch) = self.background.fetches.remove(&attempt) else {
            return;
        };
        let failure = match &reply {
            Err(e) => {
                let kind = FailureKind::from(e.kind);
                // A create whose request may have reached OpenAI (the connection broke or
                // timed out after sending) is not sent again: a second background response
                // would run, and be paid for, beside the first.
                let maybe_sent =
                    matches!(fetch.kind, Kind::Create { .. }) && kind != FailureKind::Connect;
                Some((
                    kind.is_transient() && !maybe_sent,
                    UpstreamFailure::local(kind, e.detail.clone()),
                ))
            }
            Ok(r) => match classify_reply(r.status, &r.headers, &r.body) {
                UpstreamVerdict::Success(body) => {
                    let today = crate::date::Date::tokyo(now.unix_secs).to_string();
                    let state = self.response_state(&body, &fetch.kind, &today);
                    self.settle(now, fetch.kind, state);
                    return;
                }
                UpstreamVerdict::Retry(f, _) => Some((true, f)),
                UpstreamVerdict::Unsupported(_, f) | UpstreamVerdict::Fail(f) => Some((false, f)),
            },
        };
        if let Some((transient, failure)) = failure {
            if transient && fetch.tries < MAX_TRIES {
                let Fetch {
                    kind,
                    request,
                    tries,
                    ..
                } = fetch;
                self.fetch(
                    now,
                    kind,
                    request.method,
                    request.url,
                    request.body,
                    tries + 1,
                );
                return;
            }
            self.fail(fetch.kind, &failure);
        }
    }

    /// Background deadlines: attempts that took too long, reads due for waiters.
    pub(super) fn on_background_timeout(&mut self, now: Now) {
        let late: Vec<AttemptId> = self
            .background
            .fetches
            .iter()
            .filter(|(_, f)| f.deadline <= now.instant)
            .map(|(a, _)| *a)
            .collect();
        for attempt in late {
            self.outputs.push_back(Output::Abort(attempt));
            let timeout = TransportError {
                kind: crate::server::TransportErrorKind::Io,
                detail: "no answer in time".into(),
            };
            self.on_background_reply(now, attempt, Err(timeout));
        }
        let due: Vec<String> = self
            .background
            .polls
            .iter()
            .filter(|(_, at)| **at <= now.instant)
            .map(|(id, _)| id.clone())
            .collect();
        for response_id in due {
            self.background.polls.remove(&response_id);
            self.read(now, &response_id);
        }
    }

    /// The next background deadline.
    pub(super) fn background_timeout(&self) -> Option<Instant> {
        let fetches = self.background.fetches.values().map(|f| f.deadline);
        fetches.chain(self.background.polls.values().copied()).min()
    }

    /// The client of exchange `x` left: its waiting requests wait no more.
    pub(super) fn forget_background_waiters(&mut self, x: crate::server::ExchangeId) {
        for waiting in self.background.waiting.values_mut() {
            waiting.retain(|p| p.reply_to != ReplyTo::Exchange(x));
        }
    }

    fn poll(&self) -> Duration {
        self.config.tasks.poll_interval
    }

    /// `{base}/responses`, or `{base}/responses/{id}{suffix}`.
    fn responses_url(&self, id: Option<(&str, &str)>) -> String {
        let base = format!("{}/responses", self.config.base_url.trim_end_matches('/'));
        match id {
            None => base,
            Some((id, suffix)) => format!("{base}/{}{suffix}", path_segment(id)),
        }
    }

    /// Reads a response's state now, unless a read is in flight.
    fn read(&mut self, now: Now, response_id: &str) {
        if self.background.reading.contains(response_id) {
            return;
        }
        self.background.reading.insert(response_id.to_owned());
        log::debug!("reading background response {response_id}");
        let url = self.responses_url(Some((response_id, "")));
        let kind = Kind::Read {
            response_id: response_id.to_owned(),
        };
        self.fetch(now, kind, HttpMethod::Get, url, Vec::new(), 1);
    }

    fn schedule_read(&mut self, now: Now, response_id: &str) {
        let at = super::after(now.instant, self.poll());
        self.background
            .polls
            .entry(response_id.to_owned())
            .or_insert(at);
    }

    fn fetch(
        &mut self,
        now: Now,
        kind: Kind,
        method: HttpMethod,
        url: String,
        body: Vec<u8>,
        tries: u32,
    ) {
        self.background.next += 1;
        let attempt = AttemptId(FIRST_ATTEMPT + self.background.next);
        let request = HttpRequest {
            attempt,
            method,
            url,
            body,
        };
        self.outputs.push_back(Output::Http(request.clone()));
        let deadline = super::after(now.instant, self.config.timeout);
        self.background.fetches.insert(
            attempt,
            Fetch {
                kind,
                deadline,
                tries,
                request,
            },
        );
    }

    /// Records what upstream said and answers whoever waited for it.
    fn settle(&mut self, now: Now, kind: Kind, state: ResponseState) {
        match kind {
            Kind::Create {
                pending,
                created,
                ttl_ms,
                ..
            } => {
                let Some(response_id) = state.response_id.clone() else {
                    let failure = UpstreamFailure::local(
                        FailureKind::InvalidResponse,
                        "OpenAI accepted the background request but gave no response id",
                    );
                    let answer = self.tool_failure(&failure, pending.version);
                    self.answer(&pending, answer);
                    return;
                };
                let reference = BackgroundRef {
                    response_id: response_id.clone(),
                    created,
                    ttl_ms,
                };
                let seen = self.remember(now, &response_id, state);
                let view = self.view(&reference, &seen);
                log::debug!("background task created for response {response_id}");
                let result = shape::create_task_result(&view, self.poll(), pending.version);
                self.answer(&pending, Ok(result));
            }
            Kind::Read { response_id } => {
                self.background.reading.remove(&response_id);
                let seen = self.remember(now, &response_id, state);
                let waiting = self
                    .background
                    .waiting
                    .remove(&response_id)
                    .unwrap_or_default();
                let mut still = Vec::new();
                for pending in waiting {
                    if pending.method == Method::TasksResult && !seen.status.is_terminal() {
                        still.push(pending);
                        continue;
                    }
                    let Some(reference) = pending.reference.clone() else {
                        continue;
                    };
                    let view = self.view(&reference, &seen);
                    let answer = answer_for(&pending, &view, self.poll());
                    self.answer(&pending, answer);
                }
                if !still.is_empty() {
                    self.background.waiting.insert(response_id.clone(), still);
                    self.schedule_read(now, &response_id);
                }
            }
            Kind::Cancel {
                response_id,
                pending,
            } => {
                let seen = self.remember(now, &response_id, state);
                if let Some(reference) = pending.reference.clone() {
                    let view = self.view(&reference, &seen);
                    let answer = cancel_answer(&view, self.poll(), pending.version);
                    self.answer(&pending, answer);
                }
                // Those waiting for the result learn how it ended.
                let waiting = self
                    .background
                    .waiting
                    .remove(&response_id)
                    .unwrap_or_default();
                for p in waiting {
                    if let Some(reference) = p.reference.clone() {
                        let view = self.view(&reference, &seen);
                        let answer = answer_for(&p, &view, self.poll());
                        self.answer(&p, answer);
                    }
                }
            }
        }
    }

    /// Upstream failed for good: whoever waited gets the failure.
    fn fail(&mut self, kind: Kind, failure: &UpstreamFailure) {
        let gone = failure.status == Some(404);
        let waiting: Vec<Pending> = match kind {
            Kind::Create { pending, .. } => {
                let answer = self.tool_failure(failure, pending.version);
                self.answer(&pending, answer);
                return;
            }
            Kind::Read { response_id } => {
                self.background.reading.remove(&response_id);
                self.background.polls.remove(&response_id);
                self.background
                    .waiting
                    .remove(&response_id)
                    .unwrap_or_default()
            }
            Kind::Cancel { pending, .. } => vec![pending],
        };
        for pending in waiting {
            let error = if gone {
                RpcError::new(
                    ErrorKind::InvalidParams,
                    "task not found: OpenAI no longer has its stored response (it keeps them for a limited time); call the tool again",
                )
            } else {
                RpcError::new(
                    ErrorKind::UpstreamFailed,
                    format!(
                        "reading the task from OpenAI failed: {}; poll again in a moment",
                        failure.message
                    ),
                )
            };
            self.answer(&pending, Err(error));
        }
    }

    /// A `tools/call` that could not start its background response, as the version
    /// shapes a tool failure.
    fn tool_failure(
        &self,
        failure: &UpstreamFailure,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        self.call_result(Err(failure.clone()), 0, &one_attempt(None), version)
    }

    /// The state `body` gives. A finished answer is shaped for the creating request's
    /// version, or for 2025-11-25 when read later; readers of another era get it
    /// reshaped (`shape::task_state`).
    fn response_state(
        &self,
        body: &crate::openai::ResponseBody<'_>,
        kind: &Kind,
        today: &str,
    ) -> ResponseState {
        let response_id = body.id.get().map(str::to_owned);
        let (status, outcome) = match body.status.get().unwrap_or("completed") {
            "queued" | "in_progress" => (Status::Working, None),
            "cancelled" => (Status::Cancelled, None),
            _ => {
                let (model, date, version) = match kind {
                    Kind::Create {
                        model,
                        date,
                        pending,
                        ..
                    } => (model.as_str(), date.as_str(), pending.version),
                    _ => {
                        let answer_model = self
                            .config
                            .profiles
                            .for_tool(crate::tools::Tool::Answer)
                            .map(|p| p.model.as_str())
                            .unwrap_or_default();
                        (answer_model, today, ProtocolVersion::V2025_11_25)
                    }
                };
                let answer = parse_answer(body, self.config.max_citations, model, date);
                let report = one_attempt(Some(crate::openai::Usage::of(body)));
                let result = self.call_result(answer, 0, &report, version);
                (Status::Completed, Some(Outcome::new(result)))
            }
        };
        ResponseState {
            response_id,
            status,
            outcome,
        }
    }

    fn answer(&mut self, pending: &Pending, answer: Result<Value, RpcError>) {
        let reply = match answer {
            Ok(result) => Reply::Success {
                id: pending.id.clone(),
                result,
            },
            Err(error) => Reply::Failure {
                id: Some(pending.id.clone()),
                error,
            },
        };
        self.route(pending.reply_to, Some(reply));
    }

    fn remember(&mut self, now: Now, response_id: &str, state: ResponseState) -> Seen {
        let seen = Seen {
            status: state.status,
            outcome: state.outcome,
            updated: now.unix_secs,
            read_at: now.instant,
        };
        let b = &mut self.background;
        if b.seen
            .insert(response_id.to_owned(), seen.clone())
            .is_none()
        {
            b.order.push_back(response_id.to_owned());
        }
        while b.order.len() > self.config.tasks.max_tasks {
            if let Some(old) = b.order.pop_front() {
                b.seen.remove(&old);
            }
        }
        seen
    }

    /// A task as the shapes want it, from its reference and its last known state.
    fn view(&self, reference: &BackgroundRef, seen: &Seen) -> Task<()> {
        let id = self.tasks.seal_background(reference);
        let ttl = Duration::from_millis(reference.ttl_ms);
        Task::view(
            id,
            (reference.created, seen.updated.max(reference.created)),
            ttl,
            seen.read_at,
            seen.status,
            seen.outcome.clone(),
        )
    }
}

/// What one read of a response says.
struct ResponseState {
    response_id: Option<String>,
    status: Status,
    outcome: Option<Outcome>,
}

/// What one upstream request cost, for the result's usage `_meta`.
fn one_attempt(usage: Option<crate::openai::Usage>) -> crate::calls::Report {
    crate::calls::Report {
        usage,
        adjustments: Vec::new(),
        model: Default::default(),
        attempts: 1,
        wall: Duration::ZERO,
    }
}

/// `tasks/get` or `tasks/result` for a task in `view`.
fn answer_for(pending: &Pending, view: &Task<()>, poll: Duration) -> Result<Value, RpcError> {
    match pending.method {
        Method::TasksResult => super::tasks::payload(view.outcome.as_ref(), &view.id),
        _ => Ok(shape::task_state(view, poll, pending.version)),
    }
}

/// `tasks/cancel`'s answer once the task is in `view`.
fn cancel_answer(
    view: &Task<()>,
    poll: Duration,
    version: ProtocolVersion,
) -> Result<Value, RpcError> {
    if version.is_modern() {
        return Ok(shape::complete(shape::empty_result(), version));
    }
    if view.status == Status::Cancelled {
        return Ok(shape::task_state(view, poll, version));
    }
    Err(RpcError::new(
        ErrorKind::InvalidParams,
        format!(
            "task {} is already {} and cannot be cancelled",
            view.id,
            view.status.as_str()
        ),
    ))
}

/// A response id as one URL path segment (ids are `resp_…`; anything else is escaped).
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}
