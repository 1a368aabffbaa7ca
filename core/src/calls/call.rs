//! One call in the engine: what it asks upstream, where it is, and what is due for it.

use super::work::Stored;
use super::work::Work;
use crate::io::{AttemptId, CallKey};
use crate::mcp::ProgressToken;
use crate::openai::stream::{StreamEnd, StreamFold};
use crate::openai::{Adjustment, Answer, RequestPlan, Upstream, UpstreamFailure, Usage};
use crate::sse::SseReader;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// An internal call number; never the client's request id.
pub type CallId = u64;

/// One `tools/call` from admission to its outcome.
pub struct Call<C> {
    /// The requester and the client's id, for cancellation and duplicate checks.
    pub key: CallKey,
    /// What the owner of the engine needs to route the outcome.
    pub context: C,
    /// What the call does upstream.
    pub work: Work,
    /// What every attempt of an answer or a create sends. For reads and cancels only its
    /// `model` counts: the model an answer without one is attributed to.
    pub plan: RequestPlan,
    /// What was changed in the plan to fit the model's limits.
    pub adjustments: Vec<Adjustment>,
    /// Attempts repeated because the model refused a parameter (bounded: each one
    /// changes the plan, and there are few parameters to change).
    pub drift_retries: u32,
    /// Retries used (a retry that only fits the model's limits does not count).
    pub retries: u32,
    /// Attempts started.
    pub attempts: u32,
    /// Today in Asia/Tokyo when the call started, for citations without a date.
    pub access_date: String,
    pub state: CallState,
    pub progress: Option<Progress>,
    /// The running attempt's reply as far as it arrived.
    pub incoming: Option<Incoming>,
    /// When the running attempt last received a byte (or started).
    pub last_byte: Instant,
    /// When the call was admitted, for the wall time in its report.
    pub admitted: Instant,
    /// The HTTP status of the last reply, and OpenAI's `x-request-id` on it.
    pub upstream: Upstream,
    /// Bytes of the latest attempt's request body, for the estimate of a cancelled
    /// call's input.
    pub sent_bytes: usize,
    /// With traces on: the running attempt's start, method and URL, taken when it ends.
    pub traced: Option<(Instant, crate::io::HttpMethod, String)>,
}

/// An attempt's reply as it arrives.
pub enum Incoming {
    /// Not an event stream: gathered whole and read at its end.
    Whole {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A 2xx event stream, read event by event.
    Stream {
        reader: SseReader,
        fold: StreamFold,
        events: u32,
        /// From the attempt's start to the reply's head, for the debug log.
        first_byte: Duration,
    },
    /// The stream's terminal event came; the body's end is awaited (a short grace) so
    /// the connection can carry the next call.
    Ended(StreamEnd),
}

/// Where a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallState {
    /// Waiting for a free slot.
    Queued,
    /// An attempt is in flight until `deadline`; at `idle_at` it is checked for silence
    /// (only a streamed answer is: a whole read is silent until it is ready).
    Running {
        attempt: AttemptId,
        deadline: Instant,
        idle_at: Option<Instant>,
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
    /// When the last notification went out.
    pub last_sent: Option<Instant>,
    /// What the stream said the model is doing, waiting for the minimum gap to pass,
    /// oldest first (at most [`MAX_QUEUED_HINTS`]).
    pub queued: VecDeque<String>,
}

/// Most progress messages waiting at once; a newer one replaces the newest waiting.
pub const MAX_QUEUED_HINTS: usize = 3;

/// Least time between two progress notifications caused by the stream.
pub const MIN_HINT_GAP: Duration = Duration::from_millis(250);

/// How a call ended, as its work reads it.
pub(super) enum Ending {
    /// An answer's outcome, with the usage the reply reported.
    Answer(Result<Answer, UpstreamFailure>, Option<Usage>),
    /// A stored response as the reply showed it.
    Stored(Stored),
    /// A model's shutdown date as the provider gave it (`None`: none announced).
    Model(Option<String>),
    /// A fetched document's body.
    Fetched(Vec<u8>),
    /// No usable reply, whatever the work.
    Failed(UpstreamFailure),
}

impl<C> Call<C> {
    /// Everything due for the call: its attempt's deadline or its backoff's end, and its
    /// next progress notification.
    pub fn deadlines(&self) -> impl Iterator<Item = Instant> {
        let state = match self.state {
            CallState::Running {
                deadline, idle_at, ..
            } => Some(idle_at.map_or(deadline, |idle| deadline.min(idle))),
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
