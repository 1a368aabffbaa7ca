//! OpenAI background mode's poll schedule, as data: per stored response, the last state
//! read, the requests waiting on it, and when it may be read next. No attempts, URLs or
//! JSON-RPC here: the server asks what to do with a request ([`Polls::handle_request`]),
//! reports how reads end ([`Polls::handle_read`]), starts the reads this asks for
//! ([`Polls::poll_read`]) and wakes it at [`Polls::poll_timeout`].
//!
//! ```text
//!   handle_request ──fresh, or a read on its way──▶ Answer(last state)
//!        │ stale: park, and read when the pace allows ──▶ poll_read ──▶ (engine)
//!        ▼
//!   handle_read(State) ──▶ the waiters, each with the state (tasks/result waits for an end)
//!   handle_read(Failed) ─▶ tasks/get: the last state, else the failure; tasks/result waits
//! ```
//!
//! A response the desk started is also *followed* ([`Polls::follow`]) until it ends,
//! read or not, so that its end is charged: nobody waiting, it is read every
//! [`Polls::follow_pace`] (the poll interval, at least [`FOLLOW_EVERY`]), at most
//! [`MAX_FOLLOW_READS`] such reads at once; a waiter's read serves the follow too.
//!
//! Invariants: at most one read per response in flight, and reads start at least one
//! poll interval apart, whatever their outcomes; a live entry of `polls` is `(at, id)`
//! with `responses[id].poll_at == Some(at)`, and every response with waiters, or
//! followed and not ended, and no read in flight has a `poll_at` or a place in
//! `deferred`; at most [`MAX_FOLLOW_READS`] reads for followed responses nobody waits on
//! are in flight, and those refused for it are read first as those end.

use crate::io::after;
use crate::timers::Timers;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

#[path = "background/said.rs"]
mod said;
pub use said::{ReadEnd, Seen, Served, Want};

/// Requests one response may hold waiting.
pub const MAX_WAITING: usize = 16;

/// The least time between two reads of a followed response nobody waits on.
pub const FOLLOW_EVERY: Duration = Duration::from_secs(2);

/// Reads of followed responses nobody waits on in flight at once (each is a `GET` to
/// OpenAI; the engine allows `MAX_FETCHES` (64) reads in all).
pub const MAX_FOLLOW_READS: usize = 8;

/// The poll schedule. `P` is a waiting request, opaque here.
pub struct Polls<P> {
    responses: BTreeMap<String, Response<P>>,
    /// Response ids in the order first seen, for the cap.
    order: VecDeque<String>,
    /// When responses are read again for their waiters.
    polls: Timers<String>,
    /// Reads to start now, oldest first.
    reads: VecDeque<String>,
    /// Responses kept at once (the idle ones beyond it are forgotten).
    cap: usize,
    /// Least time between two reads of one response.
    pace: Duration,
    /// Reads in flight for followed responses nobody waits on.
    follow_reads: usize,
    /// Followed responses whose read waits for one of those to end, oldest first.
    deferred: VecDeque<String>,
}

struct Response<P> {
    seen: Option<Seen>,
    /// A read is in flight (or about to start).
    reading: bool,
    /// The earliest the next read may start.
    next_read: Option<Instant>,
    waiting: Vec<(P, Want)>,
    /// When the waiters get their next read.
    poll_at: Option<Instant>,
    /// Read until it ends, waited on or not.
    followed: bool,
    /// The read in flight is a follow's alone (counted in `follow_reads`).
    follow_read: bool,
    /// In `deferred`, waiting for a follow read to end.
    deferred: bool,
}

impl<P> Default for Response<P> {
    fn default() -> Self {
        Response {
            seen: None,
            reading: false,
            next_read: None,
            waiting: Vec::new(),
            poll_at: None,
            followed: false,
            follow_read: false,
            deferred: false,
        }
    }
}

impl<P> Polls<P> {
    /// A schedule keeping at most `cap` responses, reading each at most once per `pace`.
    pub fn new(cap: usize, pace: Duration) -> Self {
        Polls {
            responses: BTreeMap::new(),
            order: VecDeque::new(),
            polls: Timers::default(),
            reads: VecDeque::new(),
            cap,
            pace,
            follow_reads: 0,
            deferred: VecDeque::new(),
        }
    }

    /// How often a followed response nobody waits on is read.
    pub fn follow_pace(&self) -> Duration {
        self.pace.max(FOLLOW_EVERY)
    }

    /// Follows `id`, a response just started: read every [`Polls::follow_pace`] until a
    /// state read says it ended, or [`Polls::unfollow`].
    pub fn follow(&mut self, now: Instant, id: &str) {
        self.response(id).followed = true;
        self.refollow(now, id);
        self.settle();
    }

