#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| responses_mcp_fuzz_targets::roster(data));
