//! `openai-responses-mcp`: the default build, driven by the smol async runtime.
//!
//! One thread does all the work: a local executor runs the main task, which owns the
//! [`Driver`] (the sans-IO core plus attempts in flight), and one task per HTTP attempt
//! ([`tasks`], on the non-blocking [`upstream`] client). Stdin and stdout go through
//! smol's blocking pool, signals arrive from a waiting thread, and everything reports into
//! one channel that the main task races against a timer re-armed from the core's next
//! deadline. Plain HTTP proxies from the environment are tunnelled through with CONNECT;
//! for other proxies (`https://`, SOCKS) attempts run on threads with the blocking
//! runtime's ureq client instead.

#![forbid(unsafe_code)]

mod tasks;
mod upstream;

use responses_mcp_blocking::upstream::no_proxy_exempts;
use responses_mcp_blocking::{Driver, Event, Threads, Transport, EVENT_QUEUE, READ_CHUNK};
use responses_mcp_config::Startup;
use smol::channel::{bounded, Receiver, Sender};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{LocalExecutor, Timer};
use std::rc::Rc;
use upstream::proxy::Choice;

fn main() {
    let env = responses_mcp_config::process_env();
    let seed = responses_mcp_blocking::seed();
    let status = match responses_mcp_config::launch(std::env::args_os().skip(1), env, seed) {
        responses_mcp_config::Launch::Exit(status) => status,
        responses_mcp_config::Launch::Serve(startup) => run(*startup),
    };
    std::process::exit(status);
}

/// Serves until the core says exit; returns the exit status.
fn run(startup: Startup) -> i32 {
    let (tx, rx) = bounded::<Event>(EVENT_QUEUE);
    // Before any thread starts, so that every thread inherits the signal mask.
    let on_signal = tx.clone();
    if let Err(e) = responses_mcp_blocking::signals::on_termination(move |signal| {
        let _ = on_signal.send_blocking(Event::Signal(signal));
    }) {
        log::warn!("cannot handle SIGINT/SIGTERM: {e}");
    }
    let executor = Rc::new(LocalExecutor::new());
    executor.spawn(read_stdin(tx.clone())).detach();
    let proxy = if no_proxy_exempts(&startup.server.base_url) {
        Choice::Direct
    } else {
        Choice::from_env(|name| std::env::var(name).ok())
    };
    let proxy = match proxy {
        Choice::Direct => None,
        Choice::Http(proxy) => Some(proxy),
        Choice::Other => {
            log::debug!("the proxy is not plain HTTP: attempts run on threads with ureq");
            let client = responses_mcp_blocking::upstream::Upstream::new(&startup);
            let deliver = move |completion| {
                let _ = tx.send_blocking(Event::Http(completion));
            };
            let driver = Driver::new(startup.server, Threads::new(client, deliver));
            return smol::block_on(executor.run(serve(driver, rx)));
        }
    };
    let client = upstream::Upstream::new(&startup, proxy);
    let tasks = tasks::Tasks::new(client, executor.clone(), tx);
    let driver = Driver::new(startup.server, tasks);
    smol::block_on(executor.run(serve(driver, rx)))
}

async fn serve<T: Transport>(mut driver: Driver<T>, rx: Receiver<Event>) -> i32 {
    let mut stdout = smol::Unblock::with_capacity(READ_CHUNK, std::io::stdout());
    loop {
        driver.act();
        if !driver.frames().is_empty() {
            let written = async {
                stdout.write_all(driver.frames()).await?;
                stdout.flush().await
            }
            .await;
            driver.written(written);
        }
        if driver.exiting() {
            return 0;
        }
        if driver.has_more() {
            continue;
        }
        let Some(event) = next_event(&rx, driver.deadline()).await else {
            return 0;
        };
        driver.handle(event);
    }
}

/// The next event, or [`Event::Timer`] at `deadline`; `None` when every sender is gone.
async fn next_event(rx: &Receiver<Event>, deadline: Option<std::time::Instant>) -> Option<Event> {
    let timer = async {
        match deadline {
            Some(at) => {
                Timer::at(at).await;
            }
            None => std::future::pending::<()>().await,
        }
        Some(Event::Timer)
    };
    smol::future::or(async { rx.recv().await.ok() }, timer).await
}

async fn read_stdin(tx: Sender<Event>) {
    let mut stdin = smol::Unblock::with_capacity(READ_CHUNK, std::io::stdin());
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match stdin.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                if tx.send(Event::Stdin(buf[..n].to_vec())).await.is_err() {
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
    let _ = tx.send(Event::StdinClosed).await;
}
