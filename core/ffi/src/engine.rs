//! The engine behind the handle: the core's `Driver`, the host's clock, and what the last
//! action points at. Everything here is safe Rust over slices; `lib.rs` turns the host's
//! pointers into them.

use crate::abi::*;
use crate::clock::Clock;
use responses_mcp_core::{
    AttemptId, Destination, Driver, Event, HttpHead, HttpMethod, HttpReply, Message, Poll,
    ServerConfig, TransportError, TransportErrorKind,
};
use std::collections::BTreeSet;

/// Why a call was refused: its status and the message `orm_engine_error` gives.
pub(crate) struct Refusal {
    pub(crate) code: i32,
    pub(crate) message: String,
}

fn invalid(message: String) -> Refusal {
    Refusal {
        code: ORM_ERR_INVALID,
        message,
    }
}

/// One input, its pointers already made slices.
pub(crate) struct Input<'a> {
    pub(crate) kind: u32,
    pub(crate) attempt: u64,
    pub(crate) handle: u64,
    pub(crate) status: u32,
    pub(crate) data: &'a [u8],
    pub(crate) headers: &'a [u8],
}

pub struct OrmEngine {
    /// The host's handles are its own numbers.
    driver: Driver<u64>,
    clock: Clock,
    /// Attempts handed out by `START` and not yet reported `STARTED`.
    starting: BTreeSet<AttemptId>,
    /// A `WRITE` was handed out and not yet reported `WRITTEN`: only then may it be, or
    /// the driver would drop frames it has not handed out yet.
    writing: bool,
    /// What the last `START` or `RECORD` points at, kept until the next call.
    url: Vec<u8>,
    data: Vec<u8>,
    /// The message of the last refused call.
    pub(crate) error: String,
    /// A panic was caught in an earlier call: the state may be half changed.
    pub(crate) poisoned: bool,
}

impl OrmEngine {
    pub(crate) fn new(config: ServerConfig) -> OrmEngine {
        OrmEngine {
            driver: Driver::new(config),
            clock: Clock::new(),
            starting: BTreeSet::new(),
            writing: false,
            url: Vec::new(),
            data: Vec::new(),
            error: String::new(),
            poisoned: false,
        }
    }

    /// Feeds one input at the host's time; returns the handle of an attempt that ended.
    pub(crate) fn input(
        &mut self,
        now_ms: u64,
        unix_secs: u64,
        input: &Input<'_>,
    ) -> Result<Option<u64>, Refusal> {
        // Everything is checked before the clock or the engine moves.
        let message = self.checked(input)?;
        let now = self.clock.now(now_ms, unix_secs);
        if let Some(message) = message {
            return Ok(self.driver.deliver(now, message));
        }
        match input.kind {
            ORM_INPUT_START => self.driver.handle(now, Event::Start),
            ORM_INPUT_STDIN => self.driver.handle(now, Event::Stdin(input.data)),
            ORM_INPUT_STDIN_CLOSED => self.driver.handle(now, Event::StdinClosed),
            ORM_INPUT_TIMEOUT => self.driver.handle(now, Event::Timeout),
            ORM_INPUT_SHUTDOWN => self.driver.handle(now, Event::Shutdown),
            ORM_INPUT_WRITTEN => {
                self.writing = false;
                self.driver.written(now, input.status == 1);
            }
            _ => {
                // ORM_INPUT_STARTED, checked above.
                let attempt = AttemptId(input.attempt);
                self.starting.remove(&attempt);
                let result = match input.status {
                    0 => Ok(input.handle),
                    status => Err(transport_error(status, input.data)?),
                };
                self.driver.started(now, attempt, result);
            }
        }
        Ok(None)
    }

    /// The message `input` carries to the driver, if any, once it is checked against what
    /// this engine handed out (nothing has moved when it is refused).
    fn checked(&self, input: &Input<'_>) -> Result<Option<Message>, Refusal> {
        let attempt = AttemptId(input.attempt);
        let message = match input.kind {
            ORM_INPUT_START | ORM_INPUT_STDIN | ORM_INPUT_TIMEOUT | ORM_INPUT_SHUTDOWN
            | ORM_INPUT_STDIN_CLOSED => None,
            ORM_INPUT_WRITTEN => {
                if !self.writing {
                    return Err(invalid(
                        "ORM_INPUT_WRITTEN without an ORM_ACTION_WRITE to report: report each write once, after doing it".into(),
                    ));
                }
                if input.status > 1 {
                    return Err(invalid(format!(
                        "ORM_INPUT_WRITTEN's status is {}: give 1 (written) or 0 (the client's stream is closed)",
                        input.status
                    )));
                }
                None
            }
            ORM_INPUT_STARTED => {
                if !self.starting.contains(&attempt) {
                    return Err(invalid(format!(
                        "ORM_INPUT_STARTED names attempt {}, which this engine is not waiting to hear about: report each ORM_ACTION_START's attempt once",
                        input.attempt
                    )));
                }
                if input.status != 0 {
                    transport_error(input.status, input.data)?;
                }
                None
            }
            ORM_INPUT_HTTP_REPLY => Some(Message::Completed(
                attempt,
                Ok(HttpReply {
                    status: http_status(input.status)?,
                    headers: headers(input.headers)?,
                    body: input.data.to_vec(),
                }),
            )),
            ORM_INPUT_HTTP_FAILED => Some(Message::Completed(
                attempt,
                Err(transport_error(input.status, input.data)?),
            )),
            ORM_INPUT_HTTP_HEAD => Some(Message::Head(
                attempt,
                HttpHead {
                    status: http_status(input.status)?,
                    headers: headers(input.headers)?,
                },
            )),
            ORM_INPUT_HTTP_BODY => Some(Message::Body(attempt, input.data.to_vec())),
            ORM_INPUT_HTTP_END => Some(Message::End(attempt)),
            kind => {
                return Err(invalid(format!(
                    "input kind {kind} is unknown to ABI version {ORM_ABI_VERSION}: use an ORM_INPUT_* of the header"
                )))
            }
        };
        Ok(message)
    }

