//! Streamable HTTP against stdio, same binary, same run: `tools/list` per second over
//! kept-alive connections at concurrency 1 and 64, `tools/call`s per second through the
//! fake OpenAI, and peak RSS with 1,000 open SSE streams (against 1,000 calls held open
//! over stdio).

use super::harness::*;
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::io::Read;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub fn run() {
    tools_list_rate();
    call_rate();
    sse_memory();
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// A server on a free loopback port, started with `--http` and `yaml`.
pub struct HttpProc {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl HttpProc {
    pub fn start(bin: &Path, base_url: &str, yaml: &str) -> HttpProc {
        HttpProc::start_with(bin, base_url, yaml, &[])
    }

    /// As [`HttpProc::start`], with `env` added to the server's environment.
    pub fn start_with(bin: &Path, base_url: &str, yaml: &str, env: &[(&str, &str)]) -> HttpProc {
        let dir = std::env::temp_dir().join(format!("orm-bench-http-{}", rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), yaml).unwrap();
        let mut child = Command::new(bin)
            .args(["--http", "--listen", "127.0.0.1:0", "--config"])
            .arg(dir.join("config.yaml"))
            .env_clear()
            .env("HOME", &dir)
            .env("OPENAI_API_KEY", "sk-bench")
            .env("OPENAI_BASE_URL", base_url)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .and_then(|l| l.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap();
        // Keep draining stderr so the server never blocks on it.
        thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpProc { child, addr, dir }
    }

    fn peak_rss_kib(&self) -> u64 {
        peak_rss_kib(self.child.id())
    }
}

impl Drop for HttpProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn post(addr: SocketAddr, body: &str, extra: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one `Content-Length` response off `stream`, keeping what follows in `buf`.
pub fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Vec<u8> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .expect("a length");
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                buf.drain(..end + 4 + len);
                return body;
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Requests per second of `total` requests from `concurrency` kept-alive connections,
/// each waiting for its answer before the next.
fn http_rate(addr: SocketAddr, concurrency: usize, total: usize, body: &str) -> f64 {
    let per = total / concurrency;
    let start = Instant::now();
    let handles: Vec<_> = (0..concurrency)
        .map(|_| {
            let body = body.to_owned();
            thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream.set_nodelay(true).unwrap();
                let request = post(addr, &body, "");
                let mut buf = Vec::new();
                for _ in 0..per {
                    stream.write_all(&request).unwrap();
                    let answer = read_response(&mut stream, &mut buf);
                    assert!(answer.windows(8).any(|w| w == b"\"result\""));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    (per * concurrency) as f64 / start.elapsed().as_secs_f64()
}

/// The same over one stdio pipe: `concurrency` requests outstanding at a time.
fn stdio_rate(
    p: &mut Proc,
    concurrency: usize,
    total: usize,
    request: impl Fn(usize) -> String,
) -> f64 {
    let start = Instant::now();
    let mut sent = 0;
    while sent < concurrency.min(total) {
        sent += 1;
        p.send(&request(sent));
    }
    for _ in 0..total {
        let line = p.recv();
        assert!(line.contains("\"result\""), "{line}");
        if sent < total {
            sent += 1;
            p.send(&request(sent));
        }
    }
    total as f64 / start.elapsed().as_secs_f64()
}

fn tools_list_rate() {
    println!("## `tools/list` per second: Streamable HTTP (kept-alive connections) against stdio (one pipe, as many requests outstanding)\n");
    println!(
        "| binary | concurrency | requests | stdio (baseline) req/s | HTTP req/s | HTTP / stdio |"
    );
    println!("|---|---|---|---|---|---|");
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    for (name, bin) in binaries() {
        for (concurrency, total) in [(1usize, 5_000usize), (64, 32_000)] {
            let mut p = Proc::start(&bin, &fake.url, "{}\n");
            p.send(INIT);
            p.recv();
            let list =
                |id: usize| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
            let base = stdio_rate(&mut p, concurrency, total, list);
            drop(p);
            let h = HttpProc::start(&bin, &fake.url, "{}\n");
            let rate = http_rate(h.addr, concurrency, total, LIST);
            println!(
                "| {name} | {concurrency} | {total} | {base:.0} | {rate:.0} | {:.2} |",
                rate / base
            );
        }
    }
    println!();
}

fn call_rate() {
    println!("## `tools/call`s per second through the fake OpenAI (answers at once): HTTP against stdio\n");
    println!(
        "| binary | concurrency | calls | stdio (baseline) calls/s | HTTP calls/s | HTTP / stdio |"
    );
    println!("|---|---|---|---|---|---|");
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {max_inflight: 512, max_queue: 4096}\n";
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}"#;
    for (name, bin) in binaries() {
        for (concurrency, total) in [(1usize, 400usize), (16, 3_200)] {
            let mut p = Proc::start(&bin, &fake.url, yaml);
            p.send(INIT);
            p.recv();
            let base = stdio_rate(&mut p, concurrency, total, |id| call(id as u64));
            drop(p);
            let h = HttpProc::start(&bin, &fake.url, yaml);
            let rate = http_rate(h.addr, concurrency, total, body);
            println!(
                "| {name} | {concurrency} | {total} | {base:.0} | {rate:.0} | {:.2} |",
                rate / base
            );
        }
    }
    println!();
}

fn sse_memory() {
    const STREAMS: usize = 1_000;
    println!("## Peak RSS (VmHWM) with {STREAMS} open SSE streams (calls with a progress token, upstream silent), against {STREAMS} calls held open over stdio\n");
    println!("| binary | idle over HTTP | {STREAMS} calls over stdio (baseline) | {STREAMS} SSE streams | streams / stdio | streams seen |");
    println!("|---|---|---|---|---|---|");
    let yaml = "server: {max_inflight: 1024, max_queue: 4096, http: {max_connections: 2000}}\nrequest: {timeout_ms: 600000}\nresponses: {stream: false}\n";
    for (name, bin) in binaries() {
        let hang = FakeOpenAi::start(|_, _| Action::Hang);
        let mut p = Proc::start(&bin, &hang.url, yaml);
        p.send(INIT);
        p.recv();
        for id in 1..=STREAMS {
            p.send(&call(id as u64));
        }
        hang.wait_requests(STREAMS, Duration::from_secs(60));
        thread::sleep(Duration::from_millis(200));
        let stdio = p.peak_rss_kib();
        drop(p);

        let hang = FakeOpenAi::start(|_, _| Action::Hang);
        let h = HttpProc::start(&bin, &hang.url, yaml);
        thread::sleep(Duration::from_millis(100));
        let idle = h.peak_rss_kib();
        let mut clients: Vec<TcpStream> = (1..=STREAMS)
            .map(|id| {
                let mut s = TcpStream::connect(h.addr).unwrap();
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}},"_meta":{{"progressToken":{id}}}}}}}"#
                );
                s.write_all(&post(h.addr, &body, "")).unwrap();
                s
            })
            .collect();
        hang.wait_requests(STREAMS, Duration::from_secs(60));
        let mut streaming = 0;
        for s in &mut clients {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut head = [0u8; 512];
            let n = s.read(&mut head).unwrap_or(0);
            if String::from_utf8_lossy(&head[..n]).contains("text/event-stream") {
                streaming += 1;
            }
        }
        let held = h.peak_rss_kib();
        println!(
            "| {name} | {:.1} MB | {:.1} MB | {:.1} MB | {:.2} | {streaming} |",
            idle as f64 / 1024.0,
            stdio as f64 / 1024.0,
            held as f64 / 1024.0,
            held as f64 / stdio as f64
        );
        drop(clients);
    }
    println!();
}
