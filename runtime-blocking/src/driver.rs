//! What both runtimes do around the core, minus their IO: perform the core's outputs
//! (start attempts on their own threads, abort them, collect frames) and turn events into
//! core inputs. A runtime only reads stdin, writes the collected frames, and waits.

use crate::now;
use crate::upstream::{Attempt, Upstream, ATTEMPT_STACK};
use responses_mcp_config::Startup;
use responses_mcp_core::server::{AttemptId, HttpReply, Input, Output, Server, TransportError};
use std::collections::BTreeMap;
use std::time::Instant;

/// Frames are handed to the runtime once this many bytes are waiting, even mid-drain.
pub const MAX_PENDING_OUTPUT: usize = 1 << 20;

/// An attempt that ended, with the agent it ran on.
pub struct Completion {
    id: AttemptId,
    result: Result<HttpReply, TransportError>,
    attempt: Attempt,
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
pub struct Driver {
    server: Server,
    upstream: Upstream,
    /// Abort handles of attempts still on record in the core.
    in_flight: BTreeMap<AttemptId, Attempt>,
    frames: Vec<u8>,
    /// The last `act` stopped because `frames` was full; outputs remain.
    more: bool,
    exit: bool,
}

impl Driver {
    /// A driver for `startup`'s configuration.
    pub fn new(startup: Startup) -> Driver {
        Driver {
            upstream: Upstream::new(&startup),
            server: Server::new(startup.server),
            in_flight: BTreeMap::new(),
            frames: Vec::new(),
            more: false,
            exit: false,
        }
    }

    /// Performs the core's outputs. Attempts run on their own small threads (ureq blocks)
    /// and report through `deliver`. Frames are collected for [`Driver::frames`]: those of
    /// one drain are written together, with one write and one flush.
    pub fn act<D>(&mut self, deliver: &D)
    where
        D: Fn(Completion) + Clone + Send + 'static,
    {
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
                Output::Http(request) => self.start(request, deliver.clone()),
                Output::Abort(id) => {
                    if let Some(handle) = self.in_flight.remove(&id) {
                        handle.abort();
                    }
                }
                Output::Exit => self.exit = true,
            }
        }
    }

    fn start(
        &mut self,
        request: responses_mcp_core::server::HttpRequest,
        deliver: impl Fn(Completion) + Send + 'static,
    ) {
        let attempt = self.upstream.begin();
        self.in_flight
            .insert(request.attempt, Upstream::abort_handle(&attempt));
        let upstream = self.upstream.clone();
        let spawned = std::thread::Builder::new()
            .name("upstream".into())
            .stack_size(ATTEMPT_STACK)
            .spawn(move || {
                let result = upstream.send(&attempt, &request);
                deliver(Completion {
                    id: request.attempt,
                    result,
                    attempt,
                });
            });
        if let Err(e) = spawned {
            log::error!("cannot start an upstream thread: {e}");
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
            Event::Http(Completion {
                id,
                result,
                attempt,
            }) => {
                // An attempt still on record ended by itself: its agent (and kept-alive
                // connection) can serve the next call.
                if self.in_flight.remove(&id).is_some() {
                    self.upstream.finish(attempt);
                }
                match result {
                    Ok(reply) => self.server.handle(now, Input::HttpReply(id, reply)),
                    Err(e) => self.server.handle(now, Input::HttpFailed(id, e)),
                }
            }
        }
    }
}
