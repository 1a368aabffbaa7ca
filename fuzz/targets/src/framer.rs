//! The `framer` fuzz targets.

use responses_mcp_core::framing::{FrameError, Framer, Framing};

/// Arbitrary bytes never panic the framer, frames respect the cap, and the buffer holds at
/// most one partial message plus one push.
pub fn framer(data: &[u8]) {
    const MAX: usize = 256;
    const CHUNK: usize = 37;
    let mut framer = Framer::new(MAX);
    for chunk in data.chunks(CHUNK) {
        framer.push(chunk);
        while let Some(item) = framer.next_frame() {
            if let Ok(frame) = item {
                assert!(frame.bytes.len() <= MAX, "frame over the cap");
            }
        }
        assert!(
            framer.buffered() <= MAX + 2 + CHUNK + 1024,
            "buffer {}",
            framer.buffered()
        );
    }
    framer.finish();
    while framer.next_frame().is_some() {}
}

type Item = Result<(Framing, Vec<u8>), FrameError>;

fn frames_of(chunks: &[&[u8]]) -> Vec<Item> {
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

/// Differential: any chunking gives exactly the frames and errors of a single push. The
/// first eight bytes choose the cut points; the rest is the stream.
pub fn framer_split(data: &[u8]) {
    let (cuts, stream) = data.split_at(data.len().min(8));
    let mut chunks = Vec::new();
    let mut rest = stream;
    for &c in cuts {
        let at = usize::from(c).min(rest.len());
        let (a, b) = rest.split_at(at);
        chunks.push(a);
        rest = b;
    }
    chunks.push(rest);
    assert_eq!(
        frames_of(&[stream]),
        frames_of(&chunks),
        "chunking changed the frames"
    );
}
