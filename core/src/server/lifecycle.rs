//! Message dispatch: the MCP lifecycle, `ping`, `tools/list`, notifications and batches.

use super::{Server, Session};
use crate::jsonrpc::{classify, code, kind_of, Incoming, Notification, Reply, Request, RpcError};
use crate::mcp::{initialize_result, tools_list_result, ProtocolVersion};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Most entries accepted in one batch.
pub const MAX_BATCH: usize = 1024;

/// Where a request's reply goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReplyTo {
    /// Straight to stdout as its own frame.
    Direct,
    /// Into a slot of a batch, written when the whole batch is answered.
    Batch { batch: u64, slot: usize },
}

/// What handling one message produced.
pub(super) enum Dispatched {
    /// A reply, available now.
    Reply(Reply),
    /// Nothing to send (a notification or an ignored response).
    Nothing,
    /// The reply will come later (a tools/call in flight).
    Pending,
}

/// Batches waiting for their asynchronous entries.
#[derive(Default)]
pub(super) struct Batches {
    next: u64,
    open: BTreeMap<u64, Batch>,
}

struct Batch {
    slots: Vec<Option<Reply>>,
    pending: usize,
}

impl Server {
    pub(super) fn on_message(&mut self, now: super::Now, value: Value) {
        match value {
            Value::Array(items) => self.on_batch(now, items),
            single => match self.dispatch(now, single, ReplyTo::Direct) {
                Dispatched::Reply(reply) => self.send_reply(reply),
                Dispatched::Nothing | Dispatched::Pending => {}
            },
        }
    }

    fn dispatch(&mut self, now: super::Now, value: Value, reply_to: ReplyTo) -> Dispatched {
        match classify(value) {
            Ok(Incoming::Request(request)) => self.on_request(now, request, reply_to),
            Ok(Incoming::Notification(n)) => {
                self.on_notification(n);
                Dispatched::Nothing
            }
            Ok(Incoming::Response) => {
                log::debug!("ignoring a response object from the client");
                Dispatched::Nothing
            }
            Err(rejected) => Dispatched::Reply(Reply::Failure {
                id: rejected.id,
                error: rejected.error,
            }),
        }
    }

    fn on_request(&mut self, now: super::Now, request: Request, reply_to: ReplyTo) -> Dispatched {
        log::debug!("recv method={} id={}", request.method, request.id);
        let result = match (request.method.as_str(), self.session) {
            ("ping", _) => Ok(json!({})),
            ("initialize", Session::AwaitingInit) => self.initialize(&request),
            ("initialize", Session::Ready(v)) => Err(RpcError::new(
                code::INVALID_REQUEST,
                format!("already initialized with protocol version {}; initialize may be sent only once", v.as_str()),
            )),
            ("tools/list", Session::Ready(v)) if reply_to == ReplyTo::Direct => {
                self.write_tools_list(&request.id, v);
                return Dispatched::Nothing;
            }
            ("tools/list", Session::Ready(v)) => Ok(tools_list_result(v)),
            ("tools/call", Session::Ready(v)) => {
                return self.start_call(now, request, reply_to, v);
            }
            ("tools/list" | "tools/call", Session::AwaitingInit) => Err(RpcError::new(
                code::INVALID_REQUEST,
                format!("server not initialized: send initialize before {}", request.method),
            )),
            (method, _) => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        };
        Dispatched::Reply(match result {
            Ok(result) => Reply::Success {
                id: request.id,
                result,
            },
            Err(error) => Reply::Failure {
                id: Some(request.id),
                error,
            },
        })
    }

