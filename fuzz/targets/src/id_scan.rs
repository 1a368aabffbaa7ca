//! The `id_scan` fuzz target.

use responses_mcp_core::jsonrpc::{weigh, IdScan, RequestId, MAX_DEPTH, MAX_ID, MAX_VALUES};
use serde_json::Value;

/// Arbitrary bytes as a refused caller's body (and, for `weigh`, an admitted one's), fed to the id scan in pieces whose sizes
/// the first byte picks: it never panics, keeps no more than a bounded id, and finds
/// exactly the id `serde_json` reads from the whole body when that id is an integer or a
/// string of at most [`MAX_ID`] bytes (for UTF-8 bodies that are not a top-level array,
/// which serde's derive would also read as a struct).
pub fn id_scan(data: &[u8]) {
    let Some((&step, body)) = data.split_first() else {
        return;
    };
    let step = usize::from(step) + 1;
    let mut scan = IdScan::new();
    for piece in body.chunks(step) {
        scan.feed(piece);
    }
    let found = scan.finish();
    if let Some(RequestId::Int(text) | RequestId::Str(text)) = &found {
        assert!(
            text.len() <= MAX_ID,
            "an id beyond the bound: {} bytes",
            text.len()
        );
    }
    let comparable = std::str::from_utf8(body).is_ok()
        && body.trim_ascii_start().first() != Some(&b'[')
        // Deeper than the scan follows (it stops at 65,536 open containers).
        && body.len() < 65_536;
    if comparable {
        assert_eq!(found, reference(body), "the id serde_json reads");
    }
    // The weight an admitted caller's body is held to, before it is built: what it lets
    // through builds at most MAX_VALUES values below the root, MAX_DEPTH deep.
    if weigh(body).is_ok() {
        if let Ok(value) = serde_json::from_slice::<Value>(body) {
            let (values, depth) = shape(&value);
            assert!(values <= MAX_VALUES + 1, "{values} values let through");
            assert!(depth <= MAX_DEPTH, "{depth} levels let through");
        }
    }
}

/// Values in `value` (itself included) and the containers open at its deepest.
fn shape(value: &Value) -> (usize, usize) {
    let children: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(members) => members.values().collect(),
        _ => return (1, 0),
    };
    children.into_iter().fold((1, 1), |(n, d), child| {
        let (cn, cd) = shape(child);
        (n + cn, d.max(cd + 1))
    })
}

fn reference(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    let message: IdOnly = serde_json::from_slice(body).ok()?;
    let id = RequestId::from_value(&message.id?)?;
    let (RequestId::Int(text) | RequestId::Str(text)) = &id;
    (text.len() <= MAX_ID).then_some(id)
}
