//! Background runs in the ledger: a run's hold from its start (so that admission counts
//! what still runs), and its end, counted once here or, with a store, by the instance
//! whose claim holds, the hold given back either way.

use super::{holds, shared, CallOf, End, Lane, Ledger, Reservation, COUNTED_IDS};
use crate::calls::Report;
use crate::clients::Clients;
use crate::openai::pricing::Estimate;
use crate::openai::Usage;
use crate::store::{EndClaim, StoreReply, StoreTag};

/// How often an instance sweeps the store for runs nobody claimed.
const SWEEP_EVERY_SECS: u64 = 60;

impl Ledger {
    /// OpenAI took on background run `response_id` of `call` on `model` at `now`, sent
    /// what `sent` says (the engine's estimate of its input), its task living until
    /// `ends` (Unix seconds): its client's day is charged the run's estimate at once, as
    /// a hold that [`Ledger::background_ended`] settles, so that a spend cap counts the
    /// runs still going and cannot be outrun by starting many. With a store, the hold is
    /// the store's, so every instance's admission sees it, and a run nobody claims by a
    /// minute after `ends` is swept ([`Ledger::sweep`]).
    pub fn background_started(
        &mut self,
        clients: &Clients,
        (response_id, ends): (&str, u64),
        call: &CallOf,
        model: &str,
        sent: Option<&Usage>,
        now: u64,
    ) {
        // The run's own hold replaces the estimate its call held since admission.
        self.unhold(call);
        let bound = self.bound(call.tool);
        let name = clients.name(call.client);
        let known = sent.cloned().unwrap_or_default();
        let usage = self.recent.estimate(name, call.tool, &known, &bound);
        let Some(amount) = self
            .cost(model, Some(&usage), Lane::Background)
            .total()
            .filter(|a| a.0 > 0)
        else {
            return;
        };
        self.metrics
            .spent_today(clients.label(call.client), now, amount);
        match &mut self.shared {
            Some(shared) => {
                let run = crate::store::HeldRun {
                    response_id,
                    client: clients.name(call.client),
                    tool: call.tool.name(),
                    model,
                    amount,
                    usage: &usage,
                    created: now,
                    ends,
                };
                shared.send(crate::store::hold_background(&run));
            }
            None => self.limits.spend(call.client, now, amount),
        }
        let hold = holds::Hold {
            client: call.client,
            amount,
            at: now,
            usage,
        };
        if let Some((id, dropped)) = self.holds.insert(response_id, hold) {
            // Its hold stays charged: the estimate of a run this instance stopped
            // following, never less than nothing.
            log::warn!(
                "background response {id} is no longer followed here (more than {} are); \
                 its estimate of ${:.6} stays charged",
                holds::MAX_HELD,
                dropped.amount.usd()
            );
        }
    }

    /// A background task's stored response `response_id` was read as ended (or
    /// cancelled, or gone): counted as [`Ledger::ended`] the first time this instance
    /// sees it, and only priced after. Its hold is given back; a run whose usage OpenAI
    /// did not report is charged the estimate (the hold's, else the profile's recent calls').
    pub fn background_ended(
        &mut self,
        clients: &Clients,
        response_id: &str,
        call: &CallOf,
        end: &End<'_>,
        now: u64,
    ) -> Estimate {
        if !self.counted_once(response_id) {
            return self.cost(end.model, end.report.usage.as_ref(), end.lane);
        }
        let hold = self.holds.remove(response_id);
        let (report, estimated_end);
        let end = match &end.report.usage {
            Some(_) => end,
            None => {
                let usage = match &hold {
                    Some(hold) => hold.usage.clone(),
                    None => {
                        let bound = self.bound(call.tool);
                        let name = clients.name(call.client);
                        (self.recent).estimate(name, call.tool, &Usage::default(), &bound)
                    }
                };
                report = Report {
                    usage: Some(usage),
                    estimated: true,
                    ..end.report.clone()
                };
                estimated_end = End {
                    report: &report,
                    ..*end
                };
                &estimated_end
            }
        };
        if let Some(hold) = &hold {
            let label = clients.label(hold.client);
            self.metrics.unspent_today(label, hold.at, hold.amount);
            if self.shared.is_none() {
                self.limits.give_back(hold.client, hold.at, hold.amount);
            }
        }
        if let Some(shared) = &mut self.shared {
            // Another instance may have counted it: whoever claims it first does (and
            // the claim gives the store's hold back).
            let claim = crate::store::claim_background_end(response_id);
            let id = shared.send_as(crate::store::StoreTag::Claim, claim);
            shared.claims.insert(id, shared::Claim::new(call, end, now));
            return self.cost(end.model, end.report.usage.as_ref(), end.lane);
        }
        self.ended(clients, call, end, now)
    }

