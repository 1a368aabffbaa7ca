//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): the `traceparent` a client
//! puts in a request's `params._meta` or HTTP headers, so that a call's log line and spans
//! join the client's trace (our call is a child span: same trace id, our own span id, the
//! parent's id kept), and the sampler that decides from it which traces are recorded. A
//! leaf: the settings name a sampler and the spans use both, and neither is imported here.

use std::fmt;

/// A parsed `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace, never all zeros.
    pub trace_id: [u8; 16],
    /// The caller's span, never all zeros.
    pub parent_id: [u8; 8],
    /// `trace-flags` (bit 0: sampled).
    pub flags: u8,
}

/// Why a `traceparent` was not taken (the spec says to start a new trace then).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// Not `version-traceid-parentid-flags` with the lengths of version 00.
    #[error("not version-traceid-parentid-flags (2, 32, 16 and 2 lower-case hex digits)")]
    Shape,
    /// Version `ff`, which the spec forbids.
    #[error("version ff is invalid")]
    ForbiddenVersion,
    /// A trace or parent id of zeros only.
    #[error("an all-zero trace id or parent id")]
    ZeroId,
}

impl TraceParent {
    /// Parses a header value. Version 00 must be exactly 55 characters; a later version
    /// may carry more fields after the flags, which are ignored (the spec's forward
    /// compatibility rule).
    ///
    /// # Errors
    /// [`TraceError`] when the value is not a valid `traceparent`.
    pub fn parse(value: &str) -> Result<TraceParent, TraceError> {
        let bytes = value.as_bytes();
        if bytes.len() < 55 {
            return Err(TraceError::Shape);
        }
        let version = hex_byte(&bytes[0..2]).ok_or(TraceError::Shape)?;
        let dashes = [2, 35, 52].iter().all(|&i| bytes[i] == b'-');
        if !dashes {
            return Err(TraceError::Shape);
        }
        if version == 0xff {
            return Err(TraceError::ForbiddenVersion);
        }
        match (version, bytes.get(55)) {
            (0, None) | (1.., Some(b'-')) | (1.., None) => {}
            _ => return Err(TraceError::Shape),
        }
        let mut trace_id = [0; 16];
        let mut parent_id = [0; 8];
        fill(&mut trace_id, &bytes[3..35])?;
        fill(&mut parent_id, &bytes[36..52])?;
        let flags = hex_byte(&bytes[53..55]).ok_or(TraceError::Shape)?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return Err(TraceError::ZeroId);
        }
        Ok(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }

    /// The `traceparent` of a child span `span_id` of this one.
    pub fn child(&self, span_id: [u8; 8]) -> TraceParent {
        TraceParent {
            parent_id: span_id,
            ..*self
        }
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            Hex(&self.trace_id),
            Hex(&self.parent_id),
            self.flags
        )
    }
}

/// Bytes as lower-case hex.
pub struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A table and one write a chunk, not `{:02x}` a byte: a traced call's record
        // writes four ids (issue 50's trace cost).
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 64];
        for chunk in self.0.chunks(32) {
            for (pair, b) in text.chunks_exact_mut(2).zip(chunk) {
                pair[0] = DIGITS[usize::from(b >> 4)];
                pair[1] = DIGITS[usize::from(b & 0xF)];
            }
            let hex = std::str::from_utf8(&text[..chunk.len() * 2]).map_err(|_| fmt::Error)?;
            f.write_str(hex)?;
        }
        Ok(())
    }
}

/// Two lower-case hex digits (the spec allows no upper case).
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    match pair {
        [hi, lo] => Some(digit(*hi)? << 4 | digit(*lo)?),
        _ => None,
    }
}

fn fill(out: &mut [u8], hex: &[u8]) -> Result<(), TraceError> {
    for (slot, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *slot = hex_byte(pair).ok_or(TraceError::Shape)?;
    }
    Ok(())
}

/// Which traces are recorded (`OTEL_TRACES_SAMPLER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// Every trace.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// A fraction of the traces, by their id (the same decision on every instance).
    TraceIdRatio(Ratio),
    /// The caller's decision when it sent a trace context, else `root`'s.
    ParentBased(Root),
}

/// What a parent-based sampler does for a trace that starts here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// Record it.
    AlwaysOn,
    /// Do not.
    AlwaysOff,
    /// Record this fraction, by trace id.
    TraceIdRatio(Ratio),
}

/// A fraction of traces, as the bound a trace id's low 63 bits are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio(u64);

impl Ratio {
    /// `fraction` of the traces (clamped to 0..=1; not a number is 0).
    pub fn new(fraction: f64) -> Ratio {
        let fraction = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let bound = (fraction * (1u64 << 63) as f64) as u64;
        Ratio(bound)
    }
}

impl Sampler {
    /// Whether a trace with `trace_id` is recorded, given the caller's context.
    pub(crate) fn samples(self, trace_id: &[u8; 16], parent: Option<&TraceParent>) -> bool {
        match self {
            Sampler::AlwaysOn => true,
            Sampler::AlwaysOff => false,
            Sampler::TraceIdRatio(ratio) => by_ratio(trace_id, ratio),
            Sampler::ParentBased(root) => match parent {
                Some(parent) => parent.flags & 1 == 1,
                None => match root {
                    Root::AlwaysOn => true,
                    Root::AlwaysOff => false,
                    Root::TraceIdRatio(ratio) => by_ratio(trace_id, ratio),
                },
            },
        }
    }
}

/// The trace-id ratio of the OpenTelemetry specification: the id's last 8 bytes, as a
/// number (63 bits of it), below the ratio's share of their range.
fn by_ratio(trace_id: &[u8; 16], ratio: Ratio) -> bool {
    let mut low = [0; 8];
    low.copy_from_slice(&trace_id[8..]);
    (u64::from_be_bytes(low) >> 1) < ratio.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specs_example_round_trips() {
        let t = TraceParent::parse(SPEC).unwrap();
        assert_eq!(
            Hex(&t.trace_id).to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(Hex(&t.parent_id).to_string(), "00f067aa0ba902b7");
        assert_eq!(t.flags, 1);
        assert_eq!(t.to_string(), SPEC);
        let child = t.child([1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            child.to_string(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0102030405060708-01"
        );
    }

    #[test]
    fn a_ratio_decides_the_same_for_the_same_id() {
        let id = [0xAB; 16];
        assert_eq!(
            by_ratio(&id, Ratio::new(0.5)),
            by_ratio(&id, Ratio::new(0.5))
        );
        assert!(!by_ratio(&id, Ratio::new(0.0)) && by_ratio(&id, Ratio::new(1.0)));
    }

    #[test]
    fn invalid_values_are_refused() {
        let cases = [
            ("", TraceError::Shape),
            (&SPEC[..54], TraceError::Shape),
            (
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                TraceError::Shape,
            ),
            (
                "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TraceError::Shape,
            ),
            (
                "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TraceError::Shape,
            ),
            (
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TraceError::ForbiddenVersion,
            ),
            (
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                TraceError::ZeroId,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                TraceError::ZeroId,
            ),
            // Version 00 has nothing after the flags.
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
                TraceError::Shape,
            ),
            // A later version's extra fields follow a dash.
            (
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
                TraceError::Shape,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-é",
                TraceError::Shape,
            ),
        ];
        for (value, why) in cases {
            assert_eq!(TraceParent::parse(value), Err(why), "{value:?}");
        }
        assert!(TraceParent::parse(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-next"
        )
        .is_ok());
    }
}
