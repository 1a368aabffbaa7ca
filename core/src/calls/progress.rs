//! Progress notifications of a call that asked for them: what it is doing, no more often
//! than the interval (and the stream's hints no more often than [`MIN_HINT_GAP`]).

use super::call::{MAX_QUEUED_HINTS, MIN_HINT_GAP};
use super::CallId;
use super::{CallEngine, CallEvent};
use crate::io::{after, Now};

impl<C: Clone> CallEngine<C> {
    /// Queues what the stream says the model is doing; each goes out once the last
    /// notification is [`MIN_HINT_GAP`] old, in order, so a burst is neither flooded nor
    /// lost. A `generic` message is dropped while a more specific one waits.
    pub(super) fn set_progress_soon(
        &mut self,
        now: Now,
        id: CallId,
        message: String,
        generic: bool,
    ) {
        let Some(p) = self.calls.get_mut(&id).and_then(|c| c.progress.as_mut()) else {
            return;
        };
        let latest = p.queued.back().unwrap_or(&p.message);
        if *latest == message || (generic && !p.queued.is_empty()) {
            return;
        }
        if p.queued.len() >= MAX_QUEUED_HINTS {
            p.queued.pop_back();
        }
        p.queued.push_back(message);
        let earliest = p.last_sent.map_or(now.instant, |t| after(t, MIN_HINT_GAP));
        if earliest <= now.instant {
            self.tick_progress(now, id);
        } else if earliest < p.next_at {
            p.next_at = earliest;
            self.timers.schedule(id, earliest);
        }
    }

    /// Records what call `id` is doing, and reports it when a notification is due.
    pub(super) fn set_progress(&mut self, now: Now, id: CallId, message: String) {
        let Some(p) = self.calls.get_mut(&id).and_then(|c| c.progress.as_mut()) else {
            return;
        };
        p.queued.clear();
        p.message = message;
        if p.next_at <= now.instant {
            self.tick_progress(now, id);
        }
    }

    pub(super) fn tick_progress(&mut self, now: Now, id: CallId) {
        let interval = self.settings.progress_interval;
        let Some(call) = self.calls.get_mut(&id) else {
            return;
        };
        let Some(p) = call.progress.as_mut() else {
            return;
        };
        p.sent += 1;
        if let Some(next) = p.queued.pop_front() {
            p.message = next;
        }
        // More waiting: the next goes out after the minimum gap, else the heartbeat.
        let wait = if p.queued.is_empty() {
            interval
        } else {
            MIN_HINT_GAP.min(interval)
        };
        p.next_at = after(now.instant, wait);
        p.last_sent = Some(now.instant);
        let event = CallEvent::Progress {
            context: call.context.clone(),
            token: p.token.clone(),
            progress: p.sent,
            message: p.message.clone(),
        };
        self.timers.schedule(id, p.next_at);
        self.events.push_back(event);
    }
}
