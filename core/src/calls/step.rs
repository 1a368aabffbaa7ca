//! How the engine moves a call on: attempt outcomes, deadlines and progress (what a failed
//! attempt does next is `recover.rs`).

use super::call::{CallState, Ending, Incoming};
use super::work::{self, Stored, Work};
use super::CallId;
use super::{CallEngine, CallEvent};
use crate::openai::{
    classify_reply, parse_answer, FailureKind, ResponseBody, UpstreamFailure, UpstreamVerdict,
    Usage,
};

use crate::io::{after, AttemptId, Destination, HttpReply, HttpRequest, Now, TransportError};
use crate::metrics::AttemptEnd;
use std::collections::BTreeSet;
use std::time::Instant;

impl<C: Clone> CallEngine<C> {
    /// An attempt got a whole HTTP reply. Replies of attempts no longer on record
    /// (aborted, timed out, cancelled) are ignored.
    pub fn handle_reply(&mut self, now: Now, attempt: AttemptId, reply: HttpReply) {
        self.last_now = Some(now.instant);
        let Some(id) = self.end_attempt(attempt) else {
            log::trace!("ignoring the reply of finished attempt {attempt}");
            return;
        };
        self.attempt_traced(now.instant, id, (Some(reply.status), None));
        self.on_reply(now, id, reply);
        self.start_queued(now);
        self.settle();
    }

    /// Reads a whole reply for call `id`, whose attempt is already off the record.
    pub(super) fn on_reply(&mut self, now: Now, id: CallId, reply: HttpReply) {
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        if call.upstream.status.is_none() {
            *crate::metrics::entry(&mut self.attempt_ends, AttemptEnd::Status(reply.status)) += 1;
        }
        call.upstream = crate::openai::Upstream::of(reply.status, &reply.headers);
        let call = &*call;
        let ok = (200..300).contains(&reply.status);
        if let Work::Fetch(_) = call.work {
            return self.on_fetched(now, id, reply);
        }
        let ending = match &call.work {
            // A stored response's own status decides, even `failed`: reading it again
            // would show the same ending.
            Work::Read(_) | Work::Cancel(_) if ok => Some(match ResponseBody::parse(&reply.body) {
                Ok(body) => Ending::Stored(Stored::read(
                    &body,
                    self.settings.max_citations,
                    &call.plan.model,
                    &call.access_date,
                )),
                Err(_) => Ending::Failed(work::not_json(reply.status)),
            }),
            Work::Model(_) if ok => Some(match work::shutdown_date(reply.status, &reply.body) {
                Ok(date) => Ending::Model(date),
                Err(failure) => Ending::Failed(failure),
            }),
            _ => None,
        };
        if let Some(ending) = ending {
            return self.finish_as(id, ending);
        }
        match classify_reply(reply.status, &reply.headers, &reply.body) {
            UpstreamVerdict::Success(body) => {
                let ending = if call.work.is_stored() {
                    Ending::Stored(Stored::read(
                        &body,
                        self.settings.max_citations,
                        &call.plan.model,
                        &call.access_date,
                    ))
                } else {
                    let answer = parse_answer(
                        &body,
                        self.settings.max_citations,
                        &call.plan.model,
                        &call.access_date,
                    );
                    Ending::Answer(answer, Some(Usage::of(&body)))
                };
                self.finish_as(id, ending);
            }
            UpstreamVerdict::Retry(failure, wait) => self.retry_or_fail(now, id, failure, wait),
            UpstreamVerdict::Unsupported(rejection, failure) => {
                self.fit_limit(now, id, rejection, failure)
            }
            UpstreamVerdict::Fail(failure) => self.fail(id, failure),
        }
    }

    /// A reply from the identity provider: a 2xx body is the document; its error bodies
    /// are no OpenAI errors, so the status alone decides (429 and 5xx are retried).
    fn on_fetched(&mut self, now: Now, id: CallId, reply: HttpReply) {
        let status = reply.status;
        if (200..300).contains(&status) {
            return self.finish_as(id, Ending::Fetched(reply.body));
        }
        let mut failure = UpstreamFailure::local(
            FailureKind::UnexpectedStatus,
            format!("answered HTTP {status}"),
        );
        failure.status = Some(status);
        if status == 429 || status >= 500 {
            self.retry_or_fail(now, id, failure, None);
        } else {
            self.fail(id, failure);
        }
    }

