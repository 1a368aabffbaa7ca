//! A task outlives the replica that ran it: two `--http` replicas on one real Redis
//! (Debian's `redis-server`). A replica asked to stop (SIGTERM) stores what it finishes
//! before it exits, and fails in the store what it cannot finish within its grace; one
//! killed (SIGKILL) or frozen (SIGSTOP) stops renewing its lease, and the other ends its
//! tasks as failed within 30 s, telling their clients to call again; a frozen one that
//! comes back does not revive them, and no longer counts them against `tasks.max_tasks`.

use super::fleet::signal;
use super::http::waits_for;
use super::store::{gated_openai, legacy, task_call, task_id_of, task_request, Redis};
use crate::fake_openai::FakeOpenAi;
use crate::http_client::{listening, post_bytes, HttpConn};
use crate::*;

/// The bound within which a dead replica's tasks must be ended (issue 51).
const DEATH_NOTICED: Duration = Duration::from_secs(30);

/// What the failed task's error and status message say.
const CALL_AGAIN: &str = "call the tool again";

/// A replica on `fake` sharing the Redis on `port` and the task secret, its tasks
/// answered with a task at once; `server` adds to its `server` settings, `tasks` to its
/// `tasks` settings.
fn replica(fake: &FakeOpenAi, port: u16, server: &str, tasks: &str) -> Mcp {
    let config = format!(
        "server: {{store: {{url: \"redis://127.0.0.1:{port}/0\"}}{server}}}\ntasks: {{answer_within_ms: 0{tasks}}}\n"
    );
    Mcp::spawn(
        Opts::http(&fake.url)
            .temp_config("lease", &config)
            .env("MCP_TASKS_SECRET", "one-secret-for-every-instance-0123")
            .arg("--debug"),
    )
}

/// A `tasks/result` of `task` sent on a connection of its own to `mcp`, read later; its
/// answer must come within [`DEATH_NOTICED`] (the connection's read timeout).
fn waiting_result(mcp: &Mcp, id: u64, task: &str) -> HttpConn {
    let mut c = HttpConn::open(listening(mcp));
    c.stream.set_read_timeout(Some(DEATH_NOTICED)).unwrap();
    let bytes = post_bytes(
        listening(mcp),
        &task_request(id, "tasks/result", task),
        &super::store::LEGACY,
    );
    c.send_raw(&bytes);
    c
}

/// The error message of a reply, which must be an error.
fn error_of(reply: &Value) -> String {
    let message = reply["error"]["message"].as_str();
    message
        .unwrap_or_else(|| panic!("not an error: {reply}"))
        .to_owned()
}

/// SIGTERM mid-call: the call that ends within the grace is stored and read on the
/// other replica; the one that cannot is failed in the store, saying to call again; the
/// replica exits 0.
pub fn a_draining_replica_stores_what_it_finishes_and_fails_what_it_cannot() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = gated_openai();
    let mut a = replica(&fake, port, ", shutdown_grace_ms: 4000", "");
    let b = replica(&fake, port, "", "");
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));
    let slow = task_id_of(&legacy(&mut ca, &task_call(1, "please-slow drain")));
    let hung = task_id_of(&legacy(&mut ca, &task_call(2, "please-hang drain")));
    fake.wait_requests(2, PATIENCE);
    signal(a.pid(), "-TERM");
    let asked_to_stop = Instant::now();

    // Answered 1.5 s in, within the grace: the answer is in the store, read on b.
    let result = legacy(&mut cb, &task_request(3, "tasks/result", &slow));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    // Still running at the grace's end: failed in the store, never left working.
    let result = legacy(&mut cb, &task_request(4, "tasks/result", &hung));
    assert!(error_of(&result).contains(CALL_AGAIN), "{result}");
    let got = legacy(&mut cb, &task_request(5, "tasks/get", &hung));
    assert_eq!(got["result"]["status"], "failed", "{got}");
    let said = got["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(
        said.contains("stopped") && said.contains(CALL_AGAIN),
        "{got}"
    );

    assert!(a.wait_exit(PATIENCE).success());
    eprintln!(
        "the draining replica exited {:?} after SIGTERM (grace 4 s)",
        asked_to_stop.elapsed()
    );
    let stderr = a.stderr_to_end();
    assert!(
        !stderr.contains("before the shared store acknowledged"),
        "{stderr}"
    );
}

