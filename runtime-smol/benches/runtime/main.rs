//! End-to-end benchmarks of both binaries over real pipes against a loopback fake OpenAI:
//! startup, memory, calls held open, and per-call overhead.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p openai-responses-mcp --bench runtime`
//! (`BENCH_ONLY=startup|memory|held|overhead|tls|cpu|stream|http|tasks|scrape|builds|starts|inspector|store|oauth|traces` runs one part; `BENCH_BIN_DIR` measures
//! other builds; `BENCH_BASELINE_DIR` adds another build as the baseline of the cpu and held parts;
//! `BENCH_STATIC_DIRS=name=dir,...` compares static builds, e.g. with other allocators, in `builds`)
//! (`cargo bench --workspace` runs it together with the core benchmarks).
//! Every figure is a median (or a percentile) of several runs, next to a baseline measured
//! in the same run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    dead_code
)]

mod builds;
mod harness;
mod held;
mod http;
mod inspector;
mod oauth;
mod scrape;
mod starts;
mod store;
mod streaming;
mod tasks;
mod traces;

use harness::*;
use held::held_calls_rss_kib;
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

/// Process start to the first reply (`initialize`, then `server/discover`), against `cat`
/// echoing the same line.
fn startup() {
    for (what, line) in [("initialize", INIT), ("server/discover", DISCOVER)] {
        startup_to(what, line);
    }
}

fn startup_to(what: &str, request: &str) {
    println!("## Startup: process start to the `{what}` reply (median of 41)\n");
    println!("| program | median | p90 | ratio to `cat` |");
    println!("|---|---|---|---|");
    // An upstream that accepts and never answers: with a key set, the server's model
    // lookup at startup hangs on it (the row "lookup hanging").
    let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hanging_url = format!("http://{}/v1", hanging.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in hanging.incoming() {
            held.extend(stream.ok());
        }
    });
    let measure_with = |program: &Path, args: &[&str], env: &[(&str, &str)]| {
        let times: Vec<f64> = (0..41)
            .map(|_| {
                let t = Instant::now();
                let mut child = Command::new(program)
                    .args(args)
                    .env_clear()
                    .envs(env.iter().copied())
                    .env("HOME", "/nonexistent")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                let mut stdin = child.stdin.take().unwrap();
                writeln!(stdin, "{request}").unwrap();
                let mut line = String::new();
                BufReader::new(child.stdout.take().unwrap())
                    .read_line(&mut line)
                    .unwrap();
                let elapsed = t.elapsed().as_secs_f64() * 1e3;
                drop(stdin);
                let _ = child.wait();
                assert!(!line.is_empty());
                elapsed
            })
            .collect();
        sorted(times)
    };
    let measure = |program: &Path, args: &[&str]| measure_with(program, args, &[]);
    let cat = measure(Path::new("cat"), &[]);
    let base = percentile(&cat, 0.5);
    println!(
        "| `cat` (baseline) | {:.2} ms | {:.2} ms | 1.00 |",
        base,
        percentile(&cat, 0.9)
    );
    // With a key the server looks its model up after the first reply: against an upstream
    // that never answers, and (the baseline: today's behaviour with a key) not at all.
    let looking = [
        ("OPENAI_API_KEY", "sk-bench-0123456789"),
        ("OPENAI_BASE_URL", hanging_url.as_str()),
    ];
    let not_looking = [
        ("OPENAI_API_KEY", "sk-bench-0123456789"),
        ("OPENAI_BASE_URL", hanging_url.as_str()),
        ("OPENAI_MODEL_LOOKUPS", "false"),
    ];
    let rows = [
        ("", &[][..]),
        (", key, no lookup", &not_looking[..]),
        (", key, lookup hanging", &looking[..]),
    ];
    for (name, bin) in binaries() {
        for (row, env) in rows {
            let t = measure_with(&bin, &["--stdio"], env);
            println!(
                "| {name}{row} | {:.2} ms | {:.2} ms | {:.2} |",
                percentile(&t, 0.5),
                percentile(&t, 0.9),
                percentile(&t, 0.5) / base
            );
        }
    }
    println!();
}

