//! Attempts on threads: each runs the [`Upstream`] client on a small thread of its
//! own and reports its completion into the main loop's channel. A thread whose attempt
//! ended waits a while for the next one instead of exiting: creating a thread maps and
//! unmaps its stack, which musl does not cache (the static build paid that on every
//! call), and a reused thread skips it in both builds.

use crate::upstream::{Attempt, Delivered, Upstream, ATTEMPT_STACK};
use responses_mcp_core::Message;
use responses_mcp_core::{HttpRequest, TransportError, TransportErrorKind};
use std::collections::VecDeque;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Threads kept waiting for work at most; more end when their attempt does.
const MAX_IDLE: usize = 16;
/// How long a thread waits for the next attempt before it ends.
const IDLE_FOR: Duration = Duration::from_secs(30);

/// One attempt to run.
type Job = Box<dyn FnOnce() + Send>;

/// Starts attempts and takes their agents back when they end.
pub struct Threads {
    upstream: Upstream,
    events: SyncSender<Message>,
    pool: Arc<Pool>,
}

/// Work waiting for a thread, and how many threads wait for work.
#[derive(Default)]
struct Pool {
    state: Mutex<Waiting>,
    work: Condvar,
}

#[derive(Default)]
struct Waiting {
    jobs: VecDeque<Job>,
    idle: usize,
}

/// A poisoned lock only means another thread panicked mid-update of plain data.
fn lock(pool: &Pool) -> MutexGuard<'_, Waiting> {
    pool.state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// Runs `job` on a waiting thread, or on a new one when none waits.
    fn run(self: &Arc<Self>, job: Job) -> std::io::Result<()> {
        let mut state = lock(self);
        if state.idle > state.jobs.len() {
            state.jobs.push_back(job);
            self.work.notify_one();
            return Ok(());
        }
        drop(state);
        let pool = self.clone();
        std::thread::Builder::new()
            .name("upstream".into())
            .stack_size(ATTEMPT_STACK)
            .spawn(move || pool.work_from(job))
            .map(drop)
    }

    /// A thread's life: `job`, then whatever comes while it waits.
    fn work_from(&self, job: Job) {
        let mut next = Some(job);
        while let Some(job) = next.take() {
            job();
            let mut state = lock(self);
            if state.idle >= MAX_IDLE {
                return;
            }
            state.idle += 1;
            let (mut state, _) = self
                .work
                .wait_timeout_while(state, IDLE_FOR, |s| s.jobs.is_empty())
                .unwrap_or_else(PoisonError::into_inner);
            state.idle -= 1;
            next = state.jobs.pop_front();
        }
    }
}

impl Threads {
    /// Attempts through `upstream`, reported to `events`.
    pub fn new(upstream: Upstream, events: SyncSender<Message>) -> Self {
        Threads {
            upstream,
            events,
            pool: Arc::default(),
        }
    }

    /// Starts `request` on a thread; the handle aborts it.
    pub fn start(&self, request: HttpRequest) -> Result<Attempt, TransportError> {
        let attempt = self.upstream.begin();
        let handle = attempt.clone();
        let upstream = self.upstream.clone();
        let events = self.events.clone();
        let job = Box::new(move || {
            let id = request.attempt;
            let stream_to = |message| events.send(message).is_ok();
            let message = match upstream.send(&attempt, &request, stream_to) {
                Ok(Delivered::Whole(reply)) => Message::Completed(id, Ok(reply)),
                // Every piece went ahead of this: the reply is complete.
                Ok(Delivered::Streamed) => Message::End(id),
                Err(e) => Message::Completed(id, Err(e)),
            };
            let _ = events.send(message);
        });
        self.pool.run(job).map_err(|e| TransportError {
            kind: TransportErrorKind::Io,
            detail: format!("cannot start an upstream thread: {e}"),
        })?;
        Ok(handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_thread_whose_job_ended_runs_the_next_and_more_jobs_than_threads_all_run() {
        let pool = Arc::new(Pool::default());
        let (tx, rx) = channel();
        let names = |n: usize| {
            (0..n)
                .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
                .collect::<Vec<std::thread::ThreadId>>()
        };
        let job = |tx: std::sync::mpsc::Sender<_>| -> Job {
            Box::new(move || tx.send(std::thread::current().id()).unwrap())
        };
        pool.run(job(tx.clone())).unwrap();
        let first = names(1);
        // Wait until that thread waits for work, then the next job goes to it.
        while lock(&pool).idle == 0 {
            std::thread::yield_now();
        }
        pool.run(job(tx.clone())).unwrap();
        assert_eq!(names(1), first, "the waiting thread took the job");
        // Many at once: every one runs, on at most as many threads as were needed.
        for _ in 0..50 {
            pool.run(job(tx.clone())).unwrap();
        }
        let ran = names(50);
        assert_eq!(ran.len(), 50);
        let idle = lock(&pool).idle;
        assert!(idle <= MAX_IDLE, "{idle} threads wait");
    }
}
