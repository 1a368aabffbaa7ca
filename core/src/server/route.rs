//! Where replies go: the one place that drains the call engine's events, and the writing
//! of frames in the client's framing.

use super::routing::{Asker, Context, Dispatched, ReplyTo};
use super::{ExchangeOut, Output, Server};
use crate::calls::CallEvent;
use crate::framing::{encode, Framing};
use crate::jsonrpc::Reply;
use crate::mcp::failure::ToolFailure;
use crate::mcp::{shape, ProtocolVersion};
use crate::openai::pricing::Estimate;

use serde::Serialize;

impl Server {
    /// Performs everything the call engine asked for, in order.
    pub(super) fn drain_calls(&mut self) {
        while let Some(event) = self.calls.poll_event() {
            match event {
                CallEvent::Send(request) => self.outputs.push_back(Output::Http(request)),
                CallEvent::Abort(attempt) => self.outputs.push_back(Output::Abort(attempt)),
                CallEvent::Progress {
                    context: Context::Call(context),
                    token,
                    progress,
                    message,
                } => self.on_progress(&context, &token, progress, &message),
                CallEvent::Finished {
                    context: Context::Call(context),
                    outcome,
                    retries,
                    report,
                } => self.on_call_finished(&context, outcome, retries, &report),
                CallEvent::Stored {
                    context: Context::Background(job),
                    outcome,
                    retries,
                    report,
                } => {
                    if let Some(now) = self.last_now {
                        self.on_stored(now, job, outcome, retries, &report);
                    }
                }
                CallEvent::Dropped {
                    context: Context::Call(context),
                    spent,
                } => self.on_call_dropped(&context, spent.as_ref()),
                CallEvent::ModelDate {
                    context: Context::Lookup(model),
                    outcome,
                } => {
                    if let Some(now) = self.last_now {
                        self.on_model_date(now, &model, outcome);
                    }
                }
                CallEvent::Fetched {
                    context: Context::Identity,
                    outcome,
                } => {
                    if let Some(now) = self.last_now {
                        self.on_fetched(now, outcome);
                    }
                }
                // Background work is dropped only at exit; progress goes to calls only.
                CallEvent::Dropped { .. }
                | CallEvent::Fetched { .. }
                | CallEvent::ModelDate { .. }
                | CallEvent::Progress { .. }
                | CallEvent::Finished { .. }
                | CallEvent::Stored { .. } => {}
            }
        }
    }

    /// A call's progress, to its request.
    fn on_progress(
        &mut self,
        context: &super::routing::Caller,
        token: &crate::mcp::ProgressToken,
        progress: u64,
        message: &str,
    ) {
        let note = shape::progress(token, progress, message, context.version);
        match context.reply_to {
            // A task's HTTP request was answered with its handle: no stream is left to
            // carry progress (a held one's request is still open).
            ReplyTo::Exchange(_)
                if context
                    .task
                    .as_ref()
                    .is_some_and(|t| !self.held.contains(t)) => {}
            ReplyTo::Exchange(x) => {
                let json = to_json(&note);
                self.outputs
                    .push_back(Output::Exchange(x, ExchangeOut::Notification(json)));
            }
            ReplyTo::Direct | ReplyTo::Batch { .. } => self.write_json(&note),
        }
    }

    /// A call ended with an answer or a failure: counted, priced, and answered (or its
    /// task finished; the request was answered and counted with the task's handle).
    fn on_call_finished(
        &mut self,
        context: &super::routing::Caller,
        outcome: Result<crate::openai::Answer, crate::openai::UpstreamFailure>,
        retries: u32,
        report: &crate::calls::Report,
    ) {
        let now = self.latest_unix();
        let cost = self
            .ledger
            .call_ended(&context.call_of(), &outcome, report, now);
        let result = self.priced_result(outcome, retries, report, context.version, &cost);
        match &context.task {
            Some(task) => self.finish_task(task, result, context.reply_to, context.version),
            None => self.reply_late(context.asker(), result),
        }
    }

    /// A call stopped without an outcome: charged what it spent upstream, if anything,
    /// and its request (or task) told; a batch still needs to know this slot stays empty.
    fn on_call_dropped(
        &mut self,
        context: &super::routing::Caller,
        spent: Option<&crate::calls::Report>,
    ) {
        if let Some(spent) = spent {
            let now = self.latest_unix();
            self.ledger.cancelled(&context.call_of(), spent, now);
        }
        match &context.task {
            Some(task) => self.drop_task(task, context.reply_to, context.version),
            None => self.route(context.reply_to, None),
        }
    }

