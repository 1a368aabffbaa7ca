//! The keys of the limits' counts: `orm:c:<client>:<minute>`, `orm:s:<client>:<day>` and
//! `orm:r:<client>:<day>`, with `*` as the client for the whole service.

use crate::clients::{DAY, MINUTE};

/// The service's own name in keys.
pub(super) const SERVICE: &str = "*";

/// The key of `client`'s calls admitted in the UTC minute of `now` (Unix seconds).
pub(super) fn calls_key(client: &str, now: u64) -> String {
    format!("orm:c:{client}:{}", now / MINUTE)
}

/// The key of `client`'s estimated spend in the UTC day of `now` (Unix seconds).
pub(super) fn spend_key(client: &str, now: u64) -> String {
    format!("orm:s:{client}:{}", now / DAY)
}

/// The key of the estimates `client`'s calls admitted in the UTC day of `now` (Unix
/// seconds) hold while they run: a hash of each hold's estimate by its name, their
/// total in the field `=`.
pub(super) fn held_key(client: &str, now: u64) -> String {
    format!("orm:r:{client}:{}", now / DAY)
}
