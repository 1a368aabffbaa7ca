//! One connection's task: moves bytes between its socket and the core's [`Connection`],
//! hands each exchange to the main task and writes what comes back from its mailbox.

use super::shared::Shared;
use responses_mcp_core::serve::connection::{Connection, Step, LINGER, MAILBOX, READ_CHUNK};
use responses_mcp_core::{Asked, ExchangeOut, Message};
use smol::channel::{bounded, Receiver};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{Async, Timer};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Closes our side, then drops what the client still sends for a moment (see [`LINGER`]).
pub(super) async fn linger(stream: &Async<TcpStream>) {
    if stream
        .get_ref()
        .shutdown(std::net::Shutdown::Write)
        .is_err()
    {
        return;
    }
    let mut sink = [0u8; 1024];
    let drained = async { while let Ok(1..) = (&*stream).read(&mut sink).await {} };
    let _ = within(LINGER, drained).await;
}

/// The client left, failed, or ran out of time: the connection is over.
struct Gone;

/// Runs one connection until it closes.
pub(super) async fn serve_connection(stream: &Async<TcpStream>, shared: &Shared) {
    // The peer decides whether a gateway's headers are believed.
    let peer = stream.get_ref().peer_addr().ok().map(|a| a.ip());
    let mut conn = Connection::new(shared.serve.limits, shared.serve.timeouts(), peer);
    let mut buf = vec![0; READ_CHUNK];
    loop {
        if shared.listener.borrow().is_draining() {
            conn.drain();
        }
        let step = conn.step(Instant::now(), &shared.access, || {
            shared.listener.borrow().health()
        });
        let result = match step {
            Step::Write(bytes) => write(stream, &bytes, shared).await,
            Step::Read => read_more(stream, &mut conn, &mut buf, shared).await,
            Step::Exchange { asked } => exchange(stream, &mut conn, &mut buf, asked, shared).await,
            Step::Await | Step::Close => Err(Gone),
        };
        if result.is_err() {
            return;
        }
    }
}

/// Reads the next bytes before the connection's deadline; `Err` when the connection
/// should close (after writing a 408 for a request cut short).
async fn read_more(
    stream: &Async<TcpStream>,
    conn: &mut Connection,
    buf: &mut [u8],
    shared: &Shared,
) -> Result<(), Gone> {
    let wait = conn.wait();
    if shared.listener.borrow().closes(wait) {
        return Err(Gone);
    }
    let read = async { Some((&*stream).read(buf).await) };
    let timer = async {
        match conn.poll_timeout() {
            Some(at) => Timer::at(at).await,
            None => std::future::pending().await,
        };
        None
    };
    let stopped = async {
        // Draining ends only an idle wait; a request in progress gets answered.
        let _ = shared.stopped.recv().await;
        if shared.listener.borrow().closes(wait) {
            return Some(Ok(0));
        }
        std::future::pending().await
    };
    let got = smol::future::or(read, smol::future::or(timer, stopped)).await;
    match got {
        Some(Ok(0)) | Some(Err(_)) => Err(Gone),
        Some(Ok(n)) => {
            conn.feed(&buf[..n]);
            Ok(())
        }
        None => {
            let bytes = conn.handle_timeout(Instant::now()).unwrap_or_default();
            if !bytes.is_empty() {
                let _ = write(stream, &bytes, shared).await;
            }
            Err(Gone)
        }
    }
}

/// Hands one message to the server and writes what comes back, until the exchange is
/// over. A client that leaves meanwhile cancels its call.
async fn exchange(
    stream: &Async<TcpStream>,
    conn: &mut Connection,
    buf: &mut [u8],
    asked: Asked,
    shared: &Shared,
) -> Result<(), Gone> {
    let (tx, rx) = bounded(MAILBOX);
    let id = shared.listener.borrow_mut().open(tx);
    let sent = shared.events.send(Message::Exchange { id, asked });
    if sent.await.is_err() {
        shared.listener.borrow_mut().close(id);
        return Err(Gone);
    }
    let outcome = pump(stream, conn, buf, &rx, shared).await;
    if outcome.is_err() {
        shared.listener.borrow_mut().close(id);
        let _ = shared.events.send(Message::ExchangeClosed(id)).await;
    }
    outcome
}

/// Writes the exchange's outs as they come while watching the client for a close.
async fn pump(
    stream: &Async<TcpStream>,
    conn: &mut Connection,
    buf: &mut [u8],
    rx: &Receiver<ExchangeOut>,
    shared: &Shared,
) -> Result<(), Gone> {
    while conn.in_exchange() {
        let out = async { Ok(rx.recv().await) };
        let watch = async {
            if !conn.wants_bytes() {
                if !conn.watches_when_full() {
                    // The body waits in the socket for the gate's word.
                    return std::future::pending().await;
                }
                // Enough is buffered: the client leaving, or sending still more, ends it.
                let mut byte = [0u8; 1];
                let _ = (&*stream).read(&mut byte).await;
                return Err(Ok(0));
            }
            Err((&*stream).read(buf).await)
        };
        let next = smol::future::or(out, watch).await;
        match next {
            Ok(Ok(out)) => {
                if shared.listener.borrow().is_draining() {
                    conn.drain();
                }
                let bytes = conn.reply(out);
                write(stream, &bytes, shared).await?;
            }
            // The main task is gone: nothing more will come.
            Ok(Err(_)) => return Err(Gone),
            Err(Ok(0) | Err(_)) => return Err(Gone),
            // A pipelined request: it waits its turn.
            Err(Ok(n)) => conn.feed(&buf[..n]),
        }
    }
    Ok(())
}

/// Writes `bytes`; a client that takes none of them for the idle time is gone.
async fn write(stream: &Async<TcpStream>, bytes: &[u8], shared: &Shared) -> Result<(), Gone> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut writer = stream;
    match within(shared.serve.idle_timeout, writer.write_all(bytes)).await {
        Some(Ok(())) => Ok(()),
        _ => Err(Gone),
    }
}

/// `future`'s output, or `None` after `limit`.
pub(super) async fn within<T>(
    limit: Duration,
    future: impl std::future::Future<Output = T>,
) -> Option<T> {
    let timer = async {
        Timer::after(limit).await;
        None
    };
    smol::future::or(async { Some(future.await) }, timer).await
}
