//! What the engine tells its owner: the events, and what a finished call reports.

use super::work::Stored;
use crate::io::{AttemptId, HttpRequest};
use crate::mcp::ProgressToken;
use crate::openai::{Adjustment, Answer, Report, RequestPlan, UpstreamFailure};

/// What the engine asks of its owner.
#[derive(Debug, PartialEq)]
pub enum CallEvent<C> {
    /// Start this HTTP attempt.
    Send(HttpRequest),
    /// Abort this attempt; its completion will be ignored.
    Abort(AttemptId),
    /// Tell the client how the call is doing (`progress` strictly increases per call).
    Progress {
        /// The call's context.
        context: C,
        /// The client's token.
        token: ProgressToken,
        /// The count so far.
        progress: u64,
        /// What the call is doing.
        message: String,
    },
    /// The call ended with an answer or a failure.
    Finished {
        /// The call's context.
        context: C,
        /// The answer, or why there is none.
        outcome: Result<Answer, UpstreamFailure>,
        /// Retries used.
        retries: u32,
        /// What the call used.
        report: Report,
    },
    /// Work on a stored response ended: what the reply said of it, or why there is none.
    Stored {
        /// The call's context.
        context: C,
        /// The response as read, or the failure.
        outcome: Result<Stored, UpstreamFailure>,
        /// Retries used.
        retries: u32,
        /// What the call used.
        report: Report,
    },
    /// A model lookup ended: the shutdown date the provider gave (`None`: none
    /// announced), or why there is no answer.
    ModelDate {
        /// The call's context.
        context: C,
        /// The date, or the failure.
        outcome: Result<Option<String>, UpstreamFailure>,
    },
    /// A fetch of the identity provider's ended: the document, or why there is none.
    Fetched {
        /// The call's context.
        context: C,
        /// The body of a 2xx reply, or the failure.
        outcome: Result<Vec<u8>, UpstreamFailure>,
    },
    /// An attempt ended (only with [`super::Settings::trace_attempts`]): its span's facts.
    Attempted {
        /// The call's context.
        context: C,
        /// The attempt.
        attempt: AttemptTrace,
    },
    /// The call ended without an outcome (cancelled, or aborted silently).
    Dropped {
        /// The call's context.
        context: C,
        /// For an answer whose request reached OpenAI: what it used, as OpenAI reported
        /// it or, when it did not yet, as estimated ([`Report::estimated`]), so that the
        /// call is charged all the same.
        spent: Option<Report>,
    },
}

/// What a trace says of one upstream attempt (the HTTP client conventions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptTrace {
    /// When it started and ended.
    pub started: std::time::Instant,
    /// When it ended.
    pub ended: std::time::Instant,
    /// Its method.
    pub method: crate::io::HttpMethod,
    /// Its URL (the span names only its host and port).
    pub url: String,
    /// The reply's status, when one came.
    pub status: Option<u16>,
    /// Why it failed without a usable reply (`timeout`, `connect`, …).
    pub failure: Option<&'static str>,
    /// Attempts of the call before this one.
    pub resend: u32,
}

/// A call's request, and what was changed in it to fit the model's known limits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Planned {
    /// What every attempt sends.
    pub plan: RequestPlan,
    /// The changes, for the usage `_meta`.
    pub adjustments: Vec<Adjustment>,
}

/// Why a call was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// A call with the same request id is in flight.
    DuplicateId,
    /// Every slot and the whole queue are taken.
    Busy {
        /// Calls running.
        running: usize,
        /// Calls queued.
        queued: usize,
    },
}
