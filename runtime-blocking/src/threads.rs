//! The blocking transport: each attempt runs the ureq [`Upstream`] client on its own small
//! thread and reports through a delivery function.

use crate::driver::{Completion, Transport};
use crate::upstream::{Attempt, Upstream, ATTEMPT_STACK};
use responses_mcp_core::server::{HttpRequest, TransportError, TransportErrorKind};

/// Attempts on threads; `deliver` hands each completion to the runtime's event queue.
pub struct Threads<D> {
    upstream: Upstream,
    deliver: D,
}

impl<D> Threads<D>
where
    D: Fn(Completion) + Clone + Send + 'static,
{
    /// Attempts through `upstream`, reported through `deliver`.
    pub fn new(upstream: Upstream, deliver: D) -> Self {
        Threads { upstream, deliver }
    }
}

impl<D> Transport for Threads<D>
where
    D: Fn(Completion) + Clone + Send + 'static,
{
    type Running = Attempt;

    fn start(&mut self, request: HttpRequest) -> Result<Attempt, TransportError> {
        let attempt = self.upstream.begin();
        let handle = Upstream::abort_handle(&attempt);
        let upstream = self.upstream.clone();
        let deliver = self.deliver.clone();
        std::thread::Builder::new()
            .name("upstream".into())
            .stack_size(ATTEMPT_STACK)
            .spawn(move || {
                let result = upstream.send(&attempt, &request);
                deliver(Completion {
                    id: request.attempt,
                    result,
                });
            })
            .map_err(|e| TransportError {
                kind: TransportErrorKind::Io,
                detail: format!("cannot start an upstream thread: {e}"),
            })?;
        Ok(handle)
    }

    fn abort(&mut self, running: Attempt) {
        running.abort();
    }

    /// The attempt's agent (and its kept-alive connection) can serve the next call.
    fn ended(&mut self, running: Attempt) {
        self.upstream.finish(running);
    }
}
