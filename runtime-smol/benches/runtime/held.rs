//! A thousand held calls (issue 50): peak RSS of each binary with 1,000 `tools/call`s in
//! flight at a fake OpenAI that never answers, read once the fake has seen all 1,000, over
//! plain HTTP and over TLS (a test CA), each against the same binary of the baseline build
//! (`BENCH_BASELINE_DIR`, e.g. the previous commit built into another target directory)
//! measured in the same run, the two alternating.

use super::harness::{binaries, call, rand_suffix, Proc, INIT};
use responses_mcp_testkit::fake_openai::{Action, FakeOpenAi};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

/// Runs of each case; the median is shown.
const RUNS: usize = 3;

pub fn run() {
    let baseline_dir = std::env::var_os("BENCH_BASELINE_DIR").map(PathBuf::from);
    println!(
        "## 1,000 calls held open: peak RSS (VmHWM, MiB), median of {RUNS} alternating runs\n"
    );
    println!("| binary | upstream | baseline | this build | ratio | calls the fake saw open (baseline, this) |");
    println!("|---|---|---|---|---|---|");
    for (name, bin) in binaries() {
        let base = baseline_dir
            .as_ref()
            .map(|d| d.join(bin.file_name().unwrap()))
            .filter(|b| b.exists());
        for tls in [false, true] {
            let (mut before, mut after) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                if let Some(base) = &base {
                    before.push(held_calls(base, tls));
                }
                after.push(held_calls(&bin, tls));
            }
            let median = |runs: &[(u64, usize)]| {
                let mut kib: Vec<u64> = runs.iter().map(|r| r.0).collect();
                kib.sort_unstable();
                kib.get(kib.len() / 2).map(|k| *k as f64 / 1024.0)
            };
            let seen = |runs: &[(u64, usize)]| runs.iter().map(|r| r.1).min();
            let (b, a) = (median(&before), median(&after).unwrap_or(0.0));
            println!(
                "| {name} | {} | {} | {a:.1} | {} | {}, {} |",
                if tls { "https" } else { "http" },
                b.map_or("-".into(), |b| format!("{b:.1}")),
                b.map_or("-".into(), |b| format!("{:.3}", a / b)),
                seen(&before).map_or("-".into(), |n| n.to_string()),
                seen(&after).unwrap_or(0),
            );
        }
    }
    println!();
}

/// Peak RSS (KiB) of `bin` with 1,000 calls held open by the fake, and how many the fake
/// saw open.
pub fn held_calls_rss_kib(bin: &Path) -> (u64, usize) {
    hold(bin, &FakeOpenAi::start(|_, _| Action::Hang), &[])
}

/// Peak RSS (KiB) of `bin` with 1,000 calls held open by a fake that never answers (over
/// TLS when `tls`), and how many the fake saw open.
fn held_calls(bin: &Path, tls: bool) -> (u64, usize) {
    if !tls {
        return held_calls_rss_kib(bin);
    }
    let (hang, ca_pem) = FakeOpenAi::start_tls(|_, _| Action::Hang);
    let ca = std::env::temp_dir().join(format!("orm-bench-ca-{}.pem", rand_suffix()));
    std::fs::write(&ca, ca_pem).unwrap();
    let ca_path = ca.to_str().unwrap().to_owned();
    let measured = hold(bin, &hang, &[("SSL_CERT_FILE", &ca_path)]);
    let _ = std::fs::remove_file(ca);
    measured
}

/// Peak RSS (KiB) of `bin` once `hang` has seen 1,000 calls, with `env`, and how many it
/// saw.
pub fn hold(bin: &Path, hang: &FakeOpenAi, env: &[(&str, &str)]) -> (u64, usize) {
    let yaml = "server: {max_inflight: 1000, max_queue: 2000}\nrequest: {timeout_ms: 600000}\n";
    let mut p = Proc::start_with(bin, &hang.url, yaml, env);
    p.send(INIT);
    p.recv();
    for id in 1..=1000 {
        p.send(&call(id));
    }
    let seen = hang.wait_requests(1000, Duration::from_secs(60)).len();
    thread::sleep(Duration::from_millis(200));
    (p.peak_rss_kib(), seen)
}
