//! `openai-responses-mcp`: the default build, driven by the smol async runtime.
//!
//! One thread does all the work: a local executor runs the main task, which owns the
//! core's [`Driver`], and one task per HTTP attempt ([`attempts`], on the non-blocking
//! [`upstream`] client, which speaks every proxy the configuration accepts). Stdin and
//! stdout go through smol's blocking pool, signals arrive from a waiting thread, and
//! everything reports into one channel that the main task races against a timer re-armed
//! from the core's next deadline.

#![forbid(unsafe_code)]

mod attempts;
mod doctor;
mod http;
mod traces;
mod upstream;

use attempts::Attempts;
use http::Endpoint;
use responses_mcp_config::Startup;
use responses_mcp_core::{Driver, Event, Message, Poll};
use responses_mcp_host::export::Exporter;
use responses_mcp_host::stdin::{self, READ_CHUNK};
use responses_mcp_host::store::Store;
use responses_mcp_host::{now, signals};
use smol::channel::{bounded, Receiver};
use smol::io::AsyncWriteExt;
use smol::{LocalExecutor, Task, Timer};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long the last spans may take to leave at exit.
const EXPORT_AT_EXIT: Duration = Duration::from_secs(2);

/// Messages waiting for the main task. Bounded, so that a flood on stdin waits in the pipe
/// rather than in our memory.
const EVENT_QUEUE: usize = 16;

/// The static build runs on mimalloc, tuned: musl's allocator would unmap freed memory
/// after every call (core/alloc, docs/benchmarks.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: responses_mcp_alloc::mimalloc::Tuned = responses_mcp_alloc::mimalloc::Tuned;

fn main() {
    let env = responses_mcp_host::process_env();
    let seed = responses_mcp_host::seed();
    let status = match responses_mcp_host::launch(std::env::args_os().skip(1), env, seed) {
        responses_mcp_host::Launch::Exit(status) => status,
        responses_mcp_host::Launch::Serve(startup) => run(*startup),
        responses_mcp_host::Launch::Doctor(doctor) => {
            let mut client = doctor.startup().map(doctor::Client::new);
            doctor.run(client.as_mut().map(|c| c as _))
        }
    };
    std::process::exit(status);
}

/// Serves until the core says exit; returns the exit status.
fn run(startup: Startup) -> i32 {
    let (tx, rx) = bounded::<Message>(EVENT_QUEUE);
    let serving_http = startup.http.is_some();
    // Before any thread starts, so that every thread inherits the signal mask.
    let on_signal = tx.clone();
    if let Err(e) = signals::on_termination(move |signal, nth| {
        let message = signals::termination(signal, nth, serving_http);
        on_signal.send_blocking(message).is_ok()
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    let executor = Rc::new(LocalExecutor::new());
    if startup.http.is_none() {
        let stdin_tx = tx.clone();
        stdin::spawn_reader(move |message| stdin_tx.send_blocking(message).is_ok());
    }
    // The `/mcp` listener with --http, and the metrics-only one with --metrics-listen.
    let mut endpoints = Vec::new();
    for serve in [startup.http.clone(), startup.metrics.clone()]
        .into_iter()
        .flatten()
    {
        match Endpoint::start(serve.clone(), &executor, tx.clone()) {
            Ok(endpoint) => endpoints.push(endpoint),
            Err(e) => {
                let _ = writeln_stderr(&format!(
                    "openai-responses-mcp: cannot listen on {}: {e}",
                    serve.listen
                ));
                return 1;
            }
        }
    }
    // The shared store runs on a thread of its own: its client blocks.
    let store = match startup.store.clone().map(|connect| {
        let to_loop = tx.clone();
        Store::start(connect, move |message| {
            let _ = to_loop.send_blocking(message);
        })
    }) {
        Some(Ok(store)) => Some(store),
        Some(Err(e)) => {
            let _ = writeln_stderr(&format!(
                "openai-responses-mcp: cannot start the store's thread: {e}"
            ));
            return 1;
        }
        None => None,
    };
    let exporter = traces::exporter(&startup);
    let attempts = Attempts::new(upstream::Upstream::new(&startup), executor.clone(), tx);
    let mut server = startup.server;
    server.oauth = endpoints.iter().find_map(Endpoint::oauth);
    let mut driver = Driver::new(server);
    // What starts with the server (OAuth mode's first key fetch) starts now.
    driver.handle(now(), Event::Start);
    let around = (endpoints, store, exporter);
    smol::block_on(executor.run(serve(driver, attempts, rx, around)))
}

fn writeln_stderr(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    writeln!(std::io::stderr(), "{text}")
}

async fn serve(
    mut driver: Driver<Task<()>>,
    attempts: Attempts,
    rx: Receiver<Message>,
    (endpoints, store, exporter): (Vec<Endpoint>, Option<Store>, Option<Exporter>),
) -> i32 {
    let mut stdout = smol::Unblock::with_capacity(READ_CHUNK, std::io::stdout());
    // The listeners answer /ready "starting" until they know the server's state.
    for endpoint in &endpoints {
        endpoint.set_health(driver.health());
    }
    loop {
        match driver.poll() {
            Poll::Write(bytes) => {
                let written = async {
                    stdout.write_all(bytes).await?;
                    stdout.flush().await
                };
                let ok = written.await.is_ok();
                driver.written(now(), ok);
            }
            Poll::Start(request) => {
                let id = request.attempt;
                driver.started(now(), id, Ok(attempts.start(request)));
            }
            // Dropping the task drops its socket: the connection closes.
            Poll::Abort(task) => drop(task),
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
                let next = next_message(&rx, deadline).await;
                // Before the input, so that a scrape counts every span lost so far.
                report_drops(&mut driver, exporter.as_ref());
                match next {
                    Err(Disconnected) => return 0,
                    Ok(Some(message)) => {
                        if matches!(message, Message::Drain) {
                            endpoints.iter().for_each(|e| e.drain());
                        }
                        // A completed task already pooled its connection; let it return.
                        if let Some(task) = driver.deliver(now(), message) {
                            task.detach();
                        }
                    }
                    Ok(None) => driver.handle(now(), Event::Timeout),
                }
            }
            Poll::Exit => {
                for endpoint in &endpoints {
                    endpoint.flush().await;
                }
                if let Some(exporter) = exporter {
                    exporter.finish(EXPORT_AT_EXIT);
                }
                return 0;
            }
        }
    }
}

/// Tells the core of the spans the exporter dropped since last told.
fn report_drops(driver: &mut Driver<Task<()>>, exporter: Option<&Exporter>) {
    match exporter.map(Exporter::newly_dropped) {
        Some(0) | None => {}
        Some(n) => driver.handle(now(), Event::SpansDropped(n)),
    }
}

/// Every sender is gone: nothing more can happen.
struct Disconnected;

/// The next message, or `Ok(None)` at `deadline`.
async fn next_message(
    rx: &Receiver<Message>,
    deadline: Option<Instant>,
) -> Result<Option<Message>, Disconnected> {
    let timer = async {
        match deadline {
            Some(at) => {
                Timer::at(at).await;
            }
            None => std::future::pending::<()>().await,
        }
        Ok(None)
    };
    let message = async { rx.recv().await.map(Some).map_err(|_| Disconnected) };
    smol::future::or(message, timer).await
}
