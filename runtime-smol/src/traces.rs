//! The trace exporter's client: the runtime's own HTTP client, on the exporter's thread
//! (a small executor of its own), so that exports never share the serving loop.

use crate::upstream::Upstream;
use responses_mcp_config::Startup;
use responses_mcp_host::export::Exporter;

/// The exporter `startup` asks for (`OTEL_*`), or none.
pub fn exporter(startup: &Startup) -> Option<Exporter> {
    let export = startup.traces.clone()?;
    let client = Upstream::collector();
    let timeout = export.timeout;
    let post = Box::new(
        move |url: &str, headers: &[(String, String)], body: Vec<u8>| {
            // One deadline over connecting, writing and reading: past it the export is
            // dropped, and with it its connection, so a collector that accepts and never
            // answers holds one batch, not every batch after it.
            let export = async {
                client
                    .export(url, headers, body)
                    .await
                    .map_err(|e| e.detail)
            };
            let expired = async {
                smol::Timer::after(timeout).await;
                Err(format!("the collector did not answer within {timeout:?}"))
            };
            smol::block_on(smol::future::or(export, expired))
        },
    );
    Some(Exporter::start(export, post))
}
