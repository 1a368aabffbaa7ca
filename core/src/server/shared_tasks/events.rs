//! What instances tell each other on the store's channel: this instance's calls stopped
//! by cancels from elsewhere, waiting requests woken, cancels passed on.

use super::TaskWait;
use crate::clients::ClientId;
use crate::io::Now;
use crate::jsonrpc::RequestId;
use crate::mcp::shape::TaskError;
use crate::server::Server;
use crate::store::events::{self, StoreEvent};
use crate::tasks::Status;

impl Server {
    /// Stops the call of task `task_id` when this instance runs it and, with `owner`,
    /// when its task is that client's (an event names the owner the store compared: a
    /// call of another client's is never stopped by it).
    pub(super) fn cancel_local_task(
        &mut self,
        now: Now,
        task_id: &str,
        owner: Option<&str>,
        why: &str,
    ) {
        let clients = self.ledger.clients();
        let stoppable = self.tasks.get(task_id).is_ok_and(|t| {
            t.status == Status::Working && owner.is_none_or(|o| clients.name(t.owner) == o)
        });
        if !stoppable {
            return;
        }
        let (call, waiters) = self.tasks.cancel(task_id, now.unix_secs, why);
        if let Some(key) = call {
            self.calls.cancel(now, &key);
        }
        for waiter in waiters {
            let error = TaskError::CancelledWithoutResult { task_id }.error();
            self.reply_late(waiter, Err(error));
        }
        log::debug!("task {task_id} cancelled through the shared store");
    }

    /// A message on the store's channel.
    pub(in crate::server) fn on_store_event(&mut self, now: Now, message: &str) {
        match StoreEvent::parse(message) {
            Some(StoreEvent::Ended(task_id)) => self.reread(&task_id),
            Some(StoreEvent::Cancel { task_id, owner }) => {
                self.cancel_local_task(now, &task_id, Some(&owner), "cancelled by the client");
                self.reread(&task_id);
            }
            Some(StoreEvent::Request { client, id }) => {
                // Only a client this instance knows by that very name.
                let Some(client) = self.ledger.clients().known(&client) else {
                    return;
                };
                let keys = self.exchange_calls(&id, client);
                for key in &keys {
                    if self.calls.cancel(now, key) {
                        log::debug!("cancelled requestId={id} through the shared store");
                    }
                }
                self.drain_calls();
            }
            None => log::trace!("ignoring a message on the store's channel"),
        }
    }

    /// The store's channel is (again) subscribed: events may have been missed, so every
    /// waited-on task is read again.
    pub(in crate::server) fn on_store_subscribed(&mut self) {
        let ids: Vec<String> = self
            .shared_tasks
            .as_ref()
            .map_or_else(Vec::new, |s| s.waiting.keys().cloned().collect());
        for task_id in ids {
            self.reread(&task_id);
        }
    }

    /// `notifications/cancelled` of request `id` from `client` reaches the other
    /// instances, one of which may run the call.
    pub(in crate::server) fn publish_request_cancel(&mut self, client: ClientId, id: &RequestId) {
        if !self.tasks_shared() {
            return;
        }
        let event = StoreEvent::Request {
            client: self.ledger.clients().name(client).to_owned(),
            id: id.clone(),
        };
        self.ask_tasks_store(events::publish(&event), TaskWait::Nothing);
    }

    /// The calls of HTTP requests of `client` with request id `id`.
    pub(in crate::server) fn exchange_calls(
        &self,
        id: &RequestId,
        client: ClientId,
    ) -> Vec<crate::calls::CallKey> {
        self.calls.exchanges_with_id(id, |context| {
            matches!(context, crate::server::routing::Context::Call(caller) if caller.client == client)
        })
    }
}
