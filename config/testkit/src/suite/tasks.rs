//! Tasks end to end, local backing: a 2025-11-25 client over stdio creates a task, polls,
//! fetches the result and hears the status change; cancels one while it works (the
//! upstream connection closes); forged, tampered and expired ids; over HTTP a client that
//! creates a task and disconnects comes back on another connection for the result; a
//! 2026-07-28 client with the extension gets `resultType: "task"` and the result in
//! `tasks/get`. Every message is checked against the schemas (the extension's included).

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, modern_headers, HttpConn};
use crate::*;

fn task_call(id: u64, ttl: Option<u64>) -> Value {
    let mut task = json!({});
    if let Some(ttl) = ttl {
        task["ttl"] = ttl.into();
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":task,"_meta":{"progressToken":id}}})
}

fn on_task(id: u64, method: &str, task_id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}})
}

/// A slow answer: long enough to poll while it works.
fn slow_fake() -> FakeOpenAi {
    FakeOpenAi::start(|r, _| {
        if r.body.to_string().contains("please-hang-forever") {
            Action::Hang
        } else {
            Action::json(200, &fixture("response-web-search.json"))
                .after(Duration::from_millis(600))
        }
    })
}

pub fn a_task_over_stdio_is_created_polled_fetched_and_announced() {
    let fake = slow_fake();
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    let init = mcp.initialize("2025-11-25");
    assert!(init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object());
    let list = mcp
        .ask(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .0;
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["execution"]["taskSupport"], "optional");
    }
    let (created, mut notes) = mcp.ask(task_call(2, Some(120_000)));
    let task = &created["result"]["task"];
    assert_eq!(
        (task["status"].as_str(), task["ttl"].as_u64()),
        (Some("working"), Some(120_000))
    );
    let id = task["taskId"].as_str().unwrap().to_owned();
    let (polled, more) = mcp.ask(on_task(3, "tasks/get", &id));
    notes.extend(more);
    assert_eq!(polled["result"]["status"], "working");
    // tasks/result waits for the end; progress comes meanwhile, the status change after.
    let (result, more) = mcp.ask(on_task(4, "tasks/result", &id));
    notes.extend(more);
    let answer = answer_of(&result);
    assert_eq!(answer["used_search"], true);
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    assert!(
        notes
            .iter()
            .any(|n| n["method"] == "notifications/progress"),
        "the progress token stays valid while the task works: {notes:?}"
    );
    let status = mcp.recv();
    assert_eq!(status["method"], "notifications/tasks/status", "{status}");
    assert_eq!(status["params"]["status"], "completed");
    let done = mcp.ask(on_task(5, "tasks/get", &id)).0;
    assert_eq!(done["result"]["status"], "completed");
    let listed = mcp
        .ask(json!({"jsonrpc":"2.0","id":6,"method":"tasks/list"}))
        .0;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id);
    assert_eq!(fake.requests().len(), 1, "one upstream call for the task");
    assert!(!mcp.stderr().contains(PLANTED_KEY));
}

pub fn cancelling_a_working_task_closes_its_upstream_connection() {
    let fake = slow_fake();
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-11-25");
    let mut call = task_call(1, None);
    call["params"]["arguments"]["query"] = "please-hang-forever".into();
    let created = mcp.ask(call).0;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let (cancelled, _) = mcp.ask(on_task(2, "tasks/cancel", &id));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let start = Instant::now();
    while fake.closed().is_empty() {
        assert!(
            start.elapsed() < PATIENCE,
            "the upstream connection stayed open"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let again = mcp.ask(on_task(3, "tasks/cancel", &id)).0;
    assert_eq!(again["error"]["code"], -32602);
    let result = mcp.ask(on_task(4, "tasks/result", &id)).0;
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{result}"
    );
}

pub fn forged_tampered_and_expired_task_ids_are_refused() {
    let fake = slow_fake();
    let dir = temp_dir("tasks");
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).config(&dir, "tasks: {max_ttl_ms: 1000}\n"));
    mcp.initialize("2025-11-25");
    let created = mcp.ask(task_call(1, None)).0;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        created["result"]["task"]["ttl"], 1000,
        "capped by tasks.max_ttl_ms"
    );
    let mut tampered = id.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'a' { b'b' } else { b'a' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (n, bad) in ["786512e2-9e0d-44bd-8f29-789f320fe840", tampered.as_str()]
        .iter()
        .enumerate()
    {
        let r = mcp.ask(on_task(10 + n as u64, "tasks/get", bad)).0;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a task id"));
    }
    thread::sleep(Duration::from_millis(1_300));
    let r = mcp.ask(on_task(20, "tasks/get", &id)).0;
    assert!(
        r["error"]["message"].as_str().unwrap().contains("expired"),
        "{r}"
    );
    // Another process (its own random key) does not accept this process's ids.
    let mut other = Mcp::spawn(Opts::upstream(&fake.url));
    other.initialize("2025-11-25");
    let created = mcp.ask(task_call(30, None)).0;
    let fresh = created["result"]["task"]["taskId"].as_str().unwrap();
    let r = other.ask(on_task(1, "tasks/get", fresh)).0;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a task id"),
        "{r}"
    );
}

