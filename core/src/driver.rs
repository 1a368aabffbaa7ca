//! The loop a host runs around the [`Server`]: one [`Driver::poll`] that says what to do
//! next, and a method per thing that happened. It batches frames into one write, keeps the
//! host's handle of every attempt in flight, and hands each handle back exactly once: to
//! abort it, or when the attempt's completion arrives.
//!
//! `H` is whatever the host needs to abort an attempt (a task, a socket, a thread's abort
//! flag); the driver only stores it.

use crate::io::{AttemptId, ExchangeId, HttpHead, HttpReply, HttpRequest, Now, TransportError};
use crate::serve::exchange::{Asked, ExchangeOut};
use crate::server::io::{Input, Output};
use crate::server::Server;
use crate::settings::ServerConfig;
use crate::store::{StoreId, StoreOp, StoreReply};
use std::collections::BTreeMap;
use std::time::Instant;

/// Frames are handed out as one write once this many bytes are waiting, even mid-drain.
pub const MAX_PENDING_OUTPUT: usize = 1 << 20;

/// What the host does next.
// Not `#[non_exhaustive]`: a host's loop must stop compiling when a new action appears.
#[derive(Debug, PartialEq)]
pub enum Poll<'a, H> {
    /// Write these bytes to stdout and flush, then call [`Driver::written`]. Until then,
    /// every poll returns the same bytes.
    Write(&'a [u8]),
    /// Start this attempt, then report its handle with [`Driver::started`].
    Start(HttpRequest),
    /// Abort this attempt (close its connection); no completion is needed.
    Abort(H),
    /// Send this on the response of an HTTP exchange ([`Message::Exchange`]); ignore it
    /// when that client has gone.
    Exchange(ExchangeId, ExchangeOut),
    /// Perform this operation on the shared store, then deliver its answer as
    /// [`Message::StoreReply`].
    Store(StoreId, StoreOp),
    /// A call ended: write its record to the call log when the host keeps one
    /// ([`crate::ledger::CallRecord::to_json`] is its line).
    Record(crate::ledger::CallRecord),
    /// A span ended: hand it to the trace exporter, which must never make the loop wait
    /// (a full queue drops it). Only when [`crate::ServerConfig::traces`] is on.
    Span(crate::spans::Span),
    /// Nothing to do: wait for input, or until this instant and then call
    /// [`Driver::handle`] with [`Event::Timeout`].
    Wait(Option<Instant>),
    /// Exit with status 0 (everything has been written).
    Exit,
}

/// What happened, other than an attempt's completion ([`Driver::completed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The host is up: see [`Input::Start`].
    Start,
    /// Bytes read from stdin.
    Stdin(&'a [u8]),
    /// Stdin reached end of file.
    StdinClosed,
    /// The instant of the last [`Poll::Wait`] has passed.
    Timeout,
    /// SIGINT/SIGTERM: abort everything and exit.
    Shutdown,
    /// The trace exporter dropped this many more spans: see [`Input::SpansDropped`].
    SpansDropped(u64),
}

/// What happened, owned, so that a host's threads and tasks can send it over a channel
/// to the loop that owns the driver ([`Driver::deliver`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum Message {
    /// Bytes read from stdin.
    Stdin(Vec<u8>),
    /// Stdin reached end of file.
    StdinClosed,
    /// SIGINT/SIGTERM: abort everything and exit.
    Shutdown,
    /// SIGINT/SIGTERM while serving HTTP: finish the calls in flight, take no new ones,
    /// then exit (see [`Input::Drain`]).
    Drain,
    /// An attempt ended.
    Completed(AttemptId, Result<HttpReply, TransportError>),
    /// An attempt's reply head arrived; its body follows as `Body`, then `End` (or
    /// `Completed` with an error, when the connection breaks).
    Head(AttemptId, HttpHead),
    /// Body bytes of an attempt's reply.
    Body(AttemptId, Vec<u8>),
    /// An attempt's reply body ended: the attempt is over.
    End(AttemptId),
    /// A JSON-RPC message POSTed to the HTTP endpoint, already let through by the
    /// endpoint's checks ([`crate::serve`]); see [`Input::Exchange`].
    Exchange {
        /// The host's id for this request, unique among its open exchanges.
        id: ExchangeId,
        /// What it asks: the connection's [`crate::serve::connection::Step::Exchange`].
        asked: Asked,
    },
    /// The client of an exchange closed its connection before the reply.
    ExchangeClosed(ExchangeId),
    /// The shared store answered operation `id` after `took`.
    StoreReply {
        /// The operation ([`Poll::Store`]).
        id: StoreId,
        /// Its answer.
        reply: StoreReply,
        /// From sending it to its answer.
        took: std::time::Duration,
    },
    /// Whether the shared store answers, when that changed.
    StoreHealth(bool),
    /// A message on the shared store's channel, as received.
    StoreEvent(String),
    /// The store's channel is (again) subscribed.
    StoreSubscribed,
}

/// The server plus what a host loop needs around it. See the module docs.
pub struct Driver<H> {
    server: Server,
    /// Handles of attempts the server still has on record.
    attempts: BTreeMap<AttemptId, H>,
    /// Frames waiting to be written, in order.
    frames: Vec<u8>,
    /// `frames` has been handed out and not yet reported written.
    writing: bool,
    /// The server asked to exit; it happens once `frames` is written.
    exit: bool,
}

