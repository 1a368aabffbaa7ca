//! The mailbox of each exchange an HTTP endpoint has open (what its connection reads),
//! and the load `/health` reports. A runtime keeps one behind its own lock (a `RefCell`
//! on one thread, a `Mutex` across threads) and only moves what [`Mailboxes::route`]
//! picks; which exchange an output goes to, and when an exchange is over, is decided here.

use super::endpoint::Health;
use super::exchange::ExchangeOut;
use crate::io::ExchangeId;
use std::collections::BTreeMap;

/// Open exchanges by id; `M` is the runtime's handle on a connection's mailbox.
#[derive(Debug)]
pub struct Mailboxes<M> {
    mailboxes: BTreeMap<ExchangeId, M>,
    next: u64,
    health: Health,
}

/// Where the exchange ids of a metrics-only listener begin: the two listeners of one
/// process never share an id, so the server's answer finds its listener.
const METRICS_IDS: u64 = 1 << 63;

impl<M> Default for Mailboxes<M> {
    fn default() -> Self {
        Mailboxes::for_listener(true)
    }
}

impl<M> Mailboxes<M> {
    /// The mailboxes of the `/mcp` listener (`mcp`), or of a metrics-only one.
    pub fn for_listener(mcp: bool) -> Self {
        Mailboxes {
            mailboxes: BTreeMap::new(),
            next: if mcp { 0 } else { METRICS_IDS },
            health: Health::default(),
        }
    }

    /// Whether exchange `id` is one of this listener's.
    pub fn owns(&self, id: ExchangeId) -> bool {
        (id.0 >= METRICS_IDS) == (self.next >= METRICS_IDS)
    }
}

impl<M: Clone> Mailboxes<M> {
    /// A new exchange whose outputs go to `mailbox`.
    pub fn open(&mut self, mailbox: M) -> ExchangeId {
        let id = ExchangeId(self.next);
        self.next += 1;
        self.mailboxes.insert(id, mailbox);
        id
    }

    /// Forgets exchange `id` (its client left).
    pub fn close(&mut self, id: ExchangeId) {
        self.mailboxes.remove(&id);
    }

    /// Where the server's `out` for exchange `id` goes (`None` when its client has gone),
    /// after taking the server's load as of this output, so that a client that reads the
    /// reply and asks `/health` at once does not see its call still running. The reply
    /// (anything but progress) ends the exchange.
    pub fn route(&mut self, id: ExchangeId, out: &ExchangeOut, health: Health) -> Option<M> {
        self.health = health;
        match out {
            ExchangeOut::Notification(_) => self.mailboxes.get(&id).cloned(),
            _ => self.mailboxes.remove(&id),
        }
    }

    /// Refreshes what `/health` reports.
    pub fn set_health(&mut self, health: Health) {
        self.health = health;
    }

    /// What `/health` reports.
    pub fn health(&self) -> Health {
        self.health
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
        let mut open = Mailboxes::default();
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
        let mut mcp = Mailboxes::<&str>::for_listener(true);
        let mut metrics = Mailboxes::<&str>::for_listener(false);
        let (a, b) = (mcp.open("a"), metrics.open("b"));
        assert_ne!(a, b);
        assert!(mcp.owns(a) && !mcp.owns(b));
        assert!(metrics.owns(b) && !metrics.owns(a));
    }
}
