//! Calls per minute and estimated spend per day, for each client and for the instance.
//!
//! Windows are the clock's: a minute is a UTC minute, a day a UTC day, so a refusal can
//! say exactly when its limit resets, and every instance agrees on the boundaries. A call
//! counts when it is admitted; its spend counts when it ends, at what it was estimated
//! to cost (a model without a price counts nothing). Between the two its estimate is
//! *held*: a call is admitted only while the day's spend plus what the calls still in
//! flight are estimated to cost stays below the limit, so however many calls arrive at
//! once, a cap is overrun by at most the one call that crossed it (and what estimates
//! missed).

use super::id::ClientId;
use crate::money::Picodollars;

/// Limits on one client, or on the instance; `None` is no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limit {
    /// Calls admitted per UTC minute.
    pub calls_per_minute: Option<u32>,
    /// Estimated spend per UTC day.
    pub spend_per_day: Option<Picodollars>,
}

/// Whose limit was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The client's own (from the clients file).
    Client,
    /// The instance's (`server.limits.*`), which all clients share.
    Instance,
}

/// Which limit was reached, and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    /// The minute's calls.
    CallsPerMinute(u32),
    /// The day's estimated spend: the limit, what was spent, and what the calls still
    /// in flight hold.
    SpendPerDay {
        /// The limit.
        limit: Picodollars,
        /// Spent today so far.
        spent: Picodollars,
        /// The estimates of calls admitted today that have not ended yet.
        held: Picodollars,
    },
}

impl LimitKind {
    /// The limit's name, as the configuration spells it.
    pub fn label(self) -> &'static str {
        match self {
            LimitKind::CallsPerMinute(_) => "calls_per_minute",
            LimitKind::SpendPerDay { .. } => "spend_per_day_usd",
        }
    }
}

/// A call refused by a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// Whose limit.
    pub scope: Scope,
    /// Which limit.
    pub kind: LimitKind,
    /// When its window ends, in Unix seconds.
    pub resets_at: u64,
    /// Seconds from now until then (at least 1).
    pub retry_after_secs: u64,
}

/// A calls-per-minute window, in seconds.
pub const MINUTE: u64 = 60;
/// A spend-per-day window, in seconds.
pub const DAY: u64 = 86_400;

impl Exceeded {
    /// `kind` of `scope` reached at `now` (Unix seconds): it resets when its window ends.
    pub fn at(scope: Scope, kind: LimitKind, now: u64) -> Exceeded {
        let window = match kind {
            LimitKind::CallsPerMinute(_) => MINUTE,
            LimitKind::SpendPerDay { .. } => DAY,
        };
        let resets_at = (now / window + 1) * window;
        Exceeded {
            scope,
            kind,
            resets_at,
            retry_after_secs: (resets_at - now).max(1),
        }
    }
}

/// What one client (or the instance) used in the current windows.
#[derive(Clone, Copy, Debug, Default)]
struct Used {
    /// The minute (Unix seconds / 60) `calls` belong to.
    minute: u64,
    calls: u32,
    /// The day (Unix seconds / 86,400) `spent` belongs to.
    day: u64,
    spent: Picodollars,
    /// The estimates of the calls still in flight, whichever day admitted them: a call
    /// admitted before midnight is charged to the day it ends in, so it holds there.
    held: Picodollars,
}

impl Used {
    /// Starts new windows when the clock left the old ones.
    fn roll(&mut self, now: u64) {
        if self.minute != now / MINUTE {
            self.minute = now / MINUTE;
            self.calls = 0;
        }
        if self.day != now / DAY {
            self.day = now / DAY;
            self.spent = Picodollars(0);
        }
    }

    /// Whether `limit` lets one more call in now.
    fn check(&self, limit: Limit, scope: Scope, now: u64) -> Result<(), Exceeded> {
        if let Some(max) = limit.calls_per_minute {
            if self.calls >= max {
                return Err(Exceeded::at(scope, LimitKind::CallsPerMinute(max), now));
            }
        }
        if let Some(max) = limit.spend_per_day {
            if self.spent.plus(self.held).0 >= max.0 {
                let kind = LimitKind::SpendPerDay {
                    limit: max,
                    spent: self.spent,
                    held: self.held,
                };
                return Err(Exceeded::at(scope, kind, now));
            }
        }
        Ok(())
    }
}

