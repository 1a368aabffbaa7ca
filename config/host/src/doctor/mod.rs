//! `openai-responses-mcp doctor`: what is wrong, before a client shows a cryptic error.
//!
//! The checks run in order, each with a one-line verdict and, when it fails, what to do:
//! the configuration, the provider and base URL, the API key (masked), the proxy, DNS,
//! TCP and TLS to the base URL (with timings and the CA bundle), every profile's model
//! (`GET /models/{id}`, or the model list where ids hold a `/`), and with `--live` one
//! small real call per profile. The HTTP steps go through the runtime's own client (a
//! [`DoctorHttp`]), so the proxy, CA file and key header are the ones calls use.

mod checks;
mod http;
mod models;
pub mod net;
mod prices;
mod report;

use responses_mcp_config::cli::DoctorFlags;
use responses_mcp_config::{ConfigError, Startup};
use std::path::PathBuf;

pub use http::{not_json, timed_out, DoctorHttp};
pub use report::{Check, Report, Status};

/// A `doctor` run, launched: the configuration as far as it loaded.
#[derive(Debug)]
pub struct Doctor {
    flags: DoctorFlags,
    loaded: Result<Box<Startup>, ConfigError>,
    /// The configuration file looked for, and whether it was there.
    config_file: Option<(PathBuf, bool)>,
}

impl Doctor {
    pub(crate) fn new(
        flags: DoctorFlags,
        loaded: Result<Box<Startup>, ConfigError>,
        config_file: Option<(PathBuf, bool)>,
    ) -> Doctor {
        Doctor {
            flags,
            loaded,
            config_file,
        }
    }

    /// The configuration, when it loaded (the runtime builds its client from it).
    pub fn startup(&self) -> Option<&Startup> {
        self.loaded.as_deref().ok()
    }

    /// Runs every check, prints the report (human or JSON) to stdout and returns the exit
    /// status: 0 when everything a call needs passed, 1 otherwise.
    pub fn run(self, http: Option<&mut dyn DoctorHttp>) -> i32 {
        let report = self.report(http);
        let text = if self.flags.json {
            report.json()
        } else {
            report.human()
        };
        let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
        if report.ok() {
            0
        } else {
            1
        }
    }

    /// Runs every check.
    pub fn report(&self, http: Option<&mut dyn DoctorHttp>) -> Report {
        let mut report = Report::default();
        let startup = match &self.loaded {
            Ok(startup) => startup,
            Err(e) => {
                report.push(checks::config_failed(self.config_file.as_ref(), e));
                return report;
            }
        };
        checks::run_all(
            &mut report,
            startup,
            self.config_file.as_ref(),
            self.flags,
            http,
        );
        report
    }
}
