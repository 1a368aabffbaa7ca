//! The one harness for driving a [`Server`] in tests, fuzz targets and benchmarks (the
//! `testing` feature): feed JSON or bytes, move a fake clock, complete attempts, and look
//! at what the server wrote, decoded with the crate's own framer.

// A harness panics on purpose: a failed expectation is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::framing::Framer;
use crate::io::{
    AttemptId, HttpHead, HttpReply, HttpRequest, Now, TransportError, TransportErrorKind,
};
use crate::server::io::{Input, Output};
use crate::server::Server;
use crate::settings::ServerConfig;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// 2025-08-09 12:00 in Tokyo: the wall clock every harness starts at.
pub const UNIX: u64 = 1_754_708_400;

/// A server, a fake clock, and the outputs not yet looked at.
pub struct Harness {
    /// The server under test.
    pub server: Server,
    /// The current time; moved by [`Harness::advance`] and [`Harness::fire`].
    pub now: Now,
    pending: Vec<Output>,
    /// Call records handed out, not yet looked at.
    records: Vec<crate::ledger::CallRecord>,
}

/// One real instant to offset the fake clock from (`Instant` has no other constructor).
#[allow(clippy::disallowed_methods)]
pub fn start_instant() -> Instant {
    Instant::now()
}

impl Harness {
    /// A harness around a new server for `config`.
    pub fn new(config: ServerConfig) -> Self {
        Harness {
            server: Server::new(config),
            now: Now {
                instant: start_instant(),
                unix_secs: UNIX,
            },
            pending: Vec::new(),
            records: Vec::new(),
        }
    }

    /// The default configuration with an API key present, looking no models up (a test
    /// of the lookups turns them on), so that a test sees only the requests it causes.
    pub fn keyed() -> ServerConfig {
        ServerConfig {
            credentials_ready: true,
            model_lookups: false,
            ..ServerConfig::default()
        }
    }

    /// A keyed server initialized at `version`.
    pub fn ready(version: &str) -> Self {
        let mut h = Harness::new(Harness::keyed());
        h.init(version);
        h
    }

