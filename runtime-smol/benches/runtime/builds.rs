//! The static (musl) builds against the glibc builds of the same commit: the process's
//! own CPU time (user + system, from `wait4`) for sequential streamed calls, measured
//! from outside as a host would see it, then peak RSS and size. Callgrind counts
//! instructions and misses what the allocator costs in system calls and page faults,
//! which is where musl differs.
//!
//! `BENCH_ONLY=builds`; the static binaries are read from `BENCH_STATIC_DIR` (default
//! `target/x86_64-unknown-linux-musl/release`, as `packaging/verify.sh` builds them), or
//! from several folders side by side with `BENCH_STATIC_DIRS=name=dir,name=dir` (the same
//! commit built with other global allocators, say). The glibc builds are the baseline.

use super::harness::*;
use super::held::held_calls_rss_kib;
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const CALLS: u64 = 200;
const RUNS: usize = 5;

/// The static builds to measure: a name and a folder each.
fn static_dirs() -> Vec<(String, PathBuf)> {
    if let Ok(list) = std::env::var("BENCH_STATIC_DIRS") {
        return list
            .split(',')
            .filter_map(|item| item.split_once('='))
            .map(|(name, dir)| (name.to_owned(), PathBuf::from(dir)))
            .collect();
    }
    let dir = std::env::var_os("BENCH_STATIC_DIR").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/x86_64-unknown-linux-musl/release")
        },
        PathBuf::from,
    );
    vec![("static".to_owned(), dir)]
}

pub fn run() {
    let statics = static_dirs();
    cpu(&statics);
    memory_and_size(&statics);
}

fn cpu(statics: &[(String, PathBuf)]) {
    let stream = fixture("stream-web-search.sse");
    let upstreams = [
        ("whole chunks of 16 KiB", 16 * 1024),
        ("one small chunk per write (256 B)", 256),
    ];
    println!("## CPU per streamed call, static (musl) against glibc builds\n");
    println!(
        "User + system CPU of the server process for `initialize` + {CALLS} sequential streamed \
         calls (the 87 KB web-search answer), median of {RUNS} interleaved runs per build, per \
         call.\n"
    );
    println!("| binary | upstream | build | glibc (baseline) | static | ratio |");
    println!("|---|---|---|---|---|---|");
    for (upstream, size) in upstreams {
        let body = stream.clone();
        let fake = FakeOpenAi::start(move |_, _| Action::stream(&body, size, Duration::ZERO));
        for (name, glibc) in binaries() {
            let builds: Vec<(&str, PathBuf)> = statics
                .iter()
                .map(|(build, dir)| (build.as_str(), dir.join(glibc.file_name().unwrap())))
                .filter(|(build, path)| {
                    let there = path.exists();
                    if !there {
                        println!(
                            "| {name} | {upstream} | {build} | - | {} missing | - |",
                            path.display()
                        );
                    }
                    there
                })
                .collect();
            // Interleaved runs, so a busy moment of the machine lands on every build.
            let mut base = Vec::new();
            let mut each = vec![Vec::new(); builds.len()];
            for _ in 0..RUNS {
                base.push(cpu_of_calls(&glibc, &fake.url));
                for ((_, path), times) in builds.iter().zip(&mut each) {
                    times.push(cpu_of_calls(path, &fake.url));
                }
            }
            let median = |xs: &Vec<f64>| percentile(&sorted(xs.clone()), 0.5);
            let base = median(&base);
            for ((build, _), times) in builds.iter().zip(&each) {
                let this = median(times);
                println!(
                    "| {name} | {upstream} | {build} | {:.3} ms | {:.3} ms | {:.2} |",
                    base / CALLS as f64,
                    this / CALLS as f64,
                    this / base
                );
            }
        }
    }
    println!();
}

/// Peak RSS for a short session and with 1,000 calls held open, and the file's size, of
/// each static build next to the glibc build.
fn memory_and_size(statics: &[(String, PathBuf)]) {
    println!("## Peak RSS and size, static builds against glibc builds\n");
    println!("| binary | build | initialize + tools/list + 1 call | ratio to glibc | 1,000 calls held open | ratio to glibc | calls the fake saw open | size |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, glibc) in binaries() {
        let base_small = short_session_rss_kib(&glibc);
        let (base_held, base_seen) = held_calls_rss_kib(&glibc);
        let mb = |kib: u64| kib as f64 / 1024.0;
        println!(
            "| {name} | glibc | {:.1} MB | 1.00 | {:.1} MB | 1.00 | {base_seen} | {} B |",
            mb(base_small),
            mb(base_held),
            size_of(&glibc)
        );
        for (build, dir) in statics {
            let path = dir.join(glibc.file_name().unwrap());
            if !path.exists() {
                continue;
            }
            let small = short_session_rss_kib(&path);
            let (held, seen) = held_calls_rss_kib(&path);
            println!(
                "| {name} | {build} | {:.1} MB | {:.2} | {:.1} MB | {:.2} | {seen} | {} B |",
                mb(small),
                small as f64 / base_small as f64,
                mb(held),
                held as f64 / base_held as f64,
                size_of(&path)
            );
        }
    }
    println!();
}

fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Milliseconds of CPU (user + system) the server spent serving `initialize` and
/// [`CALLS`] streamed calls one after another, until it exited on end of input.
fn cpu_of_calls(bin: &Path, base_url: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!("orm-builds-{}", rand_suffix()));
    let mut command = Command::new(bin);
    serve_args(&mut command, &dir, base_url, "responses: {stream: true}\n");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send_and_wait = |request: &str, id: u64| {
        writeln!(stdin, "{request}").unwrap();
        // Progress notifications come first; the reply to `id` ends the call.
        let id_field = format!("\"id\":{id},");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the server exited"
            );
            if line.contains(&id_field) {
                break;
            }
        }
    };
    send_and_wait(INIT, 0);
    for id in 1..=CALLS {
        send_and_wait(&call(id), id);
    }
    // End of input: the server finishes and exits; reap it here to read its usage.
    drop(stdin);
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet reaped; both pointers are to live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed");
    std::mem::forget(child); // reaped above: std must not wait for it again
    let _ = std::fs::remove_dir_all(&dir);
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}
