//! Traces as data: the spans the server makes of its work, for the host to export (OTLP,
//! off the request path), like call records. Nothing here does IO or reads a clock: a
//! span's times are the `Instant`s of the inputs that began and ended it, which the host
//! turns into wall-clock time when it exports.
//!
//! One span per MCP request (kind server, the OpenTelemetry MCP conventions), continuing
//! the caller's W3C trace context when it sends one; under a `tools/call`, one span per
//! upstream attempt (kind client, the HTTP client conventions, a retry its own span) and
//! per round trip to the shared store for its admission; the identity provider's key
//! fetches are spans of their own traces. Names, counts and codes only: never a query, an
//! answer, a token or a key.

use crate::trace_context::{Sampler, TraceParent};
use std::collections::VecDeque;
use std::time::Instant;

/// Spans kept for the host at most (it drains them after every input; beyond, the newest
/// are dropped and counted).
pub const MAX_QUEUED: usize = 4096;

/// A span begun and not yet ended: what its children and its end need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanStart {
    /// The trace.
    pub trace_id: [u8; 16],
    /// This span.
    pub span_id: [u8; 8],
    /// The span it continues (the caller's, for a request), if any.
    pub parent_id: Option<[u8; 8]>,
    /// When it began.
    pub start: Instant,
}

/// Who a span is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A request this server answered.
    Server,
    /// A request this server made.
    Client,
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
}

/// A finished span.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The trace it belongs to.
    pub trace_id: [u8; 16],
    /// Its id.
    pub span_id: [u8; 8],
    /// Its parent's id (in this trace), if any.
    pub parent_id: Option<[u8; 8]>,
    /// Its name, as the conventions spell it (`tools/call answer`, `POST`).
    pub name: String,
    /// Server or client.
    pub kind: SpanKind,
    /// When it began and ended (the host turns them into wall-clock time).
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// Its attributes, by their conventional names.
    pub attributes: Vec<(&'static str, Value)>,
    /// Whether it ended in an error (`error.type` says which).
    pub failed: bool,
}

/// Decides which traces are recorded, mints span ids and keeps the finished spans until
/// the host takes them. Off (`None` sampler) it does nothing and costs a branch.
pub(crate) struct Tracer {
    sampler: Option<Sampler>,
    /// State of the id sequence (SplitMix64 over the runtime's random seed).
    state: u64,
    spans: VecDeque<Span>,
    dropped: u64,
}

impl Tracer {
    /// A tracer sampling as `sampler` says (`None`: tracing off), its ids from `seed`.
    pub(crate) fn new(sampler: Option<Sampler>, seed: u64) -> Tracer {
        Tracer {
            sampler,
            state: seed ^ 0x5DEE_CE66_D1CE_4E5B,
            spans: VecDeque::new(),
            dropped: 0,
        }
    }

    /// Whether spans are made at all.
    pub(crate) fn is_on(&self) -> bool {
        self.sampler.is_some()
    }

    fn next(&mut self) -> u64 {
        // SplitMix64: ids need to be unique and unguessable enough to not collide across
        // instances, not secret.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn span_id(&mut self) -> [u8; 8] {
        loop {
            let id = self.next().to_be_bytes();
            if id != [0; 8] {
                return id;
            }
        }
    }

    /// A request's span begun at `start`, continuing `parent` (the caller's context) or
    /// starting a trace; `None` when tracing is off or the sampler leaves it out.
    pub(crate) fn begin(
        &mut self,
        parent: Option<&TraceParent>,
        start: Instant,
    ) -> Option<SpanStart> {
        let sampler = self.sampler?;
        let trace_id = match parent {
            Some(parent) => parent.trace_id,
            None => {
                let mut id = [0; 16];
                id[..8].copy_from_slice(&self.next().to_be_bytes());
                id[8..].copy_from_slice(&self.next().to_be_bytes());
                if id == [0; 16] {
                    id[15] = 1;
                }
                id
            }
        };
        if !sampler.samples(&trace_id, parent) {
            return None;
        }
        Some(SpanStart {
            trace_id,
            span_id: self.span_id(),
            parent_id: parent.map(|p| p.parent_id),
            start,
        })
    }

