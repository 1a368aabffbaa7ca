//! Background runs in the ledger: a run's hold from its start (so that admission counts
//! what still runs), and its end, counted once here or, with a store, by the instance
//! whose claim holds, the hold given back either way.

use super::{holds, shared, CallOf, End, Lane, Ledger, COUNTED_IDS};
use crate::calls::Report;
use crate::openai::pricing::Estimate;
use crate::openai::Usage;
use crate::store::{EndClaim, StoreReply};

impl Ledger {
    /// OpenAI took on background run `response_id` of `call` on `model` at `now`, sent
    /// what `sent` says (the engine's estimate of its input): its client's day is charged
    /// the run's estimate at once, as a hold that [`Ledger::background_ended`] settles,
    /// so that a spend cap counts the runs still going and cannot be outrun by starting
    /// many. With a store, the hold is the store's, so every instance's admission sees it.
    pub fn background_started(
        &mut self,
        response_id: &str,
        call: &CallOf,
        model: &str,
        sent: Option<&Usage>,
        now: u64,
    ) {
        let usage = self
            .recent
            .estimate(call.tool, sent.unwrap_or(&Usage::default()));
        let Some(amount) = self
            .cost(model, Some(&usage), Lane::Background)
            .total()
            .filter(|a| a.0 > 0)
        else {
            return;
        };
        self.metrics
            .spent_today(self.clients.label(call.client), now, amount);
        match &mut self.shared {
            Some(shared) => {
                let name = self.clients.name(call.client);
                let op = crate::store::hold_background(name, response_id, (amount, &usage), now);
                shared.send(op);
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
                "background response {id} is no longer followed here (more than {} are);                  its estimate of ${:.6} stays charged",
                holds::MAX_HELD,
                dropped.amount.usd()
            );
        }
    }

    /// A background task's stored response `response_id` was read as ended (or
    /// cancelled, or gone): counted as [`Ledger::ended`] the first time this instance
    /// sees it, and only priced after. Its hold is given back; a run whose usage OpenAI
    /// did not report is charged the estimate (the hold's, else [`recent`]'s).
    pub fn background_ended(
        &mut self,
        response_id: &str,
        call: &CallOf,
        end: &End<'_>,
        now: u64,
    ) -> Estimate {
        if self.counted_set.contains(response_id) {
            return self.cost(end.model, end.report.usage.as_ref(), end.lane);
        }
        if self.counted.len() == COUNTED_IDS {
            if let Some(oldest) = self.counted.pop_front() {
                self.counted_set.remove(&oldest);
            }
        }
        self.counted.push_back(response_id.to_owned());
        self.counted_set.insert(response_id.to_owned());
        let hold = self.holds.remove(response_id);
        let (report, estimated_end);
        let end = match &end.report.usage {
            Some(_) => end,
            None => {
                let usage = match &hold {
                    Some(hold) => hold.usage.clone(),
                    None => self.recent.estimate(call.tool, &Usage::default()),
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
            let label = self.clients.label(hold.client);
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
        self.ended(call, end, now)
    }

    /// The store answered the claim of a background end: counted here unless another
    /// instance claimed it; with the store down or an answer not the script's, here too
    /// (a line twice rather than none).
    pub(super) fn claim_answered(&mut self, claim: &shared::Claim, reply: &StoreReply) {
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
        self.ended(&claim.call, &end, claim.now);
    }
}
