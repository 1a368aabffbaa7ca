//! What every part of the benchmark shares: the binaries measured, a server driven over
//! its pipes (`Proc`), the requests it is sent, percentiles, and callgrind's count of a
//! run of calls.

use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
pub(crate) const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

pub(crate) fn binaries() -> Vec<(&'static str, PathBuf)> {
    // BENCH_BIN_DIR measures other builds, e.g. target/x86_64-unknown-linux-musl/release.
    let smol = match std::env::var_os("BENCH_BIN_DIR") {
        Some(dir) => PathBuf::from(dir).join("openai-responses-mcp"),
        None => PathBuf::from(env!("CARGO_BIN_EXE_openai-responses-mcp")),
    };
    let blocking = smol.with_file_name("openai-responses-mcp-blocking");
    let mut out = vec![("smol", smol)];
    if blocking.exists() {
        out.push(("blocking", blocking));
    } else {
        eprintln!(
            "{} missing: run `cargo build --release --workspace --bins` first",
            blocking.display()
        );
    }
    out
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub(crate) fn sorted(mut xs: Vec<f64>) -> Vec<f64> {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs
}

pub(crate) struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    dir: PathBuf,
}

impl Proc {
    pub(crate) fn start(bin: &Path, base_url: &str, yaml: &str) -> Proc {
        Proc::start_with(bin, base_url, yaml, &[])
    }

    pub(crate) fn start_with(bin: &Path, base_url: &str, yaml: &str, env: &[(&str, &str)]) -> Proc {
        let dir = std::env::temp_dir().join(format!(
            "orm-bench-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        let mut command = Command::new(bin);
        serve_args(&mut command, &dir, base_url, yaml);
        let mut child = command
            .envs(std::env::var("MALLOC_ARENA_MAX").map(|v| ("MALLOC_ARENA_MAX", v)))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Proc {
            child,
            stdin,
            stdout,
            dir,
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
    }

    pub(crate) fn recv(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    pub(crate) fn peak_rss_kib(&self) -> u64 {
        peak_rss_kib(self.child.id())
    }
}

/// Peak resident memory (VmHWM) of process `pid`, in KiB; 0 when unreadable.
pub(crate) fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub(crate) fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

pub(crate) fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q{id}"}}}}}}"#
    )
}

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../core/testdata/openai/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// Makes `command` (the binary, or a tool running it) serve stdio against `base_url`
/// with `yaml` as its configuration, in `dir` as its home and nothing else from the
/// environment.
pub(crate) fn serve_args(command: &mut Command, dir: &Path, base_url: &str, yaml: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("config.yaml"), yaml).unwrap();
    command
        .args(["--stdio", "--config"])
        .arg(dir.join("config.yaml"))
        .env_clear()
        .env("HOME", dir)
        .env("OPENAI_API_KEY", "sk-bench")
        .env("OPENAI_BASE_URL", base_url);
}

/// Instructions (callgrind) for `initialize` then `calls` sequential `tools/call`s of
/// `bin` against `base_url`, with `yaml` as its configuration.
pub(crate) fn callgrind_calls(
    bin: &Path,
    base_url: &str,
    yaml: &str,
    calls: u64,
    env: &[(&str, &str)],
) -> u64 {
    let dir = std::env::temp_dir().join(format!("orm-cpu-{}", rand_suffix()));
    let out_file = dir.join("callgrind.out");
    let mut command = Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(bin);
    serve_args(&mut command, &dir, base_url, yaml);
    command.envs(env.iter().copied());
    sequential_calls(command, calls, |_, line| {
        assert!(line.contains("\"result\""), "{line}");
    });
    let text = std::fs::read_to_string(&out_file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary: ")
                .or_else(|| l.strip_prefix("totals: "))
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap()
}

/// Runs `command` (a server on stdio, or a tool running one): `initialize`, then `calls`
/// sequential `tools/call`s, each reply handed to `each` with the time it took; then
/// closes stdin and waits for the exit.
pub(crate) fn sequential_calls(
    mut command: Command,
    calls: u64,
    mut each: impl FnMut(Duration, &str),
) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(stdin, "{INIT}").unwrap();
    stdout.read_line(&mut line).unwrap();
    for id in 1..=calls {
        let start = Instant::now();
        writeln!(stdin, "{}", call(id)).unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        each(start.elapsed(), &line);
    }
    drop(stdin);
    let _ = child.wait();
}

/// Peak RSS (KiB) of `bin` serving `initialize`, `tools/list` and one call.
pub(crate) fn short_session_rss_kib(bin: &Path) -> u64 {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mut p = Proc::start(bin, &fake.url, "{}\n");
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    p.recv();
    p.send(&call(2));
    p.recv();
    p.peak_rss_kib()
}
