//! The cost of sharing limits through a store: the same server with and without
//! `server.store.url` (a Redis started here on a loopback port), same run. Per call, the
//! median time of 300 `tools/call`s in a row on one kept-alive connection (the reserve
//! before the call and the spend after it); then 200 calls at once, one connection and
//! thread each (all started beforehand), until the last answer: the median of 7 bursts. Then how long a cancel takes to stop the upstream request: sent
//! to the instance running the call (the baseline), and sent to another instance, which
//! passes it on through the store's channel.

use super::harness::*;
use super::http::{read_response, HttpProc};
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Instances on a store share the secret that seals task ids (they refuse to start without).
const SHARED_SECRET: &[(&str, &str)] = &[("MCP_TASKS_SECRET", "bench-secret-0123456789abcdef")];

const IN_A_ROW: usize = 300;
const AT_ONCE: usize = 200;
const CANCELS: usize = 30;
/// Bursts of 200 calls per server: the median is reported (one burst on two cores is
/// mostly the scheduler's noise).
const BURSTS: usize = 7;

pub fn run() {
    let Some(redis) = Redis::start() else {
        println!("## Shared store: skipped (redis-server is not installed)\n");
        return;
    };
    let mut body: serde_json::Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
    // A priced model, so that every call also adds its spend.
    body["model"] = "gpt-6.1-terra".into();
    let fake = FakeOpenAi::fixed(200, body.to_string().into_bytes());
    let limits = "server: {max_inflight: 256, max_queue: 1024, limits: {calls_per_minute: 1000000, spend_per_day_usd: 100000}}\n";
    let with_store = format!(
        "server: {{max_inflight: 256, max_queue: 1024, limits: {{calls_per_minute: 1000000, spend_per_day_usd: 100000}}, store: {{url: \"redis://127.0.0.1:{}/0\"}}}}\n",
        redis.port
    );
    println!(
        "## Shared store: per-call overhead and 200 calls at once (loopback Redis {})\n",
        redis.version
    );
    println!("| binary | p50 per call, no store | with the store | overhead | {AT_ONCE} at once, no store | with the store | ratio |");
    println!("|---|---|---|---|---|---|---|");
    for (name, bin) in binaries() {
        let (alone, alone_burst) = measure(&bin, &fake.url, limits);
        let (shared, shared_burst) = measure(&bin, &fake.url, &with_store);
        println!(
            "| {name} | {:.3} ms | {:.3} ms | {:+.3} ms | {:.1} ms | {:.1} ms | {:.2} |",
            alone * 1e3,
            shared * 1e3,
            (shared - alone) * 1e3,
            alone_burst * 1e3,
            shared_burst * 1e3,
            shared_burst / alone_burst
        );
    }
    println!();
    println!("### A cancel, from the POST to the upstream connection closing ({CANCELS} each)\n");
    println!(
        "| binary | same instance p50 | max | from another instance p50 | max | ratio of p50s |"
    );
    println!("|---|---|---|---|---|---|");
    let hang = FakeOpenAi::start(|_, _| Action::Hang);
    for (name, bin) in binaries() {
        let a = HttpProc::start_with(&bin, &hang.url, &with_store, SHARED_SECRET);
        let b = HttpProc::start_with(&bin, &hang.url, &with_store, SHARED_SECRET);
        let local = cancels(&hang, a.addr, a.addr);
        let across = cancels(&hang, a.addr, b.addr);
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} |",
            percentile(&local, 0.5) * 1e3,
            local.last().copied().unwrap_or_default() * 1e3,
            percentile(&across, 0.5) * 1e3,
            across.last().copied().unwrap_or_default() * 1e3,
            percentile(&across, 0.5) / percentile(&local, 0.5)
        );
    }
    println!();
}

