//! Differential: the same bytes pushed in arbitrary chunks give exactly the frames and
//! errors of a single push.
#![no_main]

use libfuzzer_sys::fuzz_target;
use responses_mcp_core::framing::{FrameError, Framer, Framing};

type Item = Result<(Framing, Vec<u8>), FrameError>;

fn frames(chunks: &[&[u8]]) -> Vec<Item> {
    let mut framer = Framer::new(64);
    let mut out = Vec::new();
    for chunk in chunks {
        framer.push(chunk);
        while let Some(item) = framer.next_frame() {
            out.push(item.map(|f| (f.framing, f.bytes.to_vec())));
        }
    }
    framer.finish();
    while let Some(item) = framer.next_frame() {
        out.push(item.map(|f| (f.framing, f.bytes.to_vec())));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    // The first bytes choose the cut points; the rest is the stream.
    let (cuts, stream) = data.split_at(data.len().min(8));
    let mut chunks = Vec::new();
    let mut rest = stream;
    for &c in cuts {
        let at = (c as usize).min(rest.len());
        let (a, b) = rest.split_at(at);
        chunks.push(a);
        rest = b;
    }
    chunks.push(rest);
    assert_eq!(frames(&[stream]), frames(&chunks));
});
