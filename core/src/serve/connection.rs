//! One client connection, sans IO: the bytes it sends in; what to write, what to hand the
//! server and when to close out. A host runs one per connection and only moves bytes:
//!
//! ```text
//!   read bytes ──▶ feed ──▶ step(now) ─▶ Write(bytes)         write them, step again
//!                                    ├─▶ Exchange{message, …} hand it to the server; put
//!                                    │                        each ExchangeOut in a Mailbox
//!                                    │                        and write what `reply` gives
//!                                    ├─▶ Read                 read until `poll_timeout`,
//!                                    │                        then write `handle_timeout`'s
//!                                    └─▶ Close                close (see LINGER)
//! ```
//!
//! Requests are answered one at a time, in order: a pipelined request waits in the reader
//! until the exchange before it is over. The connection owns its deadlines (the idle
//! keep-alive time between requests, the time a client has to send a whole request), the
//! mailbox rule (progress may be dropped, the reply never) and the host's constants; a
//! host only moves bytes and keeps time.

use super::access::{cut_short, quoted, Access};
use super::endpoint::{
    answer, health, judge, read, ready, verify, Early, ExchangeResponse, Health, Routed, Verdict,
};
use super::exchange::{Asked, Caller, ExchangeOut, WayIn};
use crate::clients::ClientId;
use crate::http::{Incoming, Request, RequestLimits, RequestReader, CONTINUE};
use crate::jsonrpc::IdScan;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Bytes a host reads from a client at a time.
pub const READ_CHUNK: usize = 8 * 1024;
/// How long a refused connection gets to take its 503.
pub const REFUSAL_WRITE: Duration = Duration::from_secs(1);
/// How long a closing connection reads (and drops) what the client still sends, so that
/// the close is a FIN after our last response rather than a reset that could destroy it.
pub const LINGER: Duration = Duration::from_secs(1);
/// How long, after the server exits, connections get to write their last bytes.
pub const FLUSH_AT_EXIT: Duration = Duration::from_secs(5);

/// What the host does next on a connection.
#[derive(Debug)]
pub enum Step {
    /// Write these bytes, then step again.
    Write(Vec<u8>),
    /// Hand this to the server as a new exchange, then feed what the server sends for
    /// it to [`Connection::reply`] until that says the exchange is over.
    Exchange {
        /// What the request asks.
        asked: Asked,
    },
    /// An exchange is open: wait for the server's next [`ExchangeOut`].
    Await,
    /// Read more bytes (or close, at [`Connection::wait`]'s limit).
    Read,
    /// Close the connection; everything has been written.
    Close,
}

/// Which limit bounds the wait for the client's next bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// No request in progress: between requests, the idle keep-alive time; on a fresh
    /// connection that has not sent a byte yet, the request time from its opening (a
    /// silent socket holds a connection slot only that long). At its end the connection
    /// just closes.
    Idle,
    /// Part of a request arrived: the time a client has to send a whole request. At its
    /// end [`Connection::timed_out`] gives a 408 to write before closing.
    Request,
}

/// How long a connection waits for its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Between requests (keep-alive); at its end the connection just closes.
    pub idle: Duration,
    /// From a request's first byte to its last (the first request's: from the
    /// connection's opening); at its end a 408, then close (a connection that never sent
    /// a byte just closes).
    pub request: Duration,
}

/// What the connection made of the request being read, judged by its head before any of
/// its body is taken: nothing of a caller who is not admitted is held or built.
enum Current {
    /// No head yet.
    Unjudged,
    /// Admitted: the body is read whole, then served as `client`.
    Admitted {
        client: ClientId,
        takes_stream: bool,
        /// By the gate, from a token (no static token to mask in what is echoed).
        verified: bool,
        way: WayIn,
    },
    /// Its bearer token is with the server's gate (an exchange is open); the body waits
    /// in the client's socket.
    Verifying { takes_stream: bool, way: WayIn },
    /// The body is skipped as it comes (scanned for a bounded id when the answer is a
    /// refusal), then `early` answers it.
    Skipping(Box<(Early, Option<IdScan>)>),
    /// The body is skipped; the answer was written already (a refused token).
    Discarding,
}