impl<H> Driver<H> {
    /// A driver around a new server for `config`.
    pub fn new(config: ServerConfig) -> Self {
        Driver {
            server: Server::new(config),
            attempts: BTreeMap::new(),
            frames: Vec::new(),
            writing: false,
            exit: false,
        }
    }

    /// What to do next. Call it until it says [`Poll::Wait`] or [`Poll::Exit`].
    #[must_use]
    pub fn poll(&mut self) -> Poll<'_, H> {
        if !self.writing {
            while let Some(output) = self.server.poll_output() {
                match output {
                    Output::Write(frame) => {
                        self.frames.extend_from_slice(&frame);
                        if self.frames.len() >= MAX_PENDING_OUTPUT {
                            self.writing = true;
                            break;
                        }
                    }
                    Output::Http(request) => return Poll::Start(request),
                    Output::Exchange(id, out) => return Poll::Exchange(id, out),
                    Output::Abort(id) => {
                        if let Some(handle) = self.attempts.remove(&id) {
                            return Poll::Abort(handle);
                        }
                    }
                    Output::Record(record) => return Poll::Record(record),
                    Output::Span(span) => return Poll::Span(span),
                    Output::Store(id, op) => return Poll::Store(id, op),
                    Output::Exit => self.exit = true,
                }
            }
        }
        if !self.frames.is_empty() {
            self.writing = true;
            return Poll::Write(&self.frames);
        }
        if self.exit {
            return Poll::Exit;
        }
        Poll::Wait(self.server.poll_timeout())
    }

    /// Reports the write of the bytes from [`Poll::Write`]; `ok: false` means stdout is
    /// closed, which ends everything.
    pub fn written(&mut self, now: Now, ok: bool) {
        self.frames.clear();
        self.writing = false;
        if !ok {
            log::debug!("stdout closed; stopping");
            self.server.handle(now, Input::OutputClosed);
        }
    }

    /// Reports the attempt from [`Poll::Start`]: its handle, or why it could not start.
    pub fn started(&mut self, now: Now, attempt: AttemptId, result: Result<H, TransportError>) {
        match result {
            Ok(handle) => {
                self.attempts.insert(attempt, handle);
            }
            Err(e) => self.server.handle(now, Input::HttpFailed(attempt, e)),
        }
    }

    /// Reports an attempt's completion. Returns its handle when the server still had it on
    /// record, for the host to release (an aborted attempt's completion returns `None`).
    pub fn completed(
        &mut self,
        now: Now,
        attempt: AttemptId,
        result: Result<HttpReply, TransportError>,
    ) -> Option<H> {
        let handle = self.attempts.remove(&attempt);
        match result {
            Ok(reply) => self.server.handle(now, Input::HttpReply(attempt, reply)),
            Err(e) => self.server.handle(now, Input::HttpFailed(attempt, e)),
        }
        handle
    }

    /// Feeds one event.
    pub fn handle(&mut self, now: Now, event: Event<'_>) {
        let input = match event {
            Event::Start => Input::Start,
            Event::Stdin(bytes) => Input::Stdin(bytes),
            Event::StdinClosed => Input::StdinClosed,
            Event::Timeout => Input::Timeout,
            Event::Shutdown => Input::Shutdown,
            Event::SpansDropped(n) => Input::SpansDropped(n),
        };
        self.server.handle(now, input);
    }

    /// Feeds one message; returns the handle of an attempt that completed, for the host to
    /// release (see [`Driver::completed`]).
    pub fn deliver(&mut self, now: Now, message: Message) -> Option<H> {
        match message {
            Message::Stdin(bytes) => self.handle(now, Event::Stdin(&bytes)),
            Message::StdinClosed => self.handle(now, Event::StdinClosed),
            Message::Shutdown => self.handle(now, Event::Shutdown),
            Message::Drain => self.server.handle(now, Input::Drain),
            Message::Completed(attempt, result) => return self.completed(now, attempt, result),
            Message::Head(attempt, head) => self.server.handle(now, Input::HttpHead(attempt, head)),
            Message::Body(attempt, bytes) => {
                self.server.handle(now, Input::HttpBody(attempt, &bytes))
            }
            Message::End(attempt) => {
                let handle = self.attempts.remove(&attempt);
                self.server.handle(now, Input::HttpEnd(attempt));
                return handle;
            }
            Message::Exchange { id, asked } => {
                self.server.handle(now, Input::Exchange { id, asked });
            }
            Message::ExchangeClosed(id) => self.server.handle(now, Input::ExchangeClosed(id)),
            Message::StoreReply { id, reply, took } => {
                self.server
                    .handle(now, Input::StoreReply { id, reply, took });
            }
            Message::StoreHealth(up) => self.server.handle(now, Input::StoreHealth(up)),
            Message::StoreEvent(text) => self.server.handle(now, Input::StoreEvent(&text)),
            Message::StoreSubscribed => self.server.handle(now, Input::StoreSubscribed),
        }
        None
    }

    /// Calls in flight or queued.
    pub fn calls_in_flight(&self) -> usize {
        self.server.calls_in_flight()
    }

    /// Calls running upstream and calls waiting for a slot, and whether the server is
    /// draining: what `/health` reports.
    pub fn health(&self) -> crate::serve::endpoint::Health {
        self.server.health()
    }
}
