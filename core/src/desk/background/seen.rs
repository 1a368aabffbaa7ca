//! What a background task's stored response is, as a task: its state read from OpenAI,
//! counted once in the ledger when it ends (the view the shapes take is in `terms.rs`).

use super::super::emit::{Charge, Emit, RunEnd};
use super::Background;
use crate::calls::{Report, StoredState};
use crate::io::Now;
use crate::ledger::{CallOf, Lane, Reservation};
use crate::mcp::ProtocolVersion;
use crate::openai::pricing::Estimate;
use crate::openai::{FailureKind, UpstreamFailure};
use crate::routing::BackgroundAsk;
use crate::tasks::background::Seen;
use crate::tasks::{Outcome, Status};
use std::time::Duration;

impl Background {
    /// A response's state as a task's: its status, and the result a plain call returns for
    /// the same upstream response (shaped for `version`). An end (completed, failed,
    /// cancelled or gone) is counted in the ledger the first time this instance sees it,
    /// charged to the run this instance follows, else to the call `waiter`'s reference
    /// names.
    pub(super) fn seen_of(
        &mut self,
        emit: &mut Emit,
        now: Now,
        response_id: &str,
        state: StoredState,
        (version, report): (ProtocolVersion, &Report),
        waiter: Option<&BackgroundAsk>,
    ) -> Seen {
        let followed = self.follows.get(response_id);
        let (status, outcome) = match state {
            StoredState::Working => (Status::Working, None),
            StoredState::Cancelled { usage, model } => {
                let report = Report {
                    usage: usage.map(|u| *u),
                    ..report.clone()
                };
                let model = followed.map_or(model, |f| f.model.clone());
                let end = RunEnd {
                    model,
                    failure: None,
                    took: report.wall,
                    report,
                    lane: Lane::Background,
                    cancelled: true,
                };
                self.count_end(emit, now, (response_id, end), waiter);
                (Status::Cancelled, None)
            }
            StoredState::Ended(outcome, _) => {
                let model = match (&outcome, followed) {
                    (Ok(answer), _) => answer.model.clone(),
                    // A failure or a response gone: priced at the model it was sent to.
                    (Err(_), Some(f)) => f.model.clone(),
                    (Err(_), None) => report.model.model.clone(),
                };
                let end = RunEnd {
                    model,
                    failure: outcome.as_ref().err().map(|f| f.kind),
                    report: report.clone(),
                    took: report.wall,
                    lane: Lane::Background,
                    cancelled: false,
                };
                let cost = self.count_end(emit, now, (response_id, end), waiter);
                let result = self
                    .terms
                    .wording
                    .priced_result(outcome, 0, report, version, &cost);
                let status = match &result {
                    Ok(_) => Status::Completed,
                    Err(_) => Status::Failed,
                };
                (status, Some(Outcome::new(result)))
            }
        };
        Seen {
            status,
            outcome,
            updated: now.unix_secs,
            read_at: now.instant,
        }
    }

    /// Emits the end of `response_id` for the ledger to count once: as the call this
    /// instance follows it for, else as the one `waiter`'s reference names; only priced
    /// when neither is known. Its price, for the result's `_meta`.
    fn count_end(
        &mut self,
        emit: &mut Emit,
        now: Now,
        (response_id, end): (&str, RunEnd),
        waiter: Option<&BackgroundAsk>,
    ) -> Estimate {
        let cost = self.terms.price(&end);
        let (call, created) = match (self.follows.get(response_id), waiter) {
            (Some(followed), _) => (followed.call.clone(), followed.reference.created),
            (
                None,
                Some(BackgroundAsk {
                    ticket: asker,
                    client,
                    reference: Some(reference),
                    ..
                }),
            ) => {
                let call = CallOf {
                    tool: reference.tool,
                    version: asker.reply_version(),
                    transport: asker.reply_to.transport(),
                    client: *client,
                    task: true,
                    trace: None,
                    reservation: Reservation::default(),
                    // Whoever reads the end counts it; how it came is not kept.
                    arrival: Default::default(),
                };
                (call, reference.created)
            }
            (None, _) => return cost,
        };
        let end = RunEnd {
            took: Duration::from_secs(now.unix_secs.saturating_sub(created)),
            ..end
        };
        let settled = (response_id.to_owned(), call, end, now.unix_secs);
        emit.charge(Charge::Settled(Box::new(settled)));
        cost
    }

    /// The state of a response OpenAI no longer has: the task ended with a tool error
    /// that says so, charged the run's estimate (whether and how it ended, and what it
    /// cost, is no longer known).
    pub(super) fn gone(
        &mut self,
        emit: &mut Emit,
        now: Now,
        response_id: &str,
        report: &Report,
        waiter: Option<&BackgroundAsk>,
    ) -> Seen {
        let failure = UpstreamFailure::local(
            FailureKind::Expired,
            "OpenAI no longer has this task's stored response (it keeps them for a limited time)",
        );
        let state = StoredState::Ended(Err(failure), Default::default());
        let report = Report {
            usage: None,
            ..report.clone()
        };
        let version = ProtocolVersion::V2025_11_25;
        self.seen_of(emit, now, response_id, state, (version, &report), waiter)
    }
}
