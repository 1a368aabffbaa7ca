//! A call as the ledger sees it: what names it in the metrics and its record (`CallOf`),
//! how it ended upstream (`End`) and where it ran (`Lane`). Beneath the ledger and its
//! store side, which both speak of calls in these terms.

use super::record::{Arrival, Transport};
use crate::calls::Report;
use crate::clients::ClientId;
use crate::mcp::ProtocolVersion;
use crate::openai::FailureKind;
use crate::tools::Tool;
use crate::trace_context::TraceParent;
use std::time::Duration;

/// A call as its metrics and record name it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallOf {
    pub tool: Tool,
    pub version: ProtocolVersion,
    pub transport: Transport,
    pub client: ClientId,
    /// It ran as a task.
    pub task: bool,
    /// The client's trace, which the record continues.
    pub trace: Option<TraceParent>,
    /// What its admission left with it: its held estimate, and whether the shared store
    /// counted it.
    pub reservation: Reservation,
    /// The application, address and credential it came with, for its record.
    pub arrival: Arrival,
}

/// What a call's admission left with it, carried with the call until its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reservation {
    /// When the shared store counted the call (Unix seconds): a call that fails before
    /// it spends anything is given back.
    pub counted_at: Option<u64>,
    /// Its estimate, held from admission until its end replaces it.
    pub hold: Option<super::HoldId>,
}

/// How a call that reached the engine ended.
pub(crate) struct End<'a> {
    /// The model that answered, or the one that was to.
    pub model: &'a str,
    /// Why it failed, if it did.
    pub failure: Option<FailureKind>,
    /// What the engine measured.
    pub report: &'a Report,
    /// How long the call took: the engine's wall time, or a background task's life.
    pub took: Duration,
    /// Where it ran, which sets its price.
    pub lane: Lane,
    /// It was cancelled (a background run): recorded as such, whatever it used.
    pub cancelled: bool,
}

/// Where a call ran upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// A plain request, answered as it ran.
    Direct,
    /// OpenAI's background mode, whose tokens cost the completion window's percent.
    Background,
}
