//! The `lease` fuzz target: the lease on shared tasks ([`responses_mcp_core::store::tasks::lease`])
//! between two instances and a model of the store.

use responses_mcp_core::settings::{OnUnavailable, StoreSettings};
use responses_mcp_core::store::tasks::lease::{LAPSE, RENEW, RENEW_SCRIPT};
use responses_mcp_core::store::tasks::{CANCEL_SCRIPT, FINISH_SCRIPT, PUT_SCRIPT, READ_SCRIPT};
use responses_mcp_core::store::{StoreId, StoreOp, StoreReply};
use responses_mcp_core::testing::Harness;
use responses_mcp_core::{Input, Output, ServerConfig};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

type Fields = BTreeMap<String, String>;

/// What the store holds, as the scripts keep it, on its own clock (ms).
#[derive(Default)]
struct Store {
    now_ms: u64,
    tasks: BTreeMap<String, Fields>,
    /// Lease key → when it expires.
    leases: BTreeMap<String, u64>,
    /// Messages published, not yet handed to the instances.
    published: Vec<String>,
    /// Holders that renewed (or put) once every instance's operations were delivered at
    /// once: none of their tasks may be ended as an orphan after that.
    punctual: BTreeSet<String>,
    /// Holders of the instance that was killed.
    dead: BTreeSet<String>,
}

fn lapse_ms() -> u64 {
    u64::try_from(LAPSE.as_millis()).unwrap_or(u64::MAX)
}

