//! One call in the engine: what it asks upstream, where it is, and what is due for it.

use super::timers::CallId;
use crate::jsonrpc::RequestId;
use crate::mcp::ProgressToken;
use crate::openai::RequestPlan;
use crate::server::AttemptId;
use std::time::Instant;

/// One `tools/call` from admission to its outcome.
pub struct Call<C> {
    /// The client's id, for cancellation and duplicate checks.
    pub request_id: RequestId,
    /// What the owner of the engine needs to route the outcome.
    pub context: C,
    /// What every attempt sends.
    pub plan: RequestPlan,
    /// Retries used (a retry that only drops a rejected parameter does not count).
    pub retries: u32,
    /// Attempts started.
    pub attempts: u32,
    /// Today in Asia/Tokyo when the call started, for citations without a date.
    pub access_date: String,
    pub state: CallState,
    pub progress: Option<Progress>,
}

/// Where a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallState {
    /// Waiting for a free slot.
    Queued,
    /// An attempt is in flight until `deadline`.
    Running {
        attempt: AttemptId,
        deadline: Instant,
    },
    /// Waiting to retry.
    Backoff { until: Instant },
}

/// Progress reporting for a call that asked for it.
pub struct Progress {
    pub token: ProgressToken,
    /// Notifications sent so far (the `progress` value of the last one).
    pub sent: u64,
    /// When the next notification may go out.
    pub next_at: Instant,
    /// What the call is doing now.
    pub message: String,
}

impl<C> Call<C> {
    /// Everything due for the call: its attempt's deadline or its backoff's end, and its
    /// next progress notification.
    pub fn deadlines(&self) -> impl Iterator<Item = Instant> {
        let state = match self.state {
            CallState::Running { deadline, .. } => Some(deadline),
            CallState::Backoff { until } => Some(until),
            CallState::Queued => None,
        };
        state
            .into_iter()
            .chain(self.progress.as_ref().map(|p| p.next_at))
    }

    /// The live timer entries of the call.
    pub fn timer_entries(&self, id: CallId) -> impl Iterator<Item = (Instant, CallId)> {
        self.deadlines().map(move |at| (at, id))
    }
}
