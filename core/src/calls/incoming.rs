//! An attempt's reply as it arrives: its head, body chunks, its end. A 2xx event stream
//! (`"stream": true`) is read event by event into a [`StreamFold`], which keeps what the
//! answer needs and says what the model is doing (progress); anything else is gathered
//! whole (up to [`MAX_BODY_BYTES`]) and read at its end like a whole reply.
//!
//! After a stream's terminal event the outcome waits, for at most [`END_GRACE`], for the
//! body to end, so that the connection can carry the next call; then it is applied.

use super::call::{CallState, Ending, Incoming};
use super::CallId;
use super::{CallEngine, CallEvent};
use crate::http::MAX_BODY_BYTES;
use crate::io::{after, AttemptId, HttpHead, HttpReply, Now};
use crate::metrics::AttemptEnd;
use crate::openai::stream::{Folded, StreamEnd, StreamFold, StreamHint};
use crate::openai::{FailureKind, UpstreamFailure};
use crate::sse::SseReader;
use std::time::Duration;

/// Longest line accepted in an event stream.
pub const MAX_SSE_LINE: usize = 4 * 1024 * 1024;
/// Largest event accepted in an event stream (the terminal event holds the whole
/// response).
pub const MAX_SSE_EVENT: usize = 16 * 1024 * 1024;
/// How long the body may take to end after the terminal event.
pub const END_GRACE: Duration = Duration::from_secs(1);

impl<C: Clone> CallEngine<C> {
    /// The head of an attempt's reply arrived; its body follows.
    pub fn handle_head(&mut self, now: Now, attempt: AttemptId, head: HttpHead) {
        self.last_now = Some(now.instant);
        let Some(id) = self.running_call(attempt) else {
            return;
        };
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        // Until the head, `last_byte` is the attempt's start.
        let first_byte = now.instant.saturating_duration_since(call.last_byte);
        call.last_byte = now.instant;
        call.upstream = crate::openai::Upstream::of(head.status, &head.headers);
        *crate::metrics::entry(&mut self.attempt_ends, AttemptEnd::Status(head.status)) += 1;
        let streamed = crate::http::is_event_stream(head.status, &head.headers);
        if !streamed {
            log::debug!(
                "openai: attempt {attempt} for call {}: status {}, first byte after {} ms",
                call.key,
                head.status,
                first_byte.as_millis()
            );
        }
        call.incoming = Some(if streamed {
            Incoming::Stream {
                reader: SseReader::new(MAX_SSE_LINE, MAX_SSE_EVENT),
                fold: StreamFold::new(),
                events: 0,
                first_byte,
            }
        } else {
            Incoming::Whole {
                status: head.status,
                headers: head.headers,
                body: Vec::new(),
            }
        });
        self.settle();
    }

    /// Body bytes of an attempt's reply arrived.
    pub fn handle_body(&mut self, now: Now, attempt: AttemptId, bytes: &[u8]) {
        self.last_now = Some(now.instant);
        let Some(id) = self.running_call(attempt) else {
            return;
        };
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        call.last_byte = now.instant;
        let mut hints = Vec::new();
        let mut failure = None;
        let mut ended = false;
        match &mut call.incoming {
            Some(Incoming::Whole { body, .. }) => {
                if body.len() + bytes.len() > MAX_BODY_BYTES {
                    failure = Some(UpstreamFailure::local(
                        FailureKind::BodyTooLarge,
                        format!("the response body is larger than {MAX_BODY_BYTES} bytes"),
                    ));
                } else {
                    body.extend_from_slice(bytes);
                }
            }
            Some(Incoming::Stream {
                reader,
                fold,
                events,
                ..
            }) => {
                reader.push(bytes);
                while let Some(event) = reader.next_event() {
                    match event {
                        Ok(event) => {
                            *events += 1;
                            match fold.feed(&event) {
                                Folded::More(hint) => hints.extend(hint),
                                Folded::End => {
                                    ended = true;
                                    break;
                                }
                            }
                        }
                        Err(e) => {
                            failure = Some(UpstreamFailure::local(
                                FailureKind::InvalidResponse,
                                e.to_string(),
                            ));
                            break;
                        }
                    }
                }
            }
            // More bytes after the terminal event (the rest of the body): nothing to do.
            Some(Incoming::Ended(_)) => {}
            None => {
                failure = Some(UpstreamFailure::local(
                    FailureKind::Io,
                    "the reply's body came before its head",
                ))
            }
        }
        for hint in hints {
            self.set_progress_hint(now, id, &hint);
        }
        if let Some(failure) = failure {
            self.abort_attempt(attempt);
            self.fail(id, failure);
        } else if ended {
            self.stream_ended(now, id);
        }
        self.start_queued(now);
        self.settle();
    }

