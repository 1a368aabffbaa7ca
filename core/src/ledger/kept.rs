//! What forgotten identities had used in their windows (calls this minute, spend today),
//! kept by a digest of their name until they return: so that a day's spend never pins
//! an identity to the bounded roster, and a returning identity is refused as it would
//! have been. Bounded at [`MAX_KEPT`]; past it the oldest record goes first (that
//! identity, if it returns the same day, starts its windows afresh: logged).

use crate::clients::Counts;
use std::collections::{BTreeMap, VecDeque};

/// Records kept at once: about 100 bytes each, so 6.5 MB at most.
pub(super) const MAX_KEPT: usize = 65_536;

/// A name's digest: 128 bits of SHA-256, so names of any length cost the same.
type Digest = [u8; 16];

fn digest(name: &str) -> Digest {
    let full = crate::sha256::sha256(name.as_bytes());
    let mut out = [0; 16];
    out.copy_from_slice(&full[..16]);
    out
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct Kept {
    by_name: BTreeMap<Digest, Counts>,
    /// Digests, oldest first (a digest taken back stays until it comes up).
    order: VecDeque<Digest>,
}

impl Kept {
    /// Keeps `counts` of the identity named `name`, which the roster forgets.
    pub fn keep(&mut self, name: &str, counts: Counts) {
        if self.by_name.len() >= MAX_KEPT {
            while let Some(oldest) = self.order.pop_front() {
                if self.by_name.remove(&oldest).is_some() {
                    log::warn!(
                        "more than {MAX_KEPT} forgotten identities' counts are kept: the oldest is dropped, and that identity's windows start afresh if it returns today"
                    );
                    break;
                }
            }
        }
        let key = digest(name);
        if self.by_name.insert(key, counts).is_none() {
            self.order.push_back(key);
        }
    }

    /// The counts of the identity named `name`, taken back, if any were kept.
    pub fn take(&mut self, name: &str) -> Option<Counts> {
        if self.by_name.is_empty() {
            return None;
        }
        let counts = self.by_name.remove(&digest(name))?;
        if self.order.len() > 2 * self.by_name.len() + 16 {
            let by_name = &self.by_name;
            self.order.retain(|d| by_name.contains_key(d));
        }
        Some(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::{ClientId, Limit, Limits};
    use crate::money::Picodollars;

    #[test]
    fn counts_are_kept_by_name_taken_back_once_and_bounded() {
        let limit = Limit {
            calls_per_minute: None,
            spend_per_day: Some(Picodollars(10)),
        };
        let mut limits = Limits::new(Limit::default());
        let mut kept = Kept::default();
        for n in 0..MAX_KEPT + 10 {
            let id = ClientId::DEFAULT;
            let _ = limits.admit(id, limit, 1_000, Picodollars(0));
            limits.spend(id, 1_000, Picodollars(1));
            let Some(counts) = limits.forget(id, limit, 1_000) else {
                panic!("spent today");
            };
            kept.keep(&format!("sub:{n}"), counts);
        }
        assert_eq!(kept.by_name.len(), MAX_KEPT);
        assert!(kept.take("sub:0").is_none(), "the oldest went first");
        assert!(kept.take(&format!("sub:{MAX_KEPT}")).is_some());
        assert!(
            kept.take(&format!("sub:{MAX_KEPT}")).is_none(),
            "taken once"
        );
    }
}
