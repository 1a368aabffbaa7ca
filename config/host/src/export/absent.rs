//! A build without the `traces` feature: no exporter, and no OTLP encoding linked. The
//! configuration warns at startup when `OTEL_*` asks for traces and resolves none, so the
//! serving loop never starts this exporter; its methods are there so the loop reads alike
//! in every build.

use responses_mcp_config::traces::TraceExport;
use responses_mcp_core::spans::Span;
use std::time::Duration;

/// How a runtime would POST a batch to the collector (the same type as with traces).
pub type Post = Box<dyn FnMut(&str, &[(String, String)], Vec<u8>) -> Result<u16, PostError> + Send>;

/// Why a POST to the collector failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PostError(pub String);

/// The runtimes' `post` in this build: there is no collector, so nothing is ever POSTed.
pub fn unposted(_export: &TraceExport) -> Post {
    Box::new(|_: &str, _: &[(String, String)], _: Vec<u8>| {
        Err(PostError("this build has no traces".into()))
    })
}

/// No exporter: spans offered to it are dropped (none are made in this build).
pub struct Exporter;

impl Exporter {
    /// Starts nothing: this build exports no spans.
    pub fn start(_export: TraceExport, _post: Post) -> Exporter {
        Exporter
    }

    /// Drops `span`.
    pub fn offer(&self, _span: Span) {}

    /// Always 0: nothing was queued.
    pub fn newly_dropped(&self) -> u64 {
        0
    }

    /// Nothing to flush.
    pub fn finish(self, _wait: Duration) {}
}
