//! Many instances, one service: two instances sharing their limits through a real Redis
//! (Debian's `redis-server`, which `.ci/test` installs) on a loopback port, a fresh one
//! per test, without persistence. A client's calls per minute hold whichever instance
//! gets the call; Redis stopped, calls are refused naming the store and `/ready` says so;
//! Redis started again, the instances serve again without a restart.

use super::observability::answered as priced_answer;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;
use std::path::PathBuf;

const CI_TOKEN: &str = "PLANTED-store-ci-token-0123456789";

/// A Redis on `port`, in the foreground, keeping nothing on disk; killed on drop.
struct Redis {
    child: std::process::Child,
    dir: PathBuf,
}

impl Redis {
    fn start(binary: &std::path::Path, port: u16) -> Redis {
        let dir = temp_dir("redis");
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start redis-server");
        let redis = Redis { child, dir };
        // Ready once it answers PING.
        let start = Instant::now();
        loop {
            if ping(port) {
                return redis;
            }
            assert!(start.elapsed() < PATIENCE, "redis-server did not start");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a Redis on `port` answers `PING` (inline command, RESP reply).
fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && matches!(s.read(&mut buf), Ok(n) if buf[..n].starts_with(b"+PONG"))
}

/// Calls `answer` as client ci on `c`; the reply.
fn call(c: &mut HttpConn, id: u64) -> Value {
    let auth = format!("Bearer {CI_TOKEN}");
    let h = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    let m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}});
    c.post(&m, &h).json()
}

pub fn two_instances_share_limits_through_redis_and_outlive_its_outage() {
    let Some(binary) = system_program("redis-server") else {
        return;
    };
    let port = free_port();
    let redis = Redis::start(&binary, port);
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let clients = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 2\n",
        sha256_hex(CI_TOKEN)
    );
    let config = format!(
        "server: {{http: {{clients_file: clients.yaml}}, store: {{url: \"redis://127.0.0.1:{port}/0\"}}}}\n"
    );
    // Both instances' wall clocks frozen in one minute: the test never crosses one.
    let instance = |name: &str| {
        let dir = temp_dir(name);
        std::fs::write(dir.join("clients.yaml"), &clients).unwrap();
        let opts = Opts::http(&fake.url).config(&dir, &config);
        opts.frozen_clock("2026-11-26 23:58:10")
    };
    let (Some((a_opts, _a_clock)), Some((b_opts, _b_clock))) = (instance("a"), instance("b"))
    else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let (a, b) = (Mcp::spawn(a_opts), Mcp::spawn(b_opts));
    let (mut ca, mut cb) = (HttpConn::open(listening(&a)), HttpConn::open(listening(&b)));

    // Two calls per minute for ci, whichever instance takes them.
    for (c, id) in [(&mut ca, 1), (&mut cb, 2)] {
        let r = call(c, id);
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    for (c, id) in [(&mut ca, 3), (&mut cb, 4)] {
        let r = call(c, id);
        let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(
            (&details["refusal"], &details["scope"]),
            (&json!("limit_calls_per_minute"), &json!("client")),
            "{r}"
        );
    }
    assert_eq!(fake.requests().len(), 2, "refused calls never reach OpenAI");

    // The store goes away: calls are refused naming it, and /ready says so.
    drop(redis);
    let r = call(&mut ca, 5);
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("could not reach the store"), "{r}");
    let ready = ca.get("/ready");
    assert_eq!(ready.status, 503);
    assert!(
        String::from_utf8_lossy(&ready.body).contains("store unreachable"),
        "{}",
        String::from_utf8_lossy(&ready.body)
    );
    assert_eq!(fake.requests().len(), 2);

    // It comes back (empty: no persistence): served again, without a restart.
    let _redis = Redis::start(&binary, port);
    let start = Instant::now();
    while ca.get("/ready").status != 200 {
        assert!(
            start.elapsed() < PATIENCE,
            "instance a never saw the store again"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let r = call(&mut ca, 6);
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    let r = call(&mut cb, 7);
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    for log in [a.stderr(), b.stderr()] {
        assert!(!log.contains(CI_TOKEN) && !log.contains(PLANTED_KEY));
    }
}

/// The store's password is never shown: not by `--show-config` (the URL's password is
/// `****`), not in the error a wrong URL gets; and a `rediss://` URL is refused saying
/// what to do instead.
pub fn the_store_password_is_never_shown_and_a_bad_url_says_why() {
    const SECRET: &str = "PLANTED-store-password-0123";
    let url = format!("redis://app:{SECRET}@127.0.0.1:6390/0");
    let out = super::config::run(&["--show-config"], &[("MCP_STORE_URL", &url)]);
    // --show-config writes to stderr (stdout carries MCP frames only).
    let shown = String::from_utf8_lossy(&out.stderr);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    assert!(out.status.success(), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(
        shown.contains("redis://app:****@127.0.0.1:6390/0"),
        "{shown}"
    );
    for (url, says) in [
        (
            format!("rediss://:{SECRET}@store:6380"),
            "rediss:// is not supported yet",
        ),
        (format!("redis://:{SECRET}@store:notaport"), "redis://"),
    ] {
        let out = super::config::run(&["--stdio"], &[("MCP_STORE_URL", &url)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("server.store.url"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains(SECRET), "{stderr}");
    }
}
