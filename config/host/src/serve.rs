//! The serving loop both runtimes share. [`Host::start`] does startup's common half in
//! the one order that works (signals before any thread, then stdin, the listeners, the
//! store's thread and the exporter), [`Host::driver`] makes the core's driver and tells
//! the listeners its health before the first `Event::Start`, and [`Host::serve`] runs the
//! loop: records, spans, store operations, exchanges, health and the exit flush are done
//! here; what differs between a sync and an async runtime (writing stdout, starting and
//! aborting an attempt, waiting for the next message) is the runtime's [`Runtime`].

use crate::export::{Exporter, Post};
use crate::logging::write_call;
use crate::process::now;
use crate::store::Store;
use crate::{signals, stdin};
use responses_mcp_config::http::HttpServe;
use responses_mcp_config::traces::TraceExport;
use responses_mcp_config::Startup;
use responses_mcp_core::oauth::OAuthConfig;
use responses_mcp_core::serve::endpoint::Health;
use responses_mcp_core::{Driver, Event, ExchangeId, ExchangeOut, HttpRequest, Message, Poll};
use responses_mcp_core::{ServerConfig, TransportError};
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

/// Messages waiting for the loop. Bounded, so that a flood on stdin waits in the pipe
/// rather than in our memory.
pub const EVENT_QUEUE: usize = 16;

/// How long the last spans may take to leave at exit.
const EXPORT_AT_EXIT: Duration = Duration::from_secs(2);

/// How long the exit waits for the store to take the last operations (the last calls'
/// spend and the holds they let go).
const STORE_AT_EXIT: Duration = Duration::from_secs(2);

/// Every sender is gone: nothing more can happen.
#[derive(Debug)]
pub struct Disconnected;

/// What differs between a sync and an async runtime. The loop runs on one thread and its
/// future is never sent, so the methods' futures need no `Send`.
#[allow(async_fn_in_trait)]
pub trait Runtime {
    /// An attempt in flight, as the driver keeps it.
    type Attempt;
    /// Writes `bytes` to stdout and flushes; whether that worked.
    async fn write(&mut self, bytes: &[u8]) -> bool;
    /// Starts an HTTP attempt.
    ///
    /// # Errors
    /// When it cannot start (the core answers the call with it).
    fn start(&mut self, request: HttpRequest) -> Result<Self::Attempt, TransportError>;
    /// Stops an attempt the core gave up on.
    fn abort(&mut self, attempt: Self::Attempt);
    /// What is left of an attempt that ended by itself (its connection is pooled).
    fn ended(&mut self, attempt: Self::Attempt);
    /// The next message, or `Ok(None)` once `deadline` passed.
    ///
    /// # Errors
    /// When every sender is gone.
    async fn wait(&mut self, deadline: Option<Instant>) -> Result<Option<Message>, Disconnected>;
}

/// A runtime's HTTP listener (`--http`'s `/mcp`, or `--metrics-listen`'s), as the loop
/// talks to it.
#[allow(async_fn_in_trait)]
pub trait Listener {
    /// OAuth mode's configuration at the bound address, when it is on here.
    fn oauth(&self) -> Option<OAuthConfig>;
    /// Whether exchange `id` is one of this listener's.
    fn owns(&self, id: ExchangeId) -> bool;
    /// Passes the server's `out` to its exchange's connection.
    fn deliver(&self, id: ExchangeId, out: ExchangeOut, health: Health);
    /// Refreshes what `/health` and `/ready` report.
    fn set_health(&self, health: Health);
    /// Stops accepting; idle connections close, busy ones after their response.
    fn drain(&self);
    /// After the server exits: waits (a little) for connections to write their last bytes.
    async fn flush(&self);
}

/// Why the host could not start; said on stderr, and the process exits with status 1.
#[derive(Debug)]
pub enum StartError {
    /// A listener's address could not be bound.
    Listen(std::net::SocketAddr, std::io::Error),
    /// The store's thread could not start.
    Store(std::io::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Listen(at, e) => write!(f, "cannot listen on {at}: {e}"),
            StartError::Store(e) => write!(f, "cannot start the store's thread: {e}"),
        }
    }
}

/// What both runtimes hold around the driver: the listeners, the store's thread and the
/// trace exporter.
pub struct Host<L> {
    listeners: Vec<L>,
    store: Option<Store>,
    exporter: Option<Exporter>,
}

impl<L: Listener> Host<L> {
    /// Startup's common half. `to_loop` hands a message to the runtime's loop (`false` once
    /// nobody listens); `listen` starts one of the runtime's listeners; `post` makes the
    /// runtime's client for the trace exporter.
    ///
    /// # Errors
    /// A listener that cannot bind, or a store thread that cannot start.
    pub fn start(
        startup: &Startup,
        to_loop: impl Fn(Message) -> bool + Send + Sync + 'static,
        mut listen: impl FnMut(HttpServe) -> std::io::Result<L>,
        post: impl FnOnce(&TraceExport) -> Post,
    ) -> Result<Self, StartError> {
        // One type from here on, so that the threads' code is the host's, built once,
        // not again for each runtime's closure.
        let to_loop: ToLoop = Arc::new(to_loop);
        watch(startup, &to_loop);
        // The `/mcp` listener with --http, and the metrics-only one with --metrics-listen.
        let mut listeners = Vec::new();
        for serve in [&startup.http, &startup.metrics].into_iter().flatten() {
            let at = serve.listen;
            listeners.push(listen(serve.clone()).map_err(|e| StartError::Listen(at, e))?);
        }
        let store = start_store(startup, to_loop)?;
        let exporter = startup.traces.clone().map(|export| {
            let post = post(&export);
            Exporter::start(export, post)
        });
        Ok(Host {
            listeners,
            store,
            exporter,
        })
    }

