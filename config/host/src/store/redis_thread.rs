//! The shared store's client (the `store` feature), performed for the runtimes: one thread holds a
//! connection to Redis or Valkey (the `redis` crate's sync API), performs the core's
//! [`StoreOp`]s in order (those waiting together in one round trip, `batch.rs`) and hands
//! each answer back through the runtime's sink, with how long it took. While the store
//! does not answer, the thread looks every second, and says when it answers again
//! (`Message::StoreHealth`), so `/ready` follows it with no call. A second thread stays
//! subscribed to the instances' channel and hands each message on (`Message::StoreEvent`),
//! saying so each time it (re)subscribes.
//!
//! Nothing here prints the URL's password or the password variable's value: the store is
//! named by its host and port only.

use super::batch;
use responses_mcp_config::store::StoreConnect;
use responses_mcp_core::store::events::CHANNEL;
use responses_mcp_core::store::{StoreId, StoreOp, StoreReply};
use responses_mcp_core::Message;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Operations sent in one round trip at most.
const MAX_BATCH: usize = 128;

/// The handle the runtime keeps: operations go to the store's thread.
pub struct Store {
    ops: Sender<(StoreId, StoreOp)>,
    /// Told (by being dropped) when the store's thread has done every operation it was
    /// sent and ended.
    done: std::sync::mpsc::Receiver<()>,
}

impl Store {
    /// Starts the store's thread; `deliver` hands it answers and health changes back to
    /// the runtime's loop.
    ///
    /// # Errors
    /// When the thread cannot start.
    pub fn start(
        connect: StoreConnect,
        deliver: impl Fn(Message) + Send + Sync + 'static,
    ) -> std::io::Result<Store> {
        if connect.tls.is_some() {
            // The store's TLS takes the process's provider: the upstream's narrowed one.
            let _ = crate::tls::provider().install_default();
        }
        let deliver: Arc<dyn Fn(Message) + Send + Sync> = Arc::new(deliver);
        let (ops, rx) = channel::<(StoreId, StoreOp)>();
        let (finished, done) = channel::<()>();
        let (listen_to, hear) = (connect.clone(), Arc::clone(&deliver));
        std::thread::Builder::new()
            .name("store-events".into())
            .stack_size(256 * 1024)
            .spawn(move || listen(&listen_to, &*hear))?;
        std::thread::Builder::new()
            .name("store".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                // Dropped when the thread ends: `Store::finish` hears it.
                let _finished = finished;
                let mut worker = Worker {
                    connect,
                    connection: None,
                    up: true,
                    last_used: Instant::now(),
                };
                loop {
                    let wait = if worker.up {
                        Duration::from_secs(3600)
                    } else {
                        Duration::from_secs(1)
                    };
                    match rx.recv_timeout(wait) {
                        Ok(first) => {
                            // Whatever else waits goes in the same round trip.
                            let mut batch = vec![first];
                            batch.extend(rx.try_iter().take(MAX_BATCH - 1));
                            let started = Instant::now();
                            let replies = worker.perform(&batch);
                            let took = started.elapsed();
                            worker.up = !replies
                                .iter()
                                .all(|r| matches!(r, StoreReply::Unavailable(_)));
                            for ((id, _), reply) in batch.into_iter().zip(replies) {
                                deliver(Message::StoreReply { id, reply, took });
                            }
                        }
                        Err(RecvTimeoutError::Timeout) if !worker.up => {
                            if worker.ping() {
                                worker.up = true;
                                log::info!("the store at {} answers again", worker.connect.shown);
                                deliver(Message::StoreHealth(true));
                            }
                        }
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            })?;
        Ok(Store { ops, done })
    }

    /// Sends `op` to the store's thread; its answer comes back as `Message::StoreReply`.
    pub fn perform(&self, id: StoreId, op: StoreOp) {
        let _ = self.ops.send((id, op));
    }

    /// The exit: waits at most `within` for the operations sent so far to be done (the
    /// last calls' spend, the holds they let go), so that an instance stopped by its
    /// orchestrator leaves the fleet's counts true.
    pub fn finish(self, within: Duration) {
        let Store { ops, done } = self;
        drop(ops);
        if !matches!(done.recv_timeout(within), Err(RecvTimeoutError::Timeout)) {
            return;
        }
        log::warn!(
            "the store did not take this instance's last operations within {} s; its spend and holds may be off until the day ends",
            within.as_secs()
        );
    }
}

/// The store's thread: its connection, made again after any failure.
struct Worker {
    connect: StoreConnect,
    connection: Option<redis::Connection>,
    /// The last operation or look succeeded.
    up: bool,
    /// When the kept connection last carried anything.
    last_used: Instant,
}

/// A kept connection idle longer than this is asked `PING` before it carries a batch.
const IDLE_CHECK: Duration = Duration::from_secs(1);

impl Worker {
    /// Performs `batch` in one round trip; an answer per operation, in order. A batch is
    /// sent once: one that failed (a timeout, a broken connection) may have been done by
    /// the store all the same, and sent again it would count calls and spend twice and
    /// leave a claim that nobody holds. So a connection that sat idle (the store may
    /// have restarted or dropped it meanwhile) is checked with a `PING` first, which is
    /// harmless to repeat, and made again when that fails.
    fn perform(&mut self, batch: &[(StoreId, StoreOp)]) -> Vec<StoreReply> {
        let ops: Vec<&StoreOp> = batch.iter().map(|(_, op)| op).collect();
        let (pipe, takes) = batch::pipeline(&ops);
        if self.connection.is_some() && self.last_used.elapsed() >= IDLE_CHECK && !self.ping() {
            // The kept connection is gone; `ping` dropped it, `run` makes a new one.
            log::debug!(
                "the kept connection to the store at {} was gone",
                self.connect.shown
            );
        }
        let done = self.run(&pipe);
        self.last_used = Instant::now();
        let shown = &self.connect.shown;
        match done {
            // What a client may read names no host or port: the log does.
            Ok(values) => batch::replies(&ops, &takes, values, |e| {
                let why = describe(e);
                log::warn!("the store at {shown} refused an operation: {why}");
                format!("the store refused the operation: {why}")
            }),
            Err(e) => {
                // A broken connection is made again for the next operation.
                self.connection = None;
                let why = describe(&e);
                log::warn!("the store at {shown} failed: {why}");
                let reply = StoreReply::Unavailable(format!("the store: {why}"));
                vec![reply; batch.len()]
            }
        }
    }

