//! Shutdown dates the provider itself gives for the profiles' models (`GET
//! /models/{id}`'s `shutdown_date`), looked up in the background after startup and again
//! every day. The provider's word is newer than any table a binary carries: a date it
//! gives decides, on any base URL; where it gives none, the built-in table
//! ([`super::models`]) decides as before.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often the dates are looked up again in a long-running process.
pub const LOOKUP_EVERY: Duration = Duration::from_secs(24 * 3600);
/// How long after the first input the first lookup starts: past a client's start-up
/// exchange (initialize, initialized, tools/list), which it would compete with for CPU.
pub const FIRST_LOOKUP_AFTER: Duration = Duration::from_secs(1);
/// How far ahead a coming shutdown is warned about.
pub const WARN_DAYS: u64 = 30;

/// What the provider said of each model, and when to ask again.
#[derive(Debug, Default)]
pub struct Calendar {
    /// Per model: the shutdown date it gave (`None`: none announced).
    said: BTreeMap<String, Option<String>>,
    /// Models whose coming or past shutdown was already warned about.
    warned: BTreeSet<String>,
    /// When the next lookup is due (`None` before the first).
    next: Option<Instant>,
}

/// What a date the provider gave means on a day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown<'a> {
    /// Past: calls with the model are refused.
    Past(&'a str),
    /// Within [`WARN_DAYS`]: warn once.
    Soon(&'a str),
    /// Further away, or none announced.
    Later,
}

impl Calendar {
    /// The server has started serving at `now`: the first lookup is due
    /// [`FIRST_LOOKUP_AFTER`] later (later calls change nothing).
    pub fn start(&mut self, now: Instant) {
        self.next
            .get_or_insert_with(|| crate::io::after(now, FIRST_LOOKUP_AFTER));
    }

    /// Whether a lookup is due at `now` (never before [`Calendar::start`]).
    pub fn due(&self, now: Instant) -> bool {
        self.next.is_some_and(|at| now >= at)
    }

    /// A lookup started at `now`: the next is due a day later.
    pub fn looked_up(&mut self, now: Instant) {
        self.next = Some(crate::io::after(now, LOOKUP_EVERY));
    }

    /// When the next lookup is due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }

    /// Records what the provider said of `model`.
    pub fn handle_date(&mut self, model: &str, date: Option<String>) {
        self.said.insert(model.to_owned(), date);
    }

    /// The provider's date for `model`, as it stands on `today` (and on `soon`, the day
    /// [`WARN_DAYS`] ahead; all `YYYY-MM-DD`, which order as text).
    pub fn shutdown<'a>(&'a self, model: &str, today: &str, soon: &str) -> Shutdown<'a> {
        match self.said.get(model).and_then(Option::as_deref) {
            Some(date) if today >= date => Shutdown::Past(date),
            Some(date) if soon >= date => Shutdown::Soon(date),
            _ => Shutdown::Later,
        }
    }

    /// Whether `model` is yet to be warned about (and is not from now on).
    pub fn warn_once(&mut self, model: &str) -> bool {
        self.warned.insert(model.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_past_soon_or_later_and_looked_up_daily() {
        let t0 = crate::testing::start_instant();
        let mut c = Calendar::default();
        assert!(
            !c.due(t0) && c.poll_timeout().is_none(),
            "nothing before the start"
        );
        c.start(t0);
        assert!(!c.due(t0), "not during the client's start-up exchange");
        assert!(c.due(t0 + FIRST_LOOKUP_AFTER));
        c.start(t0 + FIRST_LOOKUP_AFTER);
        assert_eq!(
            c.poll_timeout(),
            Some(t0 + FIRST_LOOKUP_AFTER),
            "started once"
        );
        c.looked_up(t0);
        assert!(!c.due(t0 + Duration::from_secs(3600)));
        assert!(c.due(t0 + LOOKUP_EVERY));
        c.handle_date("gpt-5", Some("2026-12-11".into()));
        c.handle_date("gpt-6.1-terra", None);
        let on = |today, soon| c.shutdown("gpt-5", today, soon);
        assert_eq!(on("2026-12-11", "2027-01-10"), Shutdown::Past("2026-12-11"));
        assert_eq!(on("2026-11-26", "2026-12-26"), Shutdown::Soon("2026-12-11"));
        assert_eq!(on("2026-10-01", "2026-10-31"), Shutdown::Later);
        assert_eq!(
            c.shutdown("gpt-6.1-terra", "2099-01-01", "2099-01-31"),
            Shutdown::Later
        );
        assert_eq!(
            c.shutdown("unknown", "2099-01-01", "2099-01-31"),
            Shutdown::Later
        );
        assert!(c.warn_once("gpt-5") && !c.warn_once("gpt-5"));
    }
}
