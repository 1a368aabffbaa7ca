//! Where calls' ends go: the one place that drains the call engine's events, and the
//! replies that leave late (counted once, then sent through the [`super::outbox`]).

use super::{ExchangeOut, Output, Server};
use crate::calls::CallEvent;
use crate::jsonrpc::Reply;
use crate::mcp::{shape, ProtocolVersion};
use crate::routing::{Asker, Context, Dispatched, ReplyTo};

impl Server {
    /// Performs everything the call engine asked for, in order.
    pub(super) fn drain_calls(&mut self) {
        while let Some(event) = self.calls.poll_event() {
            match event {
                CallEvent::Send(request) => self.out.push(Output::Http(request)),
                CallEvent::Abort(attempt) => self.out.push(Output::Abort(attempt)),
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
                        self.desk.on_stored(now, job, outcome, (retries, &report));
                        self.drain_desk();
                    }
                }
                CallEvent::Dropped {
                    context: Context::Call(context),
                    spent,
                } => self.on_call_dropped(&context, spent.as_ref()),
                CallEvent::Attempted { context, attempt } => {
                    // A call's attempts continue its request's trace; the identity
                    // provider's fetches serve every request, so each is a trace of
                    // its own. Model lookups are not traced.
                    let parent = match &context {
                        Context::Call(caller) => caller.span,
                        Context::Background(job) => job.span(),
                        Context::Identity | Context::Lookup(_) => None,
                    };
                    let span = match (parent, &context) {
                        (Some(parent), _) => Some(self.tracer.child(&parent, attempt.started)),
                        (None, Context::Identity) => self.tracer.begin(None, attempt.started),
                        (None, _) => None,
                    };
                    if let Some(span) = span {
                        self.tracer.end(super::traced::attempt(&span, &attempt));
                    }
                }
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
        context: &crate::routing::Caller,
        token: &crate::mcp::ProgressToken,
        progress: u64,
        message: &str,
    ) {
        let note = shape::progress(token, progress, message, context.version);
        match context.reply_to {
            // A task's HTTP request was answered with its handle: no stream is left to
            // carry progress (a held one's request is still open).
            ReplyTo::Exchange(_)
                if context.task.as_ref().is_some_and(|t| !self.desk.is_held(t)) => {}
            ReplyTo::Exchange(x) => {
                let json = super::outbox::to_json(&note);
                self.out
                    .push(Output::Exchange(x, ExchangeOut::Notification(json)));
            }
            ReplyTo::Direct | ReplyTo::Batch { .. } => self.out.write_json(&note),
        }
    }

    /// A call ended with an answer or a failure: counted, priced, and answered (or its
    /// task finished; the request was answered and counted with the task's handle).
    fn on_call_finished(
        &mut self,
        context: &crate::routing::Caller,
        outcome: Result<crate::openai::Answer, crate::openai::UpstreamFailure>,
        retries: u32,
        report: &crate::calls::Report,
    ) {
        let now = self.latest_unix();
        let cost = self
            .ledger
            .call_ended(&context.call_of(), &outcome, report, now);
        let usage = match context.span {
            Some(_) if context.task.is_none() => super::traced::call_usage(&outcome, report, &cost),
            _ => Vec::new(),
        };
        let version = context.version;
        let result = (self.wording).priced_result(outcome, retries, report, version, &cost);
        match &context.task {
            Some(task) => self.task_call_ended(task, Some(result), context),
            None => {
                let reply = Reply::to(context.id.clone(), result);
                self.reply_dispatched(context.asker(), Dispatched::Reply(reply), usage);
            }
        }
    }

    /// A call stopped without an outcome: charged what it spent upstream, if anything,
    /// and its request (or task) told; a batch still needs to know this slot stays empty.
    fn on_call_dropped(
        &mut self,
        context: &crate::routing::Caller,
        spent: Option<&crate::calls::Report>,
    ) {
        if let Some(spent) = spent {
            let now = self.latest_unix();
            self.ledger.cancelled(&context.call_of(), spent, now);
        }
        match &context.task {
            Some(task) => self.task_call_ended(task, None, context),
            None => self.route(context.reply_to, None, None),
        }
    }

    /// A task's call ended (`None`: without an outcome): the desk ends its task.
    fn task_call_ended(
        &mut self,
        task_id: &str,
        outcome: Option<Result<serde_json::Value, crate::jsonrpc::RpcError>>,
        context: &crate::routing::Caller,
    ) {
        let (unix, creator) = (self.latest_unix(), (context.reply_to, context.version));
        self.desk.call_ended(unix, task_id, outcome, creator);
        self.drain_desk();
    }

    /// Answers a request whose reply leaves later with `result`, and counts the reply
    /// once, with how long the request waited for it.
    pub(super) fn reply_late(
        &mut self,
        asker: Asker,
        result: Result<serde_json::Value, crate::jsonrpc::RpcError>,
    ) {
        let reply = Reply::to(asker.id.clone(), result);
        self.reply_dispatched(asker, Dispatched::Reply(reply), Vec::new());
    }

    /// Sends what handling `asker`'s request produced, late, and counts the reply once,
    /// with how long the request waited for it; its span ends with `usage` (what a call
    /// used) among its attributes.
    pub(super) fn reply_dispatched(
        &mut self,
        asker: Asker,
        dispatched: Dispatched,
        usage: Vec<(&'static str, crate::spans::Value)>,
    ) {
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
        let op = asker.operation(&reply);
        if let (Some(span), Some(now)) = (asker.span, self.last_now) {
            let span = super::traced::request(&span, (&op, &asker.id), now.instant, usage);
            self.tracer.end(span);
        }
        self.ledger.replied(op, took);
        self.route(asker.reply_to, Some(reply), retry_after);
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
