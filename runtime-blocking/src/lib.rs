//! The blocking runtime of openai-responses-mcp: threads and a channel around the sans-IO
//! core, no async runtime. Also home of what both runtimes share: the [`Driver`] with its
//! [`Transport`] trait, and the ureq [`upstream`] client with [`Threads`], which the smol
//! runtime falls back to behind `https://` and SOCKS proxies.
//!
//! Threads: the main thread owns the core (`Server`) and stdout; one thread reads stdin; one
//! thread runs each HTTP attempt. They all report into one bounded channel, and the main
//! thread waits on it no longer than the core's next deadline.

#![deny(unsafe_code)]

mod driver;
pub mod signals;
mod threads;
pub mod upstream;

pub use driver::{Completion, Driver, Event, Transport, MAX_PENDING_OUTPUT};
pub use threads::Threads;

use responses_mcp_config::Startup;
use responses_mcp_core::server::Now;
use std::io::{Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

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

/// Serves until the core says exit; returns the exit status.
pub fn run(startup: Startup) -> i32 {
    let (tx, rx) = sync_channel::<Event>(EVENT_QUEUE);
    let on_signal = tx.clone();
    if let Err(e) = signals::on_termination(move |signal| {
        let _ = on_signal.send(Event::Signal(signal));
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    spawn_stdin_reader(tx.clone());
    let deliver = move |completion| {
        let _ = tx.send(Event::Http(completion));
    };
    let transport = Threads::new(upstream::Upstream::new(&startup), deliver);
    let mut driver = Driver::new(startup.server, transport);
    let mut stdout = std::io::stdout().lock();
    loop {
        driver.act();
        if !driver.frames().is_empty() {
            let written = write_all(&mut stdout, driver.frames());
            driver.written(written);
        }
        if driver.exiting() {
            return 0;
        }
        if driver.has_more() {
            continue;
        }
        match wait(&rx, driver.deadline()) {
            Ok(Some(event)) => driver.handle(event),
            Ok(None) => driver.handle(Event::Timer),
            Err(()) => return 0,
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