    fn run(&mut self, pipe: &redis::Pipeline) -> redis::RedisResult<Vec<redis::Value>> {
        let connection = connect(&mut self.connection, &self.connect)?;
        pipe.query(connection)
    }

    /// Whether the store answers a `PING` (on the kept connection, or a new one).
    fn ping(&mut self) -> bool {
        self.last_used = Instant::now();
        let answered = connect(&mut self.connection, &self.connect)
            .and_then(|c| redis::cmd("PING").query::<String>(c));
        if answered.is_err() {
            self.connection = None;
        }
        answered.is_ok()
    }
}

/// How long the subscription waits for a message before it asks the store whether it is
/// still there.
const QUIET_CHECK: Duration = Duration::from_secs(10);

/// Stays subscribed to the instances' channel, handing each message to `deliver`; after
/// any failure, subscribes again a second later.
fn listen(to: &StoreConnect, deliver: &dyn Fn(Message)) {
    loop {
        let failed = subscribe(to, deliver);
        log::debug!(
            "the subscription to the store at {} ended: {}",
            to.shown,
            describe(&failed)
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// One subscription, until it fails.
fn subscribe(to: &StoreConnect, deliver: &dyn Fn(Message)) -> redis::RedisError {
    let mut kept = None;
    let connection = match connect(&mut kept, to) {
        Ok(connection) => connection,
        Err(e) => return e,
    };
    let mut pubsub = connection.as_pubsub();
    if let Err(e) = pubsub
        .subscribe(CHANNEL)
        .and_then(|()| pubsub.set_read_timeout(Some(QUIET_CHECK)))
    {
        return e;
    }
    deliver(Message::StoreSubscribed);
    loop {
        match pubsub.get_message() {
            Ok(message) => {
                if let Ok(text) = message.get_payload::<String>() {
                    deliver(Message::StoreEvent(text));
                }
            }
            // A quiet channel: the store is asked whether it is still there, so that a
            // connection lost without a word (a partition) is made again, not waited on.
            Err(e) if e.is_timeout() => {
                if let Err(e) = pubsub.ping::<redis::Value>() {
                    return e;
                }
            }
            Err(e) => return e,
        }
    }
}

/// The kept connection, or a new one when there is none (after a failure, or at first).
fn connect<'a>(
    kept: &'a mut Option<redis::Connection>,
    to: &StoreConnect,
) -> redis::RedisResult<&'a mut redis::Connection> {
    let connection = match kept.take() {
        Some(connection) => connection,
        None => {
            let client = match &to.tls {
                None => redis::Client::open(to.info.clone())?,
                Some(roots) => redis::Client::build_with_tls(
                    to.info.clone(),
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: roots.clone(),
                    },
                )?,
            };
            let connection = client.get_connection_with_timeout(to.timeout)?;
            connection.set_read_timeout(Some(to.timeout))?;
            connection.set_write_timeout(Some(to.timeout))?;
            connection
        }
    };
    Ok(kept.insert(connection))
}

/// What a TLS failure says (the store's certificate not trusted, a handshake refused), so
/// that it is not reported as a broken connection.
fn tls_failure(e: &redis::RedisError) -> Option<String> {
    let text = e.to_string();
    let tls = [
        "certificate",
        "CertificateUnknown",
        "handshake",
        "peer sent",
        "TLS",
    ];
    tls.iter().any(|t| text.contains(t)).then(|| {
        let said: String = text.chars().take(160).collect();
        format!("TLS failed ({said}); with rediss://, the store's certificate must chain to the roots of openai.ca_file, or to the built-in ones")
    })
}

/// A store error as a short sentence that names no secret (the client's errors name the
/// kind and what the server said, never the URL).
fn describe(e: &redis::RedisError) -> String {
    if e.is_timeout() {
        "no answer in time".into()
    } else if e.is_connection_refusal() {
        "connection refused".into()
    } else if let Some(why) = tls_failure(e) {
        why
    } else if e.is_io_error() || e.is_connection_dropped() {
        "the connection broke".into()
    } else {
        let text = e.to_string();
        text.chars().take(200).collect()
    }
}
