//! The trace exporter's client: a ureq agent of its own on the exporter's thread, direct
//! (collectors sit beside the service) with the built-in roots and no provider
//! credentials.

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
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(crate::upstream::tls_config(None))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(responses_mcp_config::USER_AGENT)
        // One deadline over connecting, writing and reading (`OTEL_EXPORTER_OTLP_TIMEOUT`):
        // past it the batch is dropped and counted.
        .timeout_global(Some(export.timeout))
        // ureq's 128 KiB default buffers were allocated and zeroed for every connection:
        // an export streams through the attempts' sizes as well.
        .input_buffer_size(crate::upstream::INPUT_BUFFER)
        .output_buffer_size(crate::upstream::OUTPUT_BUFFER)
        .build()
        .into();
    Box::new(
        move |url: &str, headers: &[(String, String)], body: Vec<u8>| {
            let mut request = agent
                .post(url)
                .header("content-type", "application/x-protobuf");
            for (name, value) in headers {
                request = request.header(name.as_str(), value.as_str());
            }
            match request.send(&body[..]) {
                Ok(response) => Ok(response.status().as_u16()),
                Err(e) => Err(PostError(e.to_string())),
            }
        },
    )
}
