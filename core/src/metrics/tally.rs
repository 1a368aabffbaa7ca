//! Counts by label: small sets scanned in the order their keys first came.

/// Values by key, in the order keys first came: the sets are small (bounded labels), so
/// a scan beats a map, and one small generic keeps the binary small.
pub type Tally<K, V> = Vec<(K, V)>;

/// The value of `key` in `tally`, added as the default when new.
pub fn entry<K: PartialEq, V: Default>(tally: &mut Tally<K, V>, key: K) -> &mut V {
    let i = match tally.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            tally.push((key, V::default()));
            tally.len() - 1
        }
    };
    &mut tally[i].1
}

/// The value of the key `is` picks, added (made by `make`) as the default when new: no
/// key is built for a lookup that finds one.
pub fn entry_by<K, V: Default>(
    tally: &mut Tally<K, V>,
    is: impl Fn(&K) -> bool,
    make: impl FnOnce() -> K,
) -> &mut V {
    let i = match tally.iter().position(|(k, _)| is(k)) {
        Some(i) => i,
        None => {
            tally.push((make(), V::default()));
            tally.len() - 1
        }
    };
    &mut tally[i].1
}