pub fn an_http_client_creates_a_task_leaves_and_fetches_the_result_on_another_connection() {
    let fake = slow_fake();
    let mcp = Mcp::spawn(Opts::http(&fake.url));
    let addr = listening(&mcp);
    let version = [("MCP-Protocol-Version", "2025-11-25")];
    let call = task_call(1, None);
    let created = {
        let mut c = HttpConn::open(addr);
        let r = c.post(&call, &version);
        assert_eq!(r.status, 200);
        let m = r.json();
        check_reply("2025-11-25", &call, &m);
        m
    };
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Gone; back later on a new connection.
    let mut c = HttpConn::open(addr);
    let result = on_task(2, "tasks/result", &id);
    let r = c.post(&result, &version);
    let m = r.json();
    check_reply("2025-11-25", &result, &m);
    assert_eq!(answer_of(&m)["used_search"], true);
    let get = on_task(3, "tasks/get", &id);
    let m = c.post(&get, &version).json();
    check_reply("2025-11-25", &get, &m);
    assert_eq!(m["result"]["status"], "completed");
}

pub fn a_modern_client_with_the_extension_polls_its_task_to_the_result() {
    // The call (2 s) outlives the answer window (100 ms) by far, however loaded the
    // machine: it becomes a task.
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &fixture("response-web-search.json")).after(Duration::from_secs(2))
    });
    let yaml = "tasks: {answer_within_ms: 100}\n";
    let mcp = Mcp::spawn(Opts::http(&fake.url).temp_config("modern-task", yaml));
    let addr = listening(&mcp);
    let mut c = HttpConn::open(addr);
    let mut call = modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let post = |c: &mut HttpConn, m: &Value| {
        let headers = modern_headers(m);
        let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let r = c.post(m, &h);
        let reply = r.json();
        check_reply("2026-07-28", m, &reply);
        reply
    };
    let created = post(&mut c, &call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(
        created["result"]["pollIntervalMs"], 250,
        "a young task is polled often"
    );
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let with_ext = |m: Value| {
        let mut m = m;
        m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        m
    };
    let mut get = with_ext(modern(json!(2), "tasks/get", json!({"taskId": id})));
    let start = Instant::now();
    let done = loop {
        let got = post(&mut c, &get);
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working");
        assert!(start.elapsed() < PATIENCE);
        thread::sleep(Duration::from_millis(100));
        get["id"] = (get["id"].as_u64().unwrap() + 1).into();
    };
    let answer: Value = serde_json::from_str(
        done["result"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(answer["used_search"], true);
    let update = with_ext(modern(
        json!(90),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {}}),
    ));
    assert_eq!(post(&mut c, &update)["result"]["resultType"], "complete");
    let cancel = with_ext(modern(json!(91), "tasks/cancel", json!({"taskId": id})));
    assert_eq!(post(&mut c, &cancel)["result"]["resultType"], "complete");
    let bogus = with_ext(modern(
        json!(92),
        "tasks/get",
        json!({"taskId": "task-nope"}),
    ));
    assert_eq!(post(&mut c, &bogus)["error"]["code"], -32602);
    // A task request whose Mcp-Name is not its task id: -32020, HTTP 400.
    let get = with_ext(modern(json!(94), "tasks/get", json!({"taskId": id})));
    let mut headers = modern_headers(&get);
    headers.retain(|(n, _)| *n != "Mcp-Name");
    headers.push(("Mcp-Name", "task-other".to_owned()));
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&get, &h);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Without the extension declared: -32021, HTTP 400.
    let undeclared = modern(json!(93), "tasks/get", json!({"taskId": id}));
    let headers = modern_headers(&undeclared);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&undeclared, &h);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32021))
    );
}