/// SIGKILL mid-call: a `tasks/result` waiting on the other replica is answered with the
/// error within 30 s, whose `tasks/get` then says failed; the orphan is counted there.
pub fn a_killed_replicas_task_is_ended_within_30_s_on_the_other() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = gated_openai();
    let mut a = replica(&fake, port, "", "");
    let b = replica(&fake, port, "", "");
    let mut ca = HttpConn::open(listening(&a));
    let task = task_id_of(&legacy(&mut ca, &task_call(1, "please-hang killed")));
    fake.wait_requests(1, PATIENCE);
    let mut waiting = waiting_result(&b, 2, &task);
    let mut cb = HttpConn::open(listening(&b));
    let got = legacy(&mut cb, &task_request(3, "tasks/get", &task));
    assert_eq!(got["result"]["status"], "working", "{got}");

    signal(a.pid(), "-KILL");
    let killed = Instant::now();
    a.wait_exit(PATIENCE);
    // The waiting connection's read timeout is the bound: no answer within 30 s fails.
    let heard = waiting.response().json();
    eprintln!(
        "a killed replica's task ended {:?} after the kill",
        killed.elapsed()
    );
    assert!(error_of(&heard).contains(CALL_AGAIN), "{heard}");
    let got = legacy(&mut cb, &task_request(4, "tasks/get", &task));
    assert_eq!(got["result"]["status"], "failed", "{got}");
    let result = legacy(&mut cb, &task_request(5, "tasks/result", &task));
    assert!(error_of(&result).contains(CALL_AGAIN), "{result}");
    let metrics = String::from_utf8(cb.get("/metrics").body).unwrap();
    assert!(
        metrics.contains("openai_responses_mcp_tasks_orphaned_total 1"),
        "{metrics}"
    );
}

/// SIGSTOP past the lease's lapse: the other replica ends the frozen one's task; the
/// frozen one, let go on (SIGCONT), stops that call, never writes the task back, and its
/// `tasks.max_tasks: 1` takes a new task again.
pub fn a_frozen_replica_that_comes_back_does_not_revive_its_ended_task() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let _redis = Redis::start(&binary, port);
    let fake = gated_openai();
    let mut a = replica(&fake, port, "", ", max_tasks: 1");
    let b = replica(&fake, port, "", "");
    let mut ca = HttpConn::open(listening(&a));
    let task = task_id_of(&legacy(&mut ca, &task_call(1, "please-hang frozen")));
    fake.wait_requests(1, PATIENCE);
    let full = legacy(&mut ca, &task_call(2, "please-slow refused"));
    assert!(error_of(&full).contains("as many tasks"), "{full}");

    signal(a.pid(), "-STOP");
    let mut waiting = waiting_result(&b, 3, &task);
    let heard = waiting.response().json();
    assert!(error_of(&heard).contains(CALL_AGAIN), "{heard}");
    signal(a.pid(), "-CONT");

    waits_for("the frozen replica to stop the ended task's call", || {
        !fake.closed().is_empty()
    });
    let next = task_id_of(&legacy(&mut ca, &task_call(4, "please-slow again")));
    // Opened now: a connection that says nothing is closed at the request time.
    let mut cb = HttpConn::open(listening(&b));
    let result = legacy(&mut cb, &task_request(5, "tasks/result", &next));
    assert_eq!(answer_of(&result)["used_search"], true, "{result}");
    for (c, id) in [(&mut ca, 6), (&mut cb, 7)] {
        let got = legacy(c, &task_request(id, "tasks/get", &task));
        assert_eq!(got["result"]["status"], "failed", "{got}");
    }
    let stderr = a.terminate();
    assert!(stderr.contains("ended by another instance"), "{stderr}");
}
