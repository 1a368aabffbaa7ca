//! The `traceparent` fuzz target.

use responses_mcp_core::trace_context::TraceParent;

/// Arbitrary text as a W3C `traceparent`: parsing never panics; an accepted value has
/// non-zero ids, prints back as version 00 with the same ids and flags, and that printed
/// form parses to the same value (and is the input itself for a version-00 input).
pub fn traceparent(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parent) = TraceParent::parse(text) else {
        return;
    };
    assert_ne!(parent.trace_id, [0; 16]);
    assert_ne!(parent.parent_id, [0; 8]);
    let printed = parent.to_string();
    assert_eq!(printed.len(), 55);
    assert_eq!(TraceParent::parse(&printed), Ok(parent));
    if text.starts_with("00-") {
        assert_eq!(printed, text);
    }
    let child = parent.child([1; 8]);
    assert_eq!(
        (child.trace_id, child.flags),
        (parent.trace_id, parent.flags)
    );
}
