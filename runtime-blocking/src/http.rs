//! `--http` with threads: one accepts; one serves each open connection, at most
//! `server.http.max_connections` of them (the pool's bound), moving bytes between its
//! socket and the core's [`Connection`]. Exchanges go to the main loop over its channel;
//! what the server says for each comes back through a small mailbox
//! ([`Endpoint::deliver`]).

use responses_mcp_config::http::{HttpServe, RETRY_AFTER_SECS};
use responses_mcp_core::serve::access::Access;
use responses_mcp_core::serve::connection::{
    too_many_connections, Connection, Mailbox, Step, Wait, FLUSH_AT_EXIT, LINGER, READ_CHUNK,
    REFUSAL_WRITE,
};
use responses_mcp_core::serve::endpoint::Health;
use responses_mcp_core::serve::mailboxes::Mailboxes;
use responses_mcp_core::{Asked, ExchangeId, ExchangeOut, Message};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// A connection thread's stack: the core parses requests with bounded recursion.
const CONNECTION_STACK: usize = 256 * 1024;
/// How often a waiting connection looks at its client (gone?) and the drain flag: what an
/// idle or streaming connection costs in wake-ups, against how soon a departed client's
/// call is cancelled.
const LOOK: Duration = Duration::from_millis(250);

/// The endpoint as the main loop sees it.
pub struct Endpoint {
    shared: Arc<Shared>,
    bound: SocketAddr,
}

/// What the accept thread, the connection threads and the main loop share.
struct Shared {
    serve: HttpServe,
    access: Access,
    events: SyncSender<Message>,
    /// Each open exchange's mailbox, and the load `/health` reports.
    exchanges: Mutex<Mailboxes<Arc<Slot>>>,
    open: AtomicUsize,
    draining: AtomicBool,
}

/// What the server said on one exchange, waiting for its connection thread.
#[derive(Default)]
struct Slot {
    outs: Mutex<Mailbox>,
    ready: Condvar,
}

impl Endpoint {
    /// Binds, says where on stderr, and starts the accept thread.
    ///
    /// # Errors
    /// When the address cannot be bound or the thread cannot start.
    pub fn start(serve: HttpServe, events: SyncSender<Message>) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(serve.listen)?;
        let bound = listener.local_addr()?;
        let mcp = serve.mcp;
        let shared = Arc::new(Shared {
            access: serve.access(bound),
            serve,
            events,
            exchanges: Mutex::new(Mailboxes::for_listener(mcp)),
            open: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
        });
        let accepting = shared.clone();
        std::thread::Builder::new()
            .name("accept".into())
            .spawn(move || accept(&listener, &accepting))?;
        responses_mcp_config::announce_listening(bound, mcp);
        Ok(Endpoint { shared, bound })
    }

    /// Passes the server's `out` to its exchange's connection, as [`Mailboxes::route`]
    /// decides.
    pub fn deliver(&self, id: ExchangeId, out: ExchangeOut, health: Health) {
        let mailbox = lock(&self.shared.exchanges).route(id, &out, health);
        let Some(slot) = mailbox else { return };
        if lock(&slot.outs).push(out) {
            slot.ready.notify_one();
        }
    }

    /// Whether exchange `id` is one of this listener's.
    pub fn owns(&self, id: ExchangeId) -> bool {
        lock(&self.shared.exchanges).owns(id)
    }

    /// Refreshes what `/health` reports.
    pub fn set_health(&self, health: Health) {
        lock(&self.shared.exchanges).set_health(health);
    }

    /// Stops accepting; idle connections close, busy ones after their response.
    pub fn drain(&self) {
        if !self.shared.draining.swap(true, Ordering::SeqCst) {
            // Wakes the accept thread, which sees the flag and closes the listener.
            let _ = TcpStream::connect_timeout(&self.bound, Duration::from_secs(1));
        }
    }

    /// After the server exits: waits (a little) for connections to write their last bytes.
    pub fn flush(&self) {
        self.drain();
        let deadline = Instant::now() + FLUSH_AT_EXIT;
        while self.shared.open.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A poisoned lock only means another thread panicked mid-update of plain data.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Accepts until draining; beyond the connection limit, a 503 and close.
fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.draining.load(Ordering::SeqCst) {
            return;
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(e) => {
                // Out of descriptors, most likely: wait instead of spinning.
                log::warn!("cannot accept a connection: {e}");
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        if shared.open.fetch_add(1, Ordering::SeqCst) >= shared.serve.max_connections {
            shared.open.fetch_sub(1, Ordering::SeqCst);
            log::debug!("connection refused: the limit is reached");
            refuse(stream);
            continue;
        }
        let serving = shared.clone();
        let started = std::thread::Builder::new()
            .name("connection".into())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let mut stream = serve_connection(stream, &serving);
                linger(&mut stream);
                serving.open.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = started {
            shared.open.fetch_sub(1, Ordering::SeqCst);
            log::warn!("cannot start a connection thread: {e}");
        }
    }
}

/// A connection over the limit: 503 with `Retry-After`, if the client takes it at once.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(REFUSAL_WRITE));
    let _ = stream.write_all(&too_many_connections(RETRY_AFTER_SECS));
}

/// The client left, failed, or ran out of time: the connection is over.
struct Gone;

/// Closes our side, then drops what the client still sends for a moment (see [`LINGER`]).
fn linger(stream: &mut TcpStream) {
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
fn serve_connection(mut stream: TcpStream, shared: &Shared) -> TcpStream {
    let mut conn = Connection::new(shared.serve.limits, shared.serve.timeouts());
    let mut buf = vec![0; READ_CHUNK];
    loop {
        let step = conn.step(Instant::now(), &shared.access, || {
            lock(&shared.exchanges).health()
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
    let idle = conn.wait() == Wait::Idle;
    loop {
        // Draining ends only an idle wait; a request in progress gets answered.
        if idle && shared.draining.load(Ordering::SeqCst) {
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
    let id = lock(&shared.exchanges).open(mailbox.clone());
    let sent = shared.events.send(Message::Exchange { id, asked });
    if sent.is_err() {
        lock(&shared.exchanges).close(id);
        return Err(Gone);
    }
    let outcome = pump(stream, conn, buf, &mailbox, shared);
    if outcome.is_err() {
        lock(&shared.exchanges).close(id);
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
            }
            continue;
        }
        for out in outs {
            let bytes = conn.reply(out);
            write(stream, &bytes, shared)?;
        }
    }
    Ok(())
}

/// Reads what the client sent meanwhile without waiting: `Err` when it closed.
fn watch(stream: &mut TcpStream, conn: &mut Connection, buf: &mut [u8]) -> Result<(), Gone> {
    if stream.set_nonblocking(true).is_err() {
        return Err(Gone);
    }
    let read = stream.read(buf);
    let _ = stream.set_nonblocking(false);
    match read {
        Ok(0) => Err(Gone),
        Ok(n) => {
            // A pipelined request: it waits its turn.
            conn.feed(&buf[..n]);
            Ok(())
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(()),
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
