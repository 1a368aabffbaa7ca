//! Where a task is: its status and the wire names of the statuses.

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The call is running (or queued).
    Working,
    /// The call ended with a result (an `isError` one included).
    Completed,
    /// The call ended with a JSON-RPC error.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl Status {
    /// Every status, in the order a task can go through them.
    pub const ALL: [Status; 4] = [
        Status::Working,
        Status::Completed,
        Status::Failed,
        Status::Cancelled,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// Whether the task can change no more.
    pub fn is_terminal(self) -> bool {
        self != Status::Working
    }
}