    /// An attempt's reply ended (the body is complete, or the server closed it).
    pub fn handle_end(&mut self, now: Now, attempt: AttemptId) {
        self.last_now = Some(now.instant);
        let Some(id) = self.end_attempt(attempt) else {
            log::trace!("ignoring the end of finished attempt {attempt}");
            return;
        };
        let status = self.calls.get(&id).and_then(|c| c.upstream.status);
        self.attempt_traced(now.instant, id, (status, None));
        let incoming = self.calls.get_mut(&id).and_then(|c| c.incoming.take());
        match incoming {
            Some(Incoming::Whole {
                status,
                headers,
                body,
            }) => self.on_reply(
                now,
                id,
                HttpReply {
                    status,
                    headers,
                    body,
                },
            ),
            Some(Incoming::Stream {
                mut reader,
                mut fold,
                mut events,
                first_byte,
            }) => {
                reader.finish();
                while let Some(Ok(event)) = reader.next_event() {
                    events += 1;
                    if fold.feed(&event) == Folded::End {
                        break;
                    }
                }
                log::debug!(
                    "openai: attempt {attempt} body ended before a terminal event: {events} events, first byte after {} ms",
                    first_byte.as_millis()
                );
                let outcome = self.finish_stream(id, fold);
                self.apply(now, id, outcome);
            }
            Some(Incoming::Ended(outcome)) => self.apply(now, id, outcome),
            None => {
                let failure = UpstreamFailure::local(
                    FailureKind::Io,
                    "the connection closed before the reply's head",
                );
                self.retry_or_fail(now, id, failure, None);
            }
        }
        self.start_queued(now);
        self.settle();
    }

    /// The call whose running attempt is `attempt`, if the engine still waits for it.
    fn running_call(&self, attempt: AttemptId) -> Option<CallId> {
        let id = self.by_attempt.get(&attempt).copied();
        if id.is_none() {
            log::trace!("ignoring reply bytes of finished attempt {attempt}");
        }
        id
    }

    /// The terminal event came: keep the outcome and give the body a moment to end.
    fn stream_ended(&mut self, now: Now, id: CallId) {
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        let Some(Incoming::Stream {
            fold,
            events,
            first_byte,
            ..
        }) = call.incoming.take()
        else {
            return;
        };
        log::debug!(
            "openai: call {} stream complete: {events} events, first byte after {} ms",
            call.key,
            first_byte.as_millis()
        );
        let outcome = self.finish_stream(id, fold);
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        call.incoming = Some(Incoming::Ended(outcome));
        if let CallState::Running { deadline, .. } = &mut call.state {
            *deadline = (*deadline).min(after(now.instant, END_GRACE));
            let at = *deadline;
            self.timers.schedule(id, at);
        }
    }

    fn finish_stream(&self, id: CallId, fold: StreamFold) -> StreamEnd {
        match self.calls.get(&id) {
            Some(call) => fold.finish(
                self.settings.max_citations,
                &call.plan.model,
                &call.access_date,
            ),
            None => fold.finish(self.settings.max_citations, "", ""),
        }
    }

    /// Applies a stream's outcome to call `id`.
    pub(super) fn apply(&mut self, now: Now, id: CallId, outcome: StreamEnd) {
        match outcome {
            StreamEnd::Answer(answer, usage) => {
                self.finish_as(id, Ending::Answer(Ok(answer), Some(usage)))
            }
            StreamEnd::Retry(failure) => self.retry_or_fail(now, id, failure, None),
            StreamEnd::Fail(failure) => self.fail(id, failure),
        }
    }

    /// Aborts `attempt` (its connection closes) and forgets it.
    fn abort_attempt(&mut self, attempt: AttemptId) {
        if self.end_attempt(attempt).is_some() {
            self.events.push_back(CallEvent::Abort(attempt));
        }
    }

    /// Reports what the model is doing, no more often than [`MIN_HINT_GAP`](super::call::MIN_HINT_GAP) allows.
    fn set_progress_hint(&mut self, now: Now, id: CallId, hint: &StreamHint) {
        let message = match hint {
            StreamHint::Searching(Some(query)) => {
                let query: String = query.chars().take(120).collect();
                format!("searching: {query}")
            }
            StreamHint::Searching(None) => "searching the web".to_owned(),
            StreamHint::Reading(host) => format!("reading {host}"),
            StreamHint::Writing => "writing the answer".to_owned(),
        };
        let generic = matches!(hint, StreamHint::Searching(None));
        self.set_progress_soon(now, id, message, generic);
    }
}
