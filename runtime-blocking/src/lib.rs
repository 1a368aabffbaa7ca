//! The blocking runtime of openai-responses-mcp: threads and a channel around the sans-IO
//! core, no async runtime. Also home of the ureq [`upstream`] client, which the smol
//! runtime shares.
//!
//! Threads: the main thread owns the [`Server`] and stdout; one thread reads stdin; one
//! thread runs each HTTP attempt. They all report into one bounded channel, and the main
//! thread waits on it no longer than the core's next deadline.

#![deny(unsafe_code)]

pub mod signals;
pub mod upstream;

use responses_mcp_config::Startup;
use responses_mcp_core::server::{
    AttemptId, HttpReply, Input, Now, Output, Server, TransportError,
};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use upstream::{Attempt, Upstream};

/// Buffered output is written once it reaches this size, even mid-drain.
pub const MAX_PENDING_OUTPUT: usize = 1 << 20;

/// Events waiting for the main loop. Bounded, so that a flood on stdin waits in the pipe
/// rather than in our memory.
pub const EVENT_QUEUE: usize = 16;

/// Bytes read from stdin at a time.
pub const READ_CHUNK: usize = 64 * 1024;

/// The time now, for the core.
pub fn now() -> Now {
    let unix_secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Now {
        instant: Instant::now(),
        unix_secs,
    }
}

/// Entropy for retry jitter, without a dependency: the clock and the process id.
pub fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

enum Event {
    Stdin(Vec<u8>),
    StdinClosed,
    Signal(i32),
    Http(AttemptId, Result<HttpReply, TransportError>, Attempt),
}

/// Serves until the core says exit; returns the exit status.
pub fn run(startup: Startup) -> i32 {
    let upstream = Upstream::new(&startup);
    let mut server = Server::new(startup.server);
    let (tx, rx) = sync_channel::<Event>(EVENT_QUEUE);
    let on_signal = tx.clone();
    if let Err(e) = signals::on_termination(move |signal| {
        let _ = on_signal.send(Event::Signal(signal));
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    spawn_stdin_reader(tx.clone());
    let mut stdout = std::io::stdout().lock();
    let mut in_flight: BTreeMap<AttemptId, Attempt> = BTreeMap::new();
    // Frames of one drain go out in one write and one flush.
    let mut frames: Vec<u8> = Vec::new();
    loop {
        while let Some(output) = server.poll_output() {
            match output {
                Output::Write(frame) => {
                    frames.extend_from_slice(&frame);
                    if frames.len() >= MAX_PENDING_OUTPUT {
                        if let Err(e) = write_all(&mut stdout, &frames) {
                            log::debug!("stdout closed ({e}); stopping");
                            server.handle(now(), Input::OutputClosed);
                        }
                        frames.clear();
                    }
                }
                Output::Http(request) => {
                    let attempt = upstream.begin();
                    in_flight.insert(request.attempt, Upstream::abort_handle(&attempt));
                    let (tx, upstream) = (tx.clone(), upstream.clone());
                    let spawned = std::thread::Builder::new()
                        .name("upstream".into())
                        .stack_size(upstream::ATTEMPT_STACK)
                        .spawn(move || {
                            let result = upstream.send(&attempt, &request);
                            let _ = tx.send(Event::Http(request.attempt, result, attempt));
                        });
                    if let Err(e) = spawned {
                        log::error!("cannot start an upstream thread: {e}");
                    }
                }
                Output::Abort(attempt) => {
                    if let Some(handle) = in_flight.remove(&attempt) {
                        handle.abort();
                    }
                }
                Output::Exit => {
                    let _ = write_all(&mut stdout, &frames);
                    return 0;
                }
            }
        }
        if !frames.is_empty() {
            let written = write_all(&mut stdout, &frames);
            frames.clear();
            if let Err(e) = written {
                log::debug!("stdout closed ({e}); stopping");
                server.handle(now(), Input::OutputClosed);
                continue;
            }
        }
        let event = match wait(&rx, server.poll_timeout()) {
            Ok(Some(event)) => event,
            Ok(None) => {
                server.handle(now(), Input::Timeout);
                continue;
            }
            Err(()) => return 0,
        };
        let input_now = now();
        match event {
            Event::Stdin(bytes) => server.handle(input_now, Input::Stdin(&bytes)),
            Event::StdinClosed => server.handle(input_now, Input::StdinClosed),
            Event::Signal(signal) => {
                log::debug!("signal {signal}: aborting calls in flight and exiting");
                server.handle(input_now, Input::Shutdown);
            }
            Event::Http(id, result, attempt) => {
                // An attempt still on record ended by itself: its agent (and kept-alive
                // connection) can serve the next call.
                if in_flight.remove(&id).is_some() {
                    upstream.finish(attempt);
                }
                match result {
                    Ok(reply) => server.handle(input_now, Input::HttpReply(id, reply)),
                    Err(e) => server.handle(input_now, Input::HttpFailed(id, e)),
                }
            }
        }
    }
}

/// Writes `bytes` and flushes.
fn write_all(stdout: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    stdout.write_all(bytes)?;
    stdout.flush()
}

/// Waits for an event until `deadline`; `Ok(None)` when the deadline passed first.
fn wait(rx: &Receiver<Event>, deadline: Option<Instant>) -> Result<Option<Event>, ()> {
    match deadline {
        None => rx.recv().map(Some).map_err(|_| ()),
        Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
            Ok(e) => Ok(Some(e)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(()),
        },
    }
}

fn spawn_stdin_reader(tx: SyncSender<Event>) {
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(Event::Stdin(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        log::debug!("stdin read failed: {e}");
                        break;
                    }
                }
            }
            let _ = tx.send(Event::StdinClosed);
        });
    if let Err(e) = spawned {
        log::error!("cannot start the stdin reader: {e}");
    }
}
