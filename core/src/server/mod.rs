//! The server state machine: bytes and events in, actions out.
//!
//! ```text
//!   runtime                                    Server
//!   ───────                                    ──────
//!   stdin bytes ─────── handle(now, Stdin) ──▶ framer ─▶ JSON-RPC ─▶ lifecycle / tools
//!   HTTP reply/failure ─ handle(now, Http*) ─▶ call table (retries, backoff, answer)
//!   timer fired ─────── handle(now, Timeout) ▶ deadlines: attempt timeouts, backoff, progress
//!                         poll_output() ◀──── Write(frame) | Http(request) | Abort(attempt) | Exit
//!                         poll_timeout() ◀─── next deadline
//! ```
//!
//! The runtime drains `poll_output` after every `handle`, performs each action, then
//! re-arms its single timer from `poll_timeout`. Completions for attempts that were
//! aborted are normal and ignored.

mod calls;
mod config;
mod lifecycle;

pub use config::{Profile, Profiles, SearchDefaults, ServerConfig};

use crate::framing::{encode, FrameError, Framer, Framing};
use crate::jsonrpc::{code, Reply, RpcError};
use crate::mcp::ProtocolVersion;
use calls::CallTable;
use lifecycle::Batches;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

/// The time of an event: a monotonic instant for deadlines, and Unix seconds for dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    /// Monotonic time; deadlines are compared against it.
    pub instant: Instant,
    /// Wall-clock seconds since 1970-01-01 UTC; used for "today" in Asia/Tokyo.
    pub unix_secs: u64,
}

/// Identifies one HTTP attempt; never the client's request id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId(pub u64);

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// An HTTP reply from upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Headers with lower-case names (only `retry-after*` are read).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Why an attempt produced no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportErrorKind {
    /// Could not connect (DNS, refused, proxy). Retried.
    Connect,
    /// The connection broke or timed out mid-way. Retried.
    Io,
    /// TLS handshake or certificate failure. Not retried.
    Tls,
    /// The body was larger than the runtime accepts. Not retried.
    BodyTooLarge,
    /// The request could not be made at all (bad URL, bad proxy setting). Not retried.
    Invalid,
}

/// A transport failure with a description that holds no secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    /// What kind of failure.
    pub kind: TransportErrorKind,
    /// A short description.
    pub detail: String,
}

/// An event for the server.
#[derive(Debug)]
pub enum Input<'a> {
    /// Bytes read from stdin.
    Stdin(&'a [u8]),
    /// Stdin reached end of file.
    StdinClosed,
    /// An attempt got a reply.
    HttpReply(AttemptId, HttpReply),
    /// An attempt failed without a reply.
    HttpFailed(AttemptId, TransportError),
    /// The deadline from [`Server::poll_timeout`] has passed.
    Timeout,
    /// SIGINT/SIGTERM: abort everything and exit.
    Shutdown,
    /// Stdout is closed: nothing more can be said, so abort everything and exit.
    OutputClosed,
}

/// A request to send upstream. The runtime adds the credentials and the headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// Identifies the attempt in the completion.
    pub attempt: AttemptId,
    /// `POST` target: `{base_url}/responses`.
    pub url: String,
    /// The JSON body.
    pub body: Vec<u8>,
}

/// An action for the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Write these bytes (one whole frame) to stdout and flush.
    Write(Vec<u8>),
    /// Start this HTTP attempt.
    Http(HttpRequest),
    /// Abort this attempt and close its connection; its completion will be ignored.
    Abort(AttemptId),
    /// Exit the process with status 0.
    Exit,
}

/// Where the session is in the MCP lifecycle.
///
/// ```text
///  AwaitingInit ──initialize──▶ Ready(version)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    AwaitingInit,
    Ready(ProtocolVersion),
}

/// The MCP server. See the module docs for the driving loop.
pub struct Server {
    config: ServerConfig,
    framer: Framer,
    /// Framing of replies: the first framing the client used, unless forced to lines.
    reply_framing: Option<Framing>,
    session: Session,
    calls: CallTable,
    batches: Batches,
    outputs: VecDeque<Output>,
    stdin_closed: bool,
    /// Set once `Output::Exit` has been queued; all later input is ignored.
    exited: bool,
    /// When in-flight calls are abandoned after stdin closed.
    grace_deadline: Option<Instant>,
    /// The serialised `tools/list` result, built on first use (the version is fixed).
    tools_list_json: Option<Vec<u8>>,
    /// `config.instructions` encoded once as a JSON string, for every request body.
    instructions_json: Vec<u8>,
}

impl Server {
    /// A server waiting for `initialize`.
    pub fn new(config: ServerConfig) -> Self {
        Server {
            framer: Framer::new(config.max_message_bytes),
            reply_framing: config.force_line_output.then_some(Framing::Line),
            calls: CallTable::new(config.jitter_seed),
            instructions_json: serde_json::to_vec(&config.instructions).unwrap_or_default(),
            config,
            session: Session::AwaitingInit,
            batches: Batches::default(),
            outputs: VecDeque::new(),
            stdin_closed: false,
            exited: false,
            grace_deadline: None,
            tools_list_json: None,
        }
    }

