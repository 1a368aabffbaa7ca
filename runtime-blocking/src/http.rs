//! `--http` with threads: one accepts, as the core's [`Listener`] admits (at most
//! `server.http.max_connections` connections); one serves each open connection
//! ([`connection`]), moving bytes between its socket and the core's `Connection`.
//! Exchanges go to the main loop over its channel; what the server says for each comes
//! back through a small mailbox (`Endpoint`'s `Listener::deliver`).

mod connection;
mod shared;

use responses_mcp_config::http::{HttpServe, RETRY_AFTER_SECS};
use responses_mcp_core::serve::connection::{FLUSH_AT_EXIT, REFUSAL_WRITE};
use responses_mcp_core::serve::endpoint::Health;
use responses_mcp_core::serve::listener::{ConnectionAdmission, Listener};
use responses_mcp_core::{ExchangeId, ExchangeOut, Message};
use shared::{lock, Shared};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A connection thread's stack: the core parses requests with bounded recursion.
const CONNECTION_STACK: usize = 256 * 1024;

/// The endpoint as the main loop sees it.
pub struct Endpoint {
    shared: Arc<Shared>,
    bound: SocketAddr,
}

impl Endpoint {
    /// Binds, says where on stderr, and starts the accept thread.
    ///
    /// # Errors
    /// When the address cannot be bound or the thread cannot start.
    pub fn start(serve: HttpServe, events: SyncSender<Message>) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(serve.listen)?;
        let bound = listener.local_addr()?;
        let (mcp, max) = (serve.mcp, serve.max_connections);
        let shared = Arc::new(Shared {
            access: serve.access(bound),
            serve,
            events,
            listener: Mutex::new(Listener::new(mcp, max, RETRY_AFTER_SECS)),
        });
        let accepting = shared.clone();
        std::thread::Builder::new()
            .name("accept".into())
            .spawn(move || accept(&listener, &accepting))?;
        responses_mcp_host::logging::announce_listening(bound, mcp);
        Ok(Endpoint { shared, bound })
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
        let mailbox = lock(&self.shared.listener).route(id, &out, health);
        let Some(slot) = mailbox else { return };
        if lock(&slot.outs).push(out) {
            slot.ready.notify_one();
        }
    }

    /// Whether exchange `id` is one of this listener's.
    fn owns(&self, id: ExchangeId) -> bool {
        lock(&self.shared.listener).owns(id)
    }

    /// Refreshes what `/health` reports.
    fn set_health(&self, health: Health) {
        lock(&self.shared.listener).set_health(health);
    }

    /// Stops accepting; idle connections close, busy ones after their response.
    fn drain(&self) {
        let first = lock(&self.shared.listener).drain();
        if first {
            // Wakes the accept thread, which sees the flag and closes the listener.
            let _ = TcpStream::connect_timeout(&self.bound, Duration::from_secs(1));
        }
    }

    /// After the server exits: waits (a little) for connections to write their last bytes.
    async fn flush(&self) {
        self.drain();
        let deadline = Instant::now() + FLUSH_AT_EXIT;
        while lock(&self.shared.listener).connections() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Accepts until draining; beyond the connection limit, a 503 and close.
fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
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
        let admitted = lock(&shared.listener).admit();
        match admitted {
            ConnectionAdmission::Serve => {}
            ConnectionAdmission::Refuse(bytes) => {
                refuse(stream, &bytes);
                continue;
            }
            ConnectionAdmission::Draining => return,
        }
        let serving = shared.clone();
        let started = std::thread::Builder::new()
            .name("connection".into())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let mut stream = connection::serve_connection(stream, &serving);
                connection::linger(&mut stream);
                lock(&serving.listener).closed();
            });
        if let Err(e) = started {
            lock(&shared.listener).closed();
            log::warn!("cannot start a connection thread: {e}");
        }
    }
}

/// A connection over the limit: its 503, if the client takes it at once.
fn refuse(mut stream: TcpStream, bytes: &[u8]) {
    let _ = stream.set_write_timeout(Some(REFUSAL_WRITE));
    let _ = stream.write_all(bytes);
}