const SHARED_SECRET: &str = "a-shared-secret-for-the-test-instances";

/// Initializes `mcp` at 2025-11-25 and creates one task; its id.
fn created_task(mcp: &mut Mcp) -> String {
    mcp.initialize("2025-11-25");
    let (created, _) = mcp.ask(task_call(1, None));
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned()
}

/// A server on `fake` with background tasks and a shared secret.
fn background_server(fake: &FakeOpenAi, http: bool) -> Mcp {
    let dir = temp_dir("bg");
    let opts = if http {
        Opts::http(&fake.url)
    } else {
        Opts::upstream(&fake.url)
    };
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    Mcp::spawn(
        opts.config(&dir, yaml)
            .env("MCP_TASKS_SECRET", SHARED_SECRET)
            .arg("--debug")
            .keeping(dir),
    )
}

pub fn a_background_task_survives_a_restart_of_the_server() {
    let openai = crate::fake_openai::Background::new(
        &fixture("response-web-search.json"),
        Duration::from_millis(800),
    );
    let fake = openai.serve();
    let mut first = background_server(&fake, false);
    first.initialize("2025-11-25");
    let (created, _) = first.ask(task_call(1, Some(60_000)));
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let post = &fake.requests()[0];
    assert_eq!(
        (post.body["background"].clone(), post.body["store"].clone()),
        (json!(true), json!(true))
    );
    first.close_stdin();
    assert!(first.wait_exit(PATIENCE).success());
    // A new process with the same secret serves the task: it keeps nothing itself.
    let mut second = background_server(&fake, false);
    second.initialize("2025-11-25");
    let started = Instant::now();
    let (result, _) = second.ask(on_task(2, "tasks/result", &id));
    let answer = answer_of(&result);
    assert_eq!(answer["used_search"], true);
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    // Reads are paced: at most one per poll interval (100 ms) while waiting.
    let reads = fake.requests().iter().filter(|r| r.method == "GET").count();
    let most = (started.elapsed().as_millis() / 100) as usize + 2;
    assert!(
        reads >= 1 && reads <= most,
        "{reads} reads in {:?}",
        started.elapsed()
    );
    let (polled, _) = second.ask(on_task(3, "tasks/get", &id));
    assert_eq!(polled["result"]["status"], "completed");
    // A process without the secret refuses the id without asking OpenAI.
    let before = fake.requests().len();
    let mut stranger = Mcp::spawn(
        Opts::upstream(&fake.url).temp_config("bg", "tasks: {openai_background: true}\n"),
    );
    stranger.initialize("2025-11-25");
    let (refused, _) = stranger.ask(on_task(1, "tasks/get", &id));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a task id"),
        "{refused}"
    );
    assert_eq!(fake.requests().len(), before);
    for log in [first.stderr(), second.stderr()] {
        assert!(!log.contains(SHARED_SECRET) && !log.contains(PLANTED_KEY));
    }
}

pub fn cancelling_a_background_task_cancels_the_openai_response() {
    let openai = crate::fake_openai::Background::new(
        &fixture("response-web-search.json"),
        Duration::from_secs(30),
    );
    let fake = openai.serve();
    let mut mcp = background_server(&fake, false);
    let id = created_task(&mut mcp);
    let (cancelled, _) = mcp.ask(on_task(2, "tasks/cancel", &id));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let cancel = fake
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/cancel"))
        .expect("OpenAI was asked to cancel");
    assert_eq!(cancel.method, "POST");
    let (again, _) = mcp.ask(on_task(3, "tasks/get", &id));
    assert_eq!(again["result"]["status"], "cancelled");
}

/// A fake playing one background response whose creation answers `queued` and whose
/// every read answers `read` (status and body).
fn background_ending(read: (u16, Vec<u8>)) -> FakeOpenAi {
    FakeOpenAi::start(move |r, _| {
        if r.method == "POST" {
            Action::json(
                200,
                br#"{"id":"resp_end","object":"response","status":"queued","output":[]}"#,
            )
        } else {
            Action::json(read.0, &read.1)
        }
    })
}

