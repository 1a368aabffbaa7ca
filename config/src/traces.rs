//! Traces over OTLP, opt-in by the OpenTelemetry SDK's standard variables: without an
//! endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`), or
//! with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`, no span is made. The
//! protocol is OTLP/HTTP with protobuf, the specification's default; a request for
//! another (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`) is warned about and traces stay off.
//! The core makes the spans ([`responses_mcp_core::spans`]); the host crate's exporter
//! sends them from a thread of its own, in batches, never in the way of a call.

use crate::env::Env;
use responses_mcp_core::trace_context::{Ratio, Root, Sampler};
use std::time::Duration;

/// Where spans go and what describes this service in them.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceExport {
    /// The OTLP/HTTP traces URL (`…/v1/traces`).
    pub endpoint: String,
    /// Headers every export carries (`OTEL_EXPORTER_OTLP_HEADERS`): often a credential,
    /// so never printed.
    pub headers: Vec<(String, String)>,
    /// The resource's attributes, `service.name` first.
    pub resource: Vec<(String, String)>,
    /// How long one export may take, connecting, writing and reading its answer
    /// included (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or `OTEL_EXPORTER_OTLP_TIMEOUT`);
    /// past it the batch is dropped and counted, and the connection closed.
    pub timeout: Duration,
}

impl TraceExport {
    /// `scheme://host[:port]` of the endpoint: what logs may show of it (the URL may hold
    /// a password before the `@` or a token in its path or query).
    pub fn origin(&self) -> String {
        crate::base_url::origin(&self.endpoint)
    }
}

impl std::fmt::Debug for TraceExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("TraceExport")
            .field("endpoint", &self.origin())
            .field("headers", &names)
            .field("resource", &self.resource)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why the trace variables cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// An endpoint that is no `http://` or `https://` URL.
    #[error("{variable} is not an http:// or https:// URL: set it to the collector's OTLP/HTTP address, such as http://localhost:4318")]
    Endpoint {
        /// The variable.
        variable: &'static str,
    },
    /// A `key=value,…` list that does not read as one.
    #[error("{variable} is not a comma-separated list of key=value pairs (values percent-encoded): entry {entry} is not")]
    List {
        /// The variable.
        variable: &'static str,
        /// The 1-based position of the first bad entry (its text may be a secret).
        entry: usize,
    },
    /// A timeout that is no whole number of milliseconds in range.
    #[error("{variable} is not a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}: set it to how long one export to the collector may take, such as 10000 (the default)")]
    Timeout {
        /// The variable.
        variable: &'static str,
    },
}

/// The default service name.
pub const SERVICE_NAME: &str = "openai-responses-mcp";

