//! Attempts on threads: each runs the ureq [`Upstream`] client on its own small thread and
//! reports its completion into the main loop's channel.

use crate::upstream::{Attempt, Delivered, Upstream, ATTEMPT_STACK};
use responses_mcp_core::Message;
use responses_mcp_core::{HttpRequest, TransportError, TransportErrorKind};
use std::sync::mpsc::SyncSender;

/// Starts attempts and takes their agents back when they end.
pub struct Threads {
    upstream: Upstream,
    events: SyncSender<Message>,
}

impl Threads {
    /// Attempts through `upstream`, reported to `events`.
    pub fn new(upstream: Upstream, events: SyncSender<Message>) -> Self {
        Threads { upstream, events }
    }

    /// Starts `request` on a new thread; the handle aborts it.
    pub fn start(&self, request: HttpRequest) -> Result<Attempt, TransportError> {
        let attempt = self.upstream.begin();
        let handle = Upstream::abort_handle(&attempt);
        let upstream = self.upstream.clone();
        let events = self.events.clone();
        std::thread::Builder::new()
            .name("upstream".into())
            .stack_size(ATTEMPT_STACK)
            .spawn(move || {
                let id = request.attempt;
                let stream_to = |message| events.send(message).is_ok();
                let message = match upstream.send(&attempt, &request, stream_to) {
                    Ok(Delivered::Whole(reply)) => Message::Completed(id, Ok(reply)),
                    // Every piece went ahead of this: the reply is complete.
                    Ok(Delivered::Streamed) => Message::End(id),
                    Err(e) => Message::Completed(id, Err(e)),
                };
                let _ = events.send(message);
            })
            .map_err(|e| TransportError {
                kind: TransportErrorKind::Io,
                detail: format!("cannot start an upstream thread: {e}"),
            })?;
        Ok(handle)
    }

    /// The agent of an attempt that ended by itself (and its kept-alive connection) can
    /// serve the next call.
    pub fn release(&self, attempt: Attempt) {
        self.upstream.finish(attempt);
    }
}
