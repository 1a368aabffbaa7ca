//! Attempts as tasks on the runtime's executor, sent by the async [`Upstream`] client.

use crate::upstream::Upstream;
use responses_mcp_blocking::{Completion, Event, Transport};
use responses_mcp_core::server::{HttpRequest, TransportError};
use smol::channel::Sender;
use smol::{LocalExecutor, Task};
use std::rc::Rc;

pub struct Tasks {
    upstream: Rc<Upstream>,
    executor: Rc<LocalExecutor<'static>>,
    /// Where completions go.
    events: Sender<Event>,
}

impl Tasks {
    /// Attempts through `upstream`, run on `executor`, reported to `events`.
    pub fn new(
        upstream: Upstream,
        executor: Rc<LocalExecutor<'static>>,
        events: Sender<Event>,
    ) -> Self {
        Tasks {
            upstream: Rc::new(upstream),
            executor,
            events,
        }
    }
}

impl Transport for Tasks {
    type Running = Task<()>;

    fn start(&mut self, request: HttpRequest) -> Result<Task<()>, TransportError> {
        let upstream = self.upstream.clone();
        let events = self.events.clone();
        Ok(self.executor.spawn(async move {
            let result = upstream.send(&request.url, request.body).await;
            let completion = Completion {
                id: request.attempt,
                result,
            };
            let _ = events.send(Event::Http(completion)).await;
        }))
    }

    /// Dropping the task drops its socket: the connection closes.
    fn abort(&mut self, task: Task<()>) {
        drop(task);
    }

    /// The task already pooled its connection; let it return.
    fn ended(&mut self, task: Task<()>) {
        task.detach();
    }
}
