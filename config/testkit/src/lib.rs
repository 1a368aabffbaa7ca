//! Test support shared by both runtimes: the end-to-end harness ([`Mcp`]), the loopback
//! fake OpenAI ([`fake_openai`]), schema checks, and the end-to-end suite itself
//! ([`suite`]), which each runtime's test crate instantiates for its own binary with
//! [`e2e_suite!`], so both pass the same tests.
//!
//! Every test drives the real binary over real pipes; upstream is a loopback fake
//! OpenAI server. Every message the server writes is validated against the official MCP
//! schema of the negotiated protocol version.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

pub mod collector;
pub mod fake_openai;
pub mod http_client;
pub mod proxies;
mod schema;
pub mod suite;
pub mod tls;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

static BINARY: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The binary under test, as set by [`run`].
///
/// # Panics
/// Outside a test started through [`e2e_suite!`].
pub fn binary() -> &'static str {
    BINARY
        .get()
        .expect("the suite runs through e2e_suite!, which names the binary")
}

/// Runs one suite test against `bin`. A test binary tests one server binary, so the first
/// call fixes it for the process.
pub fn run(bin: &'static str, test: fn()) {
    let set = BINARY.get_or_init(|| bin);
    assert_eq!(*set, bin, "one test binary tests one server binary");
    test();
}

/// The Python interpreter that has the MCP SDK: `MCP_SDK_PYTHON` (set by `.ci/test`), else
/// the virtual environment `.ci/test` leaves in `target/sdk/python`; `None` when neither
/// can import the SDK.
pub fn sdk_python() -> Option<PathBuf> {
    let default =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sdk/python/bin/python");
    let python = std::env::var_os("MCP_SDK_PYTHON").map_or(default, PathBuf::from);
    let probe = Command::new(&python)
        .args(["-c", "import mcp.client.client"])
        .output();
    probe.is_ok_and(|o| o.status.success()).then_some(python)
}

/// libfaketime (Debian's `faketime` package, which `.ci/test` installs): preloaded into
/// the server, it sets the wall clock the server reads from a file, so that tests of
/// UTC minutes and days move time instead of waiting for it. `MCP_FAKETIME_LIB` names
/// another copy; `None` when there is none.
pub fn faketime_lib() -> Option<PathBuf> {
    let candidates = std::env::var_os("MCP_FAKETIME_LIB")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["x86_64-linux-gnu", "aarch64-linux-gnu"]
                .iter()
                .map(|arch| PathBuf::from(format!("/usr/lib/{arch}/faketime/libfaketime.so.1"))),
        );
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install libfaketime (.ci/test does)"
        );
    }
    found
}

/// The wall clock a server started with [`Opts::frozen_clock`] reads: frozen at the UTC
/// time written last.
pub struct Clock {
    file: PathBuf,
    _dir: TempDir,
}

impl Clock {
    /// Sets the server's clock to `utc` (`YYYY-MM-DD hh:mm:ss`); it stays there.
    pub fn set(&self, utc: &str) {
        // Written whole, then renamed: the server never reads half a line.
        let next = self.file.with_extension("next");
        std::fs::write(&next, utc).unwrap();
        std::fs::rename(&next, &self.file).unwrap();
    }
}

impl Opts {
    /// Runs the server under libfaketime with its wall clock frozen at `utc`, and the
    /// handle that moves it; `None` (the test skips) without libfaketime. Monotonic time
    /// (deadlines, timers) is left alone.
    pub fn frozen_clock(self, utc: &str) -> Option<(Opts, Clock)> {
        let lib = faketime_lib()?;
        let dir = temp_dir("clock");
        let clock = Clock {
            file: dir.join("faketime"),
            _dir: dir,
        };
        clock.set(utc);
        let opts = self
            .env("LD_PRELOAD", lib.to_str().unwrap())
            .env("FAKETIME_TIMESTAMP_FILE", clock.file.to_str().unwrap())
            .env("FAKETIME_NO_CACHE", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .env("TZ", "UTC");
        Some((opts, clock))
    }
}

/// The `node_modules` folder with the TypeScript SDK clients: `MCP_SDK_NODE_PATH` (set by
/// `.ci/test`), else the one `.ci/test` leaves in `target/sdk/node`; `None` when missing.
pub fn sdk_node_modules() -> Option<PathBuf> {
    let default =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sdk/node/node_modules");
    let modules = std::env::var_os("MCP_SDK_NODE_PATH").map_or(default, PathBuf::from);
    modules
        .join("@modelcontextprotocol/client/package.json")
        .exists()
        .then_some(modules)
}

/// The `.bin` folder of the client programs (the MCP Inspector, Claude Code, Node 22):
/// `MCP_CLIENTS_BIN` (set by `.ci/test`), else the one `.ci/test` leaves in
/// `target/clients`; `None` when missing (outside CI the tests that need them skip).
pub fn clients_bin() -> Option<PathBuf> {
    let default =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/clients/node_modules/.bin");
    let bin = std::env::var_os("MCP_CLIENTS_BIN").map_or(default, PathBuf::from);
    if bin.join("claude").exists() && bin.join("inspector").exists() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must install the client programs (.ci/test does)"
    );
    eprintln!("skipping: the MCP Inspector and Claude Code are not installed (run .ci/test)");
    None
}

