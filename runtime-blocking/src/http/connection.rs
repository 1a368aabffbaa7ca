//! One connection's thread: moves bytes between its socket and the core's
//! [`Connection`], hands each exchange to the main loop and writes what comes back
//! through the exchange's slot.

use super::shared::{lock, Shared, Slot};
use responses_mcp_core::serve::connection::{Connection, Step, LINGER, READ_CHUNK};
use responses_mcp_core::{Asked, Message};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

/// How often a waiting connection looks at its client (gone?) and the drain flag: what an
/// idle or streaming connection costs in wake-ups, against how soon a departed client's
/// call is cancelled.
const LOOK: Duration = Duration::from_millis(250);

/// The client left, failed, or ran out of time: the connection is over.
struct Gone;

/// Closes our side, then drops what the client still sends for a moment (see [`LINGER`]).
pub(super) fn linger(stream: &mut TcpStream) {
    if stream.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let deadline = Instant::now() + LINGER;
    let mut sink = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        if !matches!(stream.read(&mut sink), Ok(1..)) {
            return;
        }
    }
}

/// Runs one connection until it is over; hands the socket back for a lingering close.
pub(super) fn serve_connection(mut stream: TcpStream, shared: &Shared) -> TcpStream {
    // The peer decides whether a gateway's headers are believed.
    let peer = stream.peer_addr().ok().map(|a| a.ip());
    let mut conn = Connection::new(shared.serve.limits, shared.serve.timeouts(), peer);
    let mut buf = vec![0; READ_CHUNK];
    loop {
        if lock(&shared.listener).is_draining() {
            conn.drain();
        }
        let step = conn.step(Instant::now(), &shared.access, || {
            lock(&shared.listener).health()
        });
        let result = match step {
            Step::Write(bytes) => write(&mut stream, &bytes, shared),
            Step::Read => read_more(&mut stream, &mut conn, &mut buf, shared),
            Step::Exchange { asked } => exchange(&mut stream, &mut conn, &mut buf, asked, shared),
            Step::Await | Step::Close => Err(Gone),
        };
        if result.is_err() {
            return stream;
        }
    }
}

/// Reads the next bytes before the connection's deadline; `Err` when the connection
/// should close (after writing a 408 for a request cut short).
fn read_more(
    stream: &mut TcpStream,
    conn: &mut Connection,
    buf: &mut [u8],
    shared: &Shared,
) -> Result<(), Gone> {
    let wait = conn.wait();
    loop {
        // Draining ends only an idle wait; a request in progress gets answered.
        if lock(&shared.listener).closes(wait) {
            return Err(Gone);
        }
        let now = Instant::now();
        if let Some(bytes) = conn.handle_timeout(now) {
            let _ = write(stream, &bytes, shared);
            return Err(Gone);
        }
        let left = conn
            .poll_timeout()
            .map_or(LOOK, |at| at.saturating_duration_since(now));
        let _ = stream.set_read_timeout(Some(left.min(LOOK)));
        match stream.read(buf) {
            Ok(0) => return Err(Gone),
            Ok(n) => {
                conn.feed(&buf[..n]);
                return Ok(());
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(Gone),
        }
    }
}

/// Hands one message to the server and writes what comes back until the exchange is
/// over. A client that leaves meanwhile cancels its call.
fn exchange(
    stream: &mut TcpStream,
    conn: &mut Connection,
    buf: &mut [u8],
    asked: Asked,
    shared: &Shared,
) -> Result<(), Gone> {
    let mailbox = Arc::new(Slot::default());
    let id = lock(&shared.listener).open(mailbox.clone());
    let sent = shared.events.send(Message::Exchange { id, asked });
    if sent.is_err() {
        lock(&shared.listener).close(id);
        return Err(Gone);
    }
    let outcome = pump(stream, conn, buf, &mailbox, shared);
    if outcome.is_err() {
        lock(&shared.listener).close(id);
        let _ = shared.events.send(Message::ExchangeClosed(id));
    }
    outcome
}

/// Writes the exchange's outs as they come, looking at the client between waits.
fn pump(
    stream: &mut TcpStream,
    conn: &mut Connection,
    buf: &mut [u8],
    mailbox: &Slot,
    shared: &Shared,
) -> Result<(), Gone> {
    while conn.in_exchange() {
        let outs = {
            let outs = lock(&mailbox.outs);
            let (mut outs, _) = mailbox
                .ready
                .wait_timeout_while(outs, LOOK, |o| o.is_empty())
                .unwrap_or_else(PoisonError::into_inner);
            outs.take()
        };
        if outs.is_empty() {
            if conn.wants_bytes() {
                watch(stream, conn, buf)?;
            } else if conn.watches_when_full() {
                // Enough is buffered: the client leaving, or sending still more, ends it.
                watch_full(stream)?;
            }
            continue;
        }
        for out in outs {
            if lock(&shared.listener).is_draining() {
                conn.drain();
            }
            let bytes = conn.reply(out);
            write(stream, &bytes, shared)?;
        }
    }
    Ok(())
}

/// Reads what the client sent meanwhile without waiting: `Err` when it closed.
fn watch(stream: &mut TcpStream, conn: &mut Connection, buf: &mut [u8]) -> Result<(), Gone> {
    if let Some(n) = read_now(stream, buf)? {
        // A pipelined request: it waits its turn.
        conn.feed(&buf[..n]);
    }
    Ok(())
}

/// Reads one byte without waiting once the connection holds all it will: `Err` when the
/// client closed, or sends more than one whole request behind the open one.
fn watch_full(stream: &mut TcpStream) -> Result<(), Gone> {
    match read_now(stream, &mut [0u8; 1])? {
        Some(_) => Err(Gone),
        None => Ok(()),
    }
}

/// What the client sent meanwhile, read into `buf` without waiting: how many bytes,
/// `None` when nothing came, `Err` when it closed.
fn read_now(stream: &mut TcpStream, buf: &mut [u8]) -> Result<Option<usize>, Gone> {
    if stream.set_nonblocking(true).is_err() {
        return Err(Gone);
    }
    let read = stream.read(buf);
    let _ = stream.set_nonblocking(false);
    match read {
        Ok(0) => Err(Gone),
        Ok(n) => Ok(Some(n)),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(None),
        Err(_) => Err(Gone),
    }
}

/// Writes `bytes`; a client that takes none of them for the idle time is gone.
fn write(stream: &mut TcpStream, bytes: &[u8], shared: &Shared) -> Result<(), Gone> {
    if bytes.is_empty() {
        return Ok(());
    }
    let _ = stream.set_write_timeout(Some(shared.serve.idle_timeout));
    stream.write_all(bytes).map_err(|_| Gone)
}
