//! What passes between the poll schedule and the desk: a response's last state, what a
//! waiting request wants and gets, and how a read ended.

use super::super::{Outcome, Status};
use std::time::Instant;

/// A response's last known state.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Where the task is (`completed` or `failed` by the JSON-RPC rule: how an era names
    /// an ended task is decided when a request is answered).
    pub status: Status,
    /// Its result, once it ended.
    pub outcome: Option<Outcome>,
    /// When the state was learned, Unix seconds.
    pub updated: u64,
    /// When the state was learned.
    pub read_at: Instant,
}

/// What a waiting request wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The state now (`tasks/get`).
    State,
    /// The end (`tasks/result`): it waits while the task works.
    End,
}

/// What to do with a request.
#[derive(Debug)]
pub enum Served<P> {
    /// Answer it now with this state.
    Answer(P, Seen),
    /// It waits for a read.
    Parked,
    /// Too many requests wait on this response already.
    TooMany(P),
}

/// How a read ended.
#[derive(Debug)]
pub enum ReadEnd {
    /// The response's state.
    State(Seen),
    /// No state; `again` when reading later may help (a transient failure).
    Failed {
        /// Whether the failure may pass.
        again: bool,
    },
}