/// Peak RSS for initialize + tools/list + one call, and with 1,000 calls held open.
fn memory() {
    println!("## Memory (peak RSS, VmHWM)\n");
    println!("| binary | initialize + tools/list + 1 call | 1,000 calls held open | calls the fake saw open |");
    println!("|---|---|---|---|");
    for (name, bin) in binaries() {
        let small = short_session_rss_kib(&bin);
        let (held, seen) = held_calls_rss_kib(&bin);
        println!(
            "| {name} | {:.1} MB | {:.1} MB | {seen} |",
            small as f64 / 1024.0,
            held as f64 / 1024.0
        );
    }
    println!();
}

/// What keep-alive saves over TLS: the first call (TCP connect plus TLS handshake) against
/// the calls after it on the same connection, sequential, loopback fake with a test CA.
fn tls_reuse() {
    println!("## TLS keep-alive: first call against later calls (sequential)\n");
    println!("| binary | first call | later calls p50 | ratio | TLS connections for 41 calls |");
    println!("|---|---|---|---|---|");
    for (name, bin) in binaries() {
        let body = fixture("response-no-search.json");
        let (fake, ca_pem) = FakeOpenAi::start_tls(move |_, _| Action::json(200, &body));
        let ca = std::env::temp_dir().join(format!("orm-bench-ca-{}.pem", rand_suffix()));
        std::fs::write(&ca, ca_pem).unwrap();
        let ca_path = ca.to_str().unwrap().to_owned();
        let mut p = Proc::start_with(&bin, &fake.url, "{}\n", &[("SSL_CERT_FILE", &ca_path)]);
        p.send(INIT);
        p.recv();
        let mut times = Vec::new();
        for id in 1..=41 {
            let t = Instant::now();
            p.send(&call(id));
            let line = p.recv();
            assert!(line.contains("\"result\""), "{line}");
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let first = times[0];
        let later = percentile(&sorted(times[1..].to_vec()), 0.5);
        println!(
            "| {name} | {first:.3} ms | {later:.3} ms | {:.2} | {} |",
            first / later,
            fake.connections()
        );
        let _ = std::fs::remove_file(ca);
    }
    println!();
}

/// Per-call latency and throughput through the server, against the same HTTP client
/// calling the fake directly (the baseline: everything but the MCP server).
fn overhead() {
    println!("## Per-call overhead against a fake OpenAI that answers at once\n");
    println!("| binary | concurrency | calls | p50 | p99 | calls/s | baseline p50 | baseline p99 | baseline calls/s | added p50 | added p99 | throughput ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let body = fixture("response-no-search.json");
    for (concurrency, total) in [(1usize, 400usize), (16, 3200), (256, 5120)] {
        let fake = FakeOpenAi::fixed(200, body.clone());
        let (base_lat, base_rate) = direct(&fake.url, concurrency, total);
        for (name, bin) in binaries() {
            let yaml = "server: {max_inflight: 512, max_queue: 4096}\n";
            let mut p = Proc::start(&bin, &fake.url, yaml);
            p.send(INIT);
            p.recv();
            let sent_at: Arc<Mutex<Vec<Option<Instant>>>> =
                Arc::new(Mutex::new(vec![None; total + 1]));
            let start = Instant::now();
            let mut next = 1;
            let mut latencies = Vec::with_capacity(total);
            while next <= concurrency.min(total) {
                sent_at.lock().unwrap()[next] = Some(Instant::now());
                p.send(&call(next as u64));
                next += 1;
            }
            for _ in 0..total {
                let line = p.recv();
                let id = line
                    .split("\"id\":")
                    .nth(1)
                    .and_then(|r| r.split(',').next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap();
                assert!(line.contains("\"result\""), "{line}");
                latencies.push(sent_at.lock().unwrap()[id].unwrap().elapsed().as_secs_f64() * 1e3);
                if next <= total {
                    sent_at.lock().unwrap()[next] = Some(Instant::now());
                    p.send(&call(next as u64));
                    next += 1;
                }
            }
            let rate = total as f64 / start.elapsed().as_secs_f64();
            let lat = sorted(latencies);
            let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
            let (b50, b99) = (percentile(&base_lat, 0.5), percentile(&base_lat, 0.99));
            println!(
                "| {name} | {concurrency} | {total} | {p50:.3} ms | {p99:.3} ms | {rate:.0} | {b50:.3} ms | {b99:.3} ms | {base_rate:.0} | {:.3} ms | {:.3} ms | {:.2} |",
                p50 - b50,
                p99 - b99,
                rate / base_rate
            );
        }
    }
    println!();
}

/// The baseline: `concurrency` threads calling the fake directly with ureq (one agent per
/// thread, keep-alive, as a thread-per-call client does) and parsing the JSON.
fn direct(base_url: &str, concurrency: usize, total: usize) -> (Vec<f64>, f64) {
    let body = br#"{"model":"gpt-5-mini","input":"q","tools":[{"type":"web_search"}]}"#.to_vec();
    let url = format!("{base_url}/responses");
    let per_thread = total / concurrency;
    let start = Instant::now();
    let handles: Vec<_> = (0..concurrency)
        .map(|_| {
            let (url, body) = (url.clone(), body.clone());
            thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .proxy(None)
                    .build()
                    .into();
                let mut lat = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t0 = Instant::now();
                    let mut reply = agent
                        .post(&url)
                        .header("Content-Type", "application/json")
                        .send(&body[..])
                        .unwrap();
                    let bytes = reply.body_mut().read_to_vec().unwrap();
                    // Parse it, as the server does.
                    let _: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                    lat.push(t0.elapsed().as_secs_f64() * 1e3);
                }
                lat
            })
        })
        .collect();
    let lat: Vec<f64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let rate = (per_thread * concurrency) as f64 / start.elapsed().as_secs_f64();
    (sorted(lat), rate)
}

