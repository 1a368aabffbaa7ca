//! The background runs this instance started, followed to their end whether or not a
//! client reads them, so that each is charged: what OpenAI reported when it ended, or the
//! estimate when it was cancelled without a report, vanished, or outlived its task's life
//! (its ttl, which is at least its completion window).
//!
//! The reads are the poll schedule's ([`crate::tasks::background::Polls::follow`]); this
//! keeps who each run is charged to, at most [`MAX_FOLLOWED`] runs (beyond, the oldest
//! is given up and its hold stays charged).

use super::super::emit::{Charge, Emit, Held};
use crate::calls::{Report, StoredState};
use crate::io::Now;
use crate::ledger::CallOf;
use crate::openai::{FailureKind, UpstreamFailure};
use crate::routing::BackgroundAsk;
use crate::tasks::background::Polls;
use crate::tasks::BackgroundRef;
use std::collections::{BTreeMap, VecDeque};

/// Runs followed at once (as many as the ledger holds).
pub(super) const MAX_FOLLOWED: usize = crate::ledger::MAX_HELD;

/// A run followed: its task, and the call its end is charged as.
#[derive(Clone, Debug)]
pub(super) struct Followed {
    pub reference: BackgroundRef,
    pub call: CallOf,
    /// The model it was sent to, which prices its estimate.
    pub model: String,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct Follows {
    by_id: BTreeMap<String, Followed>,
    /// Response ids, oldest first.
    order: VecDeque<String>,
}

impl Follows {
    /// The client each followed run is charged to.
    pub fn clients(&self) -> impl Iterator<Item = crate::clients::ClientId> + '_ {
        self.by_id.values().map(|f| f.call.client)
    }

    /// Follows `followed`; the oldest run given up to make room, if any.
    pub fn insert(&mut self, followed: Followed) -> Option<String> {
        let mut dropped = None;
        if self.by_id.len() >= MAX_FOLLOWED {
            while let Some(oldest) = self.order.pop_front() {
                if self.by_id.remove(&oldest).is_some() {
                    dropped = Some(oldest);
                    break;
                }
            }
        }
        let id = followed.reference.response_id.clone();
        if self.by_id.insert(id.clone(), followed).is_none() {
            self.order.push_back(id);
        }
        dropped
    }

    /// The run `response_id`, if it is followed.
    pub fn get(&self, response_id: &str) -> Option<&Followed> {
        self.by_id.get(response_id)
    }

    /// Stops following `response_id`.
    pub fn remove(&mut self, response_id: &str) {
        if self.by_id.remove(response_id).is_some() && self.order.len() > 2 * self.by_id.len() + 16
        {
            let by_id = &self.by_id;
            self.order.retain(|id| by_id.contains_key(id));
        }
    }

    /// Follows run `followed`, which OpenAI took on at `now` (`report`: its create's,
    /// with the input it was sent): its client is charged its estimate at once, and
    /// `polls` reads it until it ends.
    pub fn start(
        &mut self,
        (emit, polls): (&mut Emit, &mut Polls<BackgroundAsk>),
        now: Now,
        followed: Followed,
        report: &Report,
    ) {
        let id = followed.reference.response_id.clone();
        let sent = report.usage.as_ref();
        let r = &followed.reference;
        let ends = r.created.saturating_add(r.ttl_ms / 1000);
        let held = Held {
            response_id: id.clone(),
            ends,
            call: followed.call.clone(),
            model: followed.model.clone(),
            sent: sent.cloned(),
            at: now.unix_secs,
        };
        emit.charge(Charge::Held(Box::new(held)));
        if let Some(dropped) = self.insert(followed) {
            polls.unfollow(&dropped);
        }
        polls.follow(now.instant, &id);
    }

    /// After a state of `response_id` was learned: a run `polls` no longer follows (it
    /// ended) is forgotten; one that outlived its task's life is the state it is charged
    /// as (expired) with its report, still followed until [`Follows::give_up`].
    pub fn outlived(
        &mut self,
        polls: &Polls<BackgroundAsk>,
        now: Now,
        response_id: &str,
    ) -> Option<(StoredState, Report)> {
        let followed = self.get(response_id)?;
        if !polls.followed(response_id) {
            self.remove(response_id);
            return None;
        }
        let r = &followed.reference;
        if now.unix_secs <= r.created.saturating_add(r.ttl_ms / 1000) {
            return None;
        }
        log::debug!("background response {response_id} outlived its task: charged as expired");
        let failure = UpstreamFailure::local(
            FailureKind::Expired,
            "the task's life ended before OpenAI said the background response ended",
        );
        let state = StoredState::Ended(Err(failure), Default::default());
        let report = Report {
            usage: None,
            adjustments: Vec::new(),
            model: crate::openai::report::ModelSource {
                model: followed.model.clone(),
                setting: "",
            },
            attempts: 0,
            wall: std::time::Duration::ZERO,
            upstream: crate::openai::report::Upstream::default(),
            estimated: false,
        };
        Some((state, report))
    }

    /// Stops following `response_id`, here and in `polls`.
    pub fn give_up(&mut self, polls: &mut Polls<BackgroundAsk>, response_id: &str) {
        polls.unfollow(response_id);
        self.remove(response_id);
    }
}
