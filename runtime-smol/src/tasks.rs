//! Attempts as tasks on the runtime's executor, sent by the async [`Upstream`] client.

use crate::upstream::Upstream;
use responses_mcp_core::server::HttpRequest;
use responses_mcp_core::Message;
use smol::channel::Sender;
use smol::{LocalExecutor, Task};
use std::rc::Rc;

/// Starts attempts; each is a task whose completion goes to the main loop.
pub struct Tasks {
    upstream: Rc<Upstream>,
    executor: Rc<LocalExecutor<'static>>,
    /// Where completions go.
    events: Sender<Message>,
}

impl Tasks {
    /// Attempts through `upstream`, run on `executor`, reported to `events`.
    pub fn new(
        upstream: Upstream,
        executor: Rc<LocalExecutor<'static>>,
        events: Sender<Message>,
    ) -> Self {
        Tasks {
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
            let result = upstream.send(&request.url, request.body).await;
            let _ = events
                .send(Message::Completed(request.attempt, result))
                .await;
        })
    }
}
