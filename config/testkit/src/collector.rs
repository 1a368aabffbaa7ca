//! A loopback OTLP/HTTP trace receiver: the fake provider's server (which records every
//! request) answering `POST /v1/traces` with 200, each body decoded with the official
//! OTLP protobuf messages (`opentelemetry-proto`) for the test to look at.

use crate::fake_openai::{Action, FakeOpenAi};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::thread;
use std::time::{Duration, Instant};

/// One export as it arrived.
#[derive(Clone, Debug)]
pub struct Export {
    /// The request's path.
    pub path: String,
    /// Its headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// Its body as sent.
    pub raw: Vec<u8>,
    /// The body decoded.
    pub request: ExportTraceServiceRequest,
}

/// See the module docs: the fake provider's HTTP server, answering every export 200.
pub struct Collector {
    server: FakeOpenAi,
}

impl Collector {
    pub fn start() -> Collector {
        // An empty 200: the exporter reads only the status.
        let server = FakeOpenAi::start(|_, _| Action::json(200, b""));
        Collector { server }
    }

    /// A collector whose first export is accepted, read and never answered (a collector
    /// that stopped answering: the connection stays open until the exporter closes it),
    /// and every later one answered 200.
    pub fn silent_first() -> Collector {
        let server = FakeOpenAi::start(|_, i| match i {
            0 => Action::Hang,
            _ => Action::json(200, b""),
        });
        Collector { server }
    }

    /// The exports whose connection the exporter closed without an answer, by index.
    pub fn abandoned(&self) -> Vec<usize> {
        self.server.closed().into_iter().map(|(i, _)| i).collect()
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for this receiver.
    pub fn base_url(&self) -> String {
        let url = &self.server.url;
        url.strip_suffix("/v1").unwrap_or(url).to_owned()
    }

    /// Every export so far, decoded.
    pub fn exports(&self) -> Vec<Export> {
        self.server
            .requests()
            .into_iter()
            .map(|r| Export {
                request: ExportTraceServiceRequest::decode(&r.raw_body[..])
                    .unwrap_or_else(|e| panic!("not an OTLP trace export: {e}")),
                path: r.path,
                headers: r.headers,
                raw: r.raw_body,
            })
            .collect()
    }

    /// Every span so far, with its resource's attributes.
    pub fn spans(&self) -> Vec<(Vec<KeyValue>, Span)> {
        let mut out = Vec::new();
        for export in self.exports() {
            for resource in export.request.resource_spans {
                let attributes = resource.resource.map(|r| r.attributes).unwrap_or_default();
                for scope in resource.scope_spans {
                    for span in scope.spans {
                        out.push((attributes.clone(), span));
                    }
                }
            }
        }
        out
    }

    /// Waits until `done(spans)`, failing with what arrived after `patience`.
    pub fn wait_for(&self, patience: Duration, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let start = Instant::now();
        loop {
            let spans: Vec<Span> = self.spans().into_iter().map(|(_, s)| s).collect();
            if done(&spans) {
                return spans;
            }
            assert!(
                start.elapsed() < patience,
                "spans did not arrive in time: {spans:#?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The value of attribute `key` of `attributes`, as text (numbers printed).
pub fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    Some(match value.value.as_ref()? {
        any_value::Value::StringValue(s) => s.clone(),
        any_value::Value::IntValue(i) => i.to_string(),
        any_value::Value::DoubleValue(d) => d.to_string(),
        any_value::Value::BoolValue(b) => b.to_string(),
        other => format!("{other:?}"),
    })
}

/// Lower-case hex of an id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