/// One connection's state. See the module docs.
pub struct Connection {
    reader: RequestReader,
    current: Current,
    /// The client sent `Expect: 100-continue` and waits for it.
    continue_owed: bool,
    limits: RequestLimits,
    timeouts: Timeouts,
    /// The response of the exchange in progress.
    exchange: Option<ExchangeResponse>,
    /// The last response closes the connection.
    closing: bool,
    /// When the request being read began to arrive (for the first request: when the
    /// connection opened).
    request_began: Option<Instant>,
    /// A whole request came in on this connection: from then on, the wait between
    /// requests is the idle keep-alive time.
    served: bool,
    /// The listener drains: the response in progress is the last, and says so.
    draining: bool,
    /// When the current wait for the client's bytes ends (set by a `Read` step).
    deadline: Option<Instant>,
    /// The address the connection comes from (`None`: not a socket's).
    peer: Option<IpAddr>,
}

impl Connection {
    /// A new connection from `peer` whose requests are held to `limits` and `timeouts`.
    /// The peer decides whether a gateway's headers are believed, and is the call log's
    /// address of its requests.
    pub fn new(limits: RequestLimits, timeouts: Timeouts, peer: Option<IpAddr>) -> Self {
        Connection {
            reader: RequestReader::announcing_heads(limits),
            current: Current::Unjudged,
            continue_owed: false,
            limits,
            timeouts,
            exchange: None,
            closing: false,
            request_began: None,
            served: false,
            draining: false,
            deadline: None,
            peer,
        }
    }

