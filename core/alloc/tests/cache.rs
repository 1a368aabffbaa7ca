//! The cache as the global allocator of a whole program: threads allocating, growing,
//! shrinking and freeing blocks of every class (and beyond) at once, each checking that
//! its bytes survive, which catches a block handed out twice or linked while in use.

use responses_mcp_alloc::cache::{Cache, MAX_CACHED};
use std::collections::BTreeMap;

mod common;
use common::Rng;

#[global_allocator]
static ALLOC: Cache = Cache;

#[test]
fn threads_churning_blocks_of_every_size_never_see_each_others_bytes() {
    let threads: Vec<_> = (1..=8u64)
        .map(|seed| {
            std::thread::spawn(move || {
                let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut live: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
                for step in 0..5_000u64 {
                    let key = rng.next() % 64;
                    let fill = (seed as u8).wrapping_mul(31) ^ key as u8;
                    match live.remove(&key) {
                        Some(mut block) => {
                            // Every 61st byte and the last: cheap, and any block handed out twice or
                            // linked while in use has its bytes overwritten somewhere sampled.
                            let sampled = block.iter().step_by(61).chain(block.last());
                            assert!(
                                sampled.copied().all(|b| b == fill),
                                "thread {seed} step {step}"
                            );
                            if rng.next() % 2 == 0 {
                                // Grow or shrink in place or by moving: realloc.
                                let size = rng.size();
                                block.resize(size, fill);
                                block.shrink_to_fit();
                                live.insert(key, block);
                            }
                        }
                        None => {
                            live.insert(key, vec![fill; rng.size()]);
                        }
                    }
                }
                let big = vec![7u8; 3 * MAX_CACHED];
                assert!(big.iter().all(|&b| b == 7));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
