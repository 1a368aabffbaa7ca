//! One HTTP listener's rules, sans IO: how many connections it serves and the 503
//! beyond them, when it drains, and the exchanges it has open (each one's mailbox, in an
//! id space of its own, and the load `/health` reports). A runtime keeps one behind its
//! own lock (a `RefCell` on one thread, a `Mutex` across threads) and only moves bytes
//! and what [`Listener::route`] picks.

use super::connection::{too_many_connections, Wait};
use super::endpoint::Health;
use super::exchange::ExchangeOut;
use crate::io::ExchangeId;
use std::collections::BTreeMap;

/// Whether a new connection is served.
#[derive(Debug, PartialEq, Eq)]
pub enum ConnectionAdmission {
    /// Serve it; tell [`Listener::closed`] when it is over.
    Serve,
    /// Over the limit: write these bytes (a 503 with `Retry-After`) if the client takes
    /// them at once, and close.
    Refuse(Vec<u8>),
    /// The listener drains: close it unanswered.
    Draining,
}

/// See the module docs; `M` is the runtime's handle on a connection's mailbox.
#[derive(Debug)]
pub struct Listener<M> {
    mailboxes: BTreeMap<ExchangeId, M>,
    next: u64,
    health: Health,
    /// Connections being served.
    connections: usize,
    max_connections: usize,
    retry_after_secs: u32,
    draining: bool,
}

/// Where the exchange ids of a metrics-only listener begin: the two listeners of one
/// process never share an id, so the server's answer finds its listener.
const METRICS_IDS: u64 = 1 << 63;

impl<M> Listener<M> {
    /// The `/mcp` listener (`mcp`), or a metrics-only one, serving at most
    /// `max_connections` connections at once; a refused one is told to come back after
    /// `retry_after_secs`.
    pub fn new(mcp: bool, max_connections: usize, retry_after_secs: u32) -> Self {
        Listener {
            mailboxes: BTreeMap::new(),
            next: if mcp { 0 } else { METRICS_IDS },
            health: Health::starting(),
            connections: 0,
            max_connections,
            retry_after_secs,
            draining: false,
        }
    }

    /// A connection was accepted: whether to serve it, counted when it is.
    pub fn admit(&mut self) -> ConnectionAdmission {
        if self.draining {
            ConnectionAdmission::Draining
        } else if self.connections >= self.max_connections {
            log::debug!("connection refused: {} open", self.connections);
            ConnectionAdmission::Refuse(too_many_connections(self.retry_after_secs))
        } else {
            self.connections += 1;
            ConnectionAdmission::Serve
        }
    }

    /// A served connection is over (or its thread or task could not start).
    pub fn closed(&mut self) {
        self.connections = self.connections.saturating_sub(1);
    }

    /// Connections being served.
    pub fn connections(&self) -> usize {
        self.connections
    }

    /// Takes no new connection from now on; idle ones close, busy ones after their
    /// response. Whether it was serving until now.
    pub fn drain(&mut self) -> bool {
        !std::mem::replace(&mut self.draining, true)
    }

    /// Whether the listener drains: each connection's response in progress is its last
    /// ([`super::connection::Connection::drain`]).
    pub fn is_draining(&self) -> bool {
        self.draining
    }

    /// Whether a connection waiting as `wait` closes now rather than read on: an idle one
    /// of a draining listener (a request in progress still gets its answer).
    pub fn closes(&self, wait: Wait) -> bool {
        self.draining && wait == Wait::Idle
    }

    /// Whether exchange `id` is one of this listener's.
    pub fn owns(&self, id: ExchangeId) -> bool {
        (id.0 >= METRICS_IDS) == (self.next >= METRICS_IDS)
    }

    /// Refreshes what `/health` reports.
    pub fn set_health(&mut self, health: Health) {
        self.health = health;
    }

    /// What `/health` reports.
    pub fn health(&self) -> Health {
        self.health
    }

    /// Forgets exchange `id` (its client left).
    pub fn close(&mut self, id: ExchangeId) {
        self.mailboxes.remove(&id);
    }

    /// A new exchange whose outputs go to `mailbox`.
    pub fn open(&mut self, mailbox: M) -> ExchangeId {
        let id = ExchangeId(self.next);
        self.next += 1;
        self.mailboxes.insert(id, mailbox);
        id
    }
}

impl<M: Clone> Listener<M> {
    /// Where the server's `out` for exchange `id` goes (`None` when its client has gone),
    /// after taking the server's load as of this output, so that a client that reads the
    /// reply and asks `/health` at once does not see its call still running. The reply
    /// ([`ExchangeOut::ends_exchange`]) ends the exchange.
    pub fn route(&mut self, id: ExchangeId, out: &ExchangeOut, health: Health) -> Option<M> {
        self.health = health;
        if out.ends_exchange() {
            self.mailboxes.remove(&id)
        } else {
            self.mailboxes.get(&id).cloned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(running: usize) -> Health {
        Health {
            running,
            ..Health::default()
        }
    }

    fn progress() -> ExchangeOut {
        ExchangeOut::Notification(br#"{"method":"notifications/progress"}"#.to_vec())
    }

    #[test]
    fn progress_keeps_the_exchange_open_and_the_reply_ends_it() {
        let mut open = Listener::new(true, 2, 1);
        let a = open.open("a");
        let b = open.open("b");
        assert_ne!(a, b);
        assert_eq!(open.route(a, &progress(), load(2)), Some("a"));
        assert_eq!(open.health(), load(2));
        assert_eq!(open.route(a, &ExchangeOut::Accepted, load(1)), Some("a"));
        assert_eq!(open.health(), load(1), "the load as of the reply");
        assert_eq!(open.route(a, &progress(), load(1)), None, "a is over");
        assert_eq!(
            open.route(b, &progress(), load(1)),
            Some("b"),
            "b is still open"
        );
        open.close(b);
        assert_eq!(open.route(b, &ExchangeOut::Accepted, load(0)), None);
        assert_eq!(
            open.health(),
            load(0),
            "load is taken even for a departed client"
        );
    }

    #[test]
    fn the_two_listeners_never_share_an_exchange_id() {
        let mut mcp = Listener::<&str>::new(true, 2, 1);
        let mut metrics = Listener::<&str>::new(false, 2, 1);
        let (a, b) = (mcp.open("a"), metrics.open("b"));
        assert_ne!(a, b);
        assert!(mcp.owns(a) && !mcp.owns(b));
        assert!(metrics.owns(b) && !metrics.owns(a));
    }

    #[test]
    fn connections_beyond_the_limit_get_a_503_and_a_draining_listener_takes_none() {
        let mut l = Listener::<&str>::new(true, 2, 3);
        assert_eq!(l.admit(), ConnectionAdmission::Serve);
        assert_eq!(l.admit(), ConnectionAdmission::Serve);
        let ConnectionAdmission::Refuse(bytes) = l.admit() else {
            panic!("a third connection is refused");
        };
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.starts_with("HTTP/1.1 503"), "{text}");
        assert!(
            text.to_ascii_lowercase().contains("retry-after: 3"),
            "{text}"
        );
        assert_eq!(l.connections(), 2, "a refused connection is not counted");
        l.closed();
        assert_eq!(
            l.admit(),
            ConnectionAdmission::Serve,
            "a closed one made room"
        );
        assert!(!l.closes(Wait::Idle));
        assert!(l.drain(), "the first drain");
        assert!(!l.drain(), "draining already");
        assert_eq!(l.admit(), ConnectionAdmission::Draining);
        assert!(l.closes(Wait::Idle));
        assert!(
            !l.closes(Wait::Request),
            "a request in progress is answered"
        );
    }
}