    /// Feeds one event.
    pub fn handle(&mut self, now: Now, input: Input<'_>) {
        if self.exited {
            return;
        }
        match input {
            Input::Stdin(bytes) => {
                if !self.stdin_closed {
                    self.framer.push(bytes);
                    self.read_frames(now);
                }
            }
            Input::StdinClosed => {
                if !self.stdin_closed {
                    self.framer.finish();
                    self.read_frames(now);
                    self.stdin_closed = true;
                    self.grace_deadline = Some(now.instant + self.config.shutdown_grace);
                    log::debug!("stdin closed; {} call(s) in flight", self.calls.len());
                }
            }
            Input::HttpReply(attempt, reply) => self.on_http_reply(now, attempt, reply),
            Input::HttpFailed(attempt, error) => self.on_http_failed(now, attempt, error),
            Input::Timeout => self.on_timeout(now),
            Input::Shutdown | Input::OutputClosed => {
                self.abort_all(None);
                self.exit();
            }
        }
        if !self.exited {
            self.start_queued(now);
        }
        self.maybe_exit();
        self.calls.prune_timers();
    }

    /// The next action, or `None` when there is nothing to do.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When to call `handle(now, Input::Timeout)` next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.exited {
            return None;
        }
        let calls = self.calls.next_deadline();
        match (
            calls,
            self.grace_deadline.filter(|_| !self.calls.is_empty()),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the server has asked to exit.
    pub fn is_exited(&self) -> bool {
        self.exited
    }

    /// Number of calls in flight or queued.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    fn read_frames(&mut self, now: Now) {
        loop {
            let parsed = match self.framer.next_frame() {
                None => break,
                Some(Ok(frame)) => {
                    let framing = frame.framing;
                    (
                        framing,
                        Ok(serde_json::from_slice::<serde_json::Value>(frame.bytes)),
                    )
                }
                Some(Err(e)) => (e.framing(), Err(e)),
            };
            let (framing, result) = parsed;
            self.reply_framing.get_or_insert(framing);
            match result {
                Ok(Ok(value)) => self.on_message(now, value),
                Ok(Err(e)) => self.send_reply(Reply::Failure {
                    id: None,
                    error: RpcError::new(code::PARSE_ERROR, format!("parse error: {e}")),
                }),
                Err(e) => self.on_frame_error(e),
            }
        }
    }

    fn on_frame_error(&mut self, e: FrameError) {
        let code = match e {
            FrameError::TooLarge { .. } => code::INVALID_REQUEST,
            FrameError::Header(_) | FrameError::Truncated(_) => code::PARSE_ERROR,
        };
        log::debug!("framing error: {e}");
        self.send_reply(Reply::Failure {
            id: None,
            error: RpcError::new(code, e.to_string()),
        });
    }

    fn on_timeout(&mut self, now: Now) {
        if let Some(deadline) = self.grace_deadline {
            if now.instant >= deadline && !self.calls.is_empty() {
                log::debug!("grace period over; aborting {} call(s)", self.calls.len());
                self.abort_all(Some("the server is shutting down (stdin closed) and the call did not finish in time"));
                return;
            }
        }
        self.calls_on_timeout(now);
    }

    fn maybe_exit(&mut self) {
        if self.stdin_closed && self.calls.is_empty() && !self.exited {
            self.exit();
        }
    }

    fn exit(&mut self) {
        if !self.exited {
            self.exited = true;
            self.outputs.push_back(Output::Exit);
        }
    }

    /// Serialises `message` and queues it as one frame.
    fn write_json(&mut self, message: &impl Serialize) {
        match serde_json::to_vec(message) {
            Ok(json) => self.write_frame(&json),
            Err(e) => log::error!("could not serialise a reply: {e}"),
        }
    }

    /// Queues compact JSON as one frame in the reply framing.
    fn write_frame(&mut self, json: &[u8]) {
        let mut out = Vec::with_capacity(json.len() + 24);
        encode(self.reply_framing.unwrap_or(Framing::Line), json, &mut out);
        self.outputs.push_back(Output::Write(out));
    }

    fn send_reply(&mut self, reply: Reply) {
        match reply {
            // JSON-RPC answers an unreadable id with `"id": null`; the 2025-11-25 schema
            // instead makes `id` optional and does not allow null, so it is left out there.
            Reply::Failure { id: None, error }
                if self.protocol_version() == Some(ProtocolVersion::V2025_11_25) =>
            {
                self.write_json(&serde_json::json!({ "jsonrpc": "2.0", "error": error }));
            }
            reply => self.write_json(&reply),
        }
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match self.session {
            Session::Ready(v) => Some(v),
            Session::AwaitingInit => None,
        }
    }
}

/// Time after `now` by `d`, saturating instead of panicking.
fn after(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(86_400 * 365)))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests;
