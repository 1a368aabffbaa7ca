//! Which of the desk's deadlines are still due: the held windows, the shared re-reads
//! not on their way, and the lease's renewal. The heap ([`Timers`]) drops the others
//! lazily; this says which they are.

use super::due::Due;
use super::held::Held;
use super::shared::SharedTasks;
use crate::timers::Timers;
use std::time::Instant;

/// Drops the deadlines no longer due from the top of `timers` (a released window, a task
/// no longer waited on, a re-read on its way), so that none wakes the server for nothing.
pub(super) fn prune(timers: &mut Timers<Due>, held: &Held, shared: Option<&SharedTasks>) {
    let live = held.len() + shared.map_or(0, |s| s.waited() + usize::from(s.lease_due().is_some()));
    let is_live = |at: Instant, due: &Due| match due {
        Due::Window(id) => held.until(id) == Some(at),
        Due::Recheck(id) => shared.is_some_and(|s| s.is_due(at, id)),
        Due::Lease => shared.is_some_and(|s| s.lease_due() == Some(at)),
    };
    timers.prune(is_live, live, || live_deadlines(held, shared));
}

/// Every deadline still due: the held windows and the re-reads not on their way.
pub(super) fn live_deadlines(held: &Held, shared: Option<&SharedTasks>) -> Vec<(Instant, Due)> {
    let windows = held
        .deadlines()
        .map(|(at, id)| (at, Due::Window(id.to_owned())));
    let checks = shared
        .into_iter()
        .flat_map(SharedTasks::deadlines)
        .map(|(at, id)| (at, Due::Recheck(id.to_owned())));
    let lease = shared
        .and_then(SharedTasks::lease_due)
        .map(|at| (at, Due::Lease));
    windows.chain(checks).chain(lease).collect()
}