/// How long one export may take unless a variable says otherwise: the OTLP exporter
/// specification's default (10 s; opentelemetry.io/docs/specs/otel/protocol/exporter,
/// `OTEL_EXPORTER_OTLP_TIMEOUT`, read 2026-11-29).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest export timeout taken, in milliseconds: an export that never ends must not
/// be configurable, or one collector that stops answering holds every later batch.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Reads the variables: `None` when traces are off; warnings for what is ignored.
///
/// # Errors
/// [`TraceError`] when a variable is set but cannot be read.
pub fn resolve(env: &Env) -> Result<Option<(TraceExport, Sampler)>, TraceError> {
    let get = |name: &str| {
        env.get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    match get("OTEL_TRACES_EXPORTER").map(|v| v.to_ascii_lowercase()) {
        Some(v) if v == "none" => return Ok(None),
        Some(v) if v != "otlp" => {
            log::warn!(
                "OTEL_TRACES_EXPORTER={v} is not supported (only otlp): no traces are exported"
            );
            return Ok(None);
        }
        _ => {}
    }
    let endpoint = match (
        get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        get("OTEL_EXPORTER_OTLP_ENDPOINT"),
    ) {
        (Some(url), _) => (url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        (None, Some(base)) => (signal_url(&base), "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (None, None) => return Ok(None),
    };
    let (endpoint, variable) = endpoint;
    let scheme = endpoint.split("://").next().unwrap_or_default();
    if !endpoint.contains("://")
        || !["http", "https"].contains(&scheme.to_ascii_lowercase().as_str())
    {
        return Err(TraceError::Endpoint { variable });
    }
    let protocol =
        get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(protocol) = protocol.filter(|p| p != "http/protobuf") {
        log::warn!("the OTLP protocol {protocol} is not supported (only http/protobuf): no traces are exported");
        return Ok(None);
    }
    let headers = match get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") {
        Some(list) => pairs(&list, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")?,
        None => match get("OTEL_EXPORTER_OTLP_HEADERS") {
            Some(list) => pairs(&list, "OTEL_EXPORTER_OTLP_HEADERS")?,
            None => Vec::new(),
        },
    };
    let mut resource = match get("OTEL_RESOURCE_ATTRIBUTES") {
        Some(list) => pairs(&list, "OTEL_RESOURCE_ATTRIBUTES")?,
        None => Vec::new(),
    };
    let named = resource.iter().position(|(k, _)| k == "service.name");
    let service = get("OTEL_SERVICE_NAME")
        .or_else(|| named.map(|i| resource.remove(i).1))
        .unwrap_or_else(|| SERVICE_NAME.to_owned());
    resource.retain(|(k, _)| k != "service.name");
    resource.insert(0, ("service.name".into(), service));
    if !resource.iter().any(|(k, _)| k == "service.version") {
        resource.push(("service.version".into(), crate::version::VERSION.into()));
    }
    let timeout = match (
        get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"),
        get("OTEL_EXPORTER_OTLP_TIMEOUT"),
    ) {
        (Some(ms), _) => timeout(&ms, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")?,
        (None, Some(ms)) => timeout(&ms, "OTEL_EXPORTER_OTLP_TIMEOUT")?,
        (None, None) => DEFAULT_TIMEOUT,
    };
    let sampler = sampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG"));
    Ok(Some((
        TraceExport {
            endpoint,
            headers,
            resource,
            timeout,
        },
        sampler,
    )))
}

/// The traces URL under the base `OTEL_EXPORTER_OTLP_ENDPOINT`: `v1/traces` joins the
/// base's path, before any query, which stays (a collector may take its token there). The
/// OTLP exporter specification (opentelemetry.io/docs/specs/otel/protocol/exporter,
/// "Endpoint URLs for OTLP/HTTP", read 2026-11-29) builds per-signal URLs relative to the
/// base's path and lets an exporter ignore every component but scheme, host, port and
/// path; the fragment, never sent, is dropped.
fn signal_url(base: &str) -> String {
    let base = base.split('#').next().unwrap_or_default();
    let (path, query) = match base.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (base, None),
    };
    let mut url = format!("{}/v1/traces", path.trim_end_matches('/'));
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// An export timeout in milliseconds, 1 to [`MAX_TIMEOUT_MS`]. Some SDKs read 0 as "no
/// timeout"; here it is refused, since an export without one is what stops exports.
fn timeout(ms: &str, variable: &'static str) -> Result<Duration, TraceError> {
    match ms.parse::<u64>() {
        Ok(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Duration::from_millis(ms)),
        _ => Err(TraceError::Timeout { variable }),
    }
}

/// `OTEL_TRACES_SAMPLER` and its argument; what is not understood is warned about and
/// the default (`parentbased_always_on`) used, as the specification says.
fn sampler(name: Option<String>, arg: Option<String>) -> Sampler {
    let ratio = || {
        let parsed = arg.as_deref().map(str::parse::<f64>);
        match parsed {
            None => Ratio::new(1.0),
            Some(Ok(r)) if (0.0..=1.0).contains(&r) => Ratio::new(r),
            Some(_) => {
                log::warn!(
                    "OTEL_TRACES_SAMPLER_ARG is not a number from 0 to 1: every trace is sampled"
                );
                Ratio::new(1.0)
            }
        }
    };
    match name.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("parentbased_always_on") => Sampler::ParentBased(Root::AlwaysOn),
        Some("always_on") => Sampler::AlwaysOn,
        Some("always_off") => Sampler::AlwaysOff,
        Some("traceidratio") => Sampler::TraceIdRatio(ratio()),
        Some("parentbased_always_off") => Sampler::ParentBased(Root::AlwaysOff),
        Some("parentbased_traceidratio") => Sampler::ParentBased(Root::TraceIdRatio(ratio())),
        Some(other) => {
            log::warn!(
                "OTEL_TRACES_SAMPLER={other} is not supported: parentbased_always_on is used"
            );
            Sampler::ParentBased(Root::AlwaysOn)
        }
    }
}

/// A `key=value,key2=value2` list (W3C Baggage's form, values percent-encoded), as
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES` take it.
///
/// # Errors
/// [`TraceError::List`] naming the first entry that is no `key=value`.
pub fn pairs(list: &str, variable: &'static str) -> Result<Vec<(String, String)>, TraceError> {
    let mut out = Vec::new();
    for (i, entry) in list.split(',').enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let bad = || TraceError::List {
            variable,
            entry: i + 1,
        };
        let (key, value) = entry.split_once('=').ok_or_else(bad)?;
        let key = key.trim();
        if key.is_empty() || key.bytes().any(|b| b.is_ascii_control() || b == b' ') {
            return Err(bad());
        }
        // Decoded as the proxy's credentials are: UTF-8, no control character (a header).
        let value = crate::percent::percent_decode(value.trim()).ok_or_else(bad)?;
        out.push((key.to_owned(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn off_without_an_endpoint_or_when_disabled() {
        assert_eq!(resolve(&env(&[])), Ok(None));
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        assert_eq!(
            resolve(&env(&[base, ("OTEL_SDK_DISABLED", "TRUE")])),
            Ok(None)
        );
        assert_eq!(
            resolve(&env(&[base, ("OTEL_TRACES_EXPORTER", "none")])),
            Ok(None)
        );
        assert_eq!(
            resolve(&env(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])),
            Ok(None)
        );
    }

    #[test]
    fn the_standard_variables_are_read() {
        let (export, sampler) = resolve(&env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=s%3Dcret , x-team=search",
            ),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,service.name=from-attrs",
            ),
            ("OTEL_SERVICE_NAME", "mcp-search"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(export.endpoint, "https://collector:4318/v1/traces");
        assert_eq!(
            export.headers,
            [
                ("api-key".into(), "s=cret".into()),
                ("x-team".into(), "search".into())
            ]
        );
        assert_eq!(
            export.resource[0],
            ("service.name".into(), "mcp-search".into())
        );
        assert!(export
            .resource
            .contains(&("deployment.environment".into(), "prod".into())));
        assert_eq!(
            sampler,
            Sampler::ParentBased(Root::TraceIdRatio(Ratio::new(0.25)))
        );
        assert!(
            !format!("{export:?}").contains("cret"),
            "header values are never printed"
        );
        let (export, sampler) = resolve(&env(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"),
            ("OTEL_TRACES_SAMPLER", "bogus"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(export.endpoint, "http://c:4318/custom");
        let base = |url: &str| {
            let vars = env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", url)]);
            resolve(&vars).unwrap().unwrap().0.endpoint
        };
        assert_eq!(
            base("http://u:pw@c:4318/x?token=q#frag"),
            "http://u:pw@c:4318/x/v1/traces?token=q",
            "the signal path joins the path, before the query"
        );
        assert_eq!(
            base("http://c:4318/x/?a=1"),
            "http://c:4318/x/v1/traces?a=1"
        );
        let vars = env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://user:SECRETPW@127.0.0.1:18501/x?token=SECRETQ",
        )]);
        let export = resolve(&vars).unwrap().unwrap().0;
        assert_eq!(export.origin(), "http://127.0.0.1:18501");
        assert!(
            !format!("{export:?}").contains("SECRET"),
            "only the origin is printed: {export:?}"
        );
        assert_eq!(
            export.resource[0],
            ("service.name".into(), SERVICE_NAME.into())
        );
        assert_eq!(sampler, Sampler::ParentBased(Root::AlwaysOn));
        assert_eq!(export.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_export_timeout_is_read_and_never_unbounded() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let timeout = |vars: &[(&str, &str)]| {
            let mut all = vec![base];
            all.extend_from_slice(vars);
            resolve(&env(&all)).map(|r| r.map(|(export, _)| export.timeout))
        };
        assert_eq!(
            timeout(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")]),
            Ok(Some(Duration::from_millis(2500)))
        );
        assert_eq!(
            timeout(&[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700")
            ]),
            Ok(Some(Duration::from_millis(700)))
        );
        for bad in ["0", "-1", "10s", "600001"] {
            assert_eq!(
                timeout(&[("OTEL_EXPORTER_OTLP_TIMEOUT", bad)]),
                Err(TraceError::Timeout {
                    variable: "OTEL_EXPORTER_OTLP_TIMEOUT"
                }),
                "{bad}"
            );
        }
    }

    #[test]
    fn what_cannot_be_read_is_named_without_its_value() {
        let bad = resolve(&env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "good=1,secret-without-equals"),
        ]));
        let Err(error) = bad else { panic!("{bad:?}") };
        let text = error.to_string();
        assert!(
            text.contains("OTEL_EXPORTER_OTLP_HEADERS") && text.contains("entry 2"),
            "{text}"
        );
        assert!(!text.contains("secret"), "{text}");
        assert_eq!(
            resolve(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")])),
            Err(TraceError::Endpoint {
                variable: "OTEL_EXPORTER_OTLP_ENDPOINT"
            })
        );
        assert!(pairs("a=%zz", "X").is_err());
        assert!(pairs("a=%0a", "X").is_err(), "no control characters");
    }
}
