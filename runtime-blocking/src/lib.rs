//! The blocking runtime of openai-responses-mcp: threads and a channel around the sans-IO
//! core's [`Driver`], no async runtime.
//!
//! Threads: the main thread owns the driver and stdout; one thread reads stdin; one thread
//! runs each HTTP attempt (the [`upstream`] client); one waits for signals. They all
//! report into one bounded channel, and the main thread waits on it no longer than the
//! core's next deadline.

#![forbid(unsafe_code)]

pub mod doctor;
mod http;
mod threads;
mod traces;
pub mod upstream;

use responses_mcp_config::Startup;
use responses_mcp_core::{Driver, Event, Message, Poll};
use responses_mcp_host::{now, signals, stdin};
use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::Instant;
use threads::Threads;

/// Messages waiting for the main loop. Bounded, so that a flood on stdin waits in the pipe
/// rather than in our memory.
const EVENT_QUEUE: usize = 16;

/// Serves until the core says exit; returns the exit status.
pub fn run(startup: Startup) -> i32 {
    let (tx, rx) = sync_channel::<Message>(EVENT_QUEUE);
    let on_signal = tx.clone();
    // Before any other thread starts, so that every thread inherits the signal mask.
    let serving_http = startup.http.is_some();
    if let Err(e) = signals::on_termination(move |signal, nth| {
        let message = signals::termination(signal, nth, serving_http);
        on_signal.send(message).is_ok()
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    if startup.http.is_none() {
        let stdin_tx = tx.clone();
        stdin::spawn_reader(move |message| stdin_tx.send(message).is_ok());
    }
    // The `/mcp` listener with --http, and the metrics-only one with --metrics-listen.
    let mut endpoints = Vec::new();
    for serve in [startup.http.clone(), startup.metrics.clone()]
        .into_iter()
        .flatten()
    {
        match http::Endpoint::start(serve.clone(), tx.clone()) {
            Ok(endpoint) => endpoints.push(endpoint),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "openai-responses-mcp: cannot listen on {}: {e}",
                    serve.listen
                );
                return 1;
            }
        }
    }
    // The shared store's thread hands its answers to this loop.
    let store = match startup.store.clone().map(|connect| {
        let to_loop = tx.clone();
        responses_mcp_host::store::Store::start(connect, move |message| {
            let _ = to_loop.send(message);
        })
    }) {
        Some(Ok(store)) => Some(store),
        Some(Err(e)) => {
            let _ = writeln!(
                std::io::stderr(),
                "openai-responses-mcp: cannot start the store's thread: {e}"
            );
            return 1;
        }
        None => None,
    };
    let exporter = traces::exporter(&startup);
    let threads = Threads::new(upstream::Upstream::new(&startup), tx);
    let mut server = startup.server;
    server.oauth = endpoints.iter().find_map(http::Endpoint::oauth);
    let mut driver = Driver::new(server);
    // The listeners answer /ready "starting" until they know the server's state: told
    // here, before any request can be served as ready by a guess.
    for endpoint in &endpoints {
        endpoint.set_health(driver.health());
    }
    // What starts with the server (OAuth mode's first key fetch) starts now.
    driver.handle(now(), Event::Start);
    let mut stdout = std::io::stdout().lock();
    loop {
        match driver.poll() {
            Poll::Write(bytes) => {
                let ok = write_all(&mut stdout, bytes).is_ok();
                driver.written(now(), ok);
            }
            Poll::Start(request) => {
                let id = request.attempt;
                let started = threads.start(request);
                driver.started(now(), id, started);
            }
            Poll::Abort(attempt) => attempt.abort(),
            Poll::Record(record) => responses_mcp_host::logging::write_call(&record),
            Poll::Span(span) => {
                if let Some(exporter) = &exporter {
                    exporter.offer(span);
                }
            }
            Poll::Store(id, op) => match &store {
                Some(store) => store.perform(id, op),
                None => log::warn!("a store operation without a store"),
            },
            Poll::Exchange(id, out) => {
                if let Some(endpoint) = endpoints.iter().find(|e| e.owns(id)) {
                    endpoint.deliver(id, out, driver.health());
                }
            }
            Poll::Wait(deadline) => {
                for endpoint in &endpoints {
                    endpoint.set_health(driver.health());
                }
                let next = wait(&rx, deadline);
                // Before the input, so that a scrape counts every span lost so far.
                let dropped = exporter.as_ref().map(|e| e.newly_dropped());
                if let Some(n) = dropped.filter(|n| *n > 0) {
                    driver.handle(now(), Event::SpansDropped(n));
                }
                match next {
                    Err(Disconnected) => return 0,
                    Ok(Some(message)) => {
                        if matches!(message, Message::Drain) {
                            endpoints.iter().for_each(|e| e.drain());
                        }
                        // An attempt that ended by itself has nothing left to free: its
                        // thread put its connection back in the pool.
                        let _ended = driver.deliver(now(), message);
                    }
                    Ok(None) => driver.handle(now(), Event::Timeout),
                }
            }
            Poll::Exit => {
                for endpoint in &endpoints {
                    endpoint.flush();
                }
                if let Some(exporter) = exporter {
                    exporter.finish(std::time::Duration::from_secs(2));
                }
                return 0;
            }
        }
    }
}

/// Writes `bytes` and flushes.
fn write_all(stdout: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    stdout.write_all(bytes)?;
    stdout.flush()
}

/// Every sender is gone: nothing more can happen.
struct Disconnected;

/// Waits for a message until `deadline`; `Ok(None)` when the deadline passed first.
fn wait(
    rx: &Receiver<Message>,
    deadline: Option<Instant>,
) -> Result<Option<Message>, Disconnected> {
    match deadline {
        None => rx.recv().map(Some).map_err(|_| Disconnected),
        Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
            Ok(msg) => Ok(Some(msg)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(Disconnected),
        },
    }
}
