//! A loopback OTLP/HTTP trace receiver: it accepts `POST /v1/traces`, decodes each body
//! with the official OTLP protobuf messages (`opentelemetry-proto`), answers 200, and
//! keeps what it received for the test to look at.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
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

/// See the module docs.
pub struct Collector {
    pub addr: SocketAddr,
    exports: Arc<Mutex<Vec<Export>>>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let exports = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&exports);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = Arc::clone(&kept);
                thread::spawn(move || serve(stream, &kept));
            }
        });
        Collector { addr, exports }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for this receiver.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every export so far.
    pub fn exports(&self) -> Vec<Export> {
        self.exports.lock().unwrap().clone()
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

/// Reads requests off one connection until it closes.
fn serve(stream: TcpStream, exports: &Mutex<Vec<Export>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0usize);
        let mut raw = vec![0; length];
        if reader.read_exact(&mut raw).is_err() {
            return;
        }
        let request = ExportTraceServiceRequest::decode(&raw[..])
            .unwrap_or_else(|e| panic!("not an OTLP trace export: {e}"));
        exports.lock().unwrap().push(Export {
            path,
            headers,
            raw,
            request,
        });
        let reply =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
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
