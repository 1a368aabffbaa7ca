//! What goes into the server and what comes out: events and actions.

use crate::io::{AttemptId, ExchangeId, HttpHead, HttpReply, HttpRequest, TransportError};
use crate::serve::exchange::{Asked, ExchangeOut};
use crate::store::{StoreId, StoreOp, StoreReply};
use std::time::Duration;

/// An event for the server.
#[derive(Debug)]
#[non_exhaustive]
pub enum Input<'a> {
    /// The runtime is up and about to serve: what starts with the server starts now (OAuth
    /// mode's first fetch of the identity provider's keys, so that the first request
    /// does not wait for them). Sent once, first; a server that never gets it starts
    /// such work when a request first needs it.
    Start,
    /// Bytes read from stdin.
    Stdin(&'a [u8]),
    /// Stdin reached end of file.
    StdinClosed,
    /// An attempt got a whole reply.
    HttpReply(AttemptId, HttpReply),
    /// An attempt's reply head arrived (the way to deliver a streamed reply).
    HttpHead(AttemptId, HttpHead),
    /// Body bytes of an attempt's reply, as they arrive.
    HttpBody(AttemptId, &'a [u8]),
    /// An attempt's reply body ended.
    HttpEnd(AttemptId),
    /// An attempt failed without a reply.
    HttpFailed(AttemptId, TransportError),
    /// The deadline from [`Server::poll_timeout`](crate::Server::poll_timeout) has passed.
    Timeout,
    /// SIGINT/SIGTERM: abort everything and exit.
    Shutdown,
    /// SIGINT/SIGTERM while serving HTTP: take no new calls, let those in flight finish
    /// within the shutdown grace, then exit.
    Drain,
    /// Stdout is closed: nothing more can be said, so abort everything and exit.
    OutputClosed,
    /// An HTTP request for the server: a JSON-RPC message or a metrics scrape.
    Exchange {
        /// The exchange the answer goes back on.
        id: ExchangeId,
        /// What the request asks.
        asked: Asked,
    },
    /// The client of an exchange went away: its call is cancelled, nothing more is sent.
    ExchangeClosed(ExchangeId),
    /// The shared store answered operation `id` ([`Output::Store`]) after `took`.
    StoreReply {
        /// The operation.
        id: StoreId,
        /// Its answer.
        reply: StoreReply,
        /// From sending it to its answer.
        took: Duration,
    },
    /// The runtime's look at the shared store: whether it answers (sent when that
    /// changes, so that `/ready` follows the store without waiting for a call).
    StoreHealth(bool),
    /// A message on the shared store's channel ([`crate::store::events`]), as received.
    StoreEvent(&'a str),
    /// The runtime (re)subscribed to the store's channel: events may have been missed.
    StoreSubscribed,
    /// The runtime's trace exporter dropped this many more spans (its queue was full, or
    /// an export failed or timed out): counted with the core's own drops in
    /// `spans_dropped_total`.
    SpansDropped(u64),
}

/// An action for the runtime.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// Write these bytes (one whole frame) to stdout and flush.
    Write(Vec<u8>),
    /// Start this HTTP attempt.
    Http(HttpRequest),
    /// Abort this attempt and close its connection; its completion will be ignored.
    Abort(AttemptId),
    /// Send this on an exchange's response.
    Exchange(ExchangeId, ExchangeOut),
    /// A call ended: its record, for the host's call log ([`crate::ledger`]).
    Record(crate::ledger::CallRecord),
    /// Perform this operation on the shared store and answer with
    /// [`Input::StoreReply`].
    Store(StoreId, StoreOp),
    /// A span ended: for the host's trace exporter ([`crate::spans`]), off the request
    /// path.
    Span(crate::spans::Span),
    /// Exit the process with status 0.
    Exit,
}
