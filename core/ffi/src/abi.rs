//! The ABI's data: the numbers and the two structs a host reads and fills, laid out as
//! C lays them out (`include/responses_mcp.h` declares the same; `tests/header.rs` checks
//! that the two agree).

/// The ABI's version: a host passes the one it was built for to `orm_engine_new`, which
/// refuses any other. A new function or action kind is a new version.
pub const ORM_ABI_VERSION: u32 = 1;

/// The call succeeded.
pub const ORM_OK: i32 = 0;
/// The call succeeded and an attempt ended: its handle is in `*released`, for the host to
/// release (close its connection, free what it holds).
pub const ORM_RELEASED: i32 = 1;
/// A pointer the call needs was null.
pub const ORM_ERR_NULL: i32 = -1;
/// An argument is out of range (an unknown kind, a status or header the engine cannot
/// read, an attempt it never asked for); nothing changed.
pub const ORM_ERR_INVALID: i32 = -2;
/// The configuration was refused (`orm_engine_new`).
pub const ORM_ERR_CONFIG: i32 = -3;
/// The host was built for another ABI version (`orm_engine_new`).
pub const ORM_ERR_VERSION: i32 = -4;
/// The engine hit a bug (a panic) in this call and cannot be used again: free it.
pub const ORM_ERR_PANIC: i32 = -5;
/// The engine hit a bug in an earlier call: free it.
pub const ORM_ERR_POISONED: i32 = -6;

/// Input: the host is up (once, first).
pub const ORM_INPUT_START: u32 = 1;
/// Input: bytes from the client (`data`).
pub const ORM_INPUT_STDIN: u32 = 2;
/// Input: the client's stream ended.
pub const ORM_INPUT_STDIN_CLOSED: u32 = 3;
/// Input: the deadline of the last `ORM_ACTION_WAIT` has passed.
pub const ORM_INPUT_TIMEOUT: u32 = 4;
/// Input: stop now (SIGINT/SIGTERM).
pub const ORM_INPUT_SHUTDOWN: u32 = 5;
/// Input: the bytes of `ORM_ACTION_WRITE` were written (`status` 1), or cannot be (0).
pub const ORM_INPUT_WRITTEN: u32 = 6;
/// Input: `attempt` of `ORM_ACTION_START` started as `handle` (`status` 0), or could not
/// start (`status` an `ORM_TRANSPORT_*`, `data` why).
pub const ORM_INPUT_STARTED: u32 = 7;
/// Input: `attempt`'s whole reply: `status`, `headers`, body in `data`.
pub const ORM_INPUT_HTTP_REPLY: u32 = 8;
/// Input: `attempt` failed without a reply: `status` an `ORM_TRANSPORT_*`, `data` why.
pub const ORM_INPUT_HTTP_FAILED: u32 = 9;
/// Input: `attempt`'s reply head: `status`, `headers`; its body follows.
pub const ORM_INPUT_HTTP_HEAD: u32 = 10;
/// Input: body bytes of `attempt`'s reply (`data`).
pub const ORM_INPUT_HTTP_BODY: u32 = 11;
/// Input: `attempt`'s reply body ended.
pub const ORM_INPUT_HTTP_END: u32 = 12;

/// Could not connect (DNS, refused, proxy). Retried.
pub const ORM_TRANSPORT_CONNECT: u32 = 1;
/// The connection broke or timed out mid-way. Retried.
pub const ORM_TRANSPORT_IO: u32 = 2;
/// TLS handshake or certificate failure. Not retried.
pub const ORM_TRANSPORT_TLS: u32 = 3;
/// The body was larger than the host accepts. Not retried.
pub const ORM_TRANSPORT_BODY_TOO_LARGE: u32 = 4;
/// The request could not be made at all. Not retried.
pub const ORM_TRANSPORT_INVALID: u32 = 5;