    /// A child of `parent` begun at `start` (same trace, recorded with it).
    pub(crate) fn child(&mut self, parent: &SpanStart, start: Instant) -> SpanStart {
        SpanStart {
            trace_id: parent.trace_id,
            span_id: self.span_id(),
            parent_id: Some(parent.span_id),
            start,
        }
    }

    /// Keeps `span` for the host; beyond [`MAX_QUEUED`], drops it and counts.
    pub(crate) fn end(&mut self, span: Span) {
        if self.spans.len() >= MAX_QUEUED {
            self.dropped += 1;
            return;
        }
        self.spans.push_back(span);
    }

    /// The next finished span, oldest first.
    pub(crate) fn poll(&mut self) -> Option<Span> {
        self.spans.pop_front()
    }

    /// Counts `n` spans the host's exporter dropped (its queue full, or an export that
    /// failed or timed out): one count of every span lost, whichever queue lost it.
    pub(crate) fn lost_by_host(&mut self, n: u64) {
        self.dropped = self.dropped.saturating_add(n);
    }

    /// Spans dropped: not taken by the host in time, or lost by its exporter.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl SpanStart {
    /// This span ended at `end`, named and described as the conventions say.
    pub(crate) fn ended(
        &self,
        (name, kind): (String, SpanKind),
        end: Instant,
        attributes: Vec<(&'static str, Value)>,
        failed: bool,
    ) -> Span {
        Span {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_id: self.parent_id,
            name,
            kind,
            start: self.start,
            end,
            attributes,
            failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace_context::{Ratio, Root};

    fn parent(flags: u8) -> TraceParent {
        TraceParent {
            trace_id: [7; 16],
            parent_id: [9; 8],
            flags,
        }
    }

    #[test]
    fn off_makes_nothing_and_a_sampled_caller_is_continued() {
        let t0 = crate::testing::start_instant();
        let mut off = Tracer::new(None, 1);
        assert!(off.begin(Some(&parent(1)), t0).is_none());
        let mut on = Tracer::new(Some(Sampler::ParentBased(Root::AlwaysOn)), 1);
        let span = on.begin(Some(&parent(1)), t0).unwrap();
        assert_eq!((span.trace_id, span.parent_id), ([7; 16], Some([9; 8])));
        assert!(
            on.begin(Some(&parent(0)), t0).is_none(),
            "the caller did not sample"
        );
        let root = on.begin(None, t0).unwrap();
        assert_ne!(root.trace_id, [0; 16]);
        assert_eq!(root.parent_id, None);
        let child = on.child(&root, t0);
        assert_eq!(
            (child.trace_id, child.parent_id),
            (root.trace_id, Some(root.span_id))
        );
        assert_ne!(child.span_id, root.span_id);
    }

    #[test]
    fn a_ratio_samples_about_its_share() {
        let t0 = crate::testing::start_instant();
        let mut tracer = Tracer::new(Some(Sampler::TraceIdRatio(Ratio::new(0.25))), 42);
        let kept = (0..4000)
            .filter(|_| tracer.begin(None, t0).is_some())
            .count();
        assert!((800..1200).contains(&kept), "{kept} of 4000");
    }

    #[test]
    fn the_queue_is_bounded_and_counts_what_it_drops() {
        let t0 = crate::testing::start_instant();
        let mut tracer = Tracer::new(Some(Sampler::AlwaysOn), 3);
        let start = tracer.begin(None, t0).unwrap();
        for _ in 0..MAX_QUEUED + 5 {
            tracer.end(start.ended(("ping".into(), SpanKind::Server), t0, Vec::new(), false));
        }
        assert_eq!(tracer.dropped(), 5);
        assert_eq!(std::iter::from_fn(|| tracer.poll()).count(), MAX_QUEUED);
    }
}