    /// What `tools/call` returns for work on a background task that ended with
    /// `outcome` (priced at `cost`), as `version` shapes answers and failures.
    pub(super) fn priced_result(
        &self,
        outcome: Result<crate::openai::Answer, crate::openai::UpstreamFailure>,
        retries: u32,
        report: &crate::calls::Report,
        version: ProtocolVersion,
        cost: &Estimate,
    ) -> Result<serde_json::Value, crate::jsonrpc::RpcError> {
        match outcome {
            Ok(answer) => Ok(shape::tool_result(&answer, version, report, cost)),
            Err(failure) => ToolFailure::Upstream {
                failure: &failure,
                retries,
                advice: crate::openai::Advice {
                    api_key_env: &self.config.api_key_env,
                    model: Some(report.model.model.as_str()).filter(|m| !m.is_empty()),
                    model_setting: Some(report.model.setting).filter(|s| !s.is_empty()),
                },
                debug: self.config.debug,
            }
            .reply(version),
        }
    }

    /// Answers a request whose reply leaves later with `result`, and counts the reply
    /// once, with how long the request waited for it.
    pub(super) fn reply_late(
        &mut self,
        asker: Asker,
        result: Result<serde_json::Value, crate::jsonrpc::RpcError>,
    ) {
        let reply = Reply::to(asker.id.clone(), result);
        self.reply_dispatched(asker, Dispatched::Reply(reply));
    }

    /// Sends what handling `asker`'s request produced, late, and counts the reply once,
    /// with how long the request waited for it.
    pub(super) fn reply_dispatched(&mut self, asker: Asker, dispatched: Dispatched) {
        let took = self.last_now.map_or(std::time::Duration::ZERO, |now| {
            now.instant.saturating_duration_since(asker.received)
        });
        let (reply, retry_after) = match dispatched {
            Dispatched::Reply(reply) => (reply, None),
            Dispatched::Refused {
                reply,
                retry_after_secs,
            } => (reply, Some(retry_after_secs)),
            Dispatched::Nothing | Dispatched::Sent | Dispatched::Pending => return,
        };
        self.ledger.replied(asker.operation(&reply), took);
        self.route_with(asker.reply_to, Some(reply), retry_after);
    }

    /// Sends `reply` where it belongs; `None` for a request that ends without a reply.
    pub(super) fn route(&mut self, reply_to: ReplyTo, reply: Option<Reply>) {
        self.route_with(reply_to, reply, None);
    }

    /// Sends the reply to a call a limit refused; over HTTP with `Retry-After`.
    pub(super) fn route_refused(&mut self, reply_to: ReplyTo, reply: Reply, retry_after_secs: u64) {
        self.route_with(reply_to, Some(reply), Some(retry_after_secs));
    }

    fn route_with(
        &mut self,
        reply_to: ReplyTo,
        reply: Option<Reply>,
        retry_after_secs: Option<u64>,
    ) {
        match reply_to {
            ReplyTo::Direct => {
                if let Some(reply) = reply {
                    self.send_reply(reply);
                }
            }
            ReplyTo::Batch { batch, slot } => {
                self.batches.fill(batch, slot, reply);
                self.flush_batch(batch);
            }
            ReplyTo::Exchange(x) => {
                let out = match reply {
                    // No session: an unreadable id is always left out (2025-11-25 on and
                    // the modern schema; older clients ignore the absence).
                    Some(Reply::Failure { id: None, error }) => ExchangeOut::Reply {
                        error: Some(error.code),
                        json: to_json(&serde_json::json!({ "jsonrpc": "2.0", "error": error })),
                        retry_after_secs,
                    },
                    Some(reply) => ExchangeOut::Reply {
                        error: match &reply {
                            Reply::Failure { error, .. } => Some(error.code),
                            Reply::Success { .. } => None,
                        },
                        json: to_json(&reply),
                        retry_after_secs,
                    },
                    None => ExchangeOut::Ended,
                };
                self.outputs.push_back(Output::Exchange(x, out));
            }
        }
    }

    pub(super) fn send_reply(&mut self, reply: Reply) {
        match reply {
            // JSON-RPC answers an unreadable id with `"id": null`; the schemas of
            // 2025-11-25 on make `id` optional and do not allow null, so it is left out
            // in such a session, or, before any session, once a modern client spoke.
            Reply::Failure { id: None, error }
                if self
                    .protocol_version()
                    .map_or(self.modern_seen, ProtocolVersion::omits_unknown_ids) =>
            {
                self.write_json(&serde_json::json!({ "jsonrpc": "2.0", "error": error }));
            }
            reply => self.write_json(&reply),
        }
    }

    /// Serialises `message` and queues it as one frame.
    pub(super) fn write_json(&mut self, message: &impl Serialize) {
        let json = to_json(message);
        self.write_frame(&json);
    }

    /// Queues compact JSON as one frame in the reply framing.
    pub(super) fn write_frame(&mut self, json: &[u8]) {
        let mut out = Vec::with_capacity(json.len() + 24);
        encode(self.reply_framing.unwrap_or(Framing::Line), json, &mut out);
        self.outputs.push_back(Output::Write(out));
    }
}

/// Compact JSON of an outgoing message.
pub(super) fn to_json(message: &impl Serialize) -> Vec<u8> {
    // Everything the server sends is built from `Value`s, strings and numbers, whose
    // serialisation cannot fail; an error here is a bug, not bad input.
    #[allow(clippy::expect_used)]
    serde_json::to_vec(message).expect("outgoing messages are valid JSON")
}
