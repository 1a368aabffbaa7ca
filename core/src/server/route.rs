//! Where calls' ends go: the one place that drains the call engine's events; their
//! replies leave through the register ([`super::register`]) and the [`super::outbox`].

use super::register::Answer;
use super::{Output, Server};
use crate::calls::CallEvent;
use crate::jsonrpc::Reply;
use crate::mcp::{shape, ProtocolVersion};
use crate::routing::{Call, Context, Job, ReplyTo};

impl Server {
    /// Performs everything the call engine asked for, in order.
    pub(super) fn drain_calls(&mut self) {
        while let Some(event) = self.calls.poll_event() {
            match event {
                CallEvent::Send(request) => self.out.push(Output::Http(request)),
                CallEvent::Abort(attempt) => self.out.push(Output::Abort(attempt)),
                CallEvent::Progress {
                    context: Context::Call(call),
                    token,
                    progress,
                    message,
                } => {
                    let note =
                        shape::progress(&token, progress, &message, call.ticket.reply_version());
                    // A task's HTTP request answered with its handle has no stream left.
                    let answered = call.task.as_ref().is_some_and(|t| !self.desk.is_held(t));
                    self.out.progress(call.ticket.reply_to, &note, answered);
                }
                CallEvent::Finished {
                    context: Context::Call(context),
                    outcome,
                    retries,
                    report,
                } => self.on_call_finished(&context, outcome, retries, &report),
                CallEvent::Stored {
                    context: Context::Background(mut job),
                    outcome,
                    retries,
                    report,
                } => {
                    if let Job::Create {
                        pending, unheard, ..
                    } = &mut job
                    {
                        *unheard = !self.register.is_open(&pending.ticket);
                    }
                    if let Some(now) = self.last_now {
                        self.desk.on_stored(now, job, outcome, (retries, &report));
                        self.drain_desk();
                    }
                }
                CallEvent::Dropped {
                    context: Context::Call(context),
                    spent,
                } => self.on_call_dropped(&context, spent.as_ref()),
                CallEvent::Attempted { context, attempt } => {
                    super::traced::attempted(&mut self.tracer, &context, &attempt);
                }
                CallEvent::ModelDate {
                    context: Context::Lookup(model),
                    outcome,
                } => {
                    if let Some(now) = self.last_now {
                        let of = (&mut self.calendar, &self.config);
                        super::lookups::model_date(of, now, &model, outcome);
                    }
                }
                CallEvent::Fetched {
                    context: Context::Identity,
                    outcome,
                } => {
                    if let Some(now) = self.last_now {
                        if let Some(gate) = &mut self.gate {
                            let outcome = outcome.map_err(crate::oauth::FetchError::Upstream);
                            gate.fetched(now, outcome);
                        }
                        self.drain_gate(now);
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

    /// A call ended with an answer or a failure: counted, priced, and answered (or its
    /// task finished; the request was answered and counted with the task's handle).
    fn on_call_finished(
        &mut self,
        call: &Call,
        outcome: Result<crate::openai::Answer, crate::openai::UpstreamFailure>,
        retries: u32,
        report: &crate::calls::Report,
    ) {
        let now = self.latest_unix();
        let cost = (self.ledger).call_ended(&self.clients, &call.call_of(), &outcome, report, now);
        let usage = match call.ticket.span {
            Some(_) if call.task.is_none() => super::traced::call_usage(&outcome, report, &cost),
            _ => Vec::new(),
        };
        let version = call.ticket.reply_version();
        let result = (self.wording).priced_result(outcome, retries, report, version, &cost);
        match &call.task {
            Some(task) => self.task_call_ended(task, Some(result), call),
            None => {
                let reply = Reply::to(call.ticket.id.clone(), result);
                let answer = Answer {
                    usage,
                    ..Answer::reply(reply)
                };
                self.answer(&call.ticket, answer);
            }
        }
    }

    /// A call stopped without an outcome: charged what it spent upstream, if anything,
    /// and its request (or task) told; a batch still needs to know this slot stays empty.
    fn on_call_dropped(&mut self, call: &Call, spent: Option<&crate::calls::Report>) {
        match spent {
            Some(spent) => {
                let now = self.latest_unix();
                self.ledger
                    .cancelled(&self.clients, &call.call_of(), spent, now);
            }
            // It never reached OpenAI: nothing to charge, and nothing more to hold.
            None => self.ledger.unhold(&call.call_of()),
        }
        match &call.task {
            Some(task) => self.task_call_ended(task, None, call),
            None => self.answer(&call.ticket, Answer::NONE),
        }
    }

    /// A task's call ended (`None`: without an outcome): the desk ends its task.
    fn task_call_ended(
        &mut self,
        task_id: &str,
        outcome: Option<Result<serde_json::Value, crate::jsonrpc::RpcError>>,
        call: &Call,
    ) {
        let creator = (call.ticket.reply_to, call.ticket.reply_version());
        self.desk
            .call_ended(self.latest_unix(), task_id, outcome, creator);
        self.drain_desk();
    }

    /// Sends `reply` where it belongs (`None` for a request that ends without a reply);
    /// over HTTP with `Retry-After` when a limit refused the call.
    pub(super) fn route(
        &mut self,
        reply_to: ReplyTo,
        reply: Option<Reply>,
        retry_after: Option<u64>,
    ) {
        // JSON-RPC answers an unreadable id with `"id": null`; the schemas of 2025-11-25
        // on make `id` optional and do not allow null, so it is left out in such a
        // session, or, before any session, once a modern client spoke.
        let omit = self
            .protocol_version()
            .map_or(self.modern_seen, ProtocolVersion::omits_unknown_ids);
        self.out.route(reply_to, reply, retry_after, omit);
    }
}
