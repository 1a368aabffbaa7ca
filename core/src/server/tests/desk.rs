//! `tasks/result` pinned on each backend before the tasks move into one machine: the
//! same script runs on the local store, OpenAI background mode and the shared store. A
//! waiting request is answered exactly once; one whose client left is forgotten (never
//! answered, even when the task ends); another client's request is refused.

use super::*;
use crate::clients::ClientId;
use crate::fixture;
use crate::io::{AttemptId, HttpMethod};
use crate::store::{StoreOp, StoreReply};
use crate::testing::Harness;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Local,
    Background,
    Shared,
}

/// A server on one backend, the two clients `a` and `b`, and for the shared store a store
/// of its own that answers the scripts as Redis would.
struct Desk {
    h: Harness,
    backend: Backend,
    a: ClientId,
    b: ClientId,
    next: u64,
    /// The shared store's tasks: their fields, by id.
    stored: BTreeMap<String, BTreeMap<String, String>>,
    /// What went back on each exchange, in order.
    outs: Vec<(u64, ExchangeOut)>,
    /// Upstream attempts not yet answered.
    attempts: Vec<crate::io::HttpRequest>,
}

impl Desk {
    fn new(backend: Backend) -> Desk {
        let (mut config, a, b) = super::two_named_clients();
        config.tasks.background = backend == Backend::Background;
        if backend == Backend::Shared {
            config.store = Some(crate::settings::StoreSettings::default());
        }
        Desk {
            h: Harness::new(config),
            backend,
            a,
            b,
            next: 0,
            stored: BTreeMap::new(),
            outs: Vec::new(),
            attempts: Vec::new(),
        }
    }

    /// `method` with `params` from `client` on an exchange of its own; the exchange.
    fn ask(&mut self, client: ClientId, method: &str, params: Value) -> u64 {
        self.next += 1;
        let x = self.next;
        let message = json!({"jsonrpc":"2.0","id":x,"method":method,"params":params});
        self.feed(Input::Exchange {
            id: ExchangeId(x),
            asked: Asked::Rpc {
                message,
                version: Some(ProtocolVersion::V2025_11_25),
                client,
                trace: None,
                way: Default::default(),
            },
        });
        x
    }

    /// Feeds `input`, then answers every store operation it caused, as often as needed.
    fn feed(&mut self, input: Input<'_>) {
        self.h.feed(input);
        loop {
            let mut answers = Vec::new();
            for out in self.h.take_other() {
                match out {
                    Output::Exchange(ExchangeId(x), out) => self.outs.push((x, out)),
                    Output::Http(request) => self.attempts.push(request),
                    Output::Store(id, op) => answers.push((id, op)),
                    _ => {}
                }
            }
            if answers.is_empty() {
                return;
            }
            for (id, op) in answers {
                let (reply, event) = self.store(op);
                self.h.feed(Input::StoreReply {
                    id,
                    reply,
                    took: Duration::ZERO,
                });
                if let Some(event) = event {
                    self.h.feed(Input::StoreEvent(&event));
                }
            }
        }
    }

    /// What Redis answers to `op`, and what it publishes.
    fn store(&mut self, op: StoreOp) -> (StoreReply, Option<String>) {
        use crate::store::tasks::{CANCEL_SCRIPT, FINISH_SCRIPT, PUT_SCRIPT, READ_SCRIPT};
        let StoreOp::Script { script, keys, args } = op else {
            return match op {
                StoreOp::Reserve { .. } => (
                    StoreReply::Reserve {
                        reached: 0,
                        value: 0,
                        held: 0,
                    },
                    None,
                ),
                StoreOp::Publish { message, .. } => (StoreReply::Done, Some(message)),
                _ => (StoreReply::Done, None),
            };
        };
        let id = keys[0].trim_start_matches("orm:t:").to_owned();
        let flat = |t: &BTreeMap<String, String>| {
            t.iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect::<Vec<_>>()
        };
        let rows = |head: &[&str]| vec![head.iter().map(|s| (*s).to_owned()).collect()];
        if script == PUT_SCRIPT {
            let fields = args[5..]
                .chunks(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            self.stored.insert(id, fields);
            (StoreReply::Rows(rows(&["ok"])), None)
        } else if script == READ_SCRIPT {
            match self.stored.get(&id) {
                Some(t) => {
                    let mut answer = rows(&["ok"]);
                    answer.push(flat(t));
                    (StoreReply::Rows(answer), None)
                }
                None => (StoreReply::Rows(rows(&["none"])), None),
            }
        } else if script == FINISH_SCRIPT {
            let Some(t) = self.stored.get_mut(&id) else {
                return (StoreReply::Rows(rows(&["none"])), None);
            };
            for pair in args[2..].chunks(2) {
                t.insert(pair[0].clone(), pair[1].clone());
            }
            (StoreReply::Rows(rows(&["won"])), Some(args[1].clone()))
        } else if script == CANCEL_SCRIPT {
            match self.stored.get_mut(&id) {
                None => (StoreReply::Rows(rows(&["none"])), None),
                Some(t) if t.get("owner") != Some(&args[4]) => {
                    (StoreReply::Rows(rows(&["foreign"])), None)
                }
                Some(t) => {
                    t.insert("status".into(), "cancelled".into());
                    let mut answer = rows(&["ok", "changed"]);
                    answer.push(flat(t));
                    (StoreReply::Rows(answer), Some(args[3].clone()))
                }
            }
        } else {
            (StoreReply::Rows(rows(&["ok", ""])), None)
        }
    }

    /// The replies exchange `x` got since the start.
    fn replies(&self, x: u64) -> Vec<Value> {
        self.outs
            .iter()
            .filter(|(n, _)| *n == x)
            .filter_map(|(_, out)| match out {
                ExchangeOut::Reply { json, .. } => serde_json::from_slice(json).ok(),
                _ => None,
            })
            .collect()
    }

    /// A task of client `a` whose call is still running upstream; its id.
    fn create(&mut self) -> String {
        let call = json!({"name":"answer","arguments":{"query":"q"},"task":{}});
        let x = self.ask(self.a, "tools/call", call);
        if self.backend == Backend::Background {
            let post = self.attempts.remove(0);
            let queued = br#"{"id":"resp_1","status":"queued","output":[]}"#;
            self.answer(post.attempt, queued);
        }
        let created = self.replies(x);
        assert_eq!(created.len(), 1, "{:?}: {created:?}", self.backend);
        created[0]["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{:?}: {created:?}", self.backend))
            .to_owned()
    }

