//! The `id_scan` fuzz target.

use responses_mcp_core::jsonrpc::{IdScan, RequestId, MAX_ID};
use serde_json::Value;

/// Arbitrary bytes as a refused caller's body, fed to the id scan in pieces whose sizes
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
