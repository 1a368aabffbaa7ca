//! The `alloc` fuzz target: the static builds' block cache driven directly.

use responses_mcp_alloc::cache::Cache;
use std::alloc::{GlobalAlloc, Layout};

/// A block the target holds: where, its layout, and the byte it was filled with.
struct Held {
    ptr: *mut u8,
    layout: Layout,
    fill: u8,
}

/// Every byte of `held` still carries its fill: no other block was handed the same memory
/// and no list linked it while in use.
fn intact(held: &Held) -> bool {
    // SAFETY: the block is live and holds layout.size() initialised bytes.
    let bytes = unsafe { std::slice::from_raw_parts(held.ptr, held.layout.size()) };
    bytes.iter().all(|&b| b == held.fill)
}

/// Reads a size from two bytes, spread from 1 byte to twice the largest cached block.
fn size(a: u8, b: u8) -> usize {
    let raw = u16::from_le_bytes([a, b]) as usize;
    let shift = raw % 22; // up to 2 MiB
    ((raw >> 5) % (1 << shift)).max(1)
}

/// Operations of 4 bytes each: allocate (plain or zeroed, alignment 1 to 4096), free,
/// grow or shrink a held block. Every block is filled with its own byte and checked when
/// it is freed or moved, and zeroed blocks must be zero, so a block handed out twice, a
/// list that links a block in use, or a realloc that loses bytes fails the check. Over
/// 64 blocks held, the oldest is freed.
pub fn alloc(data: &[u8]) {
    let cache = Cache;
    let mut held: Vec<Held> = Vec::new();
    for (n, op) in data.chunks_exact(4).enumerate() {
        let fill = (n as u8).wrapping_mul(37) | 1;
        match op[0] % 4 {
            0 | 1 => {
                let align = 1usize << (op[3] % 13);
                let Ok(layout) = Layout::from_size_align(size(op[1], op[2]), align) else {
                    continue;
                };
                let zeroed = op[0] % 4 == 1;
                // SAFETY: the layout has a non-zero size.
                let ptr = unsafe {
                    match zeroed {
                        true => cache.alloc_zeroed(layout),
                        false => cache.alloc(layout),
                    }
                };
                assert!(!ptr.is_null(), "allocation of {layout:?} failed");
                assert_eq!(ptr.align_offset(align), 0, "misaligned for {layout:?}");
                if zeroed {
                    // SAFETY: the block was just allocated with this size.
                    let bytes = unsafe { std::slice::from_raw_parts(ptr, layout.size()) };
                    assert!(bytes.iter().all(|&b| b == 0), "zeroed block not zero");
                }
                // SAFETY: as above.
                unsafe { std::ptr::write_bytes(ptr, fill, layout.size()) };
                held.push(Held { ptr, layout, fill });
                if held.len() > 64 {
                    let oldest = held.remove(0);
                    assert!(intact(&oldest), "block overwritten while held");
                    // SAFETY: allocated by this cache with this layout, freed once.
                    unsafe { cache.dealloc(oldest.ptr, oldest.layout) };
                }
            }
            2 if !held.is_empty() => {
                let block = held.swap_remove(op[1] as usize % held.len());
                assert!(intact(&block), "block overwritten while held");
                // SAFETY: as above.
                unsafe { cache.dealloc(block.ptr, block.layout) };
            }
            3 if !held.is_empty() => {
                let at = op[1] as usize % held.len();
                let new_size = size(op[2], op[3]);
                let block = &mut held[at];
                if Layout::from_size_align(new_size, block.layout.align()).is_err() {
                    continue;
                }
                assert!(intact(block), "block overwritten while held");
                // SAFETY: allocated by this cache with block.layout; new_size is non-zero
                // and fits the alignment.
                let moved = unsafe { cache.realloc(block.ptr, block.layout, new_size) };
                assert!(!moved.is_null(), "realloc to {new_size} failed");
                let kept = block.layout.size().min(new_size);
                // SAFETY: the block now holds new_size bytes, the first `kept` initialised.
                let bytes = unsafe { std::slice::from_raw_parts(moved, kept) };
                assert!(bytes.iter().all(|&b| b == block.fill), "realloc lost bytes");
                // SAFETY: as above.
                unsafe { std::ptr::write_bytes(moved, block.fill, new_size) };
                block.ptr = moved;
                block.layout =
                    Layout::from_size_align(new_size, block.layout.align()).unwrap_or(block.layout);
            }
            _ => {}
        }
    }
    for block in held {
        assert!(intact(&block), "block overwritten while held");
        // SAFETY: as above.
        unsafe { cache.dealloc(block.ptr, block.layout) };
    }
}