/// What a forgotten client had used in its windows, kept (by its name, elsewhere) until
/// it returns.
#[derive(Clone, Copy, Debug)]
pub struct Counts(Used);

impl Counts {
    fn into_used(self) -> Used {
        self.0
    }
}

/// What each client and the instance used, against their limits. The clients' own
/// limits come with each call (from [`Clients`](super::Clients), which the ledger keeps).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    instance: Limit,
    /// By [`ClientId`]; grown as new clients (OAuth identities) call.
    used: Vec<Used>,
    instance_used: Used,
}

impl Limits {
    /// Limits for the instance; each client's come with its calls.
    pub fn new(instance: Limit) -> Limits {
        Limits {
            instance,
            used: Vec::new(),
            instance_used: Used::default(),
        }
    }

    /// What `client` used, its record made on its first call.
    fn used(&mut self, client: ClientId) -> &mut Used {
        let i = client.index();
        if self.used.len() <= i {
            self.used.resize(i + 1, Used::default());
        }
        &mut self.used[i]
    }

    /// Admits a call of `client` (whose own limits are `limit`) at `now` (Unix seconds),
    /// counts it and holds its `estimate` until [`Limits::unhold`], or says which limit
    /// refuses it (the client's own first); a refused call counts and holds nothing.
    pub fn admit(
        &mut self,
        client: ClientId,
        limit: Limit,
        now: u64,
        estimate: Picodollars,
    ) -> Result<(), Exceeded> {
        self.instance_used.roll(now);
        let instance = self.instance;
        let used = self.used(client);
        used.roll(now);
        used.check(limit, Scope::Client, now)?;
        self.instance_used.check(instance, Scope::Instance, now)?;
        let used = self.used(client);
        used.calls = used.calls.saturating_add(1);
        used.held = used.held.plus(estimate);
        self.instance_used.calls = self.instance_used.calls.saturating_add(1);
        self.instance_used.held = self.instance_used.held.plus(estimate);
        Ok(())
    }

    /// Lets go of `estimate`, held by a call of `client` that ended (or never started).
    pub fn unhold(&mut self, client: ClientId, estimate: Picodollars) {
        let used = self.used(client);
        used.held = used.held.minus(estimate);
        self.instance_used.held = self.instance_used.held.minus(estimate);
    }

    /// The instance's limits.
    pub fn instance(&self) -> Limit {
        self.instance
    }

    /// Counts what a call of `client` that ended at `now` was estimated to cost.
    pub fn spend(&mut self, client: ClientId, now: u64, cost: Picodollars) {
        let used = self.used(client);
        used.roll(now);
        used.spent = used.spent.plus(cost);
        self.instance_used.roll(now);
        self.instance_used.spent = self.instance_used.spent.plus(cost);
    }

    /// Whether `client` has a call in flight holding its estimate (such a client is not
    /// forgotten: its call's end must find its counts).
    pub fn holds(&self, client: ClientId) -> bool {
        self.used
            .get(client.index())
            .is_some_and(|used| used.held.0 > 0)
    }

    /// Takes what `client` used off its id, which was forgotten (the next client to take
    /// it starts from nothing): `None` when its limits at `now` read none of it.
    pub fn forget(&mut self, client: ClientId, limit: Limit, now: u64) -> Option<Counts> {
        let used = self.used.get_mut(client.index())?;
        let taken = std::mem::take(used);
        let minute = limit.calls_per_minute.is_some() && taken.minute == now / MINUTE;
        let day = limit.spend_per_day.is_some() && taken.day == now / DAY;
        ((minute && taken.calls > 0) || (day && taken.spent.0 > 0)).then_some(Counts(taken))
    }

    /// Gives `client` back the counts it had under an id it was forgotten by.
    pub fn restore(&mut self, client: ClientId, counts: Counts) {
        let used = self.used(client);
        let held = used.held;
        *used = Counts::into_used(counts);
        used.held = held;
    }

    /// Gives back `cost` that `client` was counted at `at` (a background run's hold,
    /// settled at its end); nothing once that UTC day is over.
    pub fn give_back(&mut self, client: ClientId, at: u64, cost: Picodollars) {
        let day = at / DAY;
        let used = self.used(client);
        if used.day == day {
            used.spent = used.spent.minus(cost);
        }
        if self.instance_used.day == day {
            self.instance_used.spent = self.instance_used.spent.minus(cost);
        }
    }
}
