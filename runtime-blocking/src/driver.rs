//! What both runtimes do around the core, minus their IO: perform the core's outputs
//! (start attempts through a [`Transport`], abort them, collect frames) and turn events
//! into core inputs. A runtime only reads stdin, writes the collected frames, and waits.

use crate::now;
use responses_mcp_core::server::{
    AttemptId, HttpReply, HttpRequest, Input, Output, Server, ServerConfig, TransportError,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// Frames are handed to the runtime once this many bytes are waiting, even mid-drain.
pub const MAX_PENDING_OUTPUT: usize = 1 << 20;

/// How attempts reach OpenAI: the runtime's HTTP client.
pub trait Transport {
    /// What the driver keeps of a running attempt, to abort it.
    type Running;

    /// Starts `request`; its outcome must come back as [`Event::Http`]. An error means
    /// the attempt could not even start.
    fn start(&mut self, request: HttpRequest) -> Result<Self::Running, TransportError>;

    /// Stops a running attempt; its connection closes and no completion is needed.
    fn abort(&mut self, running: Self::Running);

    /// A running attempt reported its completion by itself.
    fn ended(&mut self, running: Self::Running);
}

/// An attempt that ended.
pub struct Completion {
    pub id: AttemptId,
    pub result: Result<HttpReply, TransportError>,
}

/// Everything a runtime feeds the core.
pub enum Event {
    /// Bytes read from stdin.
    Stdin(Vec<u8>),
    /// Stdin reached EOF.
    StdinClosed,
    /// SIGINT or SIGTERM.
    Signal(i32),
    /// An attempt ended.
    Http(Completion),
    /// The core's deadline passed.
    Timer,
}

/// The core plus the attempts in flight and the frames waiting to be written.
pub struct Driver<T: Transport> {
    server: Server,
    transport: T,
    /// Attempts still on record in the core.
    in_flight: BTreeMap<AttemptId, T::Running>,
    frames: Vec<u8>,
    /// The last `act` stopped because `frames` was full; outputs remain.
    more: bool,
    exit: bool,
}

impl<T: Transport> Driver<T> {
    /// A driver for the core configured by `config`, sending attempts through `transport`.
    pub fn new(config: ServerConfig, transport: T) -> Self {
        Driver {
            server: Server::new(config),
            transport,
            in_flight: BTreeMap::new(),
            frames: Vec::new(),
            more: false,
            exit: false,
        }
    }

    /// Performs the core's outputs. Frames are collected for [`Driver::frames`]: those of
    /// one drain are written together, with one write and one flush.
    pub fn act(&mut self) {
        self.more = false;
        while let Some(output) = self.server.poll_output() {
            match output {
                Output::Write(frame) => {
                    self.frames.extend_from_slice(&frame);
                    if self.frames.len() >= MAX_PENDING_OUTPUT {
                        self.more = true;
                        return;
                    }
                }
                Output::Http(request) => {
                    let id = request.attempt;
                    match self.transport.start(request) {
                        Ok(running) => {
                            self.in_flight.insert(id, running);
                        }
                        Err(e) => self.server.handle(now(), Input::HttpFailed(id, e)),
                    }
                }
                Output::Abort(id) => {
                    if let Some(running) = self.in_flight.remove(&id) {
                        self.transport.abort(running);
                    }
                }
                Output::Exit => self.exit = true,
            }
        }
    }

    /// Frames waiting to be written.
    pub fn frames(&self) -> &[u8] {
        &self.frames
    }

    /// Records the outcome of writing [`Driver::frames`]; a failed write means stdout is
    /// closed, which ends everything.
    pub fn written(&mut self, result: std::io::Result<()>) {
        self.frames.clear();
        if let Err(e) = result {
            log::debug!("stdout closed ({e}); stopping");
            self.server.handle(now(), Input::OutputClosed);
        }
    }

    /// Outputs remain after the last `act`: call it again before waiting.
    pub fn has_more(&self) -> bool {
        self.more
    }

    /// The core asked to exit (write the remaining frames first).
    pub fn exiting(&self) -> bool {
        self.exit
    }

    /// How long the runtime may wait for the next event.
    pub fn deadline(&self) -> Option<Instant> {
        self.server.poll_timeout()
    }

    /// Feeds one event to the core, with the time read once.
    pub fn handle(&mut self, event: Event) {
        let now = now();
        match event {
            Event::Stdin(bytes) => self.server.handle(now, Input::Stdin(&bytes)),
            Event::StdinClosed => self.server.handle(now, Input::StdinClosed),
            Event::Signal(signal) => {
                log::debug!("signal {signal}: aborting calls in flight and exiting");
                self.server.handle(now, Input::Shutdown);
            }
            Event::Timer => self.server.handle(now, Input::Timeout),
            Event::Http(Completion { id, result }) => {
                if let Some(running) = self.in_flight.remove(&id) {
                    self.transport.ended(running);
                }
                match result {
                    Ok(reply) => self.server.handle(now, Input::HttpReply(id, reply)),
                    Err(e) => self.server.handle(now, Input::HttpFailed(id, e)),
                }
            }
        }
    }
}