    /// Writes a `tools/list` reply from the cached, serialised result: the list is fixed
    /// for the session, and building it as a `Value` per request dominated dispatch.
    fn write_tools_list(&mut self, id: &crate::jsonrpc::RequestId, version: ProtocolVersion) {
        let cached = self.tools_list_json.get_or_insert_with(|| {
            serde_json::to_vec(&tools_list_result(version)).unwrap_or_default()
        });
        let mut json = Vec::with_capacity(cached.len() + 48);
        json.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        if serde_json::to_writer(&mut json, id).is_err() {
            return;
        }
        json.extend_from_slice(br#","result":"#);
        json.extend_from_slice(cached);
        json.push(b'}');
        self.write_frame(&json);
    }

    fn initialize(&mut self, request: &Request) -> Result<Value, RpcError> {
        let version = match request.params.get("protocolVersion") {
            Some(Value::String(asked)) => {
                let chosen = ProtocolVersion::parse(asked).unwrap_or(ProtocolVersion::LATEST);
                if chosen.as_str() != asked {
                    log::debug!(
                        "client asked for protocol {asked:?}; answering {}",
                        chosen.as_str()
                    );
                }
                chosen
            }
            Some(other) => {
                return Err(invalid_version(&format!(
                    "protocolVersion must be a string, got {}",
                    kind_of(other)
                )))
            }
            None => return Err(invalid_version("protocolVersion is missing")),
        };
        self.session = Session::Ready(version);
        Ok(initialize_result(version))
    }

    fn on_notification(&mut self, n: Notification) {
        match n.method.as_str() {
            "notifications/initialized" => log::debug!("client initialized"),
            "notifications/cancelled" => {
                let reason = n.params.get("reason").and_then(Value::as_str);
                match n
                    .params
                    .get("requestId")
                    .and_then(crate::jsonrpc::RequestId::from_value)
                {
                    Some(id) => self.cancel(&id, reason),
                    None => {
                        log::debug!("ignoring notifications/cancelled without a usable requestId")
                    }
                }
            }
            other => log::debug!("ignoring notification {other}"),
        }
    }

    fn on_batch(&mut self, now: super::Now, items: Vec<Value>) {
        let refuse = |message: String| Reply::Failure {
            id: None,
            error: RpcError::new(code::INVALID_REQUEST, message),
        };
        let problem = match self.session {
            _ if items.is_empty() => Some("invalid request: empty batch".to_owned()),
            Session::AwaitingInit => Some("batches are not supported before initialize".to_owned()),
            Session::Ready(v) if !v.has_batches() => Some(format!(
                "batches are not supported in protocol version {}; send one message at a time",
                v.as_str()
            )),
            _ if items.len() > MAX_BATCH => Some(format!(
                "batch of {} entries exceeds the limit of {MAX_BATCH}",
                items.len()
            )),
            _ => None,
        };
        if let Some(message) = problem {
            self.send_reply(refuse(message));
            return;
        }
        let batch = self.batches.open(items.len());
        for (slot, item) in items.into_iter().enumerate() {
            let reply_to = ReplyTo::Batch { batch, slot };
            let outcome = if item.get("method").and_then(Value::as_str) == Some("initialize") {
                let id = item
                    .get("id")
                    .and_then(crate::jsonrpc::RequestId::from_value);
                Dispatched::Reply(Reply::Failure {
                    id,
                    error: RpcError::new(
                        code::INVALID_REQUEST,
                        "initialize must not be part of a batch",
                    ),
                })
            } else {
                self.dispatch(now, item, reply_to)
            };
            match outcome {
                Dispatched::Reply(reply) => self.batches.fill(batch, slot, Some(reply)),
                Dispatched::Nothing => self.batches.fill(batch, slot, None),
                Dispatched::Pending => {}
            }
        }
        self.flush_batch(batch);
    }

    /// Sends `reply` where it belongs; `None` for a call that ended without a reply.
    pub(super) fn route(&mut self, reply_to: ReplyTo, reply: Option<Reply>) {
        match reply_to {
            ReplyTo::Direct => {
                if let Some(reply) = reply {
                    self.send_reply(reply);
                }
            }
            ReplyTo::Batch { batch, slot } => {
                self.batches.fill(batch, slot, reply);
                self.flush_batch(batch);
            }
        }
    }

    fn flush_batch(&mut self, batch: u64) {
        if let Some(replies) = self.batches.take_if_done(batch) {
            if !replies.is_empty() {
                self.write_json(&replies);
            }
        }
    }
}

fn invalid_version(why: &str) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        format!("initialize: {why}; send a version such as \"2025-06-18\""),
    )
    .with_data(json!({
        "supported": ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
    }))
}

impl Batches {
    fn open(&mut self, size: usize) -> u64 {
        let id = self.next;
        self.next += 1;
        let slots = std::iter::repeat_with(|| None).take(size).collect();
        self.open.insert(
            id,
            Batch {
                slots,
                pending: size,
            },
        );
        id
    }

    fn fill(&mut self, batch: u64, slot: usize, reply: Option<Reply>) {
        if let Some(b) = self.open.get_mut(&batch) {
            if let Some(s) = b.slots.get_mut(slot) {
                *s = reply;
                b.pending = b.pending.saturating_sub(1);
            }
        }
    }

    fn take_if_done(&mut self, batch: u64) -> Option<Vec<Reply>> {
        if self.open.get(&batch)?.pending > 0 {
            return None;
        }
        let b = self.open.remove(&batch)?;
        Some(b.slots.into_iter().flatten().collect())
    }
}
