//! Tuned mimalloc as the global allocator of a whole program: tuned before `main`, and
//! threads allocating, growing, shrinking and freeing blocks of many sizes at once, each
//! checking that its bytes survive.

use responses_mcp_alloc::mimalloc::{option, Tuned, ARENA_EAGER_COMMIT, ARENA_RESERVE};
use std::collections::BTreeMap;

mod common;
use common::Rng;

#[global_allocator]
static ALLOC: Tuned = Tuned;

#[test]
fn the_options_are_set_before_main_runs() {
    // Set by the module's .init_array entry: this test never called tune().
    assert_eq!(option(ARENA_EAGER_COMMIT), 0);
    assert_eq!(option(ARENA_RESERVE), 4 * 1024);
}

#[test]
fn threads_churning_blocks_of_many_sizes_never_see_each_others_bytes() {
    let threads: Vec<_> = (1..=4u64)
        .map(|seed| {
            std::thread::spawn(move || {
                let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut held: BTreeMap<u64, (Vec<u8>, u8)> = BTreeMap::new();
                for step in 0..5_000u64 {
                    let key = rng.next() % 64;
                    match held.remove(&key) {
                        Some((mut block, fill)) => {
                            // Every 61st byte and the last: cheap, and a block handed out
                            // twice has its bytes overwritten somewhere sampled.
                            let sampled = block.iter().step_by(61).chain(block.last());
                            assert!(sampled.copied().all(|b| b == fill), "step {step}");
                            if step % 2 == 0 {
                                // Grow or shrink, in place or by moving: realloc.
                                let size = rng.size();
                                block.resize(size, fill);
                                block.shrink_to_fit();
                                held.insert(key, (block, fill));
                            }
                        }
                        None => {
                            let fill = (rng.next() % 251) as u8;
                            held.insert(key, (vec![fill; rng.size()], fill));
                        }
                    }
                }
                for (block, fill) in held.values() {
                    assert!(block.iter().step_by(61).all(|b| b == fill));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}