    /// Stops following `id` (it ended, or it is given up).
    pub fn unfollow(&mut self, id: &str) {
        if let Some(r) = self.responses.get_mut(id) {
            r.followed = false;
            if r.waiting.is_empty() {
                r.poll_at = None;
            }
        }
        self.settle();
    }

    /// Whether `id` is followed.
    pub fn followed(&self, id: &str) -> bool {
        self.responses.get(id).is_some_and(|r| r.followed)
    }

    /// The last state of `id`, if one is known.
    pub fn seen(&self, id: &str) -> Option<&Seen> {
        self.responses.get(id).and_then(|r| r.seen.as_ref())
    }

    /// The request waiting longest on `id`, if any waits.
    pub fn first_waiter(&self, id: &str) -> Option<&P> {
        self.responses
            .get(id)
            .and_then(|r| r.waiting.first())
            .map(|(p, _)| p)
    }

    /// A request about `id`: answered now from the last state when that is an end, or
    /// (for [`Want::State`]) fresh or about to be refreshed; parked otherwise.
    pub fn handle_request(&mut self, now: Instant, id: &str, pending: P, want: Want) -> Served<P> {
        let pace = self.pace;
        let r = self.response(id);
        let fresh = r
            .seen
            .as_ref()
            .is_some_and(|s| now < after(s.read_at, pace))
            || r.next_read.is_some_and(|at| now < at);
        let served = match &r.seen {
            Some(seen) if seen.status.is_terminal() => Some(seen.clone()),
            Some(seen) if want == Want::State && (fresh || r.reading) => Some(seen.clone()),
            _ => None,
        };
        if let Some(seen) = served {
            return Served::Answer(pending, seen);
        }
        if r.waiting.len() >= MAX_WAITING {
            return Served::TooMany(pending);
        }
        r.waiting.push((pending, want));
        self.read(now, id);
        self.settle();
        Served::Parked
    }

    /// Records a state learned outside a read (a create's, a cancel's); the waiters get
    /// it as [`Polls::handle_read`] would give it.
    pub fn handle_state(&mut self, now: Instant, id: &str, seen: Seen) -> Vec<(P, Seen)> {
        self.response(id).seen = Some(seen.clone());
        let answered = self.answer_waiters(now, id, |want| {
            (want == Want::State || seen.status.is_terminal()).then(|| seen.clone())
        });
        self.refollow(now, id);
        self.settle();
        answered
    }

    /// A read of `id` ended. The waiters to answer, each with the state to answer with
    /// (`None`: the read failed and no state can stand in).
    pub fn handle_read(&mut self, now: Instant, id: &str, end: ReadEnd) -> Vec<(P, Option<Seen>)> {
        // The read's last request went out at most now: the next waits a whole interval.
        let next = after(now, self.pace);
        let r = self.response(id);
        r.reading = false;
        r.next_read = Some(r.next_read.map_or(next, |at| at.max(next)));
        // Whatever poll was planned is planned again from this read (for the waiters
        // left, and the follow), never before the next read may start.
        r.poll_at = None;
        if std::mem::take(&mut r.follow_read) {
            self.follow_reads -= 1;
            self.read_deferred(now);
        }
        let r = self.response(id);
        let answered = match end {
            ReadEnd::State(seen) => {
                r.seen = Some(seen.clone());
                self.answer_waiters(now, id, |want| {
                    (want == Want::State || seen.status.is_terminal()).then(|| Some(seen.clone()))
                })
            }
            ReadEnd::Failed { again } => {
                let last = r.seen.clone();
                self.answer_waiters(now, id, |want| match want {
                    Want::End if again => None,
                    Want::State => Some(last.clone()),
                    Want::End => Some(None),
                })
            }
        };
        self.refollow(now, id);
        self.settle();
        answered
    }

    /// The read this asked for could not start (every fetch slot is taken): its waiters
    /// are served at the next poll.
    pub fn read_refused(&mut self, now: Instant, id: &str) {
        let at = after(now, self.pace);
        if let Some(r) = self.responses.get_mut(id) {
            r.reading = false;
            if std::mem::take(&mut r.follow_read) {
                self.follow_reads -= 1;
            }
        }
        self.schedule_poll(id, at);
        self.settle();
    }

    /// The next read to start now.
    pub fn poll_read(&mut self) -> Option<String> {
        self.reads.pop_front()
    }

    /// Polls that came due: their responses are read.
    pub fn handle_timeout(&mut self, now: Instant) {
        for (at, id) in self.polls.take_due(now) {
            let due = self
                .responses
                .get_mut(&id)
                .filter(|r| r.poll_at == Some(at));
            if let Some(r) = due {
                r.poll_at = None;
                self.read(now, &id);
            }
        }
        self.settle();
    }

