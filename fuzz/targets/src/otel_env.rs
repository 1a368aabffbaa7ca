//! The `otel_env` fuzz target.

use responses_mcp_config::traces::{pairs, resolve, TraceError};
use responses_mcp_config::Env;

/// The trace variables from arbitrary text, one value per line in a fixed order:
/// reading them never panics; a resolved export has an http(s) `…` endpoint and
/// `service.name` first, headers without control characters, a bounded export timeout;
/// an error names its variable and an entry's position only.
pub fn otel_env(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let names = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_SERVICE_NAME",
        "OTEL_TRACES_SAMPLER",
        "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SDK_DISABLED",
        // Last, so that the committed corpus keeps its meaning.
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ];
    let env: Env = names
        .iter()
        .zip(text.split('\n'))
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| ((*k).to_owned(), v.to_owned()))
        .collect();
    match resolve(&env) {
        Ok(Some((export, _))) => {
            let scheme = export.endpoint.split("://").next().unwrap_or_default();
            assert!(["http", "https"].contains(&scheme.to_ascii_lowercase().as_str()));
            assert_eq!(export.resource[0].0, "service.name");
            for (name, value) in &export.headers {
                assert!(!name.is_empty() && !value.chars().any(char::is_control));
            }
            // Every export ends: never an unbounded (or zero) timeout.
            let ms = export.timeout.as_millis();
            assert!((1..=u128::from(responses_mcp_config::traces::MAX_TIMEOUT_MS)).contains(&ms));
        }
        Ok(None) => {}
        // An error carries a variable's name and an entry's position, never input text.
        Err(TraceError::Endpoint { variable }) => assert!(variable.ends_with("ENDPOINT")),
        Err(TraceError::List { variable, entry }) => {
            assert!(variable.starts_with("OTEL_") && entry >= 1);
        }
        Err(TraceError::Timeout { variable }) => assert!(variable.ends_with("TIMEOUT")),
    }
    let _ = pairs(text, "X");
}
