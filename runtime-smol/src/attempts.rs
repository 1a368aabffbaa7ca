//! Attempts as tasks on the runtime's executor, sent by the async [`Upstream`] client.

use crate::upstream::{Delivered, StreamTo, Upstream};
use responses_mcp_core::HttpRequest;
use responses_mcp_core::Message;
use smol::channel::Sender;
use smol::{LocalExecutor, Task};
use std::rc::Rc;

/// Starts attempts; each is a task whose completion goes to the main loop.
pub struct Attempts {
    upstream: Rc<Upstream>,
    executor: Rc<LocalExecutor<'static>>,
    /// Where completions go.
    events: Sender<Message>,
}

impl Attempts {
    /// Attempts through `upstream`, run on `executor`, reported to `events`.
    pub fn new(
        upstream: Upstream,
        executor: Rc<LocalExecutor<'static>>,
        events: Sender<Message>,
    ) -> Self {
        Attempts {
            upstream: Rc::new(upstream),
            executor,
            events,
        }
    }

    /// Starts `request`. Dropping the task aborts it: its socket closes at once.
    pub fn start(&self, request: HttpRequest) -> Task<()> {
        let upstream = self.upstream.clone();
        let events = self.events.clone();
        self.executor.spawn(async move {
            let attempt = request.attempt;
            let to = StreamTo {
                attempt,
                events: &events,
            };
            let sent = upstream.deliver(
                request.method,
                request.to,
                &request.url,
                request.body,
                Some(to),
            );
            let message = match sent.await {
                Ok(Delivered::Whole(reply)) => Message::Completed(attempt, Ok(reply)),
                // Every piece went ahead of this: the reply is complete.
                Ok(Delivered::Streamed) => Message::End(attempt),
                Err(e) => Message::Completed(attempt, Err(e)),
            };
            let _ = events.send(message).await;
        })
    }
}
