//! Kept-alive connections waiting for the next request, per origin.

use super::stream::Stream;
use responses_mcp_host::client::target::Origin;
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Idle connections kept for reuse.
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused: servers drop idle
/// connections, and a request on one they are dropping is wasted.
const MAX_IDLE_AGE: Duration = Duration::from_secs(30);

/// Idle connections, newest last. Attempts run on one thread, so a `RefCell` suffices;
/// it is never borrowed across an await.
#[derive(Default)]
pub struct Pool {
    idle: RefCell<Vec<Idle>>,
}

struct Idle {
    origin: Origin,
    stream: Stream,
    since: Instant,
}

impl Pool {
    /// The newest idle connection to `origin` that is still good; stale ones are closed.
    pub fn take(&self, origin: &Origin) -> Option<Stream> {
        let mut idle = self.idle.borrow_mut();
        while let Some(i) = idle.iter().rposition(|c| &c.origin == origin) {
            let mut conn = idle.remove(i);
            if conn.since.elapsed() < MAX_IDLE_AGE && conn.stream.is_quiet() {
                return Some(conn.stream);
            }
        }
        None
    }

    /// Keeps `stream` for the next request to `origin`, closing the oldest if full.
    pub fn keep(&self, origin: Origin, stream: Stream) {
        let mut idle = self.idle.borrow_mut();
        if idle.len() >= MAX_IDLE {
            idle.remove(0);
        }
        idle.push(Idle {
            origin,
            stream,
            since: Instant::now(),
        });
    }
}
