//! `GET /metrics`: the time one scrape takes with 10,000 tasks kept (each counted in the
//! tasks gauge), against a scrape of the same server before any task, same run.

use super::harness::*;
use super::http::{read_response as response, HttpProc};
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn run() {
    const TASKS: u64 = 10_000;
    const SCRAPES: usize = 50;
    println!("## `/metrics` scrape time with {TASKS} tasks kept (median of {SCRAPES} scrapes on one kept-alive connection, loopback)\n");
    println!("| binary | no task (baseline) | {TASKS} tasks kept | ratio | body |");
    println!("|---|---|---|---|---|");
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {max_inflight: 64, max_queue: 20000}\ntasks: {max_tasks: 20000}\n";
    for (name, bin) in binaries() {
        let server = HttpProc::start(&bin, &fake.url, yaml);
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut buf = Vec::new();
        let (empty, _) = scrape_median(&mut stream, &mut buf, server.addr, SCRAPES);
        for id in 1..=TASKS {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}},"task":{{}}}}}}"#
            );
            let request = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
                server.addr,
                body.len()
            );
            stream.write_all(request.as_bytes()).unwrap();
            let answer = response(&mut stream, &mut buf);
            assert!(
                answer.windows(6).any(|w| w == b"taskId"),
                "{}",
                String::from_utf8_lossy(&answer)
            );
        }
        let (kept, size) = scrape_median(&mut stream, &mut buf, server.addr, SCRAPES);
        println!(
            "| {name} | {:.3} ms | {:.3} ms | {:.2} | {size} B |",
            empty.as_secs_f64() * 1e3,
            kept.as_secs_f64() * 1e3,
            kept.as_secs_f64() / empty.as_secs_f64()
        );
    }
    println!();
}

/// The median time of `n` scrapes, and the size of the last body.
fn scrape_median(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    addr: std::net::SocketAddr,
    n: usize,
) -> (Duration, usize) {
    let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut times = Vec::with_capacity(n);
    let mut size = 0;
    for _ in 0..n {
        let start = Instant::now();
        stream.write_all(request.as_bytes()).unwrap();
        let body = response(stream, buf);
        times.push(start.elapsed());
        assert!(
            body.starts_with(b"# HELP"),
            "{}",
            String::from_utf8_lossy(&body)
        );
        size = body.len();
    }
    times.sort();
    (times[n / 2], size)
}