/// Creates a background task on `fake` and fetches its result; the result and the task's
/// last state.
fn background_result(fake: &FakeOpenAi) -> (Value, Value) {
    let mut mcp = background_server(fake, false);
    let id = created_task(&mut mcp);
    let (result, _) = mcp.ask(on_task(2, "tasks/result", &id));
    let (state, _) = mcp.ask(on_task(3, "tasks/get", &id));
    (result, state)
}

pub fn every_way_a_background_response_ends_ends_its_task() {
    let failed = json!({"id":"resp_end","object":"response","status":"failed","output":[],
        "error":{"code":"server_error","message":"The model had an internal failure."}});
    let cut = json!({"id":"resp_end","object":"response","status":"incomplete","output":[],
        "incomplete_details":{"reason":"max_output_tokens"}});
    let gone = br#"{"error":{"message":"No response found with id 'resp_end'.","type":"invalid_request_error","param":null,"code":null}}"#;
    for (read, says) in [
        (
            (200, failed.to_string().into_bytes()),
            "The model had an internal failure.",
        ),
        ((200, cut.to_string().into_bytes()), "cut short"),
        ((404, gone.to_vec()), "no longer has"),
    ] {
        let fake = background_ending(read);
        let (result, state) = background_result(&fake);
        assert_eq!(result["result"]["isError"], true, "{result}");
        let text = result["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(says), "{text}");
        // 2025-11-25: a tool error fails the task, and tasks/get says why.
        assert_eq!(state["result"]["status"], "failed", "{state}");
        let why = state["result"]["statusMessage"]
            .as_str()
            .unwrap_or_default();
        assert!(why.contains(says), "{state}");
        // One read ended it: an ended task is not read again.
        let reads = fake.requests().iter().filter(|r| r.method == "GET").count();
        assert_eq!(reads, 1, "{says}");
    }
}

pub fn background_reads_stay_paced_while_openai_fails() {
    let fake = background_ending((
        500,
        br#"{"error":{"message":"boom","type":"server_error"}}"#.to_vec(),
    ));
    // One retry per read, so the poll that starts a read is answered within a second.
    let dir = temp_dir("bg");
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .config(&dir, yaml)
            .env("MCP_TASKS_SECRET", SHARED_SECRET)
            .env("OPENAI_MAX_RETRIES", "1"),
    );
    let id = created_task(&mut mcp);
    // A client polling as fast as it can for a second and a half.
    let start = Instant::now();
    let mut n = 2;
    while start.elapsed() < Duration::from_millis(1500) {
        let (state, _) = mcp.ask(on_task(n, "tasks/get", &id));
        assert!(
            state["result"]["status"] == "working" || state["error"].is_object(),
            "{state}"
        );
        n += 1;
    }
    let gets: Vec<Instant> = fake
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.at)
        .collect();
    assert!(
        !gets.is_empty() && n > 5,
        "{} polls, {} reads",
        n,
        gets.len()
    );
    // At most one GET per poll interval (100 ms), retries included: never back to back
    // (arrival times at the fake vary by a few ms under load, so half the interval is the
    // bound), and no more than the elapsed time allows.
    for pair in gets.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(50),
            "{:?}",
            pair[1] - pair[0]
        );
    }
    let most = (start.elapsed().as_millis() / 100) as usize + 1;
    assert!(
        gets.len() <= most,
        "{} reads in {:?}",
        gets.len(),
        start.elapsed()
    );
}

