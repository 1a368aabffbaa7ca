//! The exporter: spans go from the runtime's loop into a bounded queue (a full queue
//! drops the span and counts it; the loop never waits), and a thread of their own sends
//! them in batches as OTLP/HTTP protobuf (`ExportTraceServiceRequest`, the official
//! messages of `opentelemetry-proto`, encoded by `prost`). A collector that is slow or
//! down delays nothing but the exporter: a failed batch is dropped, counted and logged,
//! and no export outlives [`TraceExport::timeout`] (connecting, writing and reading
//! included), so a collector that accepts and never answers costs one batch per timeout,
//! not every batch after it. The runtime hands the count of what was dropped to the core
//! ([`Exporter::newly_dropped`]), which adds it to its own in `spans_dropped_total`.
//! How a batch is POSTed is the runtime's ([`Post`]), so each keeps its own HTTP client;
//! it must end within the timeout it is given.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span, status, ResourceSpans, ScopeSpans, Span, Status,
};
use prost::Message;
use responses_mcp_config::traces::TraceExport;
use responses_mcp_core::spans::{self as core_spans, SpanKind, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Spans waiting for the exporter at most.
pub const QUEUE: usize = 2048;
/// Spans in one export at most.
pub const BATCH: usize = 512;
/// How long a span waits for others to fill its batch.
pub const LINGER: Duration = Duration::from_secs(1);

/// How the runtime POSTs one export: `(url, headers, body)` to the status it got, or
/// why none came, within [`TraceExport::timeout`] (else an error). Runs on the
/// exporter's thread.
pub type Post = Box<dyn FnMut(&str, &[(String, String)], Vec<u8>) -> Result<u16, PostError> + Send>;

/// Why an export got no status: the client's words (never a header's value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PostError(pub String);

/// The runtime's end of the exporter.
pub struct Exporter {
    queue: Option<SyncSender<core_spans::Span>>,
    signal: Arc<Signal>,
    /// The exporter's thread, woken when a batch is full and at the end.
    thread: Option<std::thread::Thread>,
    dropped: Arc<AtomicU64>,
    /// How many of `dropped` the core has been told of.
    reported: AtomicU64,
    done: Receiver<()>,
}

impl Exporter {
    /// Starts the exporter's thread, sending to `export` through `post`.
    pub fn start(export: TraceExport, mut post: Post) -> Exporter {
        let (queue, spans) = sync_channel(QUEUE);
        let (finished, done) = sync_channel(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let lost = Arc::clone(&dropped);
        let signal = Arc::new(Signal::default());
        let told = Arc::clone(&signal);
        // One reading of both clocks for the exporter's life: every span's times are
        // converted alike, so a child never starts before its parent.
        let clock = Clock::now();
        let mut request = Request::new(&export);
        let started = std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || {
                while let Some(batch) = next_batch(&spans, &told) {
                    let n = batch.len();
                    let body = request.encode(batch, &clock);
                    match post(&export.endpoint, &export.headers, body) {
                        Ok(status) if (200..300).contains(&status) => {}
                        Ok(status) => {
                            drop_batch(&lost, n, &format!("the collector answered HTTP {status}"))
                        }
                        Err(why) => drop_batch(&lost, n, &why.0),
                    }
                }
                let _ = finished.send(());
            });
        let thread = match started {
            Ok(handle) => Some(handle.thread().clone()),
            Err(e) => {
                log::warn!("traces are not exported: the exporter's thread did not start ({e})");
                None
            }
        };
        Exporter {
            queue: Some(queue),
            signal,
            thread,
            dropped,
            reported: AtomicU64::new(0),
            done,
        }
    }

    /// Queues `span` for export, or drops and counts it when the queue is full.
    pub fn offer(&self, span: core_spans::Span) {
        let Some(queue) = &self.queue else {
            return;
        };
        match queue.try_send(span) {
            Ok(()) => {
                if self.signal.queued.fetch_add(1, Ordering::Relaxed) + 1 == BATCH {
                    self.wake();
                }
            }
            Err(TrySendError::Full(_)) => drop_batch(&self.dropped, 1, "the export queue is full"),
            Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn wake(&self) {
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }

    /// Spans dropped so far (a full queue, or a failed export).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Spans dropped since the last call: what the runtime hands the core
    /// (`Event::SpansDropped`) before each input, so a scrape counts every drop so far.
    pub fn newly_dropped(&self) -> u64 {
        let total = self.dropped();
        total.saturating_sub(self.reported.swap(total, Ordering::Relaxed))
    }

    /// Sends what is queued, waiting at most `wait` for it (at exit).
    pub fn finish(mut self, wait: Duration) {
        drop(self.queue.take());
        self.signal.closed.store(true, Ordering::Release);
        self.wake();
        if self.done.recv_timeout(wait).is_err() {
            log::debug!("the last spans were not exported within {wait:?}");
        }
    }
}

/// Counts `n` spans lost and says why, at most once per thousand.
fn drop_batch(lost: &AtomicU64, n: usize, why: &str) {
    let before = lost.fetch_add(n as u64, Ordering::Relaxed);
    if before / 1000 != (before + n as u64) / 1000 || before == 0 {
        log::warn!(
            "traces: {n} span(s) dropped ({why}); {} in all",
            before + n as u64
        );
    }
}

/// What the runtime's end tells the exporter's thread, which it wakes only for a full
/// batch and at the end: waiting on the queue itself woke the thread for every span, a
/// cost each call paid twice (issue 50's trace cost).
#[derive(Default)]
struct Signal {
    /// Spans queued and not yet taken.
    queued: AtomicUsize,
    /// The runtime is done: send what is queued.
    closed: AtomicBool,
}

/// The next batch: the first span waited for, then up to [`BATCH`] in all, taken once
/// [`LINGER`] has passed, the batch is full or the runtime is done; `None` once the
/// runtime is gone and nothing is left.
fn next_batch(
    spans: &Receiver<core_spans::Span>,
    signal: &Signal,
) -> Option<Vec<core_spans::Span>> {
    let first = spans.recv().ok()?;
    let until = Instant::now() + LINGER;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let full = signal.queued.load(Ordering::Relaxed) >= BATCH;
        if left.is_zero() || full || signal.closed.load(Ordering::Acquire) {
            break;
        }
        std::thread::park_timeout(left);
    }
    let mut batch = vec![first];
    batch.extend(spans.try_iter().take(BATCH - 1));
    signal.queued.fetch_sub(batch.len(), Ordering::Relaxed);
    Some(batch)
}

/// The two clocks read together: a span's `Instant`s become Unix nanoseconds by their
/// distance from this reading.
pub struct Clock {
    instant: Instant,
    unix_nanos: u128,
}

impl Clock {
    /// Both clocks, now.
    pub fn now() -> Clock {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Clock {
            instant: Instant::now(),
            unix_nanos: wall.as_nanos(),
        }
    }

    fn unix_nanos(&self, at: Instant) -> u64 {
        let nanos = match at.checked_duration_since(self.instant) {
            Some(after) => self.unix_nanos.saturating_add(after.as_nanos()),
            None => self
                .unix_nanos
                .saturating_sub(self.instant.duration_since(at).as_nanos()),
        };
        u64::try_from(nanos).unwrap_or(u64::MAX)
    }
}

/// What every `ExportTraceServiceRequest` of this exporter holds besides its spans (the
/// resource and the scope), built once and lent to each batch's request.
struct Request {
    resource: Option<Resource>,
    scope: Option<InstrumentationScope>,
}

impl Request {
    /// The resource and scope of `export`'s requests.
    fn new(export: &TraceExport) -> Request {
        let attributes = export
            .resource
            .iter()
            .map(|(k, v)| attribute(k.clone(), Value::Str(v.clone())))
            .collect();
        Request {
            resource: Some(Resource {
                attributes,
                ..Resource::default()
            }),
            scope: Some(InstrumentationScope {
                name: responses_mcp_config::traces::SERVICE_NAME.into(),
                version: responses_mcp_config::VERSION.into(),
                ..InstrumentationScope::default()
            }),
        }
    }

    /// One `ExportTraceServiceRequest` of `batch`, its times made wall-clock by `clock`,
    /// encoded by `prost` into a buffer of its exact length. The spans' names and text
    /// values move into the messages rather than being copied.
    fn encode(&mut self, batch: Vec<core_spans::Span>, clock: &Clock) -> Vec<u8> {
        let spans = batch.into_iter().map(|s| otlp_span(s, clock)).collect();
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: self.resource.take(),
                scope_spans: vec![ScopeSpans {
                    scope: self.scope.take(),
                    spans,
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        };
        let body = request.encode_to_vec();
        // The resource and scope back for the next batch.
        for resource_spans in request.resource_spans {
            self.resource = resource_spans.resource;
            for scope_spans in resource_spans.scope_spans {
                self.scope = scope_spans.scope;
            }
        }
        body
    }
}

/// `s` as OTLP's `Span`, its times made wall-clock by `clock`.
fn otlp_span(s: core_spans::Span, clock: &Clock) -> Span {
    Span {
        trace_id: s.trace_id.to_vec(),
        span_id: s.span_id.to_vec(),
        parent_span_id: s.parent_id.map(|p| p.to_vec()).unwrap_or_default(),
        name: s.name,
        kind: match s.kind {
            SpanKind::Server => span::SpanKind::Server,
            SpanKind::Client => span::SpanKind::Client,
        } as i32,
        start_time_unix_nano: clock.unix_nanos(s.start),
        end_time_unix_nano: clock.unix_nanos(s.end),
        attributes: s
            .attributes
            .into_iter()
            .map(|(k, v)| attribute(k.to_owned(), v))
            .collect(),
        status: Some(Status {
            code: if s.failed {
                status::StatusCode::Error
            } else {
                status::StatusCode::Unset
            } as i32,
            ..Status::default()
        }),
        ..Span::default()
    }
}

fn attribute(key: String, value: Value) -> KeyValue {
    let value = match value {
        Value::Str(s) => any_value::Value::StringValue(s),
        Value::Int(i) => any_value::Value::IntValue(i),
        Value::Float(f) => any_value::Value::DoubleValue(f),
    };
    KeyValue {
        key,
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_span(name: &str, failed: bool, start: Instant) -> core_spans::Span {
        core_spans::Span {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_id: Some([3; 8]),
            name: name.into(),
            kind: SpanKind::Client,
            start,
            end: start + Duration::from_millis(5),
            attributes: vec![
                ("http.request.method", Value::Str("POST".into())),
                ("http.response.status_code", Value::Int(200)),
            ],
            failed,
        }
    }

    /// Every batch's request carries the resource and scope, though they are built once.
    #[test]
    fn each_batch_is_a_whole_request() {
        let export = TraceExport {
            endpoint: "http://127.0.0.1:4318/v1/traces".into(),
            headers: Vec::new(),
            resource: vec![("service.name".into(), "svc".into())],
            timeout: Duration::from_secs(1),
        };
        let clock = Clock::now();
        let mut request = Request::new(&export);
        for (name, failed) in [("POST", false), ("tools/call answer", true)] {
            let body = request.encode(vec![core_span(name, failed, Instant::now())], &clock);
            let got = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            let [resource_spans] = got.resource_spans.as_slice() else {
                panic!("one ResourceSpans: {got:?}");
            };
            let resource = resource_spans.resource.as_ref().unwrap();
            assert_eq!(resource.attributes[0].key, "service.name");
            let [scope_spans] = resource_spans.scope_spans.as_slice() else {
                panic!("one ScopeSpans: {got:?}");
            };
            let scope = scope_spans.scope.as_ref().unwrap();
            assert_eq!(scope.name, responses_mcp_config::traces::SERVICE_NAME);
            let [span] = scope_spans.spans.as_slice() else {
                panic!("one span: {got:?}");
            };
            assert_eq!(span.name, name);
            assert_eq!((span.trace_id.len(), span.parent_span_id.len()), (16, 8));
            assert_eq!(span.kind, span::SpanKind::Client as i32);
            let code = span.status.as_ref().map(|s| s.code);
            let error = status::StatusCode::Error as i32;
            assert_eq!(code == Some(error), failed);
            assert_eq!(span.attributes.len(), 2);
            assert!(span.end_time_unix_nano > span.start_time_unix_nano);
        }
    }
}
