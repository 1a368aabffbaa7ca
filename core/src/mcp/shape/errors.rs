//! The JSON-RPC errors the server answers with when a request cannot be served as sent:
//! [`TaskError`] for the `tasks/*` methods and a task's work, [`RequestError`] for a
//! message the protocol does not allow where it came. Each message says what happened
//! and what to do; the server's parts name the case, never build the text.

use crate::framing::FrameError;
use crate::jsonrpc::{ErrorKind, RpcError};
use crate::tasks::Unknown;

/// Why a `tasks/*` request, or a task-augmented call, is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskError<'a> {
    /// The request names no task (`params.taskId` missing or not a string).
    MissingId {
        /// The method, as the client spelled it.
        method: &'a str,
    },
    /// The id is not one this server can serve.
    NotFound {
        /// The id asked for (shown shortened).
        task_id: &'a str,
        /// Which case it is.
        why: Unknown,
    },
    /// The store holds as many tasks as it takes, all still working.
    StoreFull {
        /// How many it holds.
        tasks: usize,
    },
    /// As many `tasks/result` requests as are allowed already wait on the task.
    TooManyWaiters {
        /// The task.
        task_id: &'a str,
        /// The most that may wait.
        max: usize,
    },
    /// `tasks/cancel` on a task that already ended (2025-11-25: an error).
    AlreadyEnded {
        /// The task.
        task_id: &'a str,
        /// Its status's name.
        status: &'a str,
    },
    /// `tasks/result` of a task cancelled before it ended.
    CancelledWithoutResult {
        /// The task.
        task_id: &'a str,
    },
    /// `tasks/list` with a cursor this server did not give.
    BadCursor,
    /// A background task's work found no free slot for itself.
    WorkBusy,
    /// Reading a background task's response from OpenAI failed.
    ReadFailed {
        /// What OpenAI or the connection said.
        cause: &'a str,
    },
    /// Cancelling a background task's response at OpenAI failed.
    CancelFailed {
        /// What OpenAI or the connection said.
        cause: &'a str,
    },
    /// A task's result is larger than a reply may be, so the shared store does not keep it.
    ResultTooLarge {
        /// Its size.
        bytes: usize,
        /// `server.max_message_bytes`.
        max: usize,
    },
    /// The shared store, which holds the tasks, could not be reached or answered
    /// something unreadable.
    StoreFailed {
        /// What went wrong (names no secret).
        cause: &'a str,
    },
    /// The instance running the task's call stopped (shut down past its grace, or lost)
    /// before the call ended: the task is failed, without a result.
    InstanceStopped,
    /// A `tasks/*` request waiting on this instance (for the store, or for a task
    /// another instance runs), answered as this instance exits.
    WaitEnded {
        /// The task.
        task_id: &'a str,
    },
    /// The shared store holds a task of the id just minted (it refuses to overwrite it).
    IdTaken {
        /// The id.
        task_id: &'a str,
    },
}

