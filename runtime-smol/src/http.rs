//! `--http`: Streamable HTTP on the same thread as everything else. One task accepts; one
//! task per connection moves bytes between its socket and the core's [`Connection`],
//! hands each exchange to the main task over the event channel, and takes what the server
//! says for it from its own small mailbox ([`Endpoint::deliver`], called by the main
//! task).

use responses_mcp_config::http::{HttpServe, RETRY_AFTER_SECS};
use responses_mcp_core::serve::access::Access;
use responses_mcp_core::serve::connection::{
    keeps, too_many_connections, Connection, Step, Wait, FLUSH_AT_EXIT, LINGER, MAILBOX,
    READ_CHUNK, REFUSAL_WRITE,
};
use responses_mcp_core::serve::endpoint::Health;
use responses_mcp_core::serve::mailboxes::Mailboxes;
use responses_mcp_core::{Asked, ExchangeId, ExchangeOut, Message};
use smol::channel::{bounded, Receiver, Sender};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{Async, LocalExecutor, Timer};
use std::cell::{Cell, RefCell};
use std::net::{TcpListener, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The endpoint as the main task sees it.
pub struct Endpoint {
    shared: Rc<Shared>,
    /// Dropped to tell the accept loop and idle connections to stop.
    stop: RefCell<Option<Sender<()>>>,
}

/// What the accept task, the connection tasks and the main task share.
struct Shared {
    serve: HttpServe,
    access: Access,
    /// Where exchanges go: the main task's channel.
    events: Sender<Message>,
    /// Each open exchange's mailbox, and the load `/health` reports.
    exchanges: RefCell<Mailboxes<Sender<ExchangeOut>>>,
    /// Open connections.
    open: Cell<usize>,
    draining: Cell<bool>,
    stopped: Receiver<()>,
}

impl Endpoint {
    /// Binds, says where on stderr, and starts accepting on `executor`.
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub fn start(
        serve: HttpServe,
        executor: &Rc<LocalExecutor<'static>>,
        events: Sender<Message>,
    ) -> std::io::Result<Endpoint> {
        let listener = Async::<TcpListener>::bind(serve.listen)?;
        let bound = listener.get_ref().local_addr()?;
        let mcp = serve.mcp;
        responses_mcp_config::announce_listening(bound, mcp);
        let (stop, stopped) = bounded(1);
        let shared = Rc::new(Shared {
            access: serve.access(bound),
            serve,
            events,
            exchanges: RefCell::new(Mailboxes::for_listener(mcp)),
            open: Cell::new(0),
            draining: Cell::new(false),
            stopped,
        });
        executor
            .spawn(accept(listener, shared.clone(), executor.clone()))
            .detach();
        Ok(Endpoint {
            shared,
            stop: RefCell::new(Some(stop)),
        })
    }

    /// Passes the server's `out` to its exchange's connection, as [`Mailboxes::route`]
    /// decides.
    pub fn deliver(&self, id: ExchangeId, out: ExchangeOut, health: Health) {
        let mailbox = self.shared.exchanges.borrow_mut().route(id, &out, health);
        // The core's mailbox rule: progress is lossy under a slow reader, the reply is not.
        if let Some(mailbox) = mailbox.filter(|m| keeps(m.len(), &out)) {
            let _ = mailbox.try_send(out);
        }
    }

    /// Whether exchange `id` is one of this listener's.
    pub fn owns(&self, id: ExchangeId) -> bool {
        self.shared.exchanges.borrow().owns(id)
    }

    /// Refreshes what `/health` reports.
    pub fn set_health(&self, health: Health) {
        self.shared.exchanges.borrow_mut().set_health(health);
    }

    /// Stops accepting; idle connections close, busy ones after their response.
    pub fn drain(&self) {
        self.shared.draining.set(true);
        self.stop.borrow_mut().take();
    }

    /// After the server exits: waits (a little) for connections to write their last bytes.
    pub async fn flush(&self) {
        self.drain();
        let deadline = Instant::now() + FLUSH_AT_EXIT;
        while self.shared.open.get() > 0 && Instant::now() < deadline {
            Timer::after(Duration::from_millis(10)).await;
        }
    }
}

/// Accepts until stopped; beyond the connection limit, a 503 and close.
async fn accept(
    listener: Async<TcpListener>,
    shared: Rc<Shared>,
    executor: Rc<LocalExecutor<'static>>,
) {
    loop {
        let stopped = async {
            let _ = shared.stopped.recv().await;
            None
        };
        let accepted = async { Some(listener.accept().await) };
        match smol::future::or(accepted, stopped).await {
            None => return,
            Some(Ok((stream, _))) => {
                let _ = stream.get_ref().set_nodelay(true);
                if shared.open.get() >= shared.serve.max_connections {
                    log::debug!("connection refused: {} open", shared.open.get());
                    executor.spawn(refuse(stream)).detach();
                    continue;
                }
                shared.open.set(shared.open.get() + 1);
                let shared = shared.clone();
                executor
                    .spawn(async move {
                        serve_connection(&stream, &shared).await;
                        linger(&stream).await;
                        shared.open.set(shared.open.get() - 1);
                    })
                    .detach();
            }
            Some(Err(e)) => {
                // Out of descriptors, most likely: wait instead of spinning.
                log::warn!("cannot accept a connection: {e}");
                Timer::after(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A connection over the limit: 503 with `Retry-After`, written if the client reads.
async fn refuse(mut stream: Async<TcpStream>) {
    let bytes = too_many_connections(RETRY_AFTER_SECS);
    let _ = within(REFUSAL_WRITE, stream.write_all(&bytes)).await;
}

/// Closes our side, then drops what the client still sends for a moment (see [`LINGER`]).
async fn linger(stream: &Async<TcpStream>) {
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
async fn serve_connection(stream: &Async<TcpStream>, shared: &Shared) {
    let mut conn = Connection::new(shared.serve.limits, shared.serve.timeouts());
    let mut buf = vec![0; READ_CHUNK];
    loop {
        let step = conn.step(Instant::now(), &shared.access, || {
            shared.exchanges.borrow().health()
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
    let idle = conn.wait() == Wait::Idle;
    if idle && shared.draining.get() {
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
        if idle {
            let _ = shared.stopped.recv().await;
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
    let id = shared.exchanges.borrow_mut().open(tx);
    let sent = shared.events.send(Message::Exchange { id, asked });
    if sent.await.is_err() {
        shared.exchanges.borrow_mut().close(id);
        return Err(Gone);
    }
    let outcome = pump(stream, conn, buf, &rx, shared).await;
    if outcome.is_err() {
        shared.exchanges.borrow_mut().close(id);
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
                // Enough is buffered; the close will show at the next write.
                return std::future::pending().await;
            }
            Err((&*stream).read(buf).await)
        };
        let next = smol::future::or(out, watch).await;
        match next {
            Ok(Ok(out)) => {
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
async fn within<T>(limit: Duration, future: impl std::future::Future<Output = T>) -> Option<T> {
    let timer = async {
        Timer::after(limit).await;
        None
    };
    smol::future::or(async { Some(future.await) }, timer).await
}
