//! How a call ends: taken off the engine's records (its attempt aborted, its slot or
//! fetch given back) and reported as the one event its work calls for.

use super::call::{Call, CallState, Ending, Incoming};
use super::work::{Stored, StoredState, Work};
use super::CallId;
use super::{CallEngine, CallEvent, ModelSource, Report};
use crate::openai::stream::StreamEnd;
use crate::openai::{UpstreamFailure, Usage};

/// Bytes of a request body counted as one input token in the estimate of a cancelled
/// call: English text runs about four characters a token, and JSON punctuation and the
/// tool definitions fewer, so this errs toward charging more, never less.
pub const BYTES_PER_TOKEN: u64 = 3;

impl<C: Clone> CallEngine<C> {
    /// Ends call `id` with `failure`, whatever its work.
    pub(super) fn fail(&mut self, id: CallId, failure: UpstreamFailure) {
        self.finish_as(id, Ending::Failed(failure));
    }

    /// Ends call `id` as `ending` says.
    pub(super) fn finish_as(&mut self, id: CallId, ending: Ending) {
        let Some(call) = self.remove(id) else {
            return;
        };
        if let Ending::Failed(failure) | Ending::Answer(Err(failure), _) = &ending {
            log::debug!(
                "call {} failed after {} retries: {}",
                call.key,
                call.retries,
                failure.kind
            );
        }
        let event = self.ended(call, ending);
        self.events.push_back(event);
    }

    /// The event that reports `call`'s end.
    pub(super) fn ended(&self, call: Call<C>, ending: Ending) -> CallEvent<C> {
        let mut estimated = false;
        let usage = match &ending {
            Ending::Answer(_, usage) => usage.clone(),
            Ending::Stored(Stored {
                state:
                    StoredState::Ended(_, usage)
                    | StoredState::Cancelled {
                        usage: Some(usage), ..
                    },
                ..
            }) => Some(Usage::clone(usage)),
            // A background run OpenAI took on: what it was sent, for the hold its
            // client's spend carries while it runs.
            Ending::Stored(_) if call.work == Work::Create => {
                estimated = true;
                Some(Usage {
                    input_tokens: (call.sent_bytes as u64).div_ceil(BYTES_PER_TOKEN),
                    ..Usage::default()
                })
            }
            Ending::Stored(_) | Ending::Model(_) | Ending::Fetched(_) | Ending::Failed(_) => None,
        };
        let (answers, models, fetches) = (
            call.work == Work::Answer,
            matches!(call.work, Work::Model(_)),
            matches!(call.work, Work::Fetch(_)),
        );
        let (context, retries, report) = self.report(call, usage, estimated);
        match ending {
            Ending::Answer(outcome, _) => CallEvent::Finished {
                context,
                outcome,
                retries,
                report,
            },
            Ending::Model(date) => CallEvent::ModelDate {
                context,
                outcome: Ok(date),
            },
            Ending::Failed(failure) if answers => CallEvent::Finished {
                context,
                outcome: Err(failure),
                retries,
                report,
            },
            Ending::Failed(failure) if models => CallEvent::ModelDate {
                context,
                outcome: Err(failure),
            },
            Ending::Fetched(body) => CallEvent::Fetched {
                context,
                outcome: Ok(body),
            },
            Ending::Failed(failure) if fetches => CallEvent::Fetched {
                context,
                outcome: Err(failure),
            },
            Ending::Failed(failure) => CallEvent::Stored {
                context,
                outcome: Err(failure),
                retries,
                report,
            },
            Ending::Stored(stored) => CallEvent::Stored {
                context,
                outcome: Ok(stored),
                retries,
                report,
            },
        }
    }

    /// The event of `call` stopped without an outcome. An answer whose request reached
    /// OpenAI was run there all the same (the model, its searches): it is reported with
    /// what OpenAI said it used, when a terminal event had said so, else with an
    /// estimate that counts what is known to have been spent: the input it was sent
    /// ([`BYTES_PER_TOKEN`]) and the searches the stream had begun.
    pub(super) fn dropped(&self, call: Call<C>) -> CallEvent<C> {
        let ran = call.work == Work::Answer && call.attempts > 0;
        if !ran {
            return CallEvent::Dropped {
                context: call.context,
                spent: None,
            };
        }
        let (usage, estimated) = match &call.incoming {
            Some(Incoming::Ended(StreamEnd::Answer(_, usage))) => (usage.clone(), false),
            incoming => {
                let searches = match incoming {
                    Some(Incoming::Stream { fold, .. }) => fold.searches_begun(),
                    _ => 0,
                };
                let usage = Usage {
                    input_tokens: (call.sent_bytes as u64).div_ceil(BYTES_PER_TOKEN),
                    web_searches: searches,
                    ..Usage::default()
                };
                (usage, true)
            }
        };
        let (context, _, report) = self.report(call, Some(usage), estimated);
        CallEvent::Dropped {
            context,
            spent: Some(report),
        }
    }

    /// What `call` used (`usage`, OpenAI's or, `estimated`, ours), with its context and
    /// the retries it took.
    fn report(&self, call: Call<C>, usage: Option<Usage>, estimated: bool) -> (C, u32, Report) {
        let now = self.last_now.unwrap_or(call.admitted);
        // A service that prices a request by its effort (Parallel) does not echo it back.
        let usage = usage.map(|usage| Usage {
            effort: call.plan.effort,
            ..usage
        });
        let report = Report {
            usage,
            adjustments: call.adjustments,
            model: ModelSource::of(call.plan),
            attempts: call.attempts,
            wall: now.saturating_duration_since(call.admitted),
            upstream: call.upstream,
            estimated,
        };
        (call.context, call.retries, report)
    }

    /// Forgets a call, aborting its attempt if one is still on record.
    pub(super) fn remove(&mut self, id: CallId) -> Option<Call<C>> {
        let call = self.calls.remove(&id)?;
        self.by_request.remove(&call.key);
        if matches!(call.work, Work::Fetch(_)) {
            self.identity_fetches -= 1;
        }
        if !call.work.takes_slot() {
            self.fetches -= 1;
        } else if call.state != CallState::Queued {
            self.slots -= 1;
        }
        match call.state {
            CallState::Running { attempt, .. } => {
                if self.by_attempt.remove(&attempt).is_some() {
                    self.events.push_back(CallEvent::Abort(attempt));
                }
            }
            CallState::Queued => self.queue.retain(|c| *c != id),
            CallState::Backoff { .. } => {}
        }
        Some(call)
    }
}
