//! The trace exporter's client: the runtime's own HTTP client, on the exporter's thread
//! (a small executor of its own), so that exports never share the serving loop.

#[cfg(feature = "traces")]
use crate::upstream::Upstream;
#[cfg(feature = "traces")]
use responses_mcp_config::traces::TraceExport;
#[cfg(feature = "traces")]
use responses_mcp_host::export::{Post, PostError};

/// A build without the `traces` feature has no collector to POST to.
#[cfg(not(feature = "traces"))]
pub use responses_mcp_host::export::unposted as post;

/// How the exporter POSTs a batch to `export`'s collector.
#[cfg(feature = "traces")]
pub fn post(export: &TraceExport) -> Post {
    let client = Upstream::collector();
    let timeout = export.timeout;
    Box::new(
        move |url: &str, headers: &[(String, String)], body: Vec<u8>| {
            // One deadline over connecting, writing and reading: past it the export is
            // dropped, and with it its connection, so a collector that accepts and never
            // answers holds one batch, not every batch after it.
            let export = async {
                client
                    .export(url, headers, body)
                    .await
                    .map_err(|e| PostError(e.detail))
            };
            let expired = async {
                smol::Timer::after(timeout).await;
                Err(PostError(format!(
                    "the collector did not answer within {timeout:?}"
                )))
            };
            smol::block_on(smol::future::or(export, expired))
        },
    )
}