    fn answer(&mut self, attempt: AttemptId, body: &[u8]) {
        let reply = crate::io::HttpReply {
            status: 200,
            headers: Vec::new(),
            body: body.to_vec(),
        };
        self.feed(Input::HttpReply(attempt, reply));
    }

    /// The task's call ends with an answer: upstream answers the running call, or, in
    /// background mode, the next read finds the response completed.
    fn finish(&mut self) {
        let mut done: Value =
            serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
        done["id"] = "resp_1".into();
        if self.backend == Backend::Background {
            // Read as in progress until the poll interval has passed, then completed.
            self.h.advance(Duration::from_secs(60));
            self.feed(Input::Timeout);
            let read = self
                .attempts
                .iter()
                .position(|r| r.method == HttpMethod::Get)
                .map(|at| self.attempts.remove(at))
                .expect("a read of the stored response");
            self.answer(read.attempt, done.to_string().as_bytes());
        } else {
            let call = self.attempts.remove(0);
            self.answer(call.attempt, done.to_string().as_bytes());
        }
    }
}

#[test]
fn a_waiting_result_is_answered_exactly_once_and_a_departed_one_never_on_every_backend() {
    for backend in [Backend::Local, Backend::Background, Backend::Shared] {
        let mut d = Desk::new(backend);
        let task = d.create();
        let (a, b) = (d.a, d.b);
        let stays = d.ask(a, "tasks/result", json!({"taskId": task}));
        let leaves = d.ask(a, "tasks/result", json!({"taskId": task}));
        if backend == Backend::Background {
            // Each wait's first read of the stored response: still in progress.
            while let Some(at) = d.attempts.iter().position(|r| r.method == HttpMethod::Get) {
                let read = d.attempts.remove(at);
                let working = br#"{"id":"resp_1","status":"in_progress","output":[]}"#;
                d.answer(read.attempt, working);
            }
        }
        assert!(d.replies(stays).is_empty(), "{backend:?}: it waits");
        d.feed(Input::ExchangeClosed(ExchangeId(leaves)));
        // Another client is refused, and waits for nothing.
        let foreign = d.ask(b, "tasks/result", json!({"taskId": task}));
        let refused = d.replies(foreign);
        assert_eq!(refused.len(), 1, "{backend:?}: {refused:?}");
        let message = refused[0]["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("not one of this client's tasks"),
            "{backend:?}: {message}"
        );
        d.finish();
        let answered = d.replies(stays);
        assert_eq!(
            answered.len(),
            1,
            "{backend:?}: answered once: {answered:?}"
        );
        assert!(
            answered[0]["result"]["content"][0]["text"].is_string(),
            "{backend:?}: {}",
            answered[0]
        );
        assert!(
            d.replies(leaves).is_empty(),
            "{backend:?}: the departed one"
        );
        // Time passes and the task ends its life: nothing more for either.
        let before = d.outs.len();
        d.h.advance(Duration::from_secs(7200));
        d.feed(Input::Timeout);
        assert!(
            d.outs[before..]
                .iter()
                .all(|(x, _)| *x != stays && *x != leaves),
            "{backend:?}: {:?}",
            &d.outs[before..]
        );
        // The owner reads it again: the same answer, once more, for that request alone.
        let again = d.ask(a, "tasks/result", json!({"taskId": task}));
        let replies = d.replies(again);
        assert!(replies.len() <= 1, "{backend:?}: {replies:?}");
    }
}
