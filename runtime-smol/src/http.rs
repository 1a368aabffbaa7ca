//! `--http`: Streamable HTTP on the same thread as everything else. One task accepts, as
//! the core's [`Listener`] admits; one task per connection ([`connection`]) moves bytes
//! between its socket and the core's `Connection`, hands each exchange to the main task
//! over the event channel, and takes what the server says for it from its own small
//! mailbox (`Endpoint`'s `Listener::deliver`, called by the main task).

mod connection;
mod shared;

use responses_mcp_config::http::{HttpServe, RETRY_AFTER_SECS};
use responses_mcp_core::serve::connection::{keeps, FLUSH_AT_EXIT, REFUSAL_WRITE};
use responses_mcp_core::serve::endpoint::Health;
use responses_mcp_core::serve::listener::{ConnectionAdmission, Listener};
use responses_mcp_core::{ExchangeId, ExchangeOut, Message};
use shared::Shared;
use smol::channel::{bounded, Sender};
use smol::io::AsyncWriteExt;
use smol::{Async, LocalExecutor, Timer};
use std::cell::RefCell;
use std::net::{TcpListener, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The endpoint as the main task sees it.
pub struct Endpoint {
    shared: Rc<Shared>,
    bound: std::net::SocketAddr,
    /// Dropped to tell the accept loop and idle connections to stop.
    stop: RefCell<Option<Sender<()>>>,
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
        let (mcp, max) = (serve.mcp, serve.max_connections);
        responses_mcp_host::logging::announce_listening(bound, mcp);
        let (stop, stopped) = bounded(1);
        let shared = Rc::new(Shared {
            access: serve.access(bound),
            serve,
            events,
            listener: RefCell::new(Listener::new(mcp, max, RETRY_AFTER_SECS)),
            stopped,
        });
        executor
            .spawn(accept(listener, shared.clone(), executor.clone()))
            .detach();
        Ok(Endpoint {
            shared,
            bound,
            stop: RefCell::new(Some(stop)),
        })
    }
}

impl responses_mcp_host::serve::Listener for Endpoint {
    /// OAuth mode's configuration for the core, its resource named after the bound
    /// address when no public URL is set.
    fn oauth(&self) -> Option<responses_mcp_core::oauth::OAuthConfig> {
        let mode = self.shared.serve.oauth.as_ref()?;
        Some(responses_mcp_host::oauth::config(mode, self.bound))
    }

    /// Passes the server's `out` to its exchange's connection, as [`Listener::route`]
    /// decides.
    fn deliver(&self, id: ExchangeId, out: ExchangeOut, health: Health) {
        let mailbox = self.shared.listener.borrow_mut().route(id, &out, health);
        // The core's mailbox rule: progress is lossy under a slow reader, the reply is not.
        if let Some(mailbox) = mailbox.filter(|m| keeps(m.len(), &out)) {
            let _ = mailbox.try_send(out);
        }
    }

    /// Whether exchange `id` is one of this listener's.
    fn owns(&self, id: ExchangeId) -> bool {
        self.shared.listener.borrow().owns(id)
    }

    /// Refreshes what `/health` reports.
    fn set_health(&self, health: Health) {
        self.shared.listener.borrow_mut().set_health(health);
    }

    /// Stops accepting; idle connections close, busy ones after their response.
    fn drain(&self) {
        self.shared.listener.borrow_mut().drain();
        self.stop.borrow_mut().take();
    }

    /// After the server exits: waits (a little) for connections to write their last bytes.
    async fn flush(&self) {
        self.drain();
        let deadline = Instant::now() + FLUSH_AT_EXIT;
        while self.shared.listener.borrow().connections() > 0 && Instant::now() < deadline {
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
                let admitted = shared.listener.borrow_mut().admit();
                match admitted {
                    ConnectionAdmission::Serve => {}
                    ConnectionAdmission::Refuse(bytes) => {
                        executor.spawn(refuse(stream, bytes)).detach();
                        continue;
                    }
                    ConnectionAdmission::Draining => return,
                }
                let shared = shared.clone();
                executor
                    .spawn(async move {
                        connection::serve_connection(&stream, &shared).await;
                        connection::linger(&stream).await;
                        shared.listener.borrow_mut().closed();
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

/// A connection over the limit: its 503, written if the client reads.
async fn refuse(mut stream: Async<TcpStream>, bytes: Vec<u8>) {
    let _ = connection::within(REFUSAL_WRITE, stream.write_all(&bytes)).await;
}
