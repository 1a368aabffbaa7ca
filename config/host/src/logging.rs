//! Logging: stderr always, mirrored to the debug file when one is set.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use responses_mcp_core::ledger::CALL_LOG_TARGET;

/// Why the logger is not as asked (said on stderr; the server runs on).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoggerError(pub String);

impl From<String> for LoggerError {
    fn from(message: String) -> Self {
        LoggerError(message)
    }
}

impl From<&str> for LoggerError {
    fn from(message: &str) -> Self {
        LoggerError(message.to_owned())
    }
}

/// Our crates, which log at debug level in debug mode. Dependencies stay at warn so that
/// nothing they log (headers included) reaches the output.
const OURS: &[&str] = &[
    "responses_mcp_core",
    "responses_mcp_config",
    "responses_mcp_blocking",
    "openai_responses_mcp",
    "openai_responses_mcp_blocking",
];

/// Set once the logger writes JSON lines.
static JSON: std::sync::OnceLock<()> = std::sync::OnceLock::new();

/// Says on stderr where a listener is: the one line a supervisor or a test waits for,
/// `listening on http://ADDR/mcp` (or `metrics on http://ADDR/metrics` for the
/// metrics-only listener), or with JSON logs an object carrying it as `message` and `url`.
pub fn announce_listening(bound: std::net::SocketAddr, mcp: bool) {
    let (what, url) = if mcp {
        ("listening on", format!("http://{bound}/mcp"))
    } else {
        ("metrics on", format!("http://{bound}/metrics"))
    };
    let line = if JSON.get().is_some() {
        serde_json::json!({
            "time": now_utc(),
            "level": "info",
            "target": "listening",
            "message": format!("{what} {url}"),
            "url": url,
        })
        .to_string()
    } else {
        format!("{what} {url}")
    };
    let _ = writeln!(io::stderr(), "{line}");
}

/// Writes every record to stderr and to a file.
struct Tee {
    file: File,
}

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = io::stderr().write_all(buf);
        self.file.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = io::stderr().flush();
        self.file.flush()
    }
}

/// Writes a finished call's record to the call log: one JSON line at info level under
/// [`CALL_LOG_TARGET`] (nothing is built unless that level is on for it).
pub fn write_call(record: &responses_mcp_core::ledger::CallRecord) {
    if log::log_enabled!(target: CALL_LOG_TARGET, log::Level::Info) {
        log::info!(target: CALL_LOG_TARGET, "{}", record.to_json());
    }
}

/// Whether the installed logger writes the call log (the core builds no records else).
pub fn call_log_enabled() -> bool {
    log::log_enabled!(target: CALL_LOG_TARGET, log::Level::Info)
}

/// Installs the logger. `RUST_LOG`, when set, overrides the levels chosen here. `json`:
/// every record is one JSON object on its own line, and each finished call leaves one.
pub fn init(debug: bool, file: Option<&Path>, json: bool) -> Result<(), LoggerError> {
    let mut builder = env_logger::Builder::new();
    builder.filter_level(log::LevelFilter::Warn);
    if debug {
        for module in OURS {
            builder.filter_module(module, log::LevelFilter::Debug);
        }
    }
    if json {
        builder.filter_module(CALL_LOG_TARGET, log::LevelFilter::Info);
        builder.format(json_line);
        let _ = JSON.set(());
    }
    if let Ok(spec) = std::env::var("RUST_LOG") {
        builder.parse_filters(&spec);
    }
    let mut problem = None;
    match file {
        Some(path) => match File::options().create(true).append(true).open(path) {
            Ok(file) => {
                builder.target(env_logger::Target::Pipe(Box::new(Tee { file })));
            }
            Err(e) => {
                problem = Some(format!(
                    "cannot open debug file {}: {e}; logging to stderr only",
                    path.display()
                ));
                builder.target(env_logger::Target::Stderr);
            }
        },
        None => {
            builder.target(env_logger::Target::Stderr);
        }
    }
    builder.try_init().map_err(|e| e.to_string())?;
    problem.map_or(Ok(()), |p| Err(LoggerError(p)))
}

/// One record as a JSON line. A call's line is already one (with its own time), so it is
/// written as it is.
fn json_line(buf: &mut env_logger::fmt::Formatter, record: &log::Record<'_>) -> io::Result<()> {
    let message = record.args().to_string();
    if record.target() == CALL_LOG_TARGET {
        return writeln!(buf, "{message}");
    }
    let level = match record.level() {
        log::Level::Error => "error",
        log::Level::Warn => "warn",
        log::Level::Info => "info",
        log::Level::Debug => "debug",
        log::Level::Trace => "trace",
    };
    let line = serde_json::json!({
        "time": now_utc(),
        "level": level,
        "target": record.target(),
        "message": message,
    });
    writeln!(buf, "{line}")
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn now_utc() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = responses_mcp_core::date::iso_utc(since.as_secs());
    let millis = since.subsec_millis();
    match seconds.strip_suffix('Z') {
        Some(head) => format!("{head}.{millis:03}Z"),
        None => seconds,
    }
}
