//! Which connection an attempt runs on, so that another thread can close exactly it.
//!
//! ureq's agent owns the connections and their pool; an attempt may run on a new
//! connection or on one another attempt left in the pool. Every connection the agent makes
//! comes through [`Tracking`], which wraps ureq's own connectors: the shutdown handle of
//! each socket they open (registered the moment the socket exists, before any proxy or TLS
//! handshake) is enlisted in the attempt of the thread that opened it, and kept with the
//! connection ([`Tracked`]), which enlists in whichever attempt's thread uses it next.
//! Attempts run on threads of their own, so "the thread's attempt" is exact.
//! [`Attempt::abort`] shuts down every socket enlisted in the attempt: a blocked read or
//! write returns at once and the server sees the connection close. An attempt aborted
//! before it connects never connects.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use ureq::config::Config;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, DefaultConnector, NextTimeout, RustlsConnector,
    ShutdownHandle, TcpConnector, Transport,
};

/// One attempt: the sockets it runs on, once it has them. Clones share them.
#[derive(Clone, Default)]
pub struct Attempt {
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    aborted: bool,
    /// The sockets under the attempt's connection (more than one only while a connection
    /// is replaced, or nested through a proxy).
    sockets: Vec<Weak<dyn ShutdownHandle>>,
    /// The attempt runs on a connection that served an earlier attempt.
    reused: bool,
    /// Some of a response arrived.
    answered: bool,
}

/// A poisoned lock only means another thread panicked mid-update of plain data.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

thread_local! {
    /// The attempt this thread is running, while [`Attempt::enter`]'s guard lives.
    static CURRENT: RefCell<Option<Arc<Mutex<Slot>>>> = const { RefCell::new(None) };
}

/// The error an aborted attempt's IO fails with.
fn aborted() -> ureq::Error {
    ureq::Error::Io(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the attempt was aborted",
    ))
}

impl Attempt {
    /// Closes the attempt's connection; the request in progress fails at once, and one not
    /// yet connected fails before it connects.
    pub fn abort(self) {
        let sockets = {
            let mut slot = lock(&self.slot);
            slot.aborted = true;
            std::mem::take(&mut slot.sockets)
        };
        for socket in sockets.iter().filter_map(Weak::upgrade) {
            socket.shutdown();
        }
    }

    /// Whether [`abort`](Self::abort) was called.
    pub fn is_aborted(&self) -> bool {
        lock(&self.slot).aborted
    }

    /// Makes this the thread's attempt until the guard drops; the connections used
    /// meanwhile enlist in it.
    pub fn enter(&self) -> Entered {
        CURRENT.with(|current| *current.borrow_mut() = Some(self.slot.clone()));
        Entered(())
    }

    /// Whether the attempt so far ran on a connection from the pool and saw no byte of a
    /// response: a failure then means the server had closed the idle connection, not that
    /// it refused the request. Starts over for the next try.
    pub fn take_stale(&self) -> bool {
        let mut slot = lock(&self.slot);
        let stale = slot.reused && !slot.answered && !slot.aborted;
        slot.reused = false;
        slot.answered = false;
        stale
    }
}

/// Ends the thread's attempt when dropped.
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|current| *current.borrow_mut() = None);
    }
}

/// Runs `f` on the thread's attempt, if there is one.
fn with_current<R>(f: impl FnOnce(&Arc<Mutex<Slot>>) -> R) -> Option<R> {
    CURRENT.with(|current| current.borrow().as_ref().map(f))
}

/// Enlists `socket` in the thread's attempt; refused (and the socket shut down) if the
/// attempt was aborted.
fn enlist(socket: &Weak<dyn ShutdownHandle>) -> Result<(), ureq::Error> {
    with_current(|slot| {
        let mut slot = lock(slot);
        if slot.aborted {
            if let Some(socket) = socket.upgrade() {
                socket.shutdown();
            }
            return Err(aborted());
        }
        slot.sockets.retain(|s| s.strong_count() > 0);
        slot.sockets.push(socket.clone());
        Ok(())
    })
    .unwrap_or(Ok(()))
}

/// ureq's connectors, every connection they make [`Tracked`]: without a proxy, TCP then
/// rustls for `https`, called one after the other; through a proxy, ureq's default chain
/// (SOCKS, HTTP `CONNECT`, TCP, rustls).
///
/// The direct path is ureq's own connectors, not its chain, for the stack: the chain is
/// one generic function holding every connector's transport by value at once (12.7 KB of
/// frame, on top of the 14 KB of ureq's request loop), and every attempt's thread keeps
/// the pages its deepest call touched for as long as it lives (docs/benchmarks.md,
/// issue 50).
#[derive(Debug)]
pub struct Tracking {
    proxied: DefaultConnector,
    tcp: TcpConnector,
    tls: RustlsConnector,
    /// The TCP leg's configuration under TLS: its buffers carry only TLS records (the
    /// request and the response go through the TLS transport's own), so small ones do.
    records: Config,
}