fn row(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn flat(t: &Fields) -> Vec<String> {
    t.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect()
}

impl Store {
    fn live(&self, lease: &str) -> bool {
        self.leases.get(lease).is_some_and(|at| *at > self.now_ms)
    }

    /// The read scripts' orphan check on `key` (`o`: prefix, at, message, outcome,
    /// channel, event prefix); whether it ended the task.
    fn orphan(&mut self, key: &str, o: &[String]) -> bool {
        let Some(t) = self.tasks.get(key) else {
            return false;
        };
        let (Some(holder), Some("working")) =
            (t.get("holder"), t.get("status").map(String::as_str))
        else {
            return false;
        };
        let holder = holder.clone();
        if self.live(&format!("{}{holder}", o[0])) {
            return false;
        }
        assert!(
            !self.punctual.contains(&holder),
            "a task of an instance renewing on time was ended as an orphan"
        );
        let id = t.get("id").cloned().unwrap_or_default();
        if let Some(t) = self.tasks.get_mut(key) {
            for (k, v) in [
                ("status", "failed"),
                ("message", &o[2]),
                ("outcome", &o[3]),
                ("updated", &o[1]),
            ] {
                t.insert(k.to_owned(), v.to_owned());
            }
        }
        self.published.push(format!("{}{id}", o[5]));
        true
    }

    /// Performs `op` as Redis runs the scripts; `settled`: every operation is delivered
    /// at once from now on.
    fn perform(&mut self, op: StoreOp, settled: bool) -> StoreReply {
        let before: BTreeMap<String, String> = self
            .tasks
            .iter()
            .filter_map(|(k, t)| Some((k.clone(), t.get("status")?.clone())))
            .collect();
        let reply = self.run(op, settled);
        for (key, status) in before {
            let now = self.tasks.get(&key).and_then(|t| t.get("status"));
            if status != "working" {
                assert_eq!(now, Some(&status), "an ended task changed");
            }
        }
        reply
    }

    fn run(&mut self, op: StoreOp, settled: bool) -> StoreReply {
        let (script, keys, args) = match op {
            StoreOp::Script { script, keys, args } => (script, keys, args),
            StoreOp::Publish { message, .. } => {
                self.published.push(message);
                return StoreReply::Done;
            }
            StoreOp::Reserve { .. } => {
                return StoreReply::Reserve {
                    reached: 0,
                    value: 0,
                    held: 0,
                }
            }
            _ => return StoreReply::Done,
        };
        let key = keys.first().cloned().unwrap_or_default();
        let rows = if script == PUT_SCRIPT {
            self.put(key, &keys, &args, settled)
        } else if script == READ_SCRIPT {
            self.read(&key, &args)
        } else if script == FINISH_SCRIPT {
            self.finish(&key, &args)
        } else if script == CANCEL_SCRIPT {
            self.cancel(&key, &args)
        } else if script == RENEW_SCRIPT {
            self.renew(key, settled)
        } else {
            // A list: a page of nothing.
            vec![row(&["ok", ""])]
        };
        StoreReply::Rows(rows)
    }

    // What each script does to the store's state, as the Redis scripts do.

    fn put(
        &mut self,
        key: String,
        keys: &[String],
        args: &[String],
        settled: bool,
    ) -> Vec<Vec<String>> {
        if self.tasks.contains_key(&key) {
            return vec![row(&["taken"])];
        }
        let fields: Fields = args[5..]
            .chunks(2)
            .filter_map(|p| Some((p.first()?.clone(), p.get(1)?.clone())))
            .collect();
        if let Some(holder) = fields.get("holder").filter(|_| settled) {
            self.punctual.insert(holder.clone());
        }
        self.tasks.insert(key, fields);
        let had = self.live(&keys[2]);
        self.leases
            .insert(keys[2].clone(), self.now_ms + lapse_ms());
        vec![row(&["ok", if had { "held" } else { "lapsed" }])]
    }

    fn read(&mut self, key: &str, args: &[String]) -> Vec<Vec<String>> {
        let orphaned = self.orphan(key, args);
        match self.tasks.get(key) {
            None => vec![row(&["none"])],
            Some(t) => {
                let mut fields = flat(t);
                if orphaned {
                    fields.extend(row(&["orphaned", "1"]));
                }
                vec![row(&["ok"]), fields]
            }
        }
    }

    fn finish(&mut self, key: &str, args: &[String]) -> Vec<Vec<String>> {
        let Some(t) = self.tasks.get_mut(key) else {
            return vec![row(&["none"])];
        };
        if t.get("status").map(String::as_str) != Some("working") {
            return vec![row(&["lost"])];
        }
        for p in args[2..].chunks(2) {
            if let [k, v] = p {
                t.insert(k.clone(), v.clone());
            }
        }
        self.published.push(args[1].clone());
        vec![row(&["won"])]
    }

    fn cancel(&mut self, key: &str, args: &[String]) -> Vec<Vec<String>> {
        let Some(t) = self.tasks.get_mut(key) else {
            return vec![row(&["none"])];
        };
        if t.get("owner") != args.get(4) {
            return vec![row(&["foreign"])];
        }
        let mut changed = "unchanged";
        if t.get("status").map(String::as_str) == Some("working") {
            t.insert("status".into(), "cancelled".into());
            self.published.push(args[3].clone());
            changed = "changed";
        }
        let fields = flat(t);
        vec![row(&["ok", changed]), fields]
    }

    fn renew(&mut self, key: String, settled: bool) -> Vec<Vec<String>> {
        let had = self.live(&key);
        self.leases.insert(key.clone(), self.now_ms + lapse_ms());
        if settled {
            let holder = key.trim_start_matches("orm:lease:").to_owned();
            self.punctual.insert(holder);
        }
        vec![row(&[if had { "held" } else { "lapsed" }])]
    }
}

/// One instance: its server, and what waits between it and the store.
struct Instance {
    h: Harness,
    alive: bool,
    ops: std::collections::VecDeque<(StoreId, StoreOp)>,
    replies: Vec<(StoreId, StoreReply)>,
    answered: BTreeSet<u64>,
    /// Its name in its tasks, as its puts say.
    holder: Option<String>,
}

impl Instance {
    fn new(seed: u64, skew: i64) -> Instance {
        let config = ServerConfig {
            credentials_ready: true,
            model_lookups: false,
            jitter_seed: seed,
            store: Some(StoreSettings {
                on_unavailable: OnUnavailable::Allow,
            }),
            ..ServerConfig::default()
        };
        let mut h = Harness::new(config);
        h.now.unix_secs = h.now.unix_secs.saturating_add_signed(skew);
        h.init("2025-11-25");
        Instance {
            h,
            alive: true,
            ops: std::collections::VecDeque::new(),
            replies: Vec::new(),
            answered: BTreeSet::new(),
            holder: None,
        }
    }

    /// Collects what the server put out: store operations, frames (each request answered
    /// at most once), task ids; answers every upstream attempt at once when `answer`.
    fn collect(&mut self, tasks: &mut Vec<String>, answer: bool) {
        for frame in self.h.frames() {
            if let Some(n) = frame.get("id").and_then(Value::as_u64) {
                assert!(
                    self.answered.insert(n),
                    "request {n} answered twice: {frame}"
                );
                if let Some(id) = frame["result"]["task"]["taskId"].as_str() {
                    tasks.push(id.to_owned());
                }
            }
        }
        let attempts = self.h.take_http();
        for output in self.h.take_other() {
            if let Output::Store(id, op) = output {
                if let StoreOp::Script { script, keys, .. } = &op {
                    if *script == PUT_SCRIPT {
                        let lease = keys.get(2).map(|k| k.trim_start_matches("orm:lease:"));
                        self.holder = lease.map(str::to_owned);
                    }
                }
                self.ops.push_back((id, op));
            }
        }
        if answer {
            for attempt in attempts {
                let body = br#"{"id":"resp_1","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}]}"#;
                self.h.reply(attempt.attempt, 200, body, &[]);
            }
        }
    }
}

/// Two instances sharing a model of the store, their wall clocks up to 5 s apart (and
/// apart from the store's), under a script of task calls, `tasks/*`, the store's
/// operations performed and answered in any order, time passing, and one instance
/// killed. Never a panic; a task that ended never changes; every request is answered at
/// most once; once operations are delivered at once, an instance's lease holds its tasks
/// (none is ended as an orphan), and a killed instance's tasks are ended within
/// [`LAPSE`] and a few seconds by the survivor's reads.
pub fn lease(data: &[u8]) {
    let skew = |b: Option<&u8>| i64::from(b.copied().unwrap_or(0) % 11) - 5;
    let mut instances = [
        Instance::new(1, skew(data.first())),
        Instance::new(2, skew(data.get(1))),
    ];
    let mut store = Store::default();
    let mut tasks: Vec<String> = Vec::new();
    let mut next = 100u64;
    for pair in data.get(2..).unwrap_or_default().chunks(2) {
        let (op, arg) = (pair[0], pair.get(1).copied().unwrap_or(0));
        let which = usize::from(arg % 2);
        let i = &mut instances[which];
        match op % 8 {
            0 if i.alive => {
                i.h.send(json!({"jsonrpc":"2.0","id":next,"method":"tools/call",
                    "params":{"name":"answer","arguments":{"query":"q"},"task":{}}}));
                next += 1;
            }
            1 if i.alive && !tasks.is_empty() => {
                let method =
                    ["tasks/get", "tasks/result", "tasks/cancel"][usize::from(arg / 2) % 3];
                let task = &tasks[usize::from(arg / 6) % tasks.len()];
                i.h.send(
                    json!({"jsonrpc":"2.0","id":next,"method":method,"params":{"taskId":task}}),
                );
                next += 1;
            }
            // The store performs the instance's next operation (one connection keeps
            // their order), even one sent just before the instance was killed.
            2 => {
                if let Some((id, op)) = i.ops.pop_front() {
                    let reply = store.perform(op, false);
                    if i.alive {
                        i.replies.push((id, reply));
                    }
                }
            }
            // An answer reaches the instance, in any order.
            3 if i.alive && !i.replies.is_empty() => {
                let (id, reply) = i.replies.remove(usize::from(arg / 2) % i.replies.len());
                i.h.feed(Input::StoreReply {
                    id,
                    reply,
                    took: Duration::from_millis(1),
                });
            }
            4 => {
                let step = Duration::from_millis(250 * u64::from(arg % 32));
                store.now_ms += u64::try_from(step.as_millis()).unwrap_or(0);
                for i in instances.iter_mut().filter(|i| i.alive) {
                    i.h.advance(step);
                    i.h.feed(Input::Timeout);
                }
            }
            5 => {
                for message in std::mem::take(&mut store.published) {
                    for i in instances.iter_mut().filter(|i| i.alive) {
                        i.h.feed(Input::StoreEvent(&message));
                    }
                }
            }
            6 if instances.iter().all(|i| i.alive) => {
                let i = &mut instances[which];
                i.alive = false;
                i.replies.clear();
            }
            _ => {}
        }
        let answer = op % 8 == 7;
        for i in instances.iter_mut().filter(|i| i.alive) {
            i.collect(&mut tasks, answer);
        }
    }
    settle(&mut instances, &mut store, &mut tasks);
}

/// Every operation delivered at once from now on, for a lapse and more, the survivors
/// reading every task each second.
fn settle(instances: &mut [Instance; 2], store: &mut Store, tasks: &mut Vec<String>) {
    for i in instances.iter().filter(|i| !i.alive) {
        store.dead.extend(i.holder.clone());
    }
    let mut next = 1_000_000u64;
    let seconds = LAPSE.as_secs() + 4;
    let alive: BTreeSet<String> = instances
        .iter()
        .filter(|i| i.alive)
        .filter_map(|i| i.holder.clone())
        .collect();
    for second in 0..seconds {
        // An instance running tasks renews its lease within an interval and a second.
        if second > RENEW.as_secs() + 1 {
            assert_renewed(store, &alive);
        }
        store.now_ms += 1000;
        for i in instances.iter_mut().filter(|i| i.alive) {
            i.h.advance(Duration::from_secs(1));
            i.h.feed(Input::Timeout);
            // Every task the store holds, whether its client heard of it or not, every
            // few seconds and at the end.
            if second % 4 != 3 && second + 1 != seconds {
                continue;
            }
            let held: Vec<String> = store
                .tasks
                .values()
                .filter_map(|t| t.get("id").cloned())
                .collect();
            for task in held {
                i.h.send(json!({"jsonrpc":"2.0","id":next,"method":"tasks/get","params":{"taskId":task}}));
                next += 1;
            }
        }
        // Until nothing moves: operations, answers, events.
        deliver_until_still(instances, store, tasks);
    }
    if instances.iter().any(|i| i.alive) {
        for (key, t) in &store.tasks {
            let dead = t.get("holder").is_some_and(|h| store.dead.contains(h));
            let working = t.get("status").map(String::as_str) == Some("working");
            assert!(
                !(dead && working),
                "{key}: a killed instance's task is still working"
            );
        }
    }
}

/// Every working task whose instance lives has had its lease renewed on time.
fn assert_renewed(store: &Store, alive: &BTreeSet<String>) {
    for (key, t) in &store.tasks {
        let holder = t.get("holder").filter(|h| alive.contains(*h));
        let working = t.get("status").map(String::as_str) == Some("working");
        if let (Some(holder), true) = (holder, working) {
            assert!(
                store.punctual.contains(holder),
                "{key}: its instance runs it but does not renew its lease"
            );
        }
    }
}

/// Operations, their answers and the store's events delivered until nothing moves.
fn deliver_until_still(instances: &mut [Instance; 2], store: &mut Store, tasks: &mut Vec<String>) {
    for _ in 0..16 {
        let mut moved = false;
        for i in instances.iter_mut().filter(|i| i.alive) {
            i.collect(tasks, false);
            for (id, op) in std::mem::take(&mut i.ops) {
                let reply = store.perform(op, true);
                i.h.feed(Input::StoreReply {
                    id,
                    reply,
                    took: Duration::from_millis(1),
                });
                moved = true;
            }
        }
        for message in std::mem::take(&mut store.published) {
            for i in instances.iter_mut().filter(|i| i.alive) {
                i.h.feed(Input::StoreEvent(&message));
            }
            moved = true;
        }
        if !moved {
            break;
        }
    }
}
