//! Wall time per call through the MCP Inspector CLI, one process per call as its users
//! run it, in each protocol era it speaks, over stdio and Streamable HTTP, against a fake
//! OpenAI that answers at once. The baseline is the legacy era in the same run: a
//! 2026-07-28 client that declares the tasks extension (modern and auto) should get a
//! quick answer about as fast.
//!
//! `BENCH_ONLY=inspector`; the Inspector comes from `target/clients` (`.ci/test` installs
//! it) or `MCP_CLIENTS_BIN`.

use super::harness::*;
use super::http;
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

const RUNS: usize = 7;

pub fn run() {
    let bin_dir = std::env::var_os("MCP_CLIENTS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/clients/node_modules/.bin"),
        PathBuf::from,
    );
    if !bin_dir.join("inspector").exists() {
        println!("## Inspector CLI: skipped (run .ci/test to install it under target/clients)\n");
        return;
    }
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    println!("## Wall time per call through the MCP Inspector CLI (`tools/call`, one process per call)\n");
    println!(
        "Median of {RUNS} runs; the baseline is the legacy era, same binary, same transport.\n"
    );
    println!("| binary | transport | legacy (baseline) | modern | auto | modern / legacy | auto / legacy |");
    println!("|---|---|---|---|---|---|---|");
    for (name, bin) in binaries() {
        for transport in ["stdio", "http"] {
            let server =
                (transport == "http").then(|| http::HttpProc::start(&bin, &fake.url, "{}\n"));
            let mut medians = Vec::new();
            for era in ["legacy", "modern", "auto"] {
                let times: Vec<f64> = (0..RUNS)
                    .map(|_| {
                        let mut command = Command::new(bin_dir.join("inspector"));
                        let path = std::env::var_os("PATH").unwrap_or_default();
                        let mut paths = vec![bin_dir.clone()];
                        paths.extend(std::env::split_paths(&path));
                        command
                            .env("PATH", std::env::join_paths(paths).unwrap())
                            .args(["--cli", "--protocol-era", era, "--format", "json"])
                            .args([
                                "--method",
                                "tools/call",
                                "--tool-name",
                                "answer",
                                "--tool-arg",
                                "query=hi",
                            ]);
                        match &server {
                            Some(s) => {
                                command.args(["--transport", "http", "--server-url"]);
                                command.arg(format!("http://{}/mcp", s.addr));
                            }
                            None => {
                                command
                                    .args(["-e", "OPENAI_API_KEY=sk-bench", "-e"])
                                    .arg(format!("OPENAI_BASE_URL={}", fake.url))
                                    .args(["-e", "OPENAI_MODEL_LOOKUPS=false"])
                                    .arg(&bin)
                                    .arg("--stdio");
                            }
                        }
                        let started = Instant::now();
                        let out = command.output().unwrap();
                        let took = started.elapsed().as_secs_f64();
                        let text = String::from_utf8_lossy(&out.stdout);
                        assert!(
                            out.status.success() && text.contains("structuredContent"),
                            "{text}"
                        );
                        took
                    })
                    .collect();
                let sorted = sorted(times);
                medians.push(sorted[sorted.len() / 2]);
            }
            println!(
                "| {name} | {transport} | {:.3} s | {:.3} s | {:.3} s | {:.2} | {:.2} |",
                medians[0],
                medians[1],
                medians[2],
                medians[1] / medians[0],
                medians[2] / medians[0]
            );
        }
    }
    println!();
}