/// Seconds from POSTing `notifications/cancelled` to `cancel_at` until `fake` sees the
/// upstream connection of a call running on `runs_at` close, sorted.
fn cancels(fake: &FakeOpenAi, runs_at: SocketAddr, cancel_at: SocketAddr) -> Vec<f64> {
    let mut control = TcpStream::connect(cancel_at).unwrap();
    let mut buf = Vec::new();
    let mut times = Vec::with_capacity(CANCELS);
    for n in 0..CANCELS {
        let id = 100_000 + n;
        let (requests, closed) = (fake.requests().len(), fake.closed().len());
        let mut calling = TcpStream::connect(runs_at).unwrap();
        calling.write_all(&call(runs_at, id)).unwrap();
        fake.wait_requests(requests + 1, Duration::from_secs(10));
        let body = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        );
        let post = format!(
            "POST /mcp HTTP/1.1\r\nHost: {cancel_at}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let sent = Instant::now();
        control.write_all(post.as_bytes()).unwrap();
        let start = Instant::now();
        let at = loop {
            if let Some((_, at)) = fake.closed().get(closed) {
                break *at;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the cancel never arrived"
            );
            thread::sleep(Duration::from_micros(200));
        };
        read_response(&mut control, &mut buf);
        times.push(at.saturating_duration_since(sent).as_secs_f64());
    }
    sorted(times)
}

/// The median seconds per call in a row, and the seconds for calls at once.
fn measure(bin: &Path, base_url: &str, yaml: &str) -> (f64, f64) {
    let server = HttpProc::start_with(bin, base_url, yaml, SHARED_SECRET);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut buf = Vec::new();
    let mut times = Vec::with_capacity(IN_A_ROW);
    for id in 0..IN_A_ROW + 20 {
        let start = Instant::now();
        stream.write_all(&call(server.addr, id)).unwrap();
        let answer = read_response(&mut stream, &mut buf);
        assert!(
            answer.windows(17).any(|w| w == b"structuredContent"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        // The first 20 warm the connection to the fake and the store.
        if id >= 20 {
            times.push(start.elapsed().as_secs_f64());
        }
    }
    let p50 = percentile(&sorted(times), 0.5);
    let bursts: Vec<f64> = (0..BURSTS).map(|b| burst(server.addr, b)).collect();
    (p50, percentile(&sorted(bursts), 0.5))
}

/// Seconds from releasing 200 calls at once, each on its own connection opened and
/// thread started beforehand, to the last answer.
fn burst(addr: SocketAddr, number: usize) -> f64 {
    // Connected first: 200 connects at once overflow the listen backlog, and a dropped
    // SYN is retried after a second, which would measure the kernel, not the server.
    let streams: Vec<TcpStream> = (0..AT_ONCE)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let go = std::sync::Arc::new(std::sync::Barrier::new(AT_ONCE + 1));
    let handles: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(i, mut stream)| {
            let go = std::sync::Arc::clone(&go);
            let request = call(addr, number * 1_000 + i);
            thread::spawn(move || {
                go.wait();
                stream.write_all(&request).unwrap();
                let mut buf = Vec::new();
                let answer = read_response(&mut stream, &mut buf);
                assert!(answer.windows(17).any(|w| w == b"structuredContent"));
                Instant::now()
            })
        })
        .collect();
    go.wait();
    let start = Instant::now();
    let last = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .max()
        .unwrap_or(start);
    last.saturating_duration_since(start).as_secs_f64()
}

fn call(addr: SocketAddr, id: usize) -> Vec<u8> {
    call_as(addr, id, None)
}

/// A `tools/call` of `answer` with request id `id`, with `Authorization: Bearer <token>`
/// when there is a token.
pub(super) fn call_as(addr: SocketAddr, id: usize, token: Option<&str>) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}}}}}}"#
    );
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n{auth}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A Redis on a free loopback port, keeping nothing on disk.
struct Redis {
    child: Child,
    port: u16,
    version: String,
}

impl Redis {
    fn start() -> Option<Redis> {
        let version = Command::new("redis-server")
            .arg("--version")
            .output()
            .ok()?;
        let version = String::from_utf8_lossy(&version.stdout)
            .split_whitespace()
            .find_map(|w| w.strip_prefix("v="))
            .unwrap_or("?")
            .to_owned();
        let port = TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .ok()?;
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            thread::sleep(Duration::from_millis(10));
        }
        Some(Redis {
            child,
            port,
            version,
        })
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
