//! Arbitrary bytes never panic the framer, and its buffer stays within the size cap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use responses_mcp_core::framing::Framer;

const MAX: usize = 256;

fuzz_target!(|data: &[u8]| {
    let mut framer = Framer::new(MAX);
    for chunk in data.chunks(37) {
        framer.push(chunk);
        while let Some(item) = framer.next_frame() {
            if let Ok(frame) = item {
                assert!(frame.bytes.len() <= MAX);
            }
        }
        // A partial message plus one chunk, never more.
        assert!(framer.buffered() <= MAX + 1 + 37 + 1024);
    }
    framer.finish();
    while framer.next_frame().is_some() {}
});