    /// With a store and background tasks, at most once a minute (asked at each
    /// admission): sweeps the runs nobody claimed a minute after their task's end (their
    /// instance stopped following them), each charged the estimate its hold made.
    pub(super) fn sweep(&mut self, now: u64) {
        let Some(shared) = &mut self.shared else {
            return;
        };
        if !self.background || now < shared.next_sweep {
            return;
        }
        shared.next_sweep = now.saturating_add(SWEEP_EVERY_SECS);
        let id = shared.send_as(StoreTag::Claim, crate::store::sweep_background(now));
        shared.sweeps.insert(id, now);
    }

    /// The store answered a sweep: each run it gave this instance leaves its line,
    /// charged its hold (which stays in the days: no spend is added).
    pub(super) fn swept(&mut self, clients: &mut Clients, reply: &StoreReply, now: u64) {
        let runs = match reply {
            StoreReply::Rows(rows) => match crate::store::swept(rows) {
                Ok(runs) => runs,
                Err(why) => {
                    log::warn!("a sweep of background runs answered what it never does: {why}");
                    return;
                }
            },
            _ => return,
        };
        for run in runs {
            log::debug!(
                "background response {} was never claimed: charged its estimate",
                run.response_id
            );
            let client = clients
                .resolve(&run.client)
                .unwrap_or(crate::clients::ClientId::DEFAULT);
            let tool = crate::tools::ALL_TOOLS
                .into_iter()
                .find(|t| t.name() == run.tool)
                .unwrap_or(crate::tools::Tool::Answer);
            let call = CallOf {
                tool,
                version: crate::mcp::ProtocolVersion::V2025_11_25,
                transport: super::Transport::Http,
                client,
                task: true,
                trace: None,
                reservation: Reservation::default(),
                // Swept: how the run's call came in is not kept in the store.
                arrival: Default::default(),
            };
            let report = Report {
                usage: Some(run.usage),
                adjustments: Vec::new(),
                model: crate::openai::report::ModelSource {
                    model: run.model.clone(),
                    setting: "",
                },
                attempts: 0,
                wall: std::time::Duration::ZERO,
                upstream: crate::openai::report::Upstream::default(),
                estimated: true,
            };
            let end = End {
                model: &run.model,
                failure: Some(crate::openai::FailureKind::Expired),
                report: &report,
                took: std::time::Duration::from_secs(now.saturating_sub(run.created)),
                lane: Lane::Background,
                cancelled: false,
            };
            self.counted_once(&run.response_id);
            // Its hold counts in the day it was added to; this instance's gauge shows
            // today's only.
            let day = crate::clients::DAY;
            if run.created / day == now / day {
                let label = clients.label(client);
                self.metrics.spent_today(label, now, run.amount);
            }
            self.ended_as(clients, &call, &end, now, false);
        }
    }

    /// Remembers that the end of `response_id` was counted here: false when it already
    /// was (a bounded memory of the latest ids).
    fn counted_once(&mut self, response_id: &str) -> bool {
        if self.counted_set.contains(response_id) {
            return false;
        }
        if self.counted.len() == COUNTED_IDS {
            if let Some(oldest) = self.counted.pop_front() {
                self.counted_set.remove(&oldest);
            }
        }
        self.counted.push_back(response_id.to_owned());
        self.counted_set.insert(response_id.to_owned());
        true
    }

    /// The store answered the claim of a background end: counted here unless another
    /// instance claimed it; with the store down or an answer not the script's, here too
    /// (a line twice rather than none).
    pub(super) fn claim_answered(
        &mut self,
        clients: &Clients,
        claim: &shared::Claim,
        reply: &StoreReply,
    ) {
        let held = match reply {
            StoreReply::Rows(rows) => match crate::store::end_claimed(rows) {
                Ok(EndClaim::Lost) => return,
                Ok(EndClaim::Won { held }) => held,
                Err(why) => {
                    log::warn!("counting a background end here: {why}");
                    None
                }
            },
            _ => None,
        };
        let end = claim.end();
        // OpenAI reported nothing: the estimate is the one its hold made at its start,
        // wherever that was.
        let report;
        let end = match held.filter(|_| end.report.estimated) {
            Some(usage) => {
                report = Report {
                    usage: Some(usage),
                    ..end.report.clone()
                };
                End {
                    report: &report,
                    ..end
                }
            }
            None => end,
        };
        self.ended(clients, &claim.call, &end, claim.now);
    }
}