    /// An attempt failed without a reply.
    pub fn handle_failure(&mut self, now: Now, attempt: AttemptId, error: TransportError) {
        self.last_now = Some(now.instant);
        let Some(id) = self.end_attempt(attempt) else {
            log::trace!("ignoring the failure of finished attempt {attempt}");
            return;
        };
        let failure = UpstreamFailure::local(FailureKind::from(error.kind), error.detail);
        let status = self.calls.get(&id).and_then(|c| c.upstream.status);
        self.attempt_traced(now.instant, id, (status, Some(failure.kind.as_str())));
        self.transport_failed(now, id, failure);
        self.start_queued(now);
        self.settle();
    }

    /// The deadline from [`CallEngine::poll_timeout`] has passed: attempts time out,
    /// backoffs end, progress is reported.
    pub fn handle_timeout(&mut self, now: Now) {
        self.last_now = Some(now.instant);
        let ids: BTreeSet<CallId> = self
            .timers
            .take_due(now.instant)
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        // What each due call was when the timer fired, before handling any of them.
        let due: Vec<(CallId, CallState, bool)> = ids
            .into_iter()
            .filter_map(|id| {
                let call = self.calls.get(&id)?;
                let progress_due = call
                    .progress
                    .as_ref()
                    .is_some_and(|p| p.next_at <= now.instant);
                Some((id, call.state, progress_due))
            })
            .collect();
        for (id, state, progress_due) in due {
            match state {
                CallState::Running {
                    attempt, deadline, ..
                } if deadline <= now.instant => self.attempt_deadline(now, id, attempt),
                CallState::Running {
                    attempt,
                    idle_at: Some(idle_at),
                    ..
                } if idle_at <= now.instant => self.idle_check(now, id, attempt),
                CallState::Backoff { until } if until <= now.instant => self.start_attempt(now, id),
                _ if progress_due => self.tick_progress(now, id),
                _ => {}
            }
        }
        self.start_queued(now);
        self.settle();
    }

    /// An attempt reached its deadline: a stream that already ended applies its outcome;
    /// anything else timed out.
    fn attempt_deadline(&mut self, now: Now, id: CallId, attempt: AttemptId) {
        self.end_attempt(attempt);
        self.events.push_back(CallEvent::Abort(attempt));
        let incoming = self.calls.get_mut(&id).and_then(|c| c.incoming.take());
        let status = self.calls.get(&id).and_then(|c| c.upstream.status);
        if let Some(Incoming::Ended(outcome)) = incoming {
            self.attempt_traced(now.instant, id, (status, None));
            return self.apply(now, id, outcome);
        }
        self.attempt_traced(now.instant, id, (status, Some("timeout")));
        let secs = self.settings.timeout.as_secs_f64();
        let failure =
            UpstreamFailure::local(FailureKind::Timeout, format!("no reply within {secs} s"));
        self.transport_failed(now, id, failure);
    }

    /// The idle deadline came: an attempt silent for the whole idle timeout fails (and is
    /// retried); one that received bytes meanwhile gets a new idle deadline.
    fn idle_check(&mut self, now: Now, id: CallId, attempt: AttemptId) {
        let idle = self.settings.idle_timeout;
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        let silent_until = after(call.last_byte, idle);
        if silent_until > now.instant {
            if let CallState::Running {
                deadline, idle_at, ..
            } = &mut call.state
            {
                *idle_at = Some(silent_until);
                let at = (*deadline).min(silent_until);
                self.timers.schedule(id, at);
            }
            return;
        }
        let service = call.plan.api.name();
        self.end_attempt(attempt);
        self.events.push_back(CallEvent::Abort(attempt));
        let status = self.calls.get(&id).and_then(|c| c.upstream.status);
        self.attempt_traced(now.instant, id, (status, Some("timeout")));
        let secs = idle.as_secs_f64();
        let failure = UpstreamFailure::local(
            FailureKind::Io,
            format!("no data from {service} for {secs} s"),
        );
        self.transport_failed(now, id, failure);
    }

