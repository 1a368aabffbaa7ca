//! What a call does after an attempt failed: back off and retry, send again inside a
//! parameter's limit the model named, or leave the flex tier when its capacity is out.

use super::call::CallState;
use super::retry::{next_step, Step};
use super::CallEngine;
use super::CallId;
use crate::io::{after, Now};
use crate::openai::{ParamRejection, UpstreamFailure};
use std::time::Duration;

/// Most attempts of one call repeated to fit the model's limits: one per parameter we
/// may send, so a model that refuses everything still ends.
const MAX_DRIFT_RETRIES: u32 = 7;

impl<C: Clone> CallEngine<C> {
    /// An attempt failed in a way another may not: a flex call out of flex capacity goes
    /// again at once at the default tier (as configured); any other backs off and
    /// retries, or fails when its retries are spent.
    pub(super) fn retry_or_fail(
        &mut self,
        now: Now,
        id: CallId,
        failure: UpstreamFailure,
        wait: Option<Duration>,
    ) {
        if self.falls_back_from_flex(id, &failure) {
            return self.start_attempt(now, id);
        }
        let Some(call) = self.calls.get(&id) else {
            return;
        };
        log::debug!(
            "openai(client): error attempt={} status={} name={} code={} msg={:?}",
            call.attempts,
            failure.status.map_or("-".into(), |s| s.to_string()),
            failure.kind,
            failure.code.as_deref().unwrap_or("-"),
            failure.message
        );
        let max = self.settings.max_retries;
        let (retry, wait) = match next_step(call.retries, max, wait, self.jitter.next()) {
            Step::GiveUp => return self.fail(id, failure),
            Step::Retry { retry, after } => (retry, after),
        };
        // A read or cancel of a stored response is paced like the polls it serves.
        let wait = if call.work.takes_slot() {
            wait
        } else {
            wait.max(self.settings.fetch_pace)
        };
        let reason = match failure.status {
            Some(s) => format!("HTTP {s}"),
            None => failure.kind.to_string(),
        };
        let until = after(now.instant, wait);
        self.retries += 1;
        if let Some(call) = self.calls.get_mut(&id) {
            call.retries = retry;
            call.state = CallState::Backoff { until };
            self.timers.schedule(id, until);
        }
        log::debug!(
            "openai: retry {retry}/{max} in {} ms after {reason}",
            wait.as_millis()
        );
        let message = format!("retrying in {:.1} s after {reason}", wait.as_secs_f64());
        self.set_progress(now, id, message);
    }

    /// Whether a call sent at `flex` that OpenAI refused for want of flex capacity goes
    /// again at the default tier (as configured): its plan then says so, and its usage
    /// `_meta` lists the change.
    fn falls_back_from_flex(&mut self, id: CallId, failure: &UpstreamFailure) -> bool {
        if self.settings.flex_unavailable != crate::settings::FlexUnavailable::Default
            || !is_flex_unavailable(failure)
        {
            return false;
        }
        let Some(call) = self.calls.get_mut(&id) else {
            return false;
        };
        if call.plan.service_tier != Some(crate::vocab::ServiceTier::Flex) {
            return false;
        }
        call.plan.service_tier = None;
        log::debug!(
            "openai: flex capacity is unavailable: sending the request again at the default tier"
        );
        call.adjustments.push(crate::openai::Adjustment {
            param: crate::openai::Param::ServiceTier,
            from: "flex".into(),
            to: None,
        });
        true
    }

    /// The model refused a parameter: remember its limit, move the plan inside it and
    /// try again; fail when nothing changes (it was not ours to change).
    pub(super) fn fit_limit(
        &mut self,
        now: Now,
        id: CallId,
        rejection: ParamRejection,
        failure: UpstreamFailure,
    ) {
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        let adjusted = (call.drift_retries < MAX_DRIFT_RETRIES)
            .then(|| crate::openai::drift::fit(&mut call.plan, rejection.param, &rejection.limit))
            .flatten();
        let Some(adjustment) = adjusted else {
            return self.fail(id, failure);
        };
        call.drift_retries += 1;
        log::debug!(
            "openai: model {} refused {}: retrying with {adjustment}, and remembering the limit",
            call.plan.model,
            rejection.param
        );
        self.limits.remember(&call.plan.model, &rejection);
        call.adjustments.push(adjustment);
        self.start_attempt(now, id);
    }
}

/// A 429 that says flex capacity is unavailable, not a rate limit: OpenAI names it
/// "Resource Unavailable" (the flex guide), in the code or the message.
fn is_flex_unavailable(failure: &UpstreamFailure) -> bool {
    let says = |text: &str| {
        let text = text.to_ascii_lowercase();
        text.contains("resource unavailable") || text.contains("resource_unavailable")
    };
    failure.status == Some(429)
        && (failure.code.as_deref().is_some_and(says) || says(&failure.message))
}