    /// The next poll.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.polls.peek().map(|(at, _)| at)
    }

    /// Forgets the waiting requests `gone` picks (their clients left).
    pub fn forget(&mut self, gone: impl Fn(&P) -> bool) {
        for r in self.responses.values_mut() {
            r.waiting.retain(|(p, _)| !gone(p));
            if r.waiting.is_empty() && !r.followed {
                r.poll_at = None;
            }
        }
        self.settle();
    }

    /// Asks for a read of `id`: now when the pace allows, else at the next allowed time.
    fn read(&mut self, now: Instant, id: &str) {
        let pace = self.pace;
        let r = self.response(id);
        if r.reading {
            return;
        }
        if let Some(at) = r.next_read.filter(|at| now < *at) {
            self.schedule_poll(id, at);
            return;
        }
        let follow_only = r.waiting.is_empty();
        if follow_only {
            if self.follow_reads >= MAX_FOLLOW_READS {
                // Its turn comes when a follow read ends, before any later poll's.
                if !std::mem::replace(&mut self.response(id).deferred, true) {
                    self.deferred.push_back(id.to_owned());
                }
                return;
            }
            self.follow_reads += 1;
        }
        let r = self.response(id);
        r.follow_read = follow_only;
        // The read serves whatever poll was planned; the next is planned at its end.
        r.poll_at = None;
        r.reading = true;
        r.next_read = Some(after(now, pace));
        self.reads.push_back(id.to_owned());
    }

    /// Starts the read of the oldest deferred followed response still waiting for one.
    fn read_deferred(&mut self, now: Instant) {
        while let Some(id) = self.deferred.pop_front() {
            let due = self.responses.get_mut(&id).is_some_and(|r| {
                r.deferred = false;
                r.followed && !r.reading && r.poll_at.is_none()
            });
            if due {
                self.read(now, &id);
                return;
            }
        }
    }

    /// Keeps a followed response read: an end stops the follow; else, with no read in
    /// flight or planned, the next read is planned a follow pace on.
    fn refollow(&mut self, now: Instant, id: &str) {
        let follow = self.follow_pace();
        let Some(r) = self.responses.get_mut(id) else {
            return;
        };
        if r.seen.as_ref().is_some_and(|s| s.status.is_terminal()) {
            r.followed = false;
        }
        if !r.followed || r.reading || r.deferred || r.poll_at.is_some() {
            return;
        }
        let at = after(now, follow).max(r.next_read.unwrap_or(now));
        self.schedule_poll(id, at);
    }

    /// Hands each waiter of `id` what `answer` gives for what it wants (`None`: it keeps
    /// waiting, and the response is read again for it at the next poll).
    fn answer_waiters<S>(
        &mut self,
        now: Instant,
        id: &str,
        answer: impl Fn(Want) -> Option<S>,
    ) -> Vec<(P, S)> {
        let pace = self.pace;
        let r = self.response(id);
        let mut answered = Vec::new();
        let mut still = Vec::new();
        for (p, want) in std::mem::take(&mut r.waiting) {
            match answer(want) {
                Some(s) => answered.push((p, s)),
                None => still.push((p, want)),
            }
        }
        if !still.is_empty() {
            r.waiting = still;
            let at = r.next_read.unwrap_or_else(|| after(now, pace));
            self.schedule_poll(id, at);
        }
        answered
    }

    fn response(&mut self, id: &str) -> &mut Response<P> {
        if !self.responses.contains_key(id) {
            self.order.push_back(id.to_owned());
            self.evict_beyond_cap();
        }
        self.responses.entry(id.to_owned()).or_default()
    }

    /// Forgets the oldest idle responses beyond the cap (those read or waited on stay).
    fn evict_beyond_cap(&mut self) {
        let mut kept = VecDeque::new();
        while self.order.len() + kept.len() > self.cap {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            let busy = self
                .responses
                .get(&old)
                .is_some_and(|r| r.reading || r.followed || !r.waiting.is_empty());
            if busy {
                kept.push_back(old);
            } else {
                self.responses.remove(&old);
            }
        }
        while let Some(id) = kept.pop_back() {
            self.order.push_front(id);
        }
    }

    fn schedule_poll(&mut self, id: &str, at: Instant) {
        if let Some(r) = self.responses.get_mut(id) {
            if r.poll_at.is_none_or(|p| at < p) {
                r.poll_at = Some(at);
                self.polls.schedule(id.to_owned(), at);
            }
        }
    }

    /// Drops stale poll entries from the top, so the next deadline is a live one.
    fn settle(&mut self) {
        let responses = &self.responses;
        let live =
            |at: Instant, id: &String| responses.get(id).is_some_and(|r| r.poll_at == Some(at));
        self.polls.prune(live, responses.len(), || {
            responses
                .iter()
                .filter_map(|(id, r)| r.poll_at.map(|at| (at, id.clone())))
                .collect()
        });
    }
}

#[cfg(test)]
#[path = "background/tests.rs"]
mod tests;