impl TaskError<'_> {
    /// The JSON-RPC error.
    pub fn error(&self) -> RpcError {
        let (kind, message) = match *self {
            TaskError::MissingId { method } => (
                ErrorKind::InvalidParams,
                format!("{method}: params.taskId (a string) is required"),
            ),
            TaskError::NotFound { task_id, why } => {
                let shown: String = task_id.chars().take(80).collect();
                let message = match why {
                    Unknown::NotMinted => format!("task not found: {shown:?} is not a task id this server issued"),
                    Unknown::Foreign => format!("task not found: {shown:?} is not one of this client's tasks (each client sees only the tasks it created); call the tool again"),
                    Unknown::Gone => format!("task not found: {shown:?} has expired (a task is kept for its ttl), was dropped to make room, or lives on another instance of this server (tasks are kept by the instance that created them); call the tool again"),
                };
                (ErrorKind::InvalidParams, message)
            }
            TaskError::StoreFull { tasks } => (
                ErrorKind::Overloaded,
                format!("the server holds as many tasks as it takes ({tasks}); fetch or cancel finished ones, or retry without a task"),
            ),
            TaskError::TooManyWaiters { task_id, max } => (
                ErrorKind::Overloaded,
                format!("task {task_id} already has {max} tasks/result requests waiting; wait for one of them, or poll tasks/get less often"),
            ),
            TaskError::AlreadyEnded { task_id, status } => (
                ErrorKind::InvalidParams,
                format!("task {task_id} is already {status} and cannot be cancelled"),
            ),
            TaskError::CancelledWithoutResult { task_id } => (
                ErrorKind::InvalidRequest,
                format!("task {task_id} was cancelled before it finished, so it has no result; call the tool again"),
            ),
            TaskError::BadCursor => (
                ErrorKind::InvalidParams,
                "tasks/list: the cursor is not one this server gave; start again without a cursor".into(),
            ),
            TaskError::WorkBusy => (
                ErrorKind::Overloaded,
                "the server is busy with this task's work; try again in a moment".into(),
            ),
            TaskError::ReadFailed { cause } => (
                ErrorKind::UpstreamFailed,
                format!("reading the task from OpenAI failed: {cause}; poll again in a moment"),
            ),
            TaskError::CancelFailed { cause } => (
                ErrorKind::UpstreamFailed,
                format!("cancelling the task at OpenAI failed: {cause}; try tasks/cancel again in a moment"),
            ),
            TaskError::ResultTooLarge { bytes, max } => (
                ErrorKind::InvalidRequest,
                format!("the task's result ({bytes} bytes) is larger than a reply may be (server.max_message_bytes: {max}), so it was not kept; call the tool again without a task, or ask for a shorter answer"),
            ),
            TaskError::StoreFailed { cause } => (
                ErrorKind::Overloaded,
                format!("the shared store that holds this server's tasks did not answer ({cause}); the task is not lost: ask again in a few seconds"),
            ),
            TaskError::InstanceStopped => (
                ErrorKind::UpstreamFailed,
                "the instance of this server that ran this task stopped (it was shut down or lost) before the task's call finished, so the task failed without a result; call the tool again".into(),
            ),
            TaskError::WaitEnded { task_id } => (
                ErrorKind::Overloaded,
                format!("this instance of the server is shutting down and stops waiting for task {task_id}, which is not lost: ask again (any instance of this server answers)"),
            ),
            TaskError::IdTaken { task_id } => (
                ErrorKind::Overloaded,
                format!("the new task's id {task_id} is held by another task in the shared store, so this call was stopped before it was answered; call the tool again (a new id is minted)"),
            ),
        };
        RpcError::new(kind, message)
    }
}

/// A message the protocol does not allow where it came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestError<'a> {
    /// `initialize` inside a batch.
    InitializeInBatch,
    /// A second `initialize` in a session.
    AlreadyInitialized {
        /// The session's version.
        version: &'a str,
    },
    /// A request before `initialize`.
    NotInitialized {
        /// The method sent.
        method: &'a str,
    },
    /// A JSON array POSTed over HTTP.
    BatchOverHttp,
    /// `subscriptions/listen` inside a batch.
    ListenInBatch,
    /// Too many `subscriptions/listen` open.
    TooManySubscriptions {
        /// The most open at once.
        max: usize,
    },
    /// The client holds as many `subscriptions/listen` as one client may.
    ClientSubscriptions {
        /// The most one client holds open at once.
        max: usize,
    },
    /// A batch before `initialize`.
    BatchBeforeInit,
    /// A batch in a version without batches.
    BatchInVersion {
        /// The session's version.
        version: &'a str,
    },
    /// A batch that is empty or too long.
    Batch {
        /// Its length.
        len: usize,
        /// The most entries taken.
        max: usize,
    },
    /// Stdin's bytes do not frame as a message.
    Frame(&'a FrameError),
    /// A message that is not JSON.
    Parse {
        /// What the JSON reader said.
        cause: &'a str,
    },
}

