//! Where what the desk wants done is done: its replies routed, its work started or
//! stopped in the call engine (a refusal handed back to it), its counts given to the
//! ledger. The one place the desk's outputs are drained, after each of its moves.

use super::Server;
use crate::calls::CallEngine;
use crate::clients::Clients;
use crate::desk::{Charge, DeskOut, Start, Starting};
use crate::io::Now;
use crate::ledger::Ledger;
use crate::routing::{Context, Dispatched};

impl Server {
    /// Does what the desk emitted, in order; the answer to the request being handled
    /// when the engine's word on its work decided it.
    pub(super) fn drain_desk(&mut self) -> Option<Dispatched> {
        let mut answer = None;
        while let Some(out) = self.desk.poll_output() {
            match out {
                DeskOut::Reply(ticket, result) => {
                    let reply = crate::jsonrpc::Reply::to(ticket.id.clone(), result);
                    self.answer(&ticket, super::register::Answer::reply(reply));
                }
                DeskOut::Unanswered(ticket) => self.answer(&ticket, super::register::Answer::NONE),
                DeskOut::Notify(note) => self.out.write_json(&note),
                DeskOut::Charge(charge) => charge_ledger(&mut self.ledger, &self.clients, charge),
                DeskOut::Cancel(key) => {
                    if let Some(now) = self.last_now {
                        self.calls.cancel(now, &key);
                    }
                }
                DeskOut::Start(start) => {
                    // Every input sets the time before any desk move.
                    let Some(now) = self.last_now else { continue };
                    let if_refused = start.if_refused.clone();
                    let hold = start.hold();
                    let dispatched = match start_work(&mut self.calls, now, *start) {
                        Ok(Some((task_id, key))) => {
                            Some(self.desk.on_task_started(now, &task_id, key))
                        }
                        Ok(None) => None,
                        Err(refused) => {
                            // It never ran: nothing more to hold for it.
                            self.ledger.let_go(hold);
                            self.desk.on_refused(now, if_refused, refused)
                        }
                    };
                    answer = dispatched.or(answer);
                }
            }
        }
        answer
    }
}

/// Starts `start` in the engine: a task call's task id and key, nothing for stored work,
/// or the engine's refusal.
fn start_work(
    calls: &mut CallEngine<Context>,
    now: Now,
    start: Start,
) -> Result<Option<(String, crate::calls::CallKey)>, crate::calls::Refused> {
    match start.work {
        Starting::Call { caller, progress } => {
            let task_id = caller.task.clone().unwrap_or_default();
            let context = Context::Call(caller);
            let key = calls.start_for_task(now, context, start.plan, progress, start.today)?;
            Ok(Some((task_id, key)))
        }
        Starting::Stored { job, work } => {
            let context = Context::Background(job);
            calls.start_internal(now, context, work, start.plan, start.today)?;
            Ok(None)
        }
    }
}

/// Gives the ledger what the desk counted, of `clients`.
fn charge_ledger(ledger: &mut Ledger, clients: &Clients, charge: Charge) {
    match charge {
        Charge::StoreObserved { took, failed } => ledger.store_observed(took, failed),
        Charge::Orphaned => ledger.task_orphaned(),
        Charge::Held(held) => {
            let ends = (held.response_id.as_str(), held.ends);
            let sent = held.sent.as_ref();
            ledger.background_started(clients, ends, &held.call, &held.model, sent, held.at);
        }
        Charge::Ended(ended) => {
            let (call, end, at) = *ended;
            ledger.ended(clients, &call, &end.as_end(), at);
        }
        Charge::Unhold(call) => ledger.unhold(&call),
        Charge::Settled(settled) => {
            let (response_id, call, end, at) = *settled;
            ledger.background_ended(clients, &response_id, &call, &end.as_end(), at);
        }
    }
}