    /// Initializes at `version` and sends `notifications/initialized`.
    ///
    /// # Panics
    /// When the server does not answer with `version`.
    pub fn init(&mut self, version: &str) {
        let r = self.request(json!({"jsonrpc":"2.0","id":0,"method":"initialize",
            "params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert!(self.frames().is_empty());
    }

    /// Feeds one input at the current time and collects the outputs.
    pub fn feed(&mut self, input: Input<'_>) {
        self.server.handle(self.now, input);
        while let Some(o) = self.server.poll_output() {
            match o {
                Output::Record(record) => self.records.push(record),
                o => self.pending.push(o),
            }
        }
    }

    /// Feeds raw stdin bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.feed(Input::Stdin(bytes));
    }

    /// POSTs `message` on exchange `x` as `client`, with the header's `version`.
    pub fn post_as(
        &mut self,
        x: u64,
        client: crate::clients::ClientId,
        version: Option<crate::mcp::ProtocolVersion>,
        message: Value,
    ) {
        self.feed(Input::Exchange {
            id: crate::io::ExchangeId(x),
            asked: crate::Asked::Rpc {
                message,
                version,
                client,
                trace: None,
                way: Default::default(),
            },
        });
    }

    /// Sends one message as a line.
    pub fn send(&mut self, message: Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// Sends `text` as a line and returns the messages written.
    pub fn line(&mut self, text: &str) -> Vec<Value> {
        self.send_raw(format!("{text}\n").as_bytes());
        self.frames()
    }

    /// Sends a request and returns its single reply.
    ///
    /// # Panics
    /// When not exactly one message is written.
    pub fn request(&mut self, message: Value) -> Value {
        self.send(message);
        let mut frames = self.frames();
        assert_eq!(frames.len(), 1, "{frames:?}");
        frames.remove(0)
    }

    /// The messages written since the last look, decoded with the crate's framer; other
    /// outputs stay pending.
    ///
    /// # Panics
    /// When a write is not exactly one whole frame of JSON.
    pub fn frames(&mut self) -> Vec<Value> {
        let mut frames = Vec::new();
        self.pending.retain(|o| match o {
            Output::Write(bytes) => {
                frames.push(decode(bytes));
                false
            }
            _ => true,
        });
        frames
    }

    /// The attempts started since the last look.
    pub fn take_http(&mut self) -> Vec<HttpRequest> {
        let mut out = Vec::new();
        self.pending.retain(|o| match o {
            Output::Http(r) => {
                out.push(r.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// The call records handed out since the last look, in the order calls ended.
    pub fn take_records(&mut self) -> Vec<crate::ledger::CallRecord> {
        std::mem::take(&mut self.records)
    }

    /// Every output not yet looked at.
    pub fn take_other(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.pending)
    }

    /// Moves the clock forward.
    pub fn advance(&mut self, d: Duration) {
        self.now.instant = crate::io::after(self.now.instant, d);
        self.now.unix_secs += d.as_secs();
    }

    /// Moves the clock to the next deadline and fires it.
    ///
    /// # Panics
    /// When there is no deadline, or it lies in the past.
    pub fn fire(&mut self) {
        let at = self.server.poll_timeout().expect("a deadline");
        assert!(at >= self.now.instant);
        self.now.instant = at;
        self.feed(Input::Timeout);
    }

    /// Completes `attempt` with an HTTP reply.
    pub fn reply(
        &mut self,
        attempt: AttemptId,
        status: u16,
        body: &[u8],
        headers: &[(&str, &str)],
    ) {
        let headers = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let reply = HttpReply {
            status,
            headers,
            body: body.to_vec(),
        };
        self.feed(Input::HttpReply(attempt, reply));
    }

    /// Delivers the head of `attempt`'s reply (its body follows in pieces).
    pub fn head(&mut self, attempt: AttemptId, status: u16, headers: &[(&str, &str)]) {
        let headers = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.feed(Input::HttpHead(attempt, HttpHead { status, headers }));
    }

    /// Delivers body bytes of `attempt`'s reply.
    pub fn body(&mut self, attempt: AttemptId, bytes: &[u8]) {
        self.feed(Input::HttpBody(attempt, bytes));
    }

    /// Ends `attempt`'s reply body.
    pub fn end(&mut self, attempt: AttemptId) {
        self.feed(Input::HttpEnd(attempt));
    }

    /// Streams `body` as `attempt`'s 200 event-stream reply in `chunk`-byte pieces, moving
    /// the clock by `step` before each, then ends it.
    pub fn stream(&mut self, attempt: AttemptId, body: &[u8], chunk: usize, step: Duration) {
        self.head(
            attempt,
            200,
            &[("content-type", "text/event-stream; charset=utf-8")],
        );
        for piece in body.chunks(chunk.max(1)) {
            self.advance(step);
            // What a host's loop does between reads: fire the deadlines that passed.
            if self
                .server
                .poll_timeout()
                .is_some_and(|t| t <= self.now.instant)
            {
                self.feed(Input::Timeout);
            }
            self.body(attempt, piece);
        }
        self.end(attempt);
    }

    /// Fails `attempt` without a reply.
    pub fn fail(&mut self, attempt: AttemptId, kind: TransportErrorKind, detail: &str) {
        let error = TransportError {
            kind,
            detail: detail.into(),
        };
        self.feed(Input::HttpFailed(attempt, error));
    }

    /// Sends a `tools/call` of `tool`; returns the attempt it started, if any.
    ///
    /// # Panics
    /// When more than one attempt starts.
    pub fn call(&mut self, id: u64, tool: &str, args: Value) -> Option<HttpRequest> {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}}));
        let mut http = self.take_http();
        assert!(http.len() <= 1);
        http.pop()
    }

    /// Checks that the server still serves: a ping is answered.
    ///
    /// # Panics
    /// When it is not.
    pub fn still_serving(&mut self) {
        let r = self.line(r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#);
        assert_eq!(
            r.last().map(|m| m["id"].clone()),
            Some(json!("alive")),
            "{r:?}"
        );
    }
}

/// Decodes one written frame with the crate's own framer.
///
/// # Panics
/// When `bytes` is not exactly one whole frame of JSON.
pub fn decode(bytes: &[u8]) -> Value {
    let mut framer = Framer::new(usize::MAX);
    framer.push(bytes);
    let frame = match framer.next_frame() {
        Some(Ok(frame)) => frame.bytes.to_vec(),
        other => panic!("not a frame: {other:?}"),
    };
    assert!(
        framer.next_frame().is_none(),
        "more than one frame in a write"
    );
    framer.finish();
    assert!(framer.next_frame().is_none(), "bytes after the frame");
    serde_json::from_slice(&frame).unwrap_or_else(|e| panic!("frame is not JSON: {e}"))
}
