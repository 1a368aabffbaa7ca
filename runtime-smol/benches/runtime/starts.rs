//! Spawn to the `initialize` reply of each static (musl) build against `cat` echoing the
//! same line, interleaved in one run so that a busy moment of the machine lands on every
//! program alike (issue 50: at most 1.5× `cat`).
//!
//! `BENCH_ONLY=starts`; the builds are read from `BENCH_STATIC_DIRS=name=dir,...`, by
//! default the tiny and released builds `packaging/sizes.sh` leaves in `target/sizes/`.

use super::harness::*;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 20;
/// The card's promise: a static build starts within this many times `cat`.
const BUDGET: f64 = 1.5;

/// The builds to measure: a name and a folder each.
fn static_dirs() -> Vec<(String, PathBuf)> {
    if let Ok(list) = std::env::var("BENCH_STATIC_DIRS") {
        return list
            .split(',')
            .filter_map(|item| item.split_once('='))
            .map(|(name, dir)| (name.to_owned(), PathBuf::from(dir)))
            .collect();
    }
    let sizes = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/sizes");
    ["tiny", "released"]
        .into_iter()
        .map(|name| (name.to_owned(), sizes.join(name)))
        .collect()
}

/// Milliseconds from spawning `program` to its first line of output, for `INIT`.
fn spawn_to_reply(program: &Path, args: &[&str]) -> f64 {
    let t = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .env("HOME", "/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INIT}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let elapsed = t.elapsed().as_secs_f64() * 1e3;
    drop(stdin);
    let _ = child.wait();
    assert!(!line.is_empty(), "{} gave no reply", program.display());
    elapsed
}

pub fn run() {
    let mut programs: Vec<(String, PathBuf, &[&str])> =
        vec![("`cat` (baseline)".to_owned(), PathBuf::from("cat"), &[])];
    for (build, dir) in static_dirs() {
        for (runtime, file) in [
            ("smol", "openai-responses-mcp"),
            ("blocking", "openai-responses-mcp-blocking"),
        ] {
            let path = dir.join(file);
            if path.exists() {
                programs.push((format!("{build} {runtime}"), path, &["--stdio"]));
            } else {
                eprintln!("{} missing: run `bash packaging/sizes.sh`", path.display());
            }
        }
    }
    let mut times = vec![Vec::new(); programs.len()];
    for _ in 0..RUNS {
        for ((_, program, args), times) in programs.iter().zip(&mut times) {
            times.push(spawn_to_reply(program, args));
        }
    }
    println!(
        "## Startup of the static builds: spawn to the `initialize` reply (median of {RUNS}, interleaved with `cat`)\n"
    );
    println!("| program | median | p90 | ratio to `cat` | within {BUDGET}× |");
    println!("|---|---|---|---|---|");
    let base = percentile(&sorted(times[0].clone()), 0.5);
    for ((name, _, _), times) in programs.iter().zip(times) {
        let times = sorted(times);
        let ratio = percentile(&times, 0.5) / base;
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {ratio:.2} | {} |",
            percentile(&times, 0.5),
            percentile(&times, 0.9),
            if ratio <= BUDGET { "yes" } else { "**no**" }
        );
    }
    println!();
}
