//! The blocking runtime of openai-responses-mcp: threads and a channel around the sans-IO
//! core's [`Driver`](responses_mcp_core::Driver), no async runtime.
//!
//! Threads: the main thread owns the driver and stdout; one thread reads stdin; one thread
//! runs each HTTP attempt (the [`upstream`] client); one waits for signals. They all
//! report into one bounded channel, and the main thread waits on it no longer than the
//! core's next deadline. The loop itself is the host crate's (`serve`): this crate keeps
//! what is blocking about it (`Blocking`: write, start, abort, wait).

#![forbid(unsafe_code)]
// No function over 80 lines of code (clippy.toml's threshold) outside tests: issue 48.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod doctor;
mod http;
mod threads;
mod traces;
pub mod upstream;

use responses_mcp_config::traces::TraceExport;
use responses_mcp_config::Startup;
use responses_mcp_core::{HttpRequest, Message, TransportError};
use responses_mcp_host::export::Post;
use responses_mcp_host::serve::{run_ready, Disconnected, Host, Runtime, EVENT_QUEUE};
use std::io::{StdoutLock, Write};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::Instant;
use threads::Threads;

/// Serves until the core says exit; returns the exit status.
pub fn run(startup: Startup) -> i32 {
    let (tx, rx) = sync_channel::<Message>(EVENT_QUEUE);
    let to_loop = {
        let tx = tx.clone();
        move |message| tx.send(message).is_ok()
    };
    let listen = |serve| http::Endpoint::start(serve, tx.clone());
    let post: fn(&TraceExport) -> Post = traces::post;
    let host = match Host::start(&startup, to_loop, listen, post) {
        Ok(host) => host,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
            return 1;
        }
    };
    let threads = Threads::new(upstream::Upstream::new(&startup), tx);
    let driver = host.driver(startup.server);
    let stdout = std::io::stdout().lock();
    run_ready(host.serve(
        driver,
        Blocking {
            threads,
            rx,
            stdout,
        },
    ))
}

/// The blocking half of the loop: stdout written in place, attempts on threads, the
/// channel waited on no longer than the core's next deadline.
struct Blocking {
    threads: Threads,
    rx: Receiver<Message>,
    stdout: StdoutLock<'static>,
}

impl Runtime for Blocking {
    type Attempt = upstream::Attempt;

    async fn write(&mut self, bytes: &[u8]) -> bool {
        self.stdout.write_all(bytes).is_ok() && self.stdout.flush().is_ok()
    }

    fn start(&mut self, request: HttpRequest) -> Result<upstream::Attempt, TransportError> {
        self.threads.start(request)
    }

    fn abort(&mut self, attempt: upstream::Attempt) {
        attempt.abort();
    }

    /// Nothing is left: its thread put its connection back in the pool.
    fn ended(&mut self, _attempt: upstream::Attempt) {}

    async fn wait(&mut self, deadline: Option<Instant>) -> Result<Option<Message>, Disconnected> {
        match deadline {
            None => self.rx.recv().map(Some).map_err(|_| Disconnected),
            Some(at) => match self
                .rx
                .recv_timeout(at.saturating_duration_since(Instant::now()))
            {
                Ok(message) => Ok(Some(message)),
                Err(RecvTimeoutError::Timeout) => Ok(None),
                Err(RecvTimeoutError::Disconnected) => Err(Disconnected),
            },
        }
    }
}
