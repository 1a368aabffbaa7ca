//! The desk on its own, with no `Server`: inputs with a fake clock, and what it emits
//! asserted (replies, work to start, calls to stop, counts for the ledger). The engine
//! is played by the bench: a start is taken (a key) or refused, as each test says.
//! `local.rs`: this instance's tasks and the held windows; `background.rs`: OpenAI
//! background mode; `shared.rs`: the shared store.

use super::*;
use crate::calls::Refused;
use crate::clients::{ClientId, Clients, NamedClient};
use crate::io::{CallKey, Requester};
use crate::jsonrpc::{Reply, RequestId};
use crate::ledger::Reservation;
use crate::routing::Dispatched;
use serde_json::{json, Value};

mod background;
mod local;
mod shared;

const OLD: ProtocolVersion = ProtocolVersion::V2025_11_25;
const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// A desk, its fake clock, and the two clients `a` and `b`.
struct Bench {
    desk: Desk,
    now: Now,
    a: ClientId,
    b: ClientId,
    next: u64,
    /// How the bench's engine answers the next starts: `None` takes them.
    refuse: Option<Refused>,
    /// What the desk emitted that the bench's engine did not take on.
    kept: Vec<DeskOut>,
}

impl Bench {
    fn new(config: ServerConfig) -> Bench {
        let named = |name: &str| NamedClient {
            name: name.into(),
            limit: crate::clients::Limit::default(),
            identity: None,
            gateway: false,
        };
        let mut clients = Clients::new(vec![named("a"), named("b")]).unwrap();
        Bench {
            desk: Desk::new(&config, 1),
            now: Now {
                instant: crate::testing::start_instant(),
                unix_secs: crate::testing::UNIX,
            },
            a: clients.resolve("a").unwrap(),
            b: clients.resolve("b").unwrap(),
            next: 100,
            refuse: None,
            kept: Vec::new(),
        }
    }

    fn local() -> Bench {
        Bench::new(ServerConfig::default())
    }

    fn name(&self, client: ClientId) -> &'static str {
        if client == self.a {
            "a"
        } else {
            "b"
        }
    }

    fn advance(&mut self, by: Duration) {
        self.now.instant += by;
        self.now.unix_secs += by.as_secs();
    }

    /// A task-augmented `tools/call` from `client` in `version` over `reply_to`: what
    /// the desk answered at once, the engine playing its part.
    fn start(
        &mut self,
        client: ClientId,
        version: ProtocolVersion,
        reply_to: ReplyTo,
    ) -> Dispatched {
        self.next += 1;
        let start = TaskStart {
            ttl_ms: Some(60_000),
            plan: Default::default(),
            progress: None,
            today: "2025-08-09".into(),
            reservation: Reservation::default(),
            arrival: Default::default(),
        };
        let id = RequestId::Int(self.next.to_string());
        let name = self.name(client);
        let asked = ticket(id, (reply_to, version, client), "tools/call", self.now);
        let dispatched = self.desk.start(self.now, name, asked, start);
        self.engine().unwrap_or(dispatched)
    }

    /// Plays the engine for the starts the desk emitted; the answer they decided.
    fn engine(&mut self) -> Option<Dispatched> {
        let mut answer = None;
        let mut kept = Vec::new();
        while let Some(out) = self.desk.poll_output() {
            let DeskOut::Start(start) = out else {
                kept.push(out);
                continue;
            };
            let decided = match (self.refuse, start.work) {
                (Some(refused), _) => self.desk.on_refused(self.now, start.if_refused, refused),
                (None, Starting::Call { caller, .. }) => {
                    let task_id = caller.task.clone().unwrap();
                    let key = key_of(&task_id);
                    Some(self.desk.on_task_started(self.now, &task_id, key))
                }
                (None, Starting::Stored { job, work }) => {
                    kept.push(DeskOut::Start(Box::new(Start {
                        work: Starting::Stored { job, work },
                        plan: start.plan,
                        today: start.today,
                        if_refused: start.if_refused,
                    })));
                    None
                }
            };
            answer = decided.or(answer);
        }
        self.kept.extend(kept);
        answer
    }

    /// A `tasks/*` request from `client`: its immediate answer.
    fn ask(
        &mut self,
        client: ClientId,
        method: &str,
        params: Value,
        reply_to: ReplyTo,
    ) -> Dispatched {
        self.next += 1;
        let request = crate::jsonrpc::Request {
            id: RequestId::Int(self.next.to_string()),
            method: method.into(),
            params: params.as_object().cloned().unwrap_or_default(),
        };
        let m = crate::mcp::Method::parse(method);
        let asked = ticket(
            request.id.clone(),
            (reply_to, OLD, client),
            m.label(),
            self.now,
        );
        let name = self.name(client);
        let dispatched = self.desk.on_request(self.now, name, request, m, asked);
        self.engine().unwrap_or(dispatched)
    }

    /// What the desk emitted since the last look (starts of stored work included).
    fn outs(&mut self) -> Vec<DeskOut> {
        let mut outs = std::mem::take(&mut self.kept);
        while let Some(out) = self.desk.poll_output() {
            outs.push(out);
        }
        outs
    }
}