impl RequestError<'_> {
    /// The JSON-RPC error.
    pub fn error(&self) -> RpcError {
        let (kind, message) = match *self {
            RequestError::InitializeInBatch => (
                ErrorKind::InvalidRequest,
                "initialize must not be part of a batch".into(),
            ),
            RequestError::AlreadyInitialized { version } => (
                ErrorKind::InvalidRequest,
                format!("already initialized with protocol version {version}; initialize may be sent only once"),
            ),
            RequestError::NotInitialized { method } => (
                ErrorKind::InvalidRequest,
                format!("server not initialized: send initialize before {method}"),
            ),
            RequestError::BatchOverHttp => (
                ErrorKind::InvalidRequest,
                "an HTTP request carries one JSON-RPC message; send each message as its own POST"
                    .into(),
            ),
            RequestError::ListenInBatch => (
                ErrorKind::InvalidRequest,
                "subscriptions/listen cannot be part of a batch".into(),
            ),
            RequestError::TooManySubscriptions { max } => (
                ErrorKind::InvalidRequest,
                format!("too many open subscriptions ({max}); cancel one with notifications/cancelled first"),
            ),
            RequestError::ClientSubscriptions { max } => (
                ErrorKind::InvalidRequest,
                format!("this client already holds {max} open subscriptions, the most one client may; cancel one with notifications/cancelled first"),
            ),
            RequestError::BatchBeforeInit => (
                ErrorKind::InvalidRequest,
                "batches are not supported before initialize".into(),
            ),
            RequestError::BatchInVersion { version } => (
                ErrorKind::InvalidRequest,
                format!("batches are not supported in protocol version {version}; send one message at a time"),
            ),
            RequestError::Batch { len: 0, .. } => {
                (ErrorKind::InvalidRequest, "invalid request: empty batch".into())
            }
            RequestError::Batch { len, max } => (
                ErrorKind::InvalidRequest,
                format!("batch of {len} entries exceeds the limit of {max}"),
            ),
            RequestError::Frame(e) => match e {
                FrameError::TooLarge { .. } => (ErrorKind::InvalidRequest, e.to_string()),
                FrameError::Header(_) | FrameError::Truncated(_) => (ErrorKind::Parse, e.to_string()),
            },
            RequestError::Parse { cause } => (ErrorKind::Parse, format!("parse error: {cause}")),
        };
        RpcError::new(kind, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_error_says_what_to_do_and_has_its_code() {
        let cases = [
            (
                TaskError::MissingId {
                    method: "tasks/get",
                },
                -32602,
                "is required",
            ),
            (
                TaskError::NotFound {
                    task_id: &"x".repeat(200),
                    why: Unknown::Gone,
                },
                -32602,
                "call the tool again",
            ),
            (
                TaskError::StoreFull { tasks: 3 },
                -32051,
                "retry without a task",
            ),
            (
                TaskError::TooManyWaiters {
                    task_id: "task-1",
                    max: 8,
                },
                -32051,
                "poll tasks/get",
            ),
            (
                TaskError::CancelledWithoutResult { task_id: "task-1" },
                -32600,
                "call the tool again",
            ),
            (TaskError::BadCursor, -32602, "start again without a cursor"),
            (
                TaskError::ReadFailed { cause: "reset" },
                -32050,
                "poll again",
            ),
            (
                TaskError::CancelFailed { cause: "reset" },
                -32050,
                "try tasks/cancel again",
            ),
        ];
        for (case, code, says) in cases {
            let error = case.error();
            assert!(error.message.contains(says), "{case:?}: {}", error.message);
            assert!(error.message.len() < 400, "{case:?}");
            assert_eq!(error.code, code, "{case:?}");
        }
    }
}
