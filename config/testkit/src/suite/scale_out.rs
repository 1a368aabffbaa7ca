//! Stateless means any instance serves any request: two instances behind nginx (the
//! Debian package; `.ci/run` installs it), and a client whose requests nginx alternates
//! between them, including a legacy `initialize` on one and the calls after it on the
//! other, with progress streamed through the proxy.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, post_bytes, HttpConn};
use crate::*;
use std::net::SocketAddr;
use std::path::Path;

/// nginx in the foreground, as this user, proxying `port` to `backends` the way
/// docs/deployment.md says (HTTP/1.1 upstream keep-alive, no buffering for SSE).
pub(crate) struct Nginx {
    child: std::process::Child,
    /// Its configuration, removed after it ends.
    _dir: TempDir,
}

impl Nginx {
    pub(crate) fn start(binary: &Path, port: u16, backends: &[SocketAddr]) -> Nginx {
        let dir = temp_dir("nginx");
        let servers: String = backends
            .iter()
            .map(|b| format!("        server {b};\n"))
            .collect();
        let d = dir.display();
        let conf = format!(
            "daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream mcp {{
{servers}        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new(binary)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start nginx");
        Nginx { child, _dir: dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn two_instances_behind_nginx_serve_one_client_alternately() {
    let Some(binary) = system_program("nginx") else {
        return;
    };
    // Each instance has its own upstream, so the requests each served can be counted.
    let slow = || {
        FakeOpenAi::start(|_, _| {
            Action::json(200, &fixture("response-web-search.json"))
                .after(Duration::from_millis(400))
        })
    };
    let (fake_a, fake_b) = (slow(), slow());
    let yaml = "server: {progress_interval_ms: 100}\n";
    let a = Mcp::spawn(Opts::http(&fake_a.url).temp_config("a", yaml));
    let b = Mcp::spawn(Opts::http(&fake_b.url).temp_config("b", yaml));
    let backends = [listening(&a), listening(&b)];
    let port = free_port();
    let _nginx = Nginx::start(&binary, port, &backends);
    let proxy: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let start = Instant::now();
    let mut c = loop {
        if let Ok(stream) = std::net::TcpStream::connect(proxy) {
            drop(stream);
            break HttpConn::open(proxy);
        }
        assert!(start.elapsed() < PATIENCE, "nginx did not start");
        thread::sleep(Duration::from_millis(20));
    };
    // A legacy client: initialize lands on one instance, everything after may land on
    // the other, and nothing needs a session.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}});
    let r = c.post(&init, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    for id in 1..=4u64 {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"answer","arguments":{"query":"q"},"_meta":{"progressToken":id}}});
        c.send_raw(&post_bytes(
            proxy,
            &call,
            &[("MCP-Protocol-Version", "2025-11-25")],
        ));
        let r = c.response();
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        let messages = r.messages();
        let (reply, progress) = messages.split_last().unwrap();
        assert!(!progress.is_empty(), "progress comes through the proxy");
        check_reply("2025-11-25", &call, reply);
        assert_eq!(answer_of(reply)["used_search"], true);
    }
    // nginx alternated: each instance answered calls.
    let (served_a, served_b) = (fake_a.requests().len(), fake_b.requests().len());
    assert_eq!(served_a + served_b, 4);
    assert!(
        served_a >= 1 && served_b >= 1,
        "both instances served calls: {served_a} and {served_b}"
    );
}

pub fn a_background_task_created_on_one_instance_is_fetched_from_the_other() {
    let Some(binary) = system_program("nginx") else {
        return;
    };
    let openai = crate::fake_openai::Background::new(
        &fixture("response-web-search.json"),
        Duration::from_millis(600),
    );
    let fake = openai.serve();
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let spawn = || {
        Mcp::spawn(
            Opts::http(&fake.url)
                .temp_config("bg-scale", yaml)
                .env("MCP_TASKS_SECRET", "one-secret-for-every-instance-0123")
                .arg("--debug"),
        )
    };
    let (a, b) = (spawn(), spawn());
    let port = free_port();
    let _nginx = Nginx::start(&binary, port, &[listening(&a), listening(&b)]);
    let proxy: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let start = Instant::now();
    while std::net::TcpStream::connect(proxy).is_err() {
        assert!(start.elapsed() < PATIENCE, "nginx did not start");
        thread::sleep(Duration::from_millis(20));
    }
    let version = [("MCP-Protocol-Version", "2025-11-25")];
    let mut c = HttpConn::open(proxy);
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}});
    let created = c.post(&call, &version).json();
    check_reply("2025-11-25", &call, &created);
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Round robin: the next requests go to the other instance, then back.
    let result = json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":id}});
    let fetched = c.post(&result, &version).json();
    check_reply("2025-11-25", &result, &fetched);
    assert_eq!(answer_of(&fetched)["used_search"], true);
    let get = json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":id}});
    let polled = c.post(&get, &version).json();
    assert_eq!(polled["result"]["status"], "completed");
    // One instance created it; the other read it from OpenAI.
    thread::sleep(Duration::from_millis(100));
    let (log_a, log_b) = (a.stderr(), b.stderr());
    let created_on = |log: &str| log.contains("background task created");
    let read_on = |log: &str| log.contains("reading background response");
    assert!(
        (created_on(&log_a) && read_on(&log_b)) || (created_on(&log_b) && read_on(&log_a)),
        "created on one, read on the other:\n--- a\n{log_a}\n--- b\n{log_b}"
    );
}