    /// Starts a new attempt for call `id`.
    pub(super) fn start_attempt(&mut self, now: Now, id: CallId) {
        let attempt = AttemptId(self.next_attempt);
        self.next_attempt += 1;
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        call.attempts += 1;
        call.upstream = crate::openai::Upstream::default();
        let service = call.plan.api.name();
        // A document of the identity provider is small: a request never waits on it
        // longer than the gate's bound.
        let timeout = match call.work {
            Work::Fetch(_) => self.settings.timeout.min(crate::oauth::MAX_WAIT),
            _ => self.settings.timeout,
        };
        let deadline = after(now.instant, timeout);
        // A streamed answer sends events all along, so silence means a stalled connection.
        // A whole read is silent until the service has the whole answer (a long reasoning
        // answer, Parallel's `high` tier: a minute or more), so only its deadline bounds it.
        let idle_at = call
            .plan
            .stream
            .then(|| after(now.instant, self.settings.idle_timeout));
        call.state = CallState::Running {
            attempt,
            deadline,
            idle_at,
        };
        call.incoming = None;
        call.last_byte = now.instant;
        let (method, url, body) =
            call.work
                .request(&self.settings.base, &self.settings.url, || {
                    call.plan.body_with(&self.settings.instructions_json)
                });
        log::debug!(
            "openai: attempt {} for call {} ({attempt})",
            call.attempts,
            call.key
        );
        call.sent_bytes = body.len();
        if self.settings.trace_attempts {
            call.traced = Some((now.instant, method, url.clone()));
        }
        let first = call.attempts == 1;
        if first && call.work.takes_slot() {
            self.slots += 1;
        }
        self.by_attempt.insert(attempt, id);
        let to = match call.work {
            Work::Fetch(_) => Destination::IdentityProvider,
            _ => Destination::Provider,
        };
        self.events.push_back(CallEvent::Send(HttpRequest {
            attempt,
            method,
            url,
            body,
            to,
        }));
        self.timers
            .schedule(id, idle_at.map_or(deadline, |idle| deadline.min(idle)));
        // One allocation of the right size, as the message was before it named the service.
        let doing = if first {
            "searching the web and waiting for "
        } else {
            "waiting for "
        };
        let mut message = String::with_capacity(doing.len() + service.len());
        message.push_str(doing);
        message.push_str(service);
        self.set_progress(now, id, message);
    }

    /// With traces on, reports the end of call `id`'s running attempt at `now` (once per
    /// attempt: its start is taken).
    pub(super) fn attempt_traced(
        &mut self,
        now: Instant,
        id: CallId,
        (status, failure): (Option<u16>, Option<&'static str>),
    ) {
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        let Some((started, method, url)) = call.traced.take() else {
            return;
        };
        let attempt = super::AttemptTrace {
            started,
            ended: now,
            method,
            url,
            status,
            failure,
            resend: call.attempts.saturating_sub(1),
        };
        let context = call.context.clone();
        self.events
            .push_back(CallEvent::Attempted { context, attempt });
    }

    /// Takes `attempt` off the record; the call it was for, if any.
    pub(super) fn end_attempt(&mut self, attempt: AttemptId) -> Option<CallId> {
        self.by_attempt.remove(&attempt)
    }

    /// Starts queued calls while slots are free.
    pub(super) fn start_queued(&mut self, now: Now) {
        while self.slots < self.settings.max_inflight {
            let Some(next) = self.queue.pop_front() else {
                break;
            };
            self.start_attempt(now, next);
        }
    }

    /// An attempt failed without a usable reply: retried when the work allows it.
    fn transport_failed(&mut self, now: Now, id: CallId, failure: UpstreamFailure) {
        // A reply that broke off after its head was counted by its status.
        if self
            .calls
            .get(&id)
            .is_some_and(|c| c.upstream.status.is_none())
        {
            let end = AttemptEnd::Transport(failure.kind.as_str());
            *crate::metrics::entry(&mut self.attempt_ends, end) += 1;
        }
        let retries = self
            .calls
            .get(&id)
            .is_some_and(|c| c.work.retries_after(failure.kind));
        if retries {
            self.retry_or_fail(now, id, failure, None);
        } else {
            self.fail(id, failure);
        }
    }
}