    /// The next action; its pointers stay valid until the next call with this engine.
    pub(crate) fn poll(&mut self) -> OrmAction {
        loop {
            match self.driver.poll() {
                Poll::Write(bytes) => {
                    self.writing = true;
                    let mut action = OrmAction::of(ORM_ACTION_WRITE);
                    action.data = bytes.as_ptr();
                    action.data_len = bytes.len();
                    return action;
                }
                Poll::Start(request) => {
                    self.starting.insert(request.attempt);
                    self.url = request.url.into_bytes();
                    self.data = request.body;
                    let mut action = OrmAction::of(ORM_ACTION_START);
                    action.attempt = request.attempt.0;
                    action.method = match request.method {
                        HttpMethod::Post => ORM_METHOD_POST,
                        HttpMethod::Get => ORM_METHOD_GET,
                    };
                    action.destination = match request.to {
                        Destination::Provider => ORM_DEST_PROVIDER,
                        Destination::IdentityProvider => ORM_DEST_IDENTITY_PROVIDER,
                    };
                    action.url = self.url.as_ptr();
                    action.url_len = self.url.len();
                    action.data = self.data.as_ptr();
                    action.data_len = self.data.len();
                    return action;
                }
                Poll::Abort(handle) => {
                    let mut action = OrmAction::of(ORM_ACTION_ABORT);
                    action.handle = handle;
                    return action;
                }
                Poll::Record(record) => {
                    self.data = record.to_json().into_bytes();
                    let mut action = OrmAction::of(ORM_ACTION_RECORD);
                    action.data = self.data.as_ptr();
                    action.data_len = self.data.len();
                    return action;
                }
                Poll::Wait(deadline) => {
                    let mut action = OrmAction::of(ORM_ACTION_WAIT);
                    if let Some(deadline) = deadline {
                        action.flags = ORM_WAIT_HAS_DEADLINE;
                        action.deadline_ms = self.clock.to_host_ms(deadline);
                    }
                    return action;
                }
                Poll::Exit => return OrmAction::of(ORM_ACTION_EXIT),
                // An ABI engine has no HTTP endpoint, no shared store and no traces, so
                // the core never asks for these; were it to, there is nobody to hand them
                // to, and the next action follows.
                Poll::Exchange(..) | Poll::Store(..) | Poll::Span(_) => {}
            }
        }
    }
}

fn http_status(status: u32) -> Result<u16, Refusal> {
    match u16::try_from(status) {
        Ok(code @ 100..=999) => Ok(code),
        _ => Err(invalid(format!(
            "HTTP status {status} is not a status code: give the reply's three digits"
        ))),
    }
}

fn transport_error(kind: u32, detail: &[u8]) -> Result<TransportError, Refusal> {
    let kind = match kind {
        ORM_TRANSPORT_CONNECT => TransportErrorKind::Connect,
        ORM_TRANSPORT_IO => TransportErrorKind::Io,
        ORM_TRANSPORT_TLS => TransportErrorKind::Tls,
        ORM_TRANSPORT_BODY_TOO_LARGE => TransportErrorKind::BodyTooLarge,
        ORM_TRANSPORT_INVALID => TransportErrorKind::Invalid,
        other => {
            return Err(invalid(format!(
                "transport failure kind {other} is unknown: use an ORM_TRANSPORT_* of the header"
            )))
        }
    };
    Ok(TransportError {
        kind,
        detail: String::from_utf8_lossy(detail).into_owned(),
    })
}

/// `name: value` lines, names lower-cased as the core expects them.
fn headers(bytes: &[u8]) -> Result<Vec<(String, String)>, Refusal> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| invalid("the headers are not UTF-8: give `name: value` lines".into()))?;
    let mut headers = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid(format!(
                "header line {:?} has no colon: give `name: value` lines",
                line.chars().take(80).collect::<String>()
            )));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(headers)
}
