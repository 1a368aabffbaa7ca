//! `openai-responses-mcp`: the default build, driven by the smol async runtime.
//!
//! One task owns the [`Server`]. Stdin is read by a task, each HTTP attempt runs on
//! smol's blocking pool (ureq is blocking), and everything reports into one channel that
//! the owner task races against a single timer re-armed from the core's next deadline.

#![forbid(unsafe_code)]

use responses_mcp_blocking::upstream::{Attempt, Upstream};
use responses_mcp_blocking::{now, MAX_PENDING_OUTPUT, READ_CHUNK};
use responses_mcp_config::Startup;
use responses_mcp_core::server::{AttemptId, HttpReply, Input, Output, Server, TransportError};
use smol::channel::{bounded, Receiver, Sender};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::Timer;
use std::collections::BTreeMap;

enum Event {
    Stdin(Vec<u8>),
    StdinClosed,
    Signal(i32),
    Http(AttemptId, Result<HttpReply, TransportError>, Attempt),
    Timer,
}

fn main() {
    let env = responses_mcp_config::process_env();
    let seed = responses_mcp_blocking::seed();
    let status = match responses_mcp_config::launch(std::env::args_os().skip(1), env, seed) {
        responses_mcp_config::Launch::Exit(status) => status,
        responses_mcp_config::Launch::Serve(startup) => {
            let (tx, rx) = bounded::<Event>(responses_mcp_blocking::EVENT_QUEUE);
            // Before any thread starts, so that every thread inherits the signal mask.
            let on_signal = tx.clone();
            if let Err(e) = responses_mcp_blocking::signals::on_termination(move |signal| {
                let _ = on_signal.send_blocking(Event::Signal(signal));
            }) {
                log::warn!("cannot handle SIGINT/SIGTERM: {e}");
            }
            smol::block_on(serve(*startup, tx, rx))
        }
    };
    std::process::exit(status);
}

async fn serve(startup: Startup, tx: Sender<Event>, rx: Receiver<Event>) -> i32 {
    let upstream = Upstream::new(&startup);
    let mut server = Server::new(startup.server);
    smol::spawn(read_stdin(tx.clone())).detach();
    let mut stdout = smol::Unblock::with_capacity(READ_CHUNK, std::io::stdout());
    let mut in_flight: BTreeMap<AttemptId, Attempt> = BTreeMap::new();
    // Frames of one drain are written with one write and one flush: a hop to the
    // blocking pool per frame would cost more than the frame.
    let mut frames: Vec<u8> = Vec::new();
    loop {
        while let Some(output) = server.poll_output() {
            match output {
                Output::Write(frame) => frames.extend_from_slice(&frame),
                Output::Http(request) => {
                    let attempt = upstream.begin();
                    in_flight.insert(request.attempt, Upstream::abort_handle(&attempt));
                    let (tx, upstream) = (tx.clone(), upstream.clone());
                    // ureq blocks; each attempt gets its own small thread (smol's
                    // blocking pool stops at 500 threads, and calls beyond would wait).
                    let spawned = std::thread::Builder::new()
                        .name("upstream".into())
                        .stack_size(responses_mcp_blocking::upstream::ATTEMPT_STACK)
                        .spawn(move || {
                            let result = upstream.send(&attempt, &request);
                            let _ = tx.send_blocking(Event::Http(request.attempt, result, attempt));
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
                    let _ = write_all(&mut stdout, &frames).await;
                    return 0;
                }
            }
            if frames.len() >= MAX_PENDING_OUTPUT {
                let written = write_all(&mut stdout, &frames).await;
                frames.clear();
                if written.is_err() {
                    server.handle(now(), Input::OutputClosed);
                }
            }
        }
        if !frames.is_empty() {
            let written = write_all(&mut stdout, &frames).await;
            frames.clear();
            if let Err(e) = written {
                log::debug!("stdout closed ({e}); stopping");
                server.handle(now(), Input::OutputClosed);
                continue;
            }
        }
        let Some(event) = next_event(&rx, server.poll_timeout()).await else {
            return 0;
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
                if in_flight.remove(&id).is_some() {
                    upstream.finish(attempt);
                }
                match result {
                    Ok(reply) => server.handle(input_now, Input::HttpReply(id, reply)),
                    Err(e) => server.handle(input_now, Input::HttpFailed(id, e)),
                }
            }
            Event::Timer => server.handle(input_now, Input::Timeout),
        }
    }
}

/// Writes `bytes` and flushes.
async fn write_all(
    stdout: &mut smol::Unblock<std::io::Stdout>,
    bytes: &[u8],
) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    stdout.write_all(bytes).await?;
    stdout.flush().await
}

/// The next event, or a timer event at `deadline`; `None` when every sender is gone.
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
