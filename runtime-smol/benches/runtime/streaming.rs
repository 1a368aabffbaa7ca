//! Streamed answers: CPU per call streamed against the same answer read whole, time from
//! an upstream event to its progress notification on stdout, and peak RSS with 1,000
//! streamed calls in flight (against 1,000 calls waiting for a whole reply).

use super::harness::*;
use responses_mcp_testkit::fake_openai::{completed_response, StreamThen};
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

pub fn run() {
    cpu_streamed_vs_whole();
    progress_latency();
    memory_streamed();
}

fn cpu_streamed_vs_whole() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("## Streamed CPU: skipped (valgrind is not installed)\n");
        return;
    }
    const CALLS: u64 = 100;
    println!("## CPU per call, streamed against whole: callgrind, `initialize` + {CALLS} calls, the 87 KB web-search answer\n");
    println!("| binary | whole (baseline) Ir per call | streamed Ir per call | ratio |");
    println!("|---|---|---|---|");
    let stream = fixture("stream-web-search.sse");
    let whole = FakeOpenAi::fixed(200, completed_response(&stream));
    let streaming =
        FakeOpenAi::start(move |_, _| Action::stream(&stream, 16 * 1024, Duration::ZERO));
    for (name, bin) in binaries() {
        let base = callgrind_calls(&bin, &whole.url, "responses: {stream: false}\n", CALLS, &[]);
        let streamed = callgrind_calls(
            &bin,
            &streaming.url,
            "responses: {stream: true}\n",
            CALLS,
            &[],
        );
        println!(
            "| {name} | {} | {} | {:.2} |",
            base / CALLS,
            streamed / CALLS,
            streamed as f64 / base as f64
        );
    }
    println!();
}

/// A loopback server that streams: an event, a pause longer than the progress gap, then
/// the event that starts a web search, whose write time it reports, then the end.
fn pacing_server() -> (String, mpsc::Receiver<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let tx = tx.clone();
            thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                loop {
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                    let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len());
                    let created =
                        "event: response.created\ndata: {\"type\":\"response.created\"}\n\n";
                    let search = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"web_search_call\"}}\n\n";
                    let done = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"model\":\"m\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"ok\"}]}]}}\n\n";
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    let _ = conn.write_all(format!("{head}{}", chunk(created)).as_bytes());
                    thread::sleep(Duration::from_millis(300));
                    let _ = tx.send(Instant::now());
                    let _ = conn.write_all(chunk(search).as_bytes());
                    thread::sleep(Duration::from_millis(20));
                    let _ = conn.write_all(format!("{}0\r\n\r\n", chunk(done)).as_bytes());
                }
            });
        }
    });
    (url, rx)
}

fn progress_latency() {
    const CALLS: u64 = 21;
    println!("## From an upstream event to its progress notification on stdout ({CALLS} streamed calls, sequential)\n");
    println!("| binary | p50 | p90 | max |");
    println!("|---|---|---|---|");
    for (name, bin) in binaries() {
        let (url, written) = pacing_server();
        let mut p = Proc::start(&bin, &url, "responses: {stream: true}\n");
        p.send(INIT);
        p.recv();
        let mut lat = Vec::new();
        for id in 1..=CALLS {
            p.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}},"_meta":{{"progressToken":{id}}}}}}}"#
            ));
            loop {
                let line = p.recv();
                if line.contains("\"searching the web\"") {
                    let seen = Instant::now();
                    let at = written.recv_timeout(Duration::from_secs(10)).unwrap();
                    lat.push(seen.saturating_duration_since(at).as_secs_f64() * 1e3);
                }
                if line.contains("\"result\"") {
                    break;
                }
            }
        }
        let lat = sorted(lat);
        println!(
            "| {name} | {:.3} ms | {:.3} ms | {:.3} ms |",
            percentile(&lat, 0.5),
            percentile(&lat, 0.9),
            lat.last().unwrap()
        );
    }
    println!();
}

fn memory_streamed() {
    println!(
        "## Peak RSS with 1,000 calls in flight, streamed against waiting for a whole reply\n"
    );
    println!("| binary | 1,000 calls waiting (baseline) | 1,000 calls streaming | ratio |");
    println!("|---|---|---|---|");
    let stream = fixture("stream-web-search.sse");
    let first = stream[..4096].to_vec();
    for (name, bin) in binaries() {
        let yaml = "server: {max_inflight: 1000, max_queue: 2000}\nrequest: {timeout_ms: 600000}\nresponses: {stream: true}\n";
        let held = |fake: &FakeOpenAi| {
            let mut p = Proc::start(&bin, &fake.url, yaml);
            p.send(INIT);
            p.recv();
            for id in 1..=1000 {
                p.send(&call(id));
            }
            let seen = fake.wait_requests(1000, Duration::from_secs(60)).len();
            assert_eq!(seen, 1000);
            thread::sleep(Duration::from_millis(500));
            p.peak_rss_kib()
        };
        let waiting = held(&FakeOpenAi::start(|_, _| Action::Hang));
        let first = first.clone();
        let streaming = held(&FakeOpenAi::start(move |_, _| Action::Stream {
            body: first.clone(),
            size: 4096,
            interval: Duration::ZERO,
            then: StreamThen::Hang,
        }));
        println!(
            "| {name} | {:.1} MB | {:.1} MB | {:.2} |",
            waiting as f64 / 1024.0,
            streaming as f64 / 1024.0,
            streaming as f64 / waiting as f64
        );
    }
    println!();
}
