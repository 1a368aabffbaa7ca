//! The doctor's report: one verdict per check, as text for people or JSON for scripts.

use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::Duration;

/// A check's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Passed.
    Ok,
    /// Works, but something deserves attention.
    Warn,
    /// A call cannot work until this is fixed.
    Fail,
    /// Not run (not applicable, or an earlier step failed).
    Skip,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Which check (`configuration`, `dns`, `model answer`…).
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// One line: what was found.
    pub summary: String,
    /// What to do, when it did not pass.
    pub advice: Option<String>,
    /// How long it took, for the network steps.
    pub took: Option<Duration>,
    /// Details for scripts.
    pub details: Value,
}

impl Check {
    /// A verdict without advice, time or details.
    pub fn new(name: impl Into<String>, status: Status, summary: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status,
            summary: summary.into(),
            advice: None,
            took: None,
            details: Value::Null,
        }
    }

    /// With what to do.
    pub fn advice(mut self, advice: impl Into<String>) -> Check {
        self.advice = Some(advice.into());
        self
    }

    /// With its time.
    pub fn took(mut self, took: Duration) -> Check {
        self.took = Some(took);
        self
    }

    /// With details for scripts.
    pub fn details(mut self, details: Value) -> Check {
        self.details = details;
        self
    }
}

/// Every check, in the order run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    /// Adds a check.
    pub fn push(&mut self, check: Check) {
        self.checks.push(check);
    }

    /// Whether everything a call needs passed.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// Whether the check `name` failed.
    pub fn failed(&self, name: &str) -> bool {
        self.checks
            .iter()
            .any(|c| c.name == name && c.status == Status::Fail)
    }

    /// The report for people: one line per check, advice indented below.
    pub fn human(&self) -> String {
        let mut out = format!(
            "openai-responses-mcp {} doctor\n",
            responses_mcp_config::VERSION
        );
        for c in &self.checks {
            let mark = match c.status {
                Status::Ok => "[ok]  ",
                Status::Warn => "[warn]",
                Status::Fail => "[FAIL]",
                Status::Skip => "[skip]",
            };
            let took = c
                .took
                .map(|t| format!(" ({} ms)", t.as_millis()))
                .unwrap_or_default();
            let _ = writeln!(out, "{mark} {}: {}{took}", c.name, c.summary);
            if let Some(advice) = &c.advice {
                let _ = writeln!(out, "       -> {advice}");
            }
        }
        let verdict = match self.ok() {
            true => "ready: a call can work with this setup",
            false => "not ready: fix what is marked FAIL, then run doctor again",
        };
        let _ = writeln!(out, "{verdict}");
        out
    }

    /// The report for scripts.
    pub fn json(&self) -> String {
        let checks: Vec<Value> = self
            .checks
            .iter()
            .map(|c| {
                json!({
                    "check": c.name,
                    "status": c.status.as_str(),
                    "summary": c.summary,
                    "advice": c.advice,
                    "ms": c.took.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
                    "details": c.details,
                })
            })
            .collect();
        let out =
            json!({ "version": responses_mcp_config::VERSION, "ok": self.ok(), "checks": checks });
        format!("{out:#}\n")
    }
}