impl Tracking {
    /// The connectors, the TCP leg under TLS with `records` bytes of buffer each way.
    pub fn new(records: usize) -> Tracking {
        Tracking {
            proxied: DefaultConnector::default(),
            tcp: TcpConnector::default(),
            tls: RustlsConnector::default(),
            records: ureq::Agent::config_builder()
                .input_buffer_size(records)
                .output_buffer_size(records)
                .build(),
        }
    }
}

/// What registers each socket a connection opens.
type Register = Arc<dyn Fn(Weak<dyn ShutdownHandle>) -> Result<(), ureq::Error> + Send + Sync>;

/// `details` with `config` and `register_shutdown`.
fn with<'a>(
    details: &ConnectionDetails<'a>,
    config: &'a Config,
    register_shutdown: Register,
) -> ConnectionDetails<'a> {
    ConnectionDetails {
        uri: details.uri,
        addrs: details.addrs.clone(),
        config,
        request_level: details.request_level,
        resolver: details.resolver,
        now: details.now,
        timeout: details.timeout,
        current_time: details.current_time.clone(),
        run_connector: details.run_connector.clone(),
        register_shutdown,
    }
}

impl Connector<()> for Tracking {
    type Out = Tracked;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> Result<Option<Tracked>, ureq::Error> {
        if with_current(|slot| lock(slot).aborted) == Some(true) {
            return Err(aborted());
        }
        let sockets: Arc<Mutex<Vec<Weak<dyn ShutdownHandle>>>> = Arc::default();
        let register = details.register_shutdown.clone();
        let seen = sockets.clone();
        // The same details but for the socket's registration, which also enlists the
        // socket in the attempt at once, so that an abort during a proxy or TLS handshake
        // closes it.
        let details = with(
            details,
            details.config,
            Arc::new(move |socket: Weak<dyn ShutdownHandle>| {
                lock(&seen).push(socket.clone());
                enlist(&socket)?;
                register(socket)
            }),
        );
        let connected = match details.config.proxy() {
            None => self.direct(&details),
            Some(_) => self.proxied.connect(&details, chained),
        };
        let Some(inner) = connected? else {
            return Ok(None);
        };
        let sockets = std::mem::take(&mut *lock(&sockets));
        Ok(Some(Tracked {
            inner,
            sockets,
            attempt: with_current(Arc::downgrade),
        }))
    }
}

impl Tracking {
    /// A connection to `details`' own address: TCP, and TLS over it for `https`.
    fn direct(
        &self,
        details: &ConnectionDetails,
    ) -> Result<Option<Box<dyn Transport>>, ureq::Error> {
        if details.needs_tls() {
            return self.tls(details);
        }
        Ok(self
            .tcp
            .connect(details, None::<()>)?
            .map(|tcp| Box::new(tcp) as Box<dyn Transport>))
    }

    /// TLS over TCP; apart, so that a plain connection's frame holds none of its state.
    #[inline(never)]
    fn tls(&self, details: &ConnectionDetails) -> Result<Option<Box<dyn Transport>>, ureq::Error> {
        let leg = with(details, &self.records, details.register_shutdown.clone());
        let Some(tcp) = self.tcp.connect(&leg, None::<()>)? else {
            return Ok(None);
        };
        let tcp: Box<dyn Transport> = Box::new(tcp);
        Ok(self
            .tls
            .connect(details, Some(tcp))?
            .map(|tls| Box::new(tls) as Box<dyn Transport>))
    }
}

/// A connection with the sockets under it, enlisting in the attempt of the thread that
/// uses it.
pub struct Tracked {
    inner: Box<dyn Transport>,
    sockets: Vec<Weak<dyn ShutdownHandle>>,
    /// The attempt it last ran for.
    attempt: Option<Weak<Mutex<Slot>>>,
}

impl fmt::Debug for Tracked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tracked").field(&self.inner).finish()
    }
}

impl Tracked {
    /// Enlists the connection in the thread's attempt when it is not already in it.
    fn enlist(&mut self) -> Result<(), ureq::Error> {
        let Some(changed) = with_current(|slot| {
            let same = self
                .attempt
                .as_ref()
                .is_some_and(|a| std::ptr::eq(a.as_ptr(), Arc::as_ptr(slot)));
            (!same).then(|| (slot.clone(), self.attempt.is_some()))
        }) else {
            return Ok(());
        };
        let Some((slot, served_before)) = changed else {
            return Ok(());
        };
        for socket in &self.sockets {
            enlist(socket)?;
        }
        lock(&slot).reused |= served_before;
        self.attempt = Some(Arc::downgrade(&slot));
        Ok(())
    }
}

impl Transport for Tracked {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.enlist()?;
        self.inner.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.enlist()?;
        let progress = self.inner.await_input(timeout)?;
        if progress {
            with_current(|slot| lock(slot).answered = true);
        }
        Ok(progress)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}
