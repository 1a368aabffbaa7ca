//! What the background backend's tasks are made on, fixed at startup: the task settings
//! (the seal's key, the lives, the poll interval), the failures' wording, the answer
//! model and the prices. From them alone: a create's plan, a task's sealed id and view,
//! the answer to `tasks/get` or `tasks/result`, and what a run's end costs.

use super::super::emit::{Charge, Emit, RunEnd};
use crate::calls::{Planned, Report};
use crate::jsonrpc::RpcError;
use crate::ledger::{CallOf, Lane};
use crate::mcp::shape::{self, TaskError};
use crate::mcp::task_end::Ending;
use crate::mcp::{Method, ProtocolVersion};
use crate::openai::pricing::Estimate;
use crate::openai::{RequestPlan, UpstreamFailure};
use crate::routing::BackgroundAsk;
use crate::tasks::background::Seen;
use crate::tasks::{BackgroundRef, CompletionWindow, Task};
use serde_json::Value;
use std::time::Duration;

/// See the module docs.
pub(super) struct Terms {
    pub settings: crate::settings::TaskSettings,
    pub wording: crate::mcp::failure::Wording,
    /// The answer profile's model, named for a stored response read without one.
    answer_model: String,
    /// What a run's tokens cost ([`crate::ledger::price`]): the list prices, and the
    /// percent of them background tokens cost.
    prices: (crate::openai::pricing::Prices, u64),
}

impl Terms {
    /// The terms `config` sets.
    pub fn new(config: &crate::settings::ServerConfig) -> Terms {
        let settings = config.tasks.clone();
        Terms {
            wording: crate::mcp::failure::Wording::new(config),
            answer_model: config
                .profiles
                .for_tool(crate::tools::Tool::Answer)
                .map(|p| p.model.clone())
                .unwrap_or_default(),
            prices: (config.prices.clone(), settings.background_price_percent()),
            settings,
        }
    }

    /// A create's plan, fitted to the completion window, and its task's life (`ttl_ms`
    /// asked, else the default, at most the longest, at least what background mode needs).
    pub fn create(&self, ttl_ms: Option<u64>, mut plan: Planned) -> (Planned, Duration) {
        let settings = &self.settings;
        let asked = ttl_ms.map_or(settings.default_ttl, Duration::from_millis);
        let ttl = settings.background_ttl(asked.min(settings.max_ttl));
        let window = settings.completion_window;
        if window != CompletionWindow::Soonest {
            // A completion window is for the standard tier only (OpenAI's background
            // guide): a profile's tier would make OpenAI refuse the request.
            plan.plan.completion_window = Some(window);
            plan.plan.service_tier = None;
        }
        (plan, ttl)
    }

    /// The plan of a read or a cancel: a stored response without a model names the
    /// answer profile's.
    pub fn read_plan(&self) -> Planned {
        Planned {
            plan: RequestPlan {
                model: self.answer_model.clone(),
                ..RequestPlan::default()
            },
            adjustments: Vec::new(),
        }
    }

    /// A background task's sealed id.
    pub fn seal(&self, reference: &BackgroundRef) -> String {
        crate::tasks::seal::seal_background(&self.settings.key, reference)
    }

    /// What `end`'s usage costs (nothing counted).
    pub fn price(&self, end: &RunEnd) -> Estimate {
        let (prices, percent) = (&self.prices.0, self.prices.1);
        crate::ledger::price(
            (prices, percent),
            &end.model,
            end.report.usage.as_ref(),
            end.lane,
        )
    }

    /// The create of a background task failed: the call ended (counted as one), and its
    /// failure is the answer.
    pub fn create_failed(
        &self,
        emit: &mut Emit,
        call: &CallOf,
        failure: UpstreamFailure,
        (retries, report): (u32, &Report),
    ) -> Result<Value, RpcError> {
        let end = RunEnd {
            model: report.model.model.clone(),
            failure: Some(failure.kind),
            report: report.clone(),
            took: report.wall,
            lane: Lane::Background,
            cancelled: false,
        };
        let cost = self.price(&end);
        let at = emit.unix;
        emit.charge(Charge::Ended(Box::new((call.clone(), end, at))));
        let wording = &self.wording;
        wording.priced_result(Err(failure), retries, report, call.version, &cost)
    }

    /// `tasks/get` or `tasks/result`'s answer from `seen`.
    pub fn answer_with(&self, pending: &BackgroundAsk, seen: &Seen) -> Result<Value, RpcError> {
        let Some(reference) = &pending.reference else {
            let method = pending.ticket.method;
            return Err(TaskError::MissingId { method }.error());
        };
        let view = self.view(reference, seen, pending.ticket.reply_version());
        match pending.method {
            Method::TasksResult => super::super::local::payload(view.outcome.as_ref(), &view.id),
            _ => Ok(shape::task_state(
                &view,
                self.settings.background_poll(),
                pending.ticket.reply_version(),
            )),
        }
    }

    /// A task as the shapes want it for a request in `version`, from its reference and
    /// its last known state: an ended task's status is the one `version` gives it.
    pub fn view(
        &self,
        reference: &BackgroundRef,
        seen: &Seen,
        version: ProtocolVersion,
    ) -> Task<()> {
        let id = self.seal(reference);
        let ttl = Duration::from_millis(reference.ttl_ms);
        let ending = match &seen.outcome {
            Some(outcome) => {
                let ending = Ending::of(&outcome.get(), version);
                (ending.status, ending.message)
            }
            None => (seen.status, None),
        };
        Task::view(
            id,
            (reference.created, seen.updated.max(reference.created)),
            ttl,
            seen.read_at,
            ending,
            seen.outcome.clone(),
        )
    }
}