/// Removes the proxy variables from `command`'s environment: the client programs the
/// tests run must reach the loopback servers directly.
pub fn without_proxies(command: &mut Command) -> &mut Command {
    for proxy in [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
        "all_proxy",
    ] {
        command.env_remove(proxy);
    }
    command
}

/// `_meta` key of a modern request's protocol version.
pub const MODERN_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// A modern (2026-07-28) request: `params` plus the `_meta` every such request carries.
pub fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"][MODERN_VERSION] = "2026-07-28".into();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    params["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"name": "e2e", "version": "1"});
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

/// Checks `message`, one the server sent in answer to `request`, against the schema of
/// `version` (for transports where each reply comes with its request, such as HTTP).
pub fn check_reply(version: &str, request: &Value, message: &Value) {
    let mut methods = BTreeMap::new();
    if let (Some(id), Some(method)) = (request.get("id"), request["method"].as_str()) {
        methods.insert(id.to_string(), method.to_owned());
    }
    schema::check_message(version, message, &methods, &BTreeMap::new());
}

/// A fake API key planted in every test; no output may ever contain it.
pub const PLANTED_KEY: &str = "sk-test-PLANTED-5ecret-0123456789abcdef";

/// How long any single expected message may take.
pub const PATIENCE: Duration = Duration::from_secs(15);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Line,
    ContentLength,
}

/// How to start the server.
pub struct Opts {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub base_url: Option<String>,
    pub key: bool,
    /// A program (and its arguments) the binary is run under, such as `unshare`.
    pub wrapper: Vec<String>,
    /// Folders the server will read from, kept until it ends ([`Opts::temp_config`]).
    pub dirs: Vec<TempDir>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            args: vec!["--stdio".into()],
            env: Vec::new(),
            base_url: None,
            key: true,
            wrapper: Vec::new(),
            dirs: Vec::new(),
        }
    }
}

impl Opts {
    pub fn upstream(url: &str) -> Opts {
        Opts {
            base_url: Some(url.to_owned()),
            ..Opts::default()
        }
    }

    pub fn env(mut self, k: &str, v: &str) -> Opts {
        self.env.push((k.into(), v.into()));
        self
    }

    pub fn arg(mut self, a: &str) -> Opts {
        self.args.push(a.into());
        self
    }

    /// Runs the binary under `program` with `args` before it.
    pub fn under(mut self, program: &str, args: &[&str]) -> Opts {
        self.wrapper = std::iter::once(program)
            .chain(args.iter().copied())
            .map(str::to_owned)
            .collect();
        self
    }

    /// Writes `yaml` to `dir/config.yaml` and passes it with `--config`.
    pub fn config(self, dir: &std::path::Path, yaml: &str) -> Opts {
        let path = dir.join("config.yaml");
        std::fs::write(&path, yaml).unwrap();
        self.arg("--config").arg(path.to_str().unwrap())
    }

    /// Keeps `dir` until the server ends (a folder it reads from after starting).
    pub fn keeping(mut self, dir: TempDir) -> Opts {
        self.dirs.push(dir);
        self
    }

    /// Writes `yaml` to `config.yaml` in a new temporary folder named for `tag`, passes
    /// it with `--config`, and keeps the folder until the server ends.
    pub fn temp_config(self, tag: &str, yaml: &str) -> Opts {
        let dir = temp_dir(tag);
        self.config(&dir, yaml).keeping(dir)
    }
}

/// One message from stdout, with how it was framed.
#[derive(Debug)]
pub struct Received {
    pub framing: Framing,
    pub value: Value,
}