    /// Adds bytes read from the client.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.reader.feed(bytes);
    }

    /// Whether the host may read more now. While an exchange is open the host keeps
    /// reading (to see the client leave), but holds at most one more whole request, and
    /// while a token is verified at most one read of the body that waits for it; beyond
    /// that it stops reading until the exchange is over.
    pub fn wants_bytes(&self) -> bool {
        let holds = match self.current {
            Current::Verifying { .. } => READ_CHUNK,
            _ => self.limits.max_head + self.limits.max_body,
        };
        self.reader.buffered() <= holds
    }

    /// With an exchange open and all the connection holds buffered (`wants_bytes`
    /// false): whether the host still reads one byte to see the client leave, and ends
    /// the connection whatever that read gives (a byte more is more than one whole
    /// request behind the open one). Without it a stream that writes nothing until it
    /// ends (`subscriptions/listen`) never sees its client go. Not while a token is
    /// verified: the body waits in the socket then.
    pub fn watches_when_full(&self) -> bool {
        !matches!(self.current, Current::Verifying { .. })
    }

    /// What bounds the wait for the next bytes.
    pub fn wait(&self) -> Wait {
        if self.reader.in_request() {
            Wait::Request
        } else {
            Wait::Idle
        }
    }

    /// Whether an exchange is open: the server owes this connection an answer.
    pub fn in_exchange(&self) -> bool {
        self.exchange.is_some()
    }

    /// The listener drains (the host says so before each step and each write; saying it
    /// again changes nothing): the request in progress is answered, its response says
    /// `Connection: close` (when its head is still to be written), and the connection
    /// closes after it. A token still with the gate is not yet a request in progress of
    /// its own: its request, once read, is answered the same way.
    pub fn drain(&mut self) {
        self.draining = true;
        if matches!(self.current, Current::Verifying { .. }) {
            return;
        }
        if let Some(response) = self.exchange.as_mut() {
            response.close();
            self.closing = true;
        }
    }

    /// What to do next at `now`. `load` is asked only for `GET /health`.
    pub fn step(&mut self, now: Instant, access: &Access, load: impl FnOnce() -> Health) -> Step {
        if self.exchange.is_some() {
            return Step::Await;
        }
        loop {
            if self.closing {
                return Step::Close;
            }
            match self.reader.next_incoming() {
                Ok(None) => {}
                Ok(Some(Incoming::Head)) => {
                    if let Some(step) = self.judge_head(access) {
                        return step;
                    }
                    if self.refused_before_its_body() {
                        return self.answer_unsent(load);
                    }
                    continue;
                }
                Ok(Some(Incoming::Continue)) => self.continue_owed = true,
                Ok(Some(Incoming::Skipped(bytes))) => {
                    if let Current::Skipping(skipping) = &mut self.current {
                        if let (_, Some(scan)) = skipping.as_mut() {
                            scan.feed(&bytes);
                        }
                    }
                    continue;
                }
                Ok(Some(Incoming::Request(mut request))) => {
                    // The last one of a draining listener.
                    request.keep_alive &= !self.draining;
                    match self.whole(&request, access) {
                        Some(routed) => return self.routed(&request, routed, load),
                        // Answered already, or closing.
                        None => continue,
                    }
                }
                Err(e) => {
                    self.closing = true;
                    if let Current::Discarding = self.current {
                        // Its answer was written: a second response would be read as
                        // the answer to a request never sent.
                        return Step::Close;
                    }
                    return Step::Write(refusal(&e));
                }
            }
            // A body is to come: asked for only when it will be read.
            if std::mem::take(&mut self.continue_owed) {
                match self.current {
                    Current::Admitted { .. } => return Step::Write(CONTINUE.to_vec()),
                    // Waits for the gate's word.
                    Current::Verifying { .. } => self.continue_owed = true,
                    Current::Unjudged | Current::Skipping(_) | Current::Discarding => {}
                }
            }
            self.deadline = Some(match self.wait() {
                // Fresh: the first request's time runs from the first step (the
                // connection's opening), byte or no byte. Keep-alive is a promise to a
                // client that was served, not to a socket that never spoke.
                Wait::Idle if !self.served => {
                    let opened = *self.request_began.get_or_insert(now);
                    crate::io::after(opened, self.timeouts.request)
                }
                Wait::Idle => {
                    self.request_began = None;
                    crate::io::after(now, self.timeouts.idle)
                }
                Wait::Request => {
                    let began = *self.request_began.get_or_insert(now);
                    crate::io::after(began, self.timeouts.request)
                }
            });
            return Step::Read;
        }
    }

    /// Judges the head just in: the body is read for an admitted caller, waits while a
    /// token is verified (the exchange that asks it is the step), or is skipped.
    fn judge_head(&mut self, access: &Access) -> Option<Step> {
        let head = self.reader.head()?;
        // A refusal to a client that waits for `100 Continue` is given at once and the
        // connection closes (`answer_unsent`): its answer, built here, says so.
        // A draining listener's answers say it too.
        let closing_head;
        let head = if self.draining || head.header("expect").is_some() {
            closing_head = Request {
                keep_alive: false,
                ..head.clone()
            };
            &closing_head
        } else {
            head
        };
        match judge(head, access, self.peer) {
            Verdict::Read {
                caller: Caller::Client(client),
                takes_stream,
                way,
            } => {
                self.current = Current::Admitted {
                    client,
                    takes_stream,
                    verified: false,
                    way,
                };
                None
            }
            Verdict::Read {
                caller: Caller::Bearer(token),
                takes_stream,
                way,
            } => match verify(head, token, takes_stream) {
                Routed::Exchange { asked, response } => {
                    self.current = Current::Verifying { takes_stream, way };
                    self.exchange = Some(response);
                    Some(Step::Exchange { asked })
                }
                Routed::Respond(bytes) => Some(Step::Write(bytes)),
                Routed::Health | Routed::Ready => None,
            },
            Verdict::Answer(early) => {
                let scan = matches!(early, Early::Refused { .. }).then(IdScan::new);
                self.current = Current::Skipping(Box::new((early, scan)));
                self.reader.skip_body();
                None
            }
        }
    }

    /// Whether the request just judged is answered without its body and its client
    /// said it waits for `100 Continue` before sending it: it is answered at once.
    fn refused_before_its_body(&self) -> bool {
        matches!(self.current, Current::Skipping(_))
            && self
                .reader
                .head()
                .is_some_and(|h| h.header("expect").is_some())
    }

    /// The answer of a skipped request whose client waits for `100 Continue` before it
    /// sends the body: given now, with no id (it never asked for the body, whether or
    /// not some of it came), and the connection closes.
    fn answer_unsent(&mut self, load: impl FnOnce() -> Health) -> Step {
        let head = self.reader.head().cloned();
        let current = std::mem::replace(&mut self.current, Current::Unjudged);
        self.closing = true;
        match (head, current) {
            (Some(mut head), Current::Skipping(skipping)) => {
                // The answer says the connection closes, as it does.
                head.keep_alive = false;
                let (early, _) = *skipping;
                let routed = answer(&head, early, None);
                self.routed(&head, routed, load)
            }
            _ => Step::Close,
        }
    }

    /// A whole request, as its head was judged: what it gets (`None`: nothing, its
    /// answer was written already, or the connection closes).
    fn whole(&mut self, request: &Request, access: &Access) -> Option<Routed> {
        let current = std::mem::replace(&mut self.current, Current::Unjudged);
        self.continue_owed = false;
        // The next request's time runs from its own first byte.
        self.request_began = None;
        self.served = true;
        self.closing = !request.keep_alive;
        let routed = match current {
            Current::Admitted {
                client,
                takes_stream,
                verified: false,
                way,
            } => read(request, &|v| access.shown(v), takes_stream, (client, way)),
            Current::Admitted {
                client,
                takes_stream,
                verified: true,
                way,
            } => read(
                request,
                &|v| quoted(&cut_short(v)),
                takes_stream,
                (client, way),
            ),
            Current::Skipping(skipping) => {
                let (mut early, scan) = *skipping;
                if let Early::Refused { head, .. } = &mut early {
                    // Judged before the listener began to drain.
                    head.keep_alive &= request.keep_alive;
                }
                answer(request, early, scan.and_then(IdScan::finish))
            }
            Current::Discarding => return None,
            // Every head is judged as it comes; a body never completes while its token
            // is with the gate (the exchange is open, and nothing is read from it).
            Current::Unjudged | Current::Verifying { .. } => {
                log::warn!("a request completed before its head was judged; closing");
                self.closing = true;
                return None;
            }
        };
        Some(routed)
    }

    fn routed(&mut self, request: &Request, routed: Routed, load: impl FnOnce() -> Health) -> Step {
        match routed {
            Routed::Respond(bytes) => Step::Write(bytes),
            Routed::Health => Step::Write(health(request, load())),
            Routed::Ready => Step::Write(ready(request, load())),
            Routed::Exchange { asked, response } => {
                self.exchange = Some(response);
                Step::Exchange { asked }
            }
        }
    }

    /// The bytes to write for the server's `out` on the open exchange (none when no
    /// exchange is open: the server spoke to a connection that has moved on). A verified
    /// token's request is read on as that client; a refused one's body is skipped.
    pub fn reply(&mut self, out: ExchangeOut) -> Vec<u8> {
        let Some(response) = self.exchange.as_mut() else {
            return Vec::new();
        };
        if let (Current::Verifying { takes_stream, way }, ExchangeOut::Verified(client)) =
            (&mut self.current, &out)
        {
            let (client, takes_stream, way) = (*client, *takes_stream, std::mem::take(way));
            self.exchange = None;
            self.current = Current::Admitted {
                client,
                takes_stream,
                verified: true,
                way,
            };
            // The body's time runs from now: the gate's wait is not the client's.
            self.request_began = None;
            return Vec::new();
        }
        // A refused token whose client waits for `100 Continue`: answered at once, and
        // the connection closes (as for a request refused by its head alone); its
        // response, made when the head was judged, says so.
        let refused_unsent = matches!(self.current, Current::Verifying { .. })
            && self
                .reader
                .head()
                .is_some_and(|h| h.header("expect").is_some());
        let (bytes, done) = response.write(out);
        if done {
            self.exchange = None;
            if let Current::Verifying { .. } = self.current {
                // Refused: its body, still unread, is dropped as it comes.
                self.current = Current::Discarding;
                self.continue_owed = false;
                self.reader.skip_body();
                self.closing |= refused_unsent;
            }
        }
        bytes
    }

    /// When the wait for the client's bytes that the last `Read` step began ends.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }

    /// The time is `now`: once the wait has run out, the bytes to write (a 408 when a
    /// request was cut short, else none) before closing; `None` while time is left.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.deadline.is_none_or(|at| now < at) {
            return None;
        }
        self.deadline = None;
        Some(self.timed_out())
    }

    /// Gives up the wait of [`Connection::wait`]: the bytes to write (a 408 when a
    /// request was cut short) before closing.
    pub fn timed_out(&mut self) -> Vec<u8> {
        self.closing = true;
        if let Current::Discarding = self.current {
            // Its answer was written already.
            return Vec::new();
        }
        match self.wait() {
            Wait::Idle => Vec::new(),
            Wait::Request => plain(
                408,
                "the request did not arrive in time: send the whole request at once",
            ),
        }
    }
}

#[path = "connection/closing.rs"]
mod closing;
#[path = "connection/mailbox.rs"]
mod mailbox;

pub use closing::too_many_connections;
use closing::{plain, refusal};
pub use mailbox::{keeps, Mailbox, MAILBOX};

#[cfg(test)]
#[path = "connection/tests.rs"]
mod tests;