pub fn background_creates_take_max_inflight_slots() {
    let openai = crate::fake_openai::Background::new(
        &fixture("response-web-search.json"),
        Duration::from_secs(30),
    );
    let me = openai.clone();
    let fake = FakeOpenAi::start(move |r, _| {
        // A create that takes a while, so that slots fill up.
        let action = me.answer_for(r);
        if r.method == "POST" {
            action.after(Duration::from_millis(50))
        } else {
            action
        }
    });
    let dir = temp_dir("bg-slots");
    let yaml =
        "tasks: {openai_background: true, poll_interval_ms: 100}\nserver: {max_inflight: 4}\n";
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .config(&dir, yaml)
            .env("MCP_TASKS_SECRET", SHARED_SECRET),
    );
    mcp.initialize("2025-11-25");
    for id in 1..=40 {
        mcp.send(&task_call(id, None));
    }
    let mut created = 0;
    for _ in 1..=40 {
        let reply = mcp.recv();
        if reply["result"]["task"]["status"] == "working" {
            created += 1;
        }
    }
    assert_eq!(created, 40);
    assert_eq!(fake.requests().len(), 40);
    assert!(
        fake.max_in_flight() <= 4,
        "{} creates at once",
        fake.max_in_flight()
    );
}

pub fn a_429_with_retry_after_on_a_create_is_honoured() {
    let fake = FakeOpenAi::start(|_, i| {
        if i == 0 {
            Action::json(
                429,
                br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
            )
            .with_header("retry-after", "1")
        } else {
            Action::json(
                200,
                br#"{"id":"resp_1","object":"response","status":"queued","output":[]}"#,
            )
        }
    });
    let mut mcp = background_server(&fake, false);
    mcp.initialize("2025-11-25");
    let (created, _) = mcp.ask(task_call(1, None));
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    let posts = fake.requests();
    assert_eq!(posts.len(), 2);
    let waited = posts[1].at - posts[0].at;
    assert!(waited >= Duration::from_millis(990), "{waited:?}");
}

/// A 2026-07-28 `tools/call` from a client that declares the tasks extension, over stdio.
fn modern_task_call(id: u64) -> Value {
    let mut call = modern(
        json!(id),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    call
}

pub fn a_modern_task_call_answered_within_the_window_gets_its_result_not_a_task() {
    // Upstream answers in 10 ms: the reply is the result, on stdio and over HTTP, with and
    // without the extension declared (the core's tests check that no task is kept).
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &fixture("response-no-search.json")).after(Duration::from_millis(10))
    });
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    for (id, declared) in [(1, true), (2, false)] {
        let mut call = modern_task_call(id);
        if !declared {
            call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        }
        let reply = mcp.request(call.clone());
        check_reply("2026-07-28", &call, &reply);
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
        assert!(reply["result"]["structuredContent"]["answer"].is_string());
    }
    let http = Mcp::spawn(Opts::http(&fake.url));
    let mut c = HttpConn::open(listening(&http));
    let call = modern_task_call(4);
    let headers = modern_headers(&call);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let reply = c.post(&call, &h).json();
    check_reply("2026-07-28", &call, &reply);
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert!(reply["result"]["structuredContent"]["answer"].is_string());
}

pub fn a_modern_task_call_that_outlives_the_window_becomes_a_task_when_it_ends() {
    // Upstream answers in 3 s, the window is 300 ms: a task at 300 ms (not before),
    // then the result in tasks/get. Without the extension the same call waits for its
    // result as always.
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &fixture("response-no-search.json")).after(Duration::from_secs(3))
    });
    let yaml = "tasks: {answer_within_ms: 300}\n";
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).temp_config("window", yaml));
    let sent = Instant::now();
    let created = mcp.request(modern_task_call(1));
    let took = sent.elapsed();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert!(
        took >= Duration::from_millis(300),
        "held for the window: {took:?}"
    );
    assert_eq!(created["result"]["pollIntervalMs"], 250);
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut get = modern_task_call(2);
    get["method"] = json!("tasks/get");
    get["params"] = json!({"taskId": id, "_meta": get["params"]["_meta"].clone()});
    let done = loop {
        let got = mcp.request(get.clone());
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(sent.elapsed() < PATIENCE);
        thread::sleep(Duration::from_millis(
            got["result"]["pollIntervalMs"].as_u64().unwrap(),
        ));
    };
    assert!(done["result"]["result"]["structuredContent"]["answer"].is_string());
    let mut plain = modern_task_call(3);
    plain["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let reply = mcp.request(plain);
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
}

/// OpenAI's answer to a call over quota: a tool error that is never retried.
const QUOTA: &[u8] = br#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;

/// Posts `m` as a 2026-07-28 request with the Tasks extension declared; the reply,
/// checked against the schemas.
fn post_modern_task_request(c: &mut HttpConn, mut m: Value) -> Value {
    m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let headers = modern_headers(&m);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let reply = c.post(&m, &h).json();
    check_reply("2026-07-28", &m, &reply);
    reply
}