/// Action: write `data` to the client, then input `ORM_INPUT_WRITTEN`.
pub const ORM_ACTION_WRITE: u32 = 1;
/// Action: start an HTTP request (`method`, `url`, body in `data`, for `destination`),
/// then input `ORM_INPUT_STARTED` for `attempt`.
pub const ORM_ACTION_START: u32 = 2;
/// Action: abort the attempt the host started as `handle`; no completion is needed.
pub const ORM_ACTION_ABORT: u32 = 3;
/// Action: nothing to do until input arrives or, when `flags` has
/// `ORM_WAIT_HAS_DEADLINE`, until the host's clock reaches `deadline_ms`.
pub const ORM_ACTION_WAIT: u32 = 4;
/// Action: exit (everything has been written).
pub const ORM_ACTION_EXIT: u32 = 5;
/// Action: a call ended; `data` is its record, one JSON line (only with `call_records`).
pub const ORM_ACTION_RECORD: u32 = 6;

/// `ORM_ACTION_WAIT`'s `flags`: `deadline_ms` holds a deadline.
pub const ORM_WAIT_HAS_DEADLINE: u32 = 1;

/// `ORM_ACTION_START`'s `method`.
pub const ORM_METHOD_POST: u32 = 1;
/// `ORM_ACTION_START`'s `method`.
pub const ORM_METHOD_GET: u32 = 2;

/// `ORM_ACTION_START`'s `destination`: the model provider; add its credentials.
pub const ORM_DEST_PROVIDER: u32 = 1;
/// `ORM_ACTION_START`'s `destination`: an identity provider; send no credentials.
pub const ORM_DEST_IDENTITY_PROVIDER: u32 = 2;

/// What happened, filled by the host (`orm_engine_input`). Every pointer is the host's
/// and is read only during the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OrmInput {
    /// The attempt the input is about (`STARTED` and `HTTP_*`).
    pub attempt: u64,
    /// `STARTED`: the host's handle for the attempt, handed back by `ABORT` or on release.
    pub handle: u64,
    /// An `ORM_INPUT_*`.
    pub kind: u32,
    /// `WRITTEN`: 1 or 0; `STARTED`, `HTTP_FAILED`: 0 or an `ORM_TRANSPORT_*`;
    /// `HTTP_REPLY`, `HTTP_HEAD`: the HTTP status.
    pub status: u32,
    /// Bytes: the client's (`STDIN`), the body (`HTTP_REPLY`, `HTTP_BODY`), or why an
    /// attempt failed (`STARTED`, `HTTP_FAILED`; UTF-8, no secrets).
    pub data: *const u8,
    /// Length of `data`.
    pub data_len: usize,
    /// `HTTP_REPLY`, `HTTP_HEAD`: the reply's headers, UTF-8 `name: value` lines
    /// ending in `\n` or `\r\n`.
    pub headers: *const u8,
    /// Length of `headers`.
    pub headers_len: usize,
}

/// What to do next, filled by the engine (`orm_engine_poll`). `data` and `url` point into
/// the engine and stay valid until the host's next call with the same engine.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OrmAction {
    /// `START`: the attempt to report in `ORM_INPUT_STARTED` and every reply input.
    pub attempt: u64,
    /// `ABORT`: the handle the host gave in `ORM_INPUT_STARTED`.
    pub handle: u64,
    /// `WAIT` with `ORM_WAIT_HAS_DEADLINE`: the host's clock, in its milliseconds.
    pub deadline_ms: u64,
    /// An `ORM_ACTION_*`.
    pub kind: u32,
    /// `WAIT`: `ORM_WAIT_HAS_DEADLINE` or 0.
    pub flags: u32,
    /// `START`: an `ORM_METHOD_*`.
    pub method: u32,
    /// `START`: an `ORM_DEST_*`.
    pub destination: u32,
    /// `WRITE`: the bytes; `START`: the JSON body (empty for GET); `RECORD`: the line.
    pub data: *const u8,
    /// Length of `data`.
    pub data_len: usize,
    /// `START`: the URL (UTF-8).
    pub url: *const u8,
    /// Length of `url`.
    pub url_len: usize,
}

impl OrmAction {
    pub(crate) fn of(kind: u32) -> OrmAction {
        OrmAction {
            attempt: 0,
            handle: 0,
            deadline_ms: 0,
            kind,
            flags: 0,
            method: 0,
            destination: 0,
            data: std::ptr::null(),
            data_len: 0,
            url: std::ptr::null(),
            url_len: 0,
        }
    }
}
