//! The trace exporter's client: the runtime's own HTTP client, on the exporter's thread
//! (a small executor of its own), so that exports never share the serving loop.

use crate::upstream::Upstream;
use responses_mcp_config::traces::export::Exporter;
use responses_mcp_config::Startup;

/// The exporter `startup` asks for (`OTEL_*`), or none.
pub fn exporter(startup: &Startup) -> Option<Exporter> {
    let export = startup.traces.clone()?;
    let client = Upstream::collector();
    let post = Box::new(
        move |url: &str, headers: &[(String, String)], body: Vec<u8>| {
            smol::block_on(client.export(url, headers, body)).map_err(|e| e.detail)
        },
    );
    Some(Exporter::start(export, post))
}
