//! Traces on and off: per-call CPU (callgrind, the exporter's thread included) and
//! per-call latency, with a live collector (the test suite's OTLP receiver), a dead one
//! (nothing listening), and none, each against traces off in the same run.

use super::harness::*;
use responses_mcp_testkit::collector::Collector;
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::path::Path;
use std::process::Command;

pub fn run() {
    const CALLS: u64 = 300;
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let collector = Collector::start();
    let live = collector.base_url();
    let dead = format!("http://127.0.0.1:{}", responses_mcp_testkit::free_port());
    let on = |endpoint: &str| {
        vec![
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(),
                endpoint.to_owned(),
            ),
            ("OTEL_TRACES_SAMPLER".to_owned(), "always_on".to_owned()),
        ]
    };
    let cases: [(&str, Vec<(String, String)>); 3] = [
        ("off", Vec::new()),
        ("on, live collector", on(&live)),
        ("on, dead collector", on(&dead)),
    ];
    let has_valgrind = Command::new("valgrind").arg("--version").output().is_ok();
    println!("## Traces: per call, `initialize` + {CALLS} `tools/call`, each case against traces off (same run)\n");
    println!("| binary | traces | Ir per call | ratio | p50 latency | ratio |");
    println!("|---|---|---|---|---|---|");
    for (name, bin) in binaries() {
        let mut base = (0u64, 0f64);
        for (case, env) in &cases {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let ir = if has_valgrind {
                callgrind_calls(&bin, &fake.url, "{}\n", CALLS, &env) / CALLS
            } else {
                0
            };
            let p50 = latency_p50(&bin, &fake.url, CALLS, &env);
            if *case == "off" {
                base = (ir, p50);
            }
            let ratio = |a: f64, b: f64| {
                if b > 0.0 {
                    format!("{:.3}", a / b)
                } else {
                    "-".into()
                }
            };
            println!(
                "| {name} | {case} | {ir} | {} | {p50:.3} ms | {} |",
                ratio(ir as f64, base.0 as f64),
                ratio(p50, base.1)
            );
        }
    }
    println!(
        "\nspans received by the live collector: {}\n",
        collector.spans().len()
    );
}

/// The median wall time of one `tools/call` over stdio (sequential), in milliseconds.
fn latency_p50(bin: &Path, base_url: &str, calls: u64, env: &[(&str, &str)]) -> f64 {
    let dir = std::env::temp_dir().join(format!("orm-traces-{}", rand_suffix()));
    let mut command = Command::new(bin);
    serve_args(&mut command, &dir, base_url, "{}\n");
    command.envs(env.iter().copied());
    let mut times = Vec::new();
    sequential_calls(command, calls, |took, _| {
        times.push(took.as_secs_f64() * 1000.0);
    });
    let _ = std::fs::remove_dir_all(&dir);
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
