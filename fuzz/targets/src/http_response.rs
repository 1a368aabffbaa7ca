//! The `http_response` fuzz target.

use responses_mcp_core::http::{ReadError, Reader};

type ReadOutcome = Result<(u16, Vec<(String, String)>, Vec<u8>), ReadError>;

/// Feeds `wire` to a response reader in reads no longer than `sizes` (cycled), then a
/// close if it is still waiting.
fn read_response(wire: &[u8], limit: usize, sizes: &[usize]) -> ReadOutcome {
    let mut reader = Reader::new(limit);
    let mut rest = wire;
    for size in sizes.iter().cycle() {
        let space = reader.space();
        let n = space.len().min(rest.len()).min(*size);
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match reader.filled(n) {
            Ok(Some(r)) => return Ok((r.status, r.headers, r.body)),
            Ok(None) if n > 0 => {}
            Ok(None) => return Err(ReadError::Closed),
            Err(e) => return Err(e),
        }
    }
    Err(ReadError::Closed)
}

/// Differential: an upstream's bytes give the same response or error however the reads
/// cut them, and an accepted body never exceeds the limit. The first byte picks the limit
/// and the read sizes; the rest is what the server sent before closing.
pub fn http_response(data: &[u8]) {
    let Some((&mode, wire)) = data.split_first() else {
        return;
    };
    let limit = [16, 300, 1 << 20][usize::from(mode % 3)];
    let whole = read_response(wire, limit, &[usize::MAX]);
    let cut = read_response(wire, limit, &[1 + usize::from(mode / 3) % 13, 1, 7, 64]);
    assert_eq!(whole, cut, "the cut changed the outcome");
    if let Ok((_, _, body)) = &whole {
        assert!(body.len() <= limit, "a body over the limit");
    }
}