    /// The core's driver for `server`, with the listeners' OAuth mode. The listeners answer
    /// `/ready` "starting" until they know the server's state: told here, before any
    /// request can be served as ready by a guess. Then what starts with the server (OAuth
    /// mode's first key fetch) starts.
    pub fn driver<T>(&self, mut server: ServerConfig) -> Driver<T> {
        server.oauth = self.listeners.iter().find_map(L::oauth);
        let mut driver = Driver::new(server);
        self.tell_health(driver.health());
        driver.handle(now(), Event::Start);
        driver
    }

    /// Serves until the core says exit; the exit status.
    pub async fn serve<R: Runtime>(self, mut driver: Driver<R::Attempt>, mut runtime: R) -> i32 {
        loop {
            match driver.poll() {
                Poll::Write(bytes) => {
                    let ok = runtime.write(bytes).await;
                    driver.written(now(), ok);
                }
                Poll::Start(request) => {
                    let id = request.attempt;
                    let started = runtime.start(request);
                    driver.started(now(), id, started);
                }
                Poll::Abort(attempt) => runtime.abort(attempt),
                Poll::Record(record) => write_call(&record),
                Poll::Span(span) => {
                    if let Some(exporter) = &self.exporter {
                        exporter.offer(span);
                    }
                }
                Poll::Store(id, op) => match &self.store {
                    Some(store) => store.perform(id, op),
                    None => log::warn!("a store operation without a store"),
                },
                Poll::Exchange(id, out) => {
                    if let Some(listener) = self.listeners.iter().find(|l| l.owns(id)) {
                        listener.deliver(id, out, driver.health());
                    }
                }
                Poll::Wait(deadline) => {
                    if self
                        .wait(&mut driver, &mut runtime, deadline)
                        .await
                        .is_err()
                    {
                        return 0;
                    }
                }
                Poll::Exit => {
                    self.exit().await;
                    return 0;
                }
            }
        }
    }

    /// Tells the listeners the health, waits for the next message or the deadline, and
    /// hands it to the driver.
    async fn wait<R: Runtime>(
        &self,
        driver: &mut Driver<R::Attempt>,
        runtime: &mut R,
        deadline: Option<Instant>,
    ) -> Result<(), Disconnected> {
        self.tell_health(driver.health());
        let next = runtime.wait(deadline).await;
        // Before the input, so that a scrape counts every span lost so far.
        match self.exporter.as_ref().map(Exporter::newly_dropped) {
            Some(0) | None => {}
            Some(n) => driver.handle(now(), Event::SpansDropped(n)),
        }
        match next? {
            Some(message) => {
                if matches!(message, Message::Drain) {
                    self.listeners.iter().for_each(L::drain);
                }
                if let Some(attempt) = driver.deliver(now(), message) {
                    runtime.ended(attempt);
                }
            }
            None => driver.handle(now(), Event::Timeout),
        }
        Ok(())
    }

    /// Refreshes every listener's `/health` and `/ready`.
    fn tell_health(&self, health: Health) {
        for listener in &self.listeners {
            listener.set_health(health);
        }
    }

    /// The exit flush: the listeners' last bytes, the store's last operations, then the
    /// last spans.
    async fn exit(self) {
        for listener in &self.listeners {
            listener.flush().await;
        }
        if let Some(store) = self.store {
            store.finish(STORE_AT_EXIT);
        }
        if let Some(exporter) = self.exporter {
            exporter.finish(EXPORT_AT_EXIT);
        }
    }
}

/// Hands a message to the runtime's loop: `false` once nobody listens.
type ToLoop = Arc<dyn Fn(Message) -> bool + Send + Sync>;

/// Signals, then (without --http) stdin: before any other thread starts, so that every
/// thread inherits the signal mask.
fn watch(startup: &Startup, to_loop: &ToLoop) {
    let serving_http = startup.http.is_some();
    let on_signal = Arc::clone(to_loop);
    if let Err(e) = signals::on_termination(move |signal, nth| {
        on_signal(signals::termination(signal, nth, serving_http))
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    if !serving_http {
        let to_loop = Arc::clone(to_loop);
        stdin::spawn_reader(move |message| to_loop(message));
    }
}

/// The shared store's thread, when there is a store: its client blocks.
fn start_store(startup: &Startup, to_loop: ToLoop) -> Result<Option<Store>, StartError> {
    let Some(connect) = startup.store.clone() else {
        return Ok(None);
    };
    let deliver = move |message| {
        let _ = to_loop(message);
    };
    Store::start(connect, deliver)
        .map(Some)
        .map_err(StartError::Store)
}

/// Runs a future whose every step completes at once: the blocking runtime's loop, which
/// blocks in its methods instead of waiting. A step that does wait is polled again after
/// a yield, so that it is slow rather than lost.
pub fn run_ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}
