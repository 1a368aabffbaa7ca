//! The blocking HTTP client: HTTP/1.1 on blocking sockets (rustls for https), each attempt
//! on a thread of its own, kept-alive connections pooled per origin and shared by the
//! threads. The request bytes, proxy tunnels and TLS settings are the configuration
//! crate's ([`responses_mcp_config::client`]), the response reader the core's: this
//! module only moves bytes.
//!
//! To abort, [`Attempt::abort`] shuts the attempt's socket down, which closes it at once:
//! a blocked read or write returns straight away and the server sees the connection close.

mod conn;
mod connect;

use conn::Conn;
use connect::Connector;
use responses_mcp_config::client::target::{Origin, Target};
use responses_mcp_config::client::{invalid, message, read_error, startup_header_lines};
use responses_mcp_config::Startup;
use responses_mcp_core::http::{is_event_stream, scrub, Reader, Response, MAX_BODY_BYTES};
use responses_mcp_core::Message;
use responses_mcp_core::{
    AttemptId, HttpHead, HttpReply, HttpRequest, TransportError, TransportErrorKind,
};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Stack of the thread that runs one attempt; rustls needs far less than the 2 MiB
/// default, and many attempts may be in flight.
pub const ATTEMPT_STACK: usize = 256 * 1024;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused: servers drop idle
/// connections, and a request on one they are dropping is wasted.
const MAX_IDLE_AGE: Duration = Duration::from_secs(30);

/// Sends attempts upstream with the credentials and headers of the configuration.
#[derive(Clone)]
pub struct Upstream {
    shared: Arc<Shared>,
}

struct Shared {
    /// The request header lines every request carries, or why they cannot be sent.
    headers: Result<Vec<u8>, &'static str>,
    /// The key's bytes, to scrub from bodies that echo it back.
    key: Option<Vec<u8>>,
    connector: Connector,
    /// Idle connections, newest last.
    idle: Mutex<Vec<Idle>>,
}

struct Idle {
    origin: Origin,
    conn: Conn,
    since: Instant,
}

/// One attempt: the socket it runs on, once it has one, so that another thread can close
/// it. Clones share it.
#[derive(Clone, Default)]
pub struct Attempt {
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    /// A handle on the attempt's socket.
    socket: Option<TcpStream>,
    aborted: bool,
}

impl Attempt {
    /// Closes the attempt's connection; the request in progress fails at once, and one not
    /// yet connected fails when it connects.
    pub fn abort(self) {
        let mut slot = lock(&self.slot);
        slot.aborted = true;
        if let Some(socket) = slot.socket.take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// The attempt now runs on `socket`; refused if it was aborted meanwhile.
    fn runs_on(&self, socket: &TcpStream) -> Result<(), TransportError> {
        let mut slot = lock(&self.slot);
        if slot.aborted {
            return Err(aborted());
        }
        slot.socket = socket.try_clone().ok();
        Ok(())
    }

    fn aborted(&self) -> bool {
        lock(&self.slot).aborted
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn aborted() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        detail: "the attempt was aborted".into(),
    }
}

impl Upstream {
    /// A client for `startup`'s configuration, through its proxy if it has one.
    pub fn new(startup: &Startup) -> Self {
        Upstream::with(
            startup_header_lines(startup),
            startup
                .api_key
                .as_ref()
                .map(|k| k.expose().as_bytes().to_vec()),
            Connector::new(
                startup.proxy.proxy().cloned(),
                startup.ca_pem.as_deref(),
                // The core aborts attempts at their deadline; this only backs it up.
                startup.resolved.timeout() + Duration::from_secs(30),
            ),
        )
    }

    fn with(
        headers: Result<Vec<u8>, &'static str>,
        key: Option<Vec<u8>>,
        connector: Connector,
    ) -> Self {
        Upstream {
            shared: Arc::new(Shared {
                headers,
                key,
                connector,
                idle: Mutex::new(Vec::new()),
            }),
        }
    }

    /// A new attempt, not yet connected.
    pub fn begin(&self) -> Attempt {
        Attempt::default()
    }

