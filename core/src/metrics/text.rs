//! Writing the Prometheus text exposition format, version 0.0.4
//! (<https://prometheus.io/docs/instrumenting/exposition_formats/>): `# HELP` and
//! `# TYPE` once per family, then one line per sample; label values escaped (`\\`,
//! `\"`, `\n`), numbers as Go prints them (`+Inf`, no exponent needed here).

use super::histogram::{Histogram, DURATION_BOUNDS};
use std::fmt::Write as _;

/// An exposition being written.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// `# HELP` and `# TYPE` of a family.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    /// One sample line.
    pub fn sample(&mut self, name: &str, labels: &[(&str, String)], value: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{label}=\"{}\"", escape_value(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }

    /// A histogram's `_bucket` (cumulative, `le` last), `_sum` and `_count` lines.
    pub fn histogram(&mut self, name: &str, labels: &[(&str, String)], h: &Histogram) {
        let bucket = format!("{name}_bucket");
        let mut cumulative = 0;
        for (bound, n) in DURATION_BOUNDS.iter().zip(h.buckets) {
            cumulative += n;
            let mut with_le = labels.to_vec();
            with_le.push(("le", number(*bound)));
            self.sample(&bucket, &with_le, cumulative as f64);
        }
        let mut with_le = labels.to_vec();
        with_le.push(("le", "+Inf".to_owned()));
        self.sample(&bucket, &with_le, h.count as f64);
        self.sample(&format!("{name}_sum"), labels, h.sum);
        self.sample(&format!("{name}_count"), labels, h.count as f64);
    }

    /// A counter family and its samples (`name` ends in `_total`).
    pub fn counter_family<'a>(
        &mut self,
        name: &str,
        help: &str,
        samples: impl Iterator<Item = (Vec<(&'a str, String)>, f64)>,
    ) {
        let base = name.strip_suffix("_total").unwrap_or(name);
        self.family(base, "counter", help);
        for (labels, value) in samples {
            self.sample(name, &labels, value);
        }
    }

    /// A gauge family and its samples.
    pub fn gauge_family<'a>(
        &mut self,
        name: &str,
        help: &str,
        samples: impl Iterator<Item = (Vec<(&'a str, String)>, f64)>,
    ) {
        self.family(name, "gauge", help);
        for (labels, value) in samples {
            self.sample(name, &labels, value);
        }
    }

    /// The text, as bytes.
    pub fn finish(self) -> Vec<u8> {
        self.out.into_bytes()
    }
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A help text: backslash and line feed escaped.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value or bound: integers without a fraction, others in Rust's shortest
/// round-trip form, infinities as `+Inf`/`-Inf`, NaN as `NaN`.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}
