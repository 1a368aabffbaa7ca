//! What one call to OpenAI used and said, for its result's `_meta`, its record and its
//! advice: the usage OpenAI reported, the attempts and time it took, the model asked for
//! and the last reply's status and request id.

use super::drift::Adjustment;
use super::request::RequestPlan;
use super::response::Usage;
use std::time::Duration;

/// Which model a call asked for, and which setting named it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelSource {
    /// The model id.
    pub model: String,
    /// Such as `model_profiles.answer.model`.
    pub setting: &'static str,
}

impl ModelSource {
    pub(crate) fn of(plan: RequestPlan) -> ModelSource {
        ModelSource {
            model: plan.model,
            setting: plan.model_setting,
        }
    }
}

/// What a finished call used: the upstream's usage (when it said), attempts, wall time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Tokens, searches and the response id, from the answer.
    pub usage: Option<Usage>,
    /// What was changed to fit the model's limits (known before, or learned from a 400).
    pub adjustments: Vec<Adjustment>,
    /// The model called and the setting it came from, for advice (empty when not known).
    pub model: ModelSource,
    /// Attempts made.
    pub attempts: u32,
    /// From admission to the outcome.
    pub wall: Duration,
    /// The last reply's status and OpenAI request id.
    pub upstream: Upstream,
    /// The usage is this server's estimate, not OpenAI's report: the call was stopped
    /// (cancelled, or its client left) before OpenAI said what it used.
    pub estimated: bool,
}

/// What the last reply of a call said about itself, for its report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upstream {
    /// The HTTP status; `None` when no reply arrived (connection failures only).
    pub status: Option<u16>,
    /// OpenAI's `x-request-id`, which its support asks for.
    pub request_id: Option<String>,
}

impl Upstream {
    /// From a reply's status and headers. An id longer than any OpenAI gives is not one.
    pub fn of(status: u16, headers: &[(String, String)]) -> Upstream {
        let request_id = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("x-request-id"))
            .map(|(_, value)| value.trim())
            .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
            .map(str::to_owned);
        Upstream {
            status: Some(status),
            request_id,
        }
    }
}
