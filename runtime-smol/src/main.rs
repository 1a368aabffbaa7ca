//! `openai-responses-mcp`: the default build, driven by the smol async runtime.
//!
//! One thread does all the work: a local executor runs the main task, which owns the
//! core's `Driver`, and one task per HTTP attempt ([`attempts`], on the non-blocking
//! [`upstream`] client, which speaks every proxy the configuration accepts). Stdin and
//! stdout go through smol's blocking pool, signals arrive from a waiting thread, and
//! everything reports into one channel that the main task races against a timer re-armed
//! from the core's next deadline. The loop itself is the host crate's (`serve`): this
//! crate keeps what is async about it (`Smol`: write, start, abort, wait).

#![forbid(unsafe_code)]
// No function over 80 lines of code (clippy.toml's threshold) outside tests: issue 48.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod attempts;
mod doctor;
mod http;
mod traces;
mod upstream;

use attempts::Attempts;
use http::Endpoint;
use responses_mcp_config::traces::TraceExport;
use responses_mcp_config::Startup;
use responses_mcp_core::{HttpRequest, Message, TransportError};
use responses_mcp_host::export::Post;
use responses_mcp_host::serve::{Disconnected, Host, Runtime, EVENT_QUEUE};
use responses_mcp_host::stdin::READ_CHUNK;
use smol::channel::{bounded, Receiver};
use smol::io::AsyncWriteExt;
use smol::{LocalExecutor, Task, Timer, Unblock};
use std::io::{Stdout, Write};
use std::rc::Rc;
use std::time::Instant;

/// The static build runs on mimalloc, tuned: musl's allocator would unmap freed memory
/// after every call (core/alloc, docs/benchmarks.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: responses_mcp_alloc::mimalloc::Tuned = responses_mcp_alloc::mimalloc::Tuned;

fn main() {
    let env = responses_mcp_host::process_env();
    let seed = responses_mcp_host::seed();
    let status = match responses_mcp_host::launch(std::env::args_os().skip(1).collect(), env, seed)
    {
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
    let to_loop = {
        let tx = tx.clone();
        move |message| tx.send_blocking(message).is_ok()
    };
    let executor = Rc::new(LocalExecutor::new());
    let listen = |serve| Endpoint::start(serve, &executor, tx.clone());
    let post: fn(&TraceExport) -> Post = traces::post;
    let host = match Host::start(&startup, to_loop, listen, post) {
        Ok(host) => host,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
            return 1;
        }
    };
    let attempts = Attempts::new(upstream::Upstream::new(&startup), executor.clone(), tx);
    let driver = host.driver(startup.server);
    let stdout = Unblock::with_capacity(READ_CHUNK, std::io::stdout());
    let smol = Smol {
        attempts,
        rx,
        stdout,
    };
    smol::block_on(executor.run(host.serve(driver, smol)))
}

/// The async half of the loop: stdout through smol's blocking pool, attempts as tasks,
/// the channel raced against a timer re-armed from the core's next deadline.
struct Smol {
    attempts: Attempts,
    rx: Receiver<Message>,
    stdout: Unblock<Stdout>,
}

impl Runtime for Smol {
    type Attempt = Task<()>;

    async fn write(&mut self, bytes: &[u8]) -> bool {
        self.stdout.write_all(bytes).await.is_ok() && self.stdout.flush().await.is_ok()
    }

    fn start(&mut self, request: HttpRequest) -> Result<Task<()>, TransportError> {
        Ok(self.attempts.start(request))
    }

    /// Dropping the task drops its socket: the connection closes.
    fn abort(&mut self, task: Task<()>) {
        drop(task);
    }

    /// A completed task already pooled its connection; let it return.
    fn ended(&mut self, task: Task<()>) {
        task.detach();
    }

    async fn wait(&mut self, deadline: Option<Instant>) -> Result<Option<Message>, Disconnected> {
        let timer = async {
            match deadline {
                Some(at) => {
                    Timer::at(at).await;
                }
                None => std::future::pending::<()>().await,
            }
            Ok(None)
        };
        let message = async { self.rx.recv().await.map(Some).map_err(|_| Disconnected) };
        smol::future::or(message, timer).await
    }
}