/// The key the bench's engine gives task `task_id`'s call.
fn key_of(task_id: &str) -> CallKey {
    CallKey {
        from: Requester::Internal(task_id.len() as u64),
        id: RequestId::Str(task_id.into()),
    }
}

/// The reply a dispatch carries now.
fn now_reply(dispatched: Dispatched) -> Option<Reply> {
    match dispatched {
        Dispatched::Reply(reply) => Some(reply),
        _ => None,
    }
}

/// The result of a successful reply.
fn result_of(dispatched: Dispatched) -> Value {
    match now_reply(dispatched) {
        Some(Reply::Success { result, .. }) => result,
        other => panic!("not a result: {other:?}"),
    }
}

/// The error of a failed reply.
fn error_of(dispatched: Dispatched) -> RpcError {
    match now_reply(dispatched) {
        Some(Reply::Failure { error, .. }) => error,
        other => panic!("not an error: {other:?}"),
    }
}

/// The task id a handle names.
fn task_id_of(result: &Value) -> String {
    let task = result.get("task").unwrap_or(result);
    task["taskId"].as_str().unwrap().to_owned()
}

/// The late replies among `outs`.
fn replies(outs: &[DeskOut]) -> Vec<(&Ticket, &Result<Value, RpcError>)> {
    outs.iter()
        .filter_map(|o| match o {
            DeskOut::Reply(asker, result) => Some((asker, result)),
            _ => None,
        })
        .collect()
}

/// The calls `outs` stop.
fn cancels(outs: &[DeskOut]) -> Vec<&CallKey> {
    outs.iter()
        .filter_map(|o| match o {
            DeskOut::Cancel(key) => Some(key),
            _ => None,
        })
        .collect()
}

/// The charges among `outs`.
fn charges(outs: &[DeskOut]) -> Vec<&Charge> {
    outs.iter()
        .filter_map(|o| match o {
            DeskOut::Charge(charge) => Some(charge),
            _ => None,
        })
        .collect()
}

/// The register's ticket for request `id` of `method` from `client` in `version` over
/// `reply_to`, arrived `now`.
pub(super) fn ticket(
    id: RequestId,
    (reply_to, version, client): (ReplyTo, ProtocolVersion, ClientId),
    method: &'static str,
    now: Now,
) -> crate::routing::Ticket {
    crate::routing::Ticket {
        no: 0,
        id,
        reply_to,
        method,
        tool: (method == "tools/call").then_some(crate::tools::Tool::Answer),
        version: Some(version),
        client,
        received: now.instant,
        trace: None,
        span: None,
    }
}