/// Instructions per call under callgrind: `initialize` then 300 sequential `tools/call`
/// against the fake (1.6 KB answer), for each binary and, with `BENCH_BASELINE_DIR`, for
/// the binaries there (a build of another commit), with the ratio to them.
fn cpu() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("## CPU per call: skipped (valgrind is not installed)\n");
        return;
    }
    const CALLS: u64 = 300;
    println!("## CPU per call: callgrind instructions, `initialize` + {CALLS} `tools/call`\n");
    println!("| binary | build | total Ir | Ir per call | ratio to baseline |");
    println!("|---|---|---|---|---|");
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let measure = |bin: &Path| callgrind_calls(bin, &fake.url, "{}\n", CALLS, &[]);
    let baseline_dir = std::env::var_os("BENCH_BASELINE_DIR").map(PathBuf::from);
    for (name, bin) in binaries() {
        let ir = measure(&bin);
        let base = baseline_dir
            .as_ref()
            .map(|d| d.join(bin.file_name().unwrap()))
            .filter(|b| b.exists())
            .map(|b| measure(&b));
        if let Some(base) = base {
            println!("| {name} | baseline | {base} | {} | 1.00 |", base / CALLS);
        }
        let ratio = base.map_or("-".to_owned(), |b| format!("{:.3}", ir as f64 / b as f64));
        println!("| {name} | this | {ir} | {} | {ratio} |", ir / CALLS);
    }
    println!();
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "startup" {
        startup();
    }
    if only.is_empty() || only == "memory" {
        memory();
    }
    if only.is_empty() || only == "held" {
        held::run();
    }
    if only.is_empty() || only == "overhead" {
        overhead();
    }
    if only.is_empty() || only == "tls" {
        tls_reuse();
    }
    if only.is_empty() || only == "cpu" {
        cpu();
    }
    if only.is_empty() || only == "stream" {
        streaming::run();
    }
    if only.is_empty() || only == "http" {
        http::run();
    }
    if only.is_empty() || only == "tasks" {
        tasks::run();
    }
    if only.is_empty() || only == "scrape" {
        scrape::run();
    }
    if only.is_empty() || only == "builds" {
        builds::run();
    }
    if only.is_empty() || only == "starts" {
        starts::run();
    }
    if only.is_empty() || only == "inspector" {
        inspector::run();
    }
    if only.is_empty() || only == "store" {
        store::run();
    }
    if only.is_empty() || only == "oauth" {
        oauth::run();
    }
    if only.is_empty() || only == "traces" {
        traces::run();
    }
}