/// The server process under test.
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Result<Received, BadOutput>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    pub framing: Framing,
    /// The framing replies are expected in (the client's, unless line mode is forced).
    pub reply_framing: Framing,
    /// The negotiated version, once initialize was answered.
    pub version: Option<String>,
    /// The version the client asked for, used to validate messages before the answer.
    asked: Option<String>,
    /// Methods of the requests sent, by id (as JSON text), for schema checks.
    methods: BTreeMap<String, String>,
    /// Each tool's outputSchema from tools/list.
    output_schemas: BTreeMap<String, Value>,
    /// Ids (as JSON text) of the requests sent as modern (2026-07-28) requests.
    modern_ids: std::collections::BTreeSet<String>,
    /// Progress tokens (as JSON text) of modern requests.
    modern_tokens: std::collections::BTreeSet<String>,
    /// Temporary HOME so no user configuration is read.
    home: TempDir,
    /// Folders the server reads from (its configuration's), removed after it ends.
    _dirs: Vec<TempDir>,
    /// The thread that gathers stderr, joined by [`Mcp::stderr_to_end`].
    stderr_reader: Option<thread::JoinHandle<()>>,
}

/// A new folder for one test's files under the system's temporary folder, removed with
/// what it holds when dropped: a run starts thousands of servers, and none may leave
/// its configuration behind. Bind it to a name that lives as long as whatever reads it
/// (a server started from a file in it, say); [`Opts::temp_config`] ties one to a server.
pub fn temp_dir(tag: &str) -> TempDir {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("orm-e2e-{}-{tag}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// See [`temp_dir`].
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Mcp {
    pub fn spawn(opts: Opts) -> Mcp {
        Mcp::spawn_framed(opts, Framing::Line)
    }

    pub fn spawn_framed(opts: Opts, framing: Framing) -> Mcp {
        let home = temp_dir("home");
        let mut cmd = match opts.wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = Command::new(program);
                cmd.args(args).arg(crate::binary());
                cmd
            }
            None => Command::new(crate::binary()),
        };
        cmd.args(&opts.args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if opts.key {
            cmd.env("OPENAI_API_KEY", PLANTED_KEY);
        }
        if let Some(url) = &opts.base_url {
            cmd.env("OPENAI_BASE_URL", url);
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn the server binary");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        let stderr_reader = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let (tx, rx) = channel();
        thread::spawn(move || read_frames(BufReader::new(stdout), |m| tx.send(m).is_ok()));
        Mcp {
            child,
            stdin,
            rx,
            stderr,
            framing,
            reply_framing: framing,
            version: None,
            asked: None,
            methods: BTreeMap::new(),
            output_schemas: BTreeMap::new(),
            modern_ids: Default::default(),
            modern_tokens: Default::default(),
            home,
            _dirs: opts.dirs,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// All of stderr, once the process has exited: waits for the reader to see the end
    /// of the pipe, so that nothing written just before the exit is missed.
    pub fn stderr_to_end(&mut self) -> String {
        assert!(
            matches!(self.child.try_wait(), Ok(Some(_))),
            "stderr_to_end needs the process to have exited"
        );
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.stderr()
    }

    /// Stderr as far as it has been read.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Writes raw bytes to the server's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a message in this harness's framing.
    pub fn send(&mut self, message: &Value) {
        if let (Some(id), Some(method)) = (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) {
            self.methods.insert(id.to_string(), method.to_owned());
            if let Some(meta) = message.pointer("/params/_meta") {
                if meta.get(MODERN_VERSION).is_some_and(Value::is_string) {
                    self.modern_ids.insert(id.to_string());
                    if let Some(token) = meta.get("progressToken") {
                        self.modern_tokens.insert(token.to_string());
                    }
                }
            }
            if method == "initialize" {
                self.asked = message
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
        }
        if let Value::Array(items) = message {
            for m in items {
                if let (Some(id), Some(method)) =
                    (m.get("id"), m.get("method").and_then(Value::as_str))
                {
                    self.methods.insert(id.to_string(), method.to_owned());
                }
            }
        }
        let json = serde_json::to_vec(message).unwrap();
        let bytes = match self.framing {
            Framing::Line => [json, b"\n".to_vec()].concat(),
            Framing::ContentLength => [
                format!("Content-Length: {}\r\n\r\n", json.len()).into_bytes(),
                json,
            ]
            .concat(),
        };
        self.send_raw(&bytes);
    }

    /// The next message, validated against the MCP schema.
    pub fn recv(&mut self) -> Value {
        self.recv_within(PATIENCE)
            .unwrap_or_else(|| panic!("no message within {PATIENCE:?}; stderr:\n{}", self.stderr()))
    }

    pub fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match self.rx.recv_timeout(wait) {
            Ok(Ok(m)) => {
                assert_eq!(
                    m.framing, self.reply_framing,
                    "replies use the client's framing: {:?}",
                    m.value
                );
                self.check(&m.value);
                Some(m.value)
            }
            Ok(Err(e)) => panic!("bad output from the server: {e}"),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Asserts that nothing arrives within `wait`.
    pub fn expect_silence(&mut self, wait: Duration) {
        if let Some(m) = self.recv_within(wait) {
            panic!("expected no message, got {m}");
        }
    }

    /// Sends a request and returns its reply.
    pub fn request(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(&message);
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// Sends a request and returns its reply, with the notifications that came first.
    pub fn ask(&mut self, message: Value) -> (Value, Vec<Value>) {
        let id = message["id"].clone();
        self.send(&message);
        let mut notes = Vec::new();
        loop {
            let m = self.recv();
            if m.get("id").is_none() && m.get("method").is_some() {
                notes.push(m);
                continue;
            }
            assert_eq!(m["id"], id, "{m}");
            return (m, notes);
        }
    }

    /// initialize + notifications/initialized at `version`.
    pub fn initialize(&mut self, version: &str) -> Value {
        let reply = self.request(json!({"jsonrpc":"2.0","id":"init","method":"initialize",
            "params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}));
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        reply
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}}))
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                panic!(
                    "the server did not exit within {timeout:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server with SIGTERM (an HTTP server does not end with its stdin) and
    /// returns all it wrote to stderr.
    pub fn terminate(&mut self) -> String {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success());
        self.wait_exit(PATIENCE);
        self.stderr_to_end()
    }

    fn check(&mut self, value: &Value) {
        if let Some(result) = value.get("result") {
            let method = self.methods.get(&value["id"].to_string()).cloned();
            if method.as_deref() == Some("initialize") {
                self.version = result["protocolVersion"].as_str().map(str::to_owned);
            }
            if method.as_deref() == Some("tools/list") {
                for t in result["tools"].as_array().into_iter().flatten() {
                    if let Some(s) = t.get("outputSchema") {
                        self.output_schemas
                            .insert(t["name"].as_str().unwrap_or("").to_owned(), s.clone());
                    }
                }
            }
        }
        let modern = match value {
            Value::Object(m) if m.contains_key("id") => {
                self.modern_ids.contains(&m["id"].to_string())
            }
            Value::Object(m) => {
                m.get("method") == Some(&json!("notifications/subscriptions/acknowledged"))
                    || m.get("params")
                        .and_then(|p| p.get("progressToken"))
                        .is_some_and(|t| self.modern_tokens.contains(&t.to_string()))
                    || (m.contains_key("error")
                        && self.version.is_none()
                        && !self.modern_ids.is_empty())
            }
            _ => false,
        };
        let version = if modern {
            Some("2026-07-28".to_owned())
        } else {
            self.version.clone().or(self.asked.clone())
        }
        // Before any session a reply follows plain JSON-RPC (an unreadable id is null),
        // which the 2025-06-18 schema describes.
        .unwrap_or_else(|| "2025-06-18".into());
        let version = if schema::VERSIONS.contains(&version.as_str()) {
            version
        } else {
            // initialize answers an unknown version with the latest legacy one.
            "2025-11-25".into()
        };
        schema::check_message(&version, value, &self.methods, &self.output_schemas);
        let text = value.to_string();
        assert!(
            !text.contains(PLANTED_KEY),
            "the API key leaked into stdout"
        );
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.stderr();
        assert!(
            thread::panicking() || !stderr.contains(PLANTED_KEY),
            "the API key leaked into stderr"
        );
        assert!(
            thread::panicking() || !stderr.contains("panicked"),
            "the server panicked:\n{stderr}"
        );
    }
}

/// What the server wrote on stdout that breaks the framing rules.
#[derive(Debug)]
pub enum BadOutput {
    /// A `Content-Length` header that is not one.
    Header(String),
    /// No blank line after the header.
    NoBlankLine,
    /// The stream ended inside a body.
    ShortBody,
    /// The stream ended inside a line.
    NoNewline,
    /// A message that is not JSON.
    NotJson(serde_json::Error),
}

impl std::fmt::Display for BadOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadOutput::Header(text) => write!(f, "bad header {text:?}"),
            BadOutput::NoBlankLine => f.write_str("missing blank line after Content-Length"),
            BadOutput::ShortBody => f.write_str("short Content-Length body"),
            BadOutput::NoNewline => f.write_str("a line without a newline"),
            BadOutput::NotJson(e) => write!(f, "stdout carried something that is not JSON: {e}"),
        }
    }
}

/// Splits stdout into messages, in either framing, checking the framing rules.
fn read_frames(
    mut reader: BufReader<impl Read>,
    mut emit: impl FnMut(Result<Received, BadOutput>) -> bool,
) {
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let message = if line.starts_with(b"Content-Length: ") {
            let text = String::from_utf8_lossy(&line);
            let Some(n) = text
                .trim_end()
                .strip_prefix("Content-Length: ")
                .and_then(|n| n.parse::<usize>().ok())
            else {
                emit(Err(BadOutput::Header(text.into_owned())));
                return;
            };
            let mut blank = Vec::new();
            if reader.read_until(b'\n', &mut blank).is_err() || blank != b"\r\n" {
                emit(Err(BadOutput::NoBlankLine));
                return;
            }
            let mut body = vec![0; n];
            if reader.read_exact(&mut body).is_err() {
                emit(Err(BadOutput::ShortBody));
                return;
            }
            serde_json::from_slice(&body).map(|value| Received {
                framing: Framing::ContentLength,
                value,
            })
        } else {
            if !line.ends_with(b"\n") {
                emit(Err(BadOutput::NoNewline));
                return;
            }
            serde_json::from_slice(&line).map(|value| Received {
                framing: Framing::Line,
                value,
            })
        };
        if !emit(message.map_err(BadOutput::NotJson)) {
            return;
        }
    }
}

/// Reads a fixture of the shared OpenAI reference data.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../core/testdata/openai/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The answer object of a successful tools/call reply.
pub fn answer_of(reply: &Value) -> Value {
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {reply}"));
    serde_json::from_str(text).unwrap()
}

/// A program the system's package manager installs (nginx, redis-server), looked up on
/// PATH and in the system folders; `None` (a skip outside CI, a failure in CI, where
/// `.ci/test` installs it) when it is missing.
pub fn system_program(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(["/usr/sbin", "/usr/local/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install {name} (.ci/test does)"
        );
        eprintln!("skipping: {name} is not installed (apt-get install {name})");
    }
    found
}

/// A loopback port free now, for a program a test starts later (the server under test, an
/// identity provider, Redis, nginx), and given to no other caller in this process.
///
/// Never from the kernel's ephemeral range: a port found by binding `:0` and released is
/// free for the kernel to give again, as the local end of any of the loopback
/// connections the tests running beside this one open, before the program binds it (the
/// program then fails with "Address already in use"). Outside that range only this
/// function hands ports out: in turn from a counter, starting where the process id says so
/// two test processes at once walk different stretches, each port checked by binding it.
pub fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    static PORTS: std::sync::OnceLock<(u32, u32, u32)> = std::sync::OnceLock::new();
    let &(low, len, start) = PORTS.get_or_init(|| {
        let (low, len) = outside_ephemeral_range();
        (low, len, std::process::id().wrapping_mul(7_919) % len)
    });
    for _ in 0..len {
        let turn = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = u16::try_from(low + (start + turn) % len).expect("a port below 65536");
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port among {len} from {low} (outside the ephemeral range)");
}

/// The widest run of unprivileged ports the kernel never picks on its own: below or above
/// `net.ipv4.ip_local_port_range` (Linux's default is 32768–60999), as `(first, count)`.
fn outside_ephemeral_range() -> (u32, u32) {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut ends = text.split_whitespace().map(str::parse::<u32>);
            Some((ends.next()?.ok()?, ends.next()?.ok()?))
        })
        .unwrap_or((32_768, 60_999));
    let below = (1_024, range.0.saturating_sub(1_024));
    let above = (range.1 + 1, 65_535u32.saturating_sub(range.1));
    let (low, len) = if below.1 >= above.1 { below } else { above };
    assert!(
        len >= 1_000,
        "the ephemeral port range {range:?} leaves no room for the tests' own ports"
    );
    (low, len)
}

/// A token's digest as the documentation says to make it: `printf %s "$TOKEN" |
/// sha256sum`.
pub fn sha256_hex(token: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", "printf %s \"$TOKEN\" | sha256sum"])
        .env("TOKEN", token)
        .output()
        .unwrap_or_else(|e| panic!("sha256sum: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::{free_port, outside_ephemeral_range};

    #[test]
    fn free_ports_are_distinct_and_never_ephemeral() {
        let (low, len) = outside_ephemeral_range();
        let ports: Vec<u16> = (0..500).map(|_| free_port()).collect();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "a port handed out twice");
        for port in ports {
            let port = u32::from(port);
            assert!(
                (low..low + len).contains(&port),
                "{port} outside {low}+{len}"
            );
        }
    }
}