    /// Performs one attempt, blocking until it ends. A 2xx event stream goes to `stream`
    /// as it arrives (its head, then body pieces; the caller sends the end); any other
    /// reply is read whole.
    pub fn send(
        &self,
        attempt: &Attempt,
        request: &HttpRequest,
        mut stream: impl FnMut(Message) -> bool,
    ) -> Result<Delivered, TransportError> {
        let target = Target::parse(&request.url).map_err(invalid)?;
        let headers = self.shared.headers.as_deref().map_err(|why| invalid(why))?;
        let https = target.origin.tls;
        let message = message(request.method, &target, headers, &request.body);
        let (response, conn, streamed) = loop {
            let (mut conn, reused) = match self.take(&target.origin) {
                Some(conn) => {
                    attempt.runs_on(conn.socket())?;
                    (conn, true)
                }
                None => (
                    self.shared
                        .connector
                        .connect(&target.origin, |socket| attempt.runs_on(socket))?,
                    false,
                ),
            };
            match exchange(&mut conn, &message, request.attempt, &mut stream, https) {
                Ok((response, streamed)) => break (response, conn, streamed),
                // The server closed the kept-alive connection before reading the request;
                // it is not a failure of this call.
                Err(Failed {
                    answered: false, ..
                }) if reused && !attempt.aborted() => {
                    log::debug!("a kept-alive connection was closed; reconnecting");
                }
                Err(failed) => return Err(failed.error),
            }
        };
        if response.reusable && !attempt.aborted() {
            self.keep(target.origin, conn);
        }
        if streamed {
            return Ok(Delivered::Streamed);
        }
        Ok(Delivered::Whole(HttpReply {
            status: response.status,
            headers: response.headers,
            body: match &self.shared.key {
                Some(key) => scrub(response.body, key),
                None => response.body,
            },
        }))
    }

    /// The newest idle connection to `origin` that is still good; stale ones are closed.
    fn take(&self, origin: &Origin) -> Option<Conn> {
        let mut idle = lock(&self.shared.idle);
        while let Some(i) = idle.iter().rposition(|c| &c.origin == origin) {
            let conn = idle.remove(i);
            if conn.since.elapsed() < MAX_IDLE_AGE && conn.conn.is_quiet() {
                return Some(conn.conn);
            }
        }
        None
    }

    /// Keeps `conn` for the next request to `origin`, closing the oldest if full.
    fn keep(&self, origin: Origin, conn: Conn) {
        let mut idle = lock(&self.shared.idle);
        if idle.len() >= MAX_IDLE {
            idle.remove(0);
        }
        idle.push(Idle {
            origin,
            conn,
            since: Instant::now(),
        });
    }
}

/// How a reply was handed over.
pub enum Delivered {
    /// Read whole.
    Whole(HttpReply),
    /// Sent as it arrived; the caller sends its end.
    Streamed,
}

/// How an exchange on a connection failed.
struct Failed {
    error: TransportError,
    /// Some of the response arrived, so the request surely did.
    answered: bool,
}

/// Writes the request and reads its response, handing a 2xx event stream to `deliver`
/// as it arrives; the response, and whether it was streamed.
fn exchange(
    conn: &mut Conn,
    message: &[u8],
    attempt: AttemptId,
    deliver: &mut impl FnMut(Message) -> bool,
    https: bool,
) -> Result<(Response, bool), Failed> {
    let written = conn.write_all(message).and_then(|()| conn.flush());
    if let Err(e) = written {
        return Err(Failed {
            error: io_error(e, https),
            answered: false,
        });
    }
    let gone = || Failed {
        error: TransportError {
            kind: TransportErrorKind::Io,
            detail: "the server is shutting down".into(),
        },
        answered: true,
    };
    let mut reader = Reader::new(MAX_BODY_BYTES);
    // Whether the reply is an event stream, once its head is in.
    let mut streaming: Option<bool> = None;
    loop {
        let read = loop {
            match conn.read(reader.space()) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        let outcome = match read {
            Ok(n) => reader.filled(n).map_err(read_error),
            Err(e) => Err(io_error(e, https)),
        };
        let done = outcome.map_err(|error| Failed {
            error,
            answered: reader.started(),
        })?;
        if streaming.is_none() {
            // The head is in the reader while the body arrives, or in the response when
            // it all came in one read.
            let head = match &done {
                Some(response) => Some((response.status, response.headers.as_slice())),
                None => reader.head(),
            };
            streaming = head.map(|(status, headers)| is_event_stream(status, headers));
            if let (Some(true), Some((status, headers))) = (streaming, head) {
                let head = HttpHead {
                    status,
                    headers: headers.to_vec(),
                };
                if !deliver(Message::Head(attempt, head)) {
                    return Err(gone());
                }
            }
        }
        if streaming == Some(true) {
            let piece = match &done {
                Some(response) => response.body.clone(),
                None => reader.take_body(),
            };
            if !piece.is_empty() && !deliver(Message::Body(attempt, piece)) {
                return Err(gone());
            }
        }
        if let Some(response) = done {
            return Ok((response, streaming == Some(true)));
        }
    }
}

/// Maps a socket or TLS failure to a kind the core can decide on, with a description
/// that holds no secrets (it names causes, never headers).
fn io_error(e: io::Error, https: bool) -> TransportError {
    use io::ErrorKind;
    let tls = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .map(ToString::to_string);
    if let Some(detail) = tls {
        return TransportError {
            kind: TransportErrorKind::Tls,
            detail: format!("TLS: {detail}"),
        };
    }
    let kind = match e.kind() {
        ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable => TransportErrorKind::Connect,
        // A peer that does not speak TLS, or a broken record.
        ErrorKind::InvalidData if https => TransportErrorKind::Tls,
        _ => TransportErrorKind::Io,
    };
    TransportError {
        kind,
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests;