/// A 2026-07-28 client's task-augmented call over HTTP, polled with `tasks/get` until
/// it ends; the last `tasks/get` reply.
fn modern_task_to_its_end(mcp: &Mcp) -> Value {
    let mut c = HttpConn::open(listening(mcp));
    let call = modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    );
    let created = post_modern_task_request(&mut c, call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let start = Instant::now();
    for n in 2.. {
        let got =
            post_modern_task_request(&mut c, modern(json!(n), "tasks/get", json!({"taskId": id})));
        if got["result"]["status"] != "working" {
            return got;
        }
        assert!(start.elapsed() < PATIENCE, "the task never ended: {got}");
        thread::sleep(Duration::from_millis(50));
    }
    unreachable!()
}

pub fn a_tool_error_ends_a_task_as_each_era_says() {
    // 2025-11-25, local: failed, the cause in statusMessage, the tool error from
    // tasks/result.
    let fake = FakeOpenAi::start(|_, _| Action::json(429, QUOTA));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url));
    mcp.initialize("2025-11-25");
    let (created, mut notes) = mcp.ask(task_call(1, None));
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (result, more) = mcp.ask(on_task(2, "tasks/result", &id));
    notes.extend(more);
    assert_eq!(result["result"]["isError"], true, "{result}");
    // The status change comes before the tasks/result reply when the task ended first,
    // after it when tasks/result waited for the end.
    let status = match notes
        .into_iter()
        .find(|n| n["method"] == "notifications/tasks/status")
    {
        Some(note) => note,
        None => mcp.recv(),
    };
    assert_eq!(status["method"], "notifications/tasks/status", "{status}");
    assert_eq!(status["params"]["status"], "failed", "{status}");
    let (state, _) = mcp.ask(on_task(3, "tasks/get", &id));
    assert_eq!(state["result"]["status"], "failed", "{state}");
    let why = state["result"]["statusMessage"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("quota"), "{state}");
    // 2026-07-28, local: completed, the tool error as its result. The call outlives the
    // answer window (10 ms) by far, so it becomes a task.
    let slow = FakeOpenAi::start(|_, _| Action::json(429, QUOTA).after(Duration::from_millis(500)));
    let yaml = "tasks: {answer_within_ms: 10}\n";
    let mcp = Mcp::spawn(Opts::http(&slow.url).temp_config("task-end", yaml));
    let done = modern_task_to_its_end(&mcp);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(done["result"].get("statusMessage").is_none(), "{done}");
    assert_eq!(done["result"]["result"]["isError"], true, "{done}");
    // 2026-07-28, backed by OpenAI's background mode: the same.
    let failed = json!({"id":"resp_end","object":"response","status":"failed","output":[],
        "error":{"code":"server_error","message":"The model had an internal failure."}});
    let background = background_ending((200, failed.to_string().into_bytes()));
    let mcp = background_server(&background, true);
    let done = modern_task_to_its_end(&mcp);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["isError"], true, "{done}");
}

pub fn a_completion_window_is_asked_of_openai_and_fits_the_task() {
    let fake = background_ending((
        200,
        br#"{"id":"resp_end","object":"response","status":"in_progress","output":[]}"#.to_vec(),
    ));
    let yaml = "tasks: {openai_background: true, completion_window: 2h}\n";
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .temp_config("window", yaml)
            .env("MCP_TASKS_SECRET", SHARED_SECRET),
    );
    mcp.initialize("2025-11-25");
    let (created, _) = mcp.ask(task_call(1, Some(60_000)));
    let task = &created["result"]["task"];
    // At least the window and an hour; polled every 240th of the window.
    assert_eq!(
        (task["ttl"].as_u64(), task["pollInterval"].as_u64()),
        (Some(3 * 3600 * 1000), Some(30_000)),
        "{created}"
    );
    let post = &fake.requests()[0];
    assert_eq!(
        (
            post.body["background"].clone(),
            post.body["background_options"].clone()
        ),
        (json!(true), json!({"completion_window": "2h"}))
    );
    assert!(post.body.get("service_tier").is_none());
}
