//! Limits shared through a store (`server.store.url`): the operations waiting to be sent,
//! the reserves waiting for their answer, and whether the store answers.

use super::call::{CallOf, End, Lane, Reservation};
use crate::clients::{ClientId, Exceeded, Limit};
use crate::settings::OnUnavailable;
use crate::store::{StoreId, StoreOp};
use std::collections::{BTreeMap, VecDeque};

/// Whether a call may go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallAdmission {
    /// Yes: counted, its estimate held.
    Admitted(Reservation),
    /// No: this limit is reached.
    Refused(Exceeded),
    /// The store was asked; [`super::Ledger::store_answered`] says when it answers.
    Asked(StoreId),
}

/// What a reserve's answer decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reserved {
    /// The call may go on, with what the store counted and holds for it (nothing for a
    /// call admitted while it was unreachable).
    Admitted(Reservation),
    /// A limit is reached.
    Refused(Exceeded),
    /// The store did not answer, and the call may not go on without it: why.
    Unavailable(String),
}

/// A reserve sent and not answered.
pub(super) struct Asked {
    pub client: ClientId,
    pub limits: (Limit, Limit),
    pub now: u64,
    /// What the reserve asked the store to hold.
    pub estimate: crate::money::Picodollars,
    /// The hold's name in the store.
    pub hold: crate::store::HoldName,
}

/// A background task's end waiting for its claim: counted when this instance has it.
pub(super) struct Claim {
    pub call: CallOf,
    model: String,
    failure: Option<crate::openai::FailureKind>,
    report: crate::openai::report::Report,
    took: std::time::Duration,
    lane: Lane,
    cancelled: bool,
    pub now: u64,
}

impl Claim {
    pub fn new(call: &CallOf, end: &End<'_>, now: u64) -> Claim {
        Claim {
            call: call.clone(),
            model: end.model.to_owned(),
            failure: end.failure,
            report: end.report.clone(),
            took: end.took,
            lane: end.lane,
            cancelled: end.cancelled,
            now,
        }
    }

    pub fn end(&self) -> End<'_> {
        End {
            model: &self.model,
            failure: self.failure,
            report: &self.report,
            took: self.took,
            lane: self.lane,
            cancelled: self.cancelled,
        }
    }
}

/// See the module docs.
pub(super) struct Shared {
    pub on_unavailable: OnUnavailable,
    /// This instance's name among the store's holders: random, and nothing of the
    /// process's seed.
    holder: String,
    /// When this instance next says it is alive, while it holds anything in the store.
    pub alive_due: Option<std::time::Instant>,
    next: u64,
    pub ops: VecDeque<(StoreId, StoreOp)>,
    pub asked: BTreeMap<StoreId, Asked>,
    /// Background ends waiting for their claim.
    pub claims: BTreeMap<StoreId, Claim>,
    /// Sweeps of background runs waiting for their answer, with when they were asked.
    pub sweeps: BTreeMap<StoreId, u64>,
    /// When this instance sweeps next, Unix seconds.
    pub next_sweep: u64,
    /// The last answer was not a failure (true until one fails).
    pub up: bool,
}

impl Shared {
    pub fn new(on_unavailable: OnUnavailable, seed: u64) -> Shared {
        let digest = crate::sha256::hmac_sha256(&seed.to_le_bytes(), b"orm hold names");
        let holder = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Shared {
            on_unavailable,
            holder,
            alive_due: None,
            next: 0,
            ops: VecDeque::new(),
            asked: BTreeMap::new(),
            claims: BTreeMap::new(),
            sweeps: BTreeMap::new(),
            next_sweep: 0,
            up: true,
        }
    }

    /// The name of a new hold in the store, unique in the fleet.
    pub fn hold_name(&mut self) -> crate::store::HoldName {
        self.next += 1;
        crate::store::HoldName {
            holder: self.holder.clone(),
            n: self.next,
        }
    }

    /// This instance's name among the store's holders.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Queues `op` under a new number, tagged as the ledger's.
    pub fn send(&mut self, op: StoreOp) -> StoreId {
        self.send_as(op.ledger_tag(), op)
    }

    /// Queues `op` under a new number and `tag` (a script whose answer someone waits
    /// for: a background end's claim).
    pub fn send_as(&mut self, tag: crate::store::StoreTag, op: StoreOp) -> StoreId {
        self.next += 1;
        let id = StoreId { tag, n: self.next };
        self.ops.push_back((id, op));
        id
    }

    /// What a call gets while the store does not answer (`cause`): money limits hold it
    /// back always; a call without one as `on_unavailable` says.
    pub fn without_store(&self, (own, service): (Limit, Limit), cause: String) -> Reserved {
        let money = own.spend_per_day.is_some() || service.spend_per_day.is_some();
        match self.on_unavailable {
            OnUnavailable::Allow if !money => Reserved::Admitted(Reservation::default()),
            _ => Reserved::Unavailable(cause),
        }
    }
}
