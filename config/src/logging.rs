//! Logging: stderr always, mirrored to the debug file when one is set.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Our crates, which log at debug level in debug mode. Dependencies stay at warn so that
/// nothing they log (headers included) reaches the output.
const OURS: &[&str] = &[
    "responses_mcp_core",
    "responses_mcp_config",
    "responses_mcp_blocking",
    "openai_responses_mcp",
    "openai_responses_mcp_blocking",
];

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

/// Installs the logger. `RUST_LOG`, when set, overrides the levels chosen here.
pub(crate) fn init(debug: bool, file: Option<&Path>) -> Result<(), String> {
    let mut builder = env_logger::Builder::new();
    builder.filter_level(log::LevelFilter::Warn);
    if debug {
        for module in OURS {
            builder.filter_module(module, log::LevelFilter::Debug);
        }
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
    problem.map_or(Ok(()), Err)
}
