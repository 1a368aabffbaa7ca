//! A bounded cache of freed blocks in front of the system allocator: the static blocking
//! build's global allocator (feature `cache`).
//!
//! Why: musl's allocator (mallocng) hands a size class's group of slots back to the kernel
//! as soon as the last slot in it is freed. A call allocates and frees a few hundred
//! blocks, so every call mapped and unmapped about 33 groups and took about 100 fresh-page
//! faults (`perf stat`, 200 streamed calls), and the static binaries spent 1.8-2.1× the
//! CPU of the glibc builds per call. Keeping freed blocks for reuse removes the churn; see
//! `docs/benchmarks.md` ("Static builds against glibc builds").
//!
//! How: blocks of up to [`MAX_CACHED`] bytes (alignment up to 16) are rounded up to one of
//! 60 size classes (16-byte steps to 64, then four classes per doubling, so at most 25% of
//! a block is padding). A freed block goes on its class's list unless the list already
//! holds [`CLASS_BUDGET`] bytes (two blocks at least); an allocation takes from the list
//! first and asks the system allocator otherwise. Anything bigger or more aligned goes
//! straight to the system allocator. What the cache can hold is bounded (17.6 MiB
//! if every class were full, which only a workload with that much live memory at once
//! could make it), and it holds only memory the process already had.
//!
//! Each list has its own spin lock: held for a handful of instructions, uncontended in
//! the single-threaded smol runtime, and never held across a call to the system
//! allocator, so nothing in here allocates, blocks or panics.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::ptr::{self, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Alignment of every cached block; class sizes are multiples of it.
pub const ALIGN: usize = 16;
/// The largest size served from the cache.
pub const MAX_CACHED: usize = 1 << 20;
/// Bytes one class may keep on its list (but always two blocks).
pub const CLASS_BUDGET: usize = 128 << 10;
/// 16, 32, 48, 64, then four per doubling from 64 to [`MAX_CACHED`].
const CLASSES: usize = 4 + 4 * (MAX_CACHED.trailing_zeros() as usize - 6);

/// The class of a block of `size` bytes (`1..=MAX_CACHED`; 0 counts as 1).
pub fn class_of(size: usize) -> usize {
    if size <= 64 {
        return size.max(1).div_ceil(16) - 1;
    }
    // size is in (2^p, 2^(p+1)]; that range has four classes, 2^(p-2) apart.
    let p = (usize::BITS - 1 - (size - 1).leading_zeros()) as usize;
    let quarter = (size - 1) >> (p - 2); // 4..=7
    4 + (p - 6) * 4 + (quarter - 4)
}

/// The size of the blocks of `class`.
pub fn class_size(class: usize) -> usize {
    if class < 4 {
        return (class + 1) * 16;
    }
    let (p, quarter) = (6 + (class - 4) / 4, 4 + (class - 4) % 4);
    (quarter + 1) << (p - 2)
}

/// A freed block, linked through its first word.
struct Free {
    next: *mut Free,
}

/// One class's freed blocks.
struct List {
    head: *mut Free,
    len: usize,
}

/// A list behind a spin lock.
struct Class {
    locked: AtomicBool,
    list: UnsafeCell<List>,
}

// SAFETY: the list is only touched while `locked` is held (see `Class::with`).
unsafe impl Sync for Class {}

impl Class {
    const fn new() -> Class {
        Class {
            locked: AtomicBool::new(false),
            list: UnsafeCell::new(List {
                head: null_mut(),
                len: 0,
            }),
        }
    }

    /// Runs `f` on the list with the lock held.
    fn with<R>(&self, f: impl FnOnce(&mut List) -> R) -> R {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                spin_loop();
            } else {
                // The holder was preempted: let it run.
                std::thread::yield_now();
            }
        }
        // SAFETY: the lock is held until the store below, so this is the only reference.
        let result = f(unsafe { &mut *self.list.get() });
        self.locked.store(false, Ordering::Release);
        result
    }
}

static LISTS: [Class; CLASSES] = [const { Class::new() }; CLASSES];

/// The allocator: `#[global_allocator] static A: responses_mcp_alloc::Cache = Cache;`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cache;

/// The class `layout` is served from, or `None` for the system allocator.
fn cached_class(layout: Layout) -> Option<usize> {
    (layout.align() <= ALIGN && layout.size() <= MAX_CACHED).then(|| class_of(layout.size()))
}

/// The layout the system allocator gave a block of `class`.
fn class_layout(class: usize) -> Layout {
    // SAFETY: ALIGN is a power of two; class sizes are multiples of it up to 1 MiB.
    unsafe { Layout::from_size_align_unchecked(class_size(class), ALIGN) }
}

impl Cache {
    /// A block of `class` from its list, or a fresh one.
    fn take(class: usize) -> *mut u8 {
        let reused = LISTS[class].with(|list| {
            let block = list.head;
            if !block.is_null() {
                // SAFETY: blocks on the list are ours, at least 16 bytes, and hold `Free`.
                list.head = unsafe { (*block).next };
                list.len -= 1;
            }
            block
        });
        if !reused.is_null() {
            return reused.cast();
        }
        // SAFETY: class layouts have a non-zero size.
        unsafe { System.alloc(class_layout(class)) }
    }

    /// Keeps `block` of `class` for reuse, or gives it back when the list is full.
    ///
    /// # Safety
    /// `block` came from [`Cache::take`] for the same class and is no longer used.
    unsafe fn give(block: *mut u8, class: usize) {
        let room = (CLASS_BUDGET / class_size(class)).max(2);
        let kept = LISTS[class].with(|list| {
            if list.len >= room {
                return false;
            }
            let free = block.cast::<Free>();
            // SAFETY: the block is ours, unused, 16-aligned and at least 16 bytes.
            unsafe { free.write(Free { next: list.head }) };
            list.head = free;
            list.len += 1;
            true
        });
        if !kept {
            // SAFETY: the system allocator gave this block with the class's layout.
            unsafe { System.dealloc(block, class_layout(class)) };
        }
    }
}

// SAFETY: every block handed out is valid for its layout: class blocks are at least the
// requested size and 16-aligned (the requested alignment is at most 16); a block goes back
// to where it came from, which depends only on its layout, equal at dealloc and alloc.
unsafe impl GlobalAlloc for Cache {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match cached_class(layout) {
            Some(class) => Cache::take(class),
            // SAFETY: the caller's contract is the system allocator's.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match cached_class(layout) {
            Some(class) => {
                let block = Cache::take(class);
                if !block.is_null() {
                    // SAFETY: the block holds at least layout.size() bytes.
                    unsafe { ptr::write_bytes(block, 0, layout.size()) };
                }
                block
            }
            // SAFETY: as in alloc.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match cached_class(layout) {
            // SAFETY: alloc took this block from the same class (same layout).
            Some(class) => unsafe { Cache::give(block, class) },
            // SAFETY: alloc took it from the system allocator with this layout.
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees new_size rounded to the alignment fits isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (cached_class(layout), cached_class(new_layout)) {
            // Still fits its block.
            (Some(old), Some(new)) if old == new => block,
            // SAFETY: both sides belong to the system allocator.
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: new_layout has a non-zero size (the caller's contract).
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    let kept = layout.size().min(new_size);
                    // SAFETY: both blocks hold `kept` bytes and are distinct.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, kept);
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_cache_can_hold_is_bounded_as_documented() {
        let most: usize = (0..CLASSES)
            .map(|c| class_size(c) * (CLASS_BUDGET / class_size(c)).max(2))
            .sum();
        // The module docs say 17.6 MiB.
        assert_eq!((most * 10 + (1 << 19)) >> 20, 176);
    }

    #[test]
    fn every_size_has_the_smallest_class_that_holds_it() {
        assert_eq!(CLASSES, 60);
        for size in 0..=MAX_CACHED {
            let class = class_of(size);
            assert!(class < CLASSES, "size {size}");
            assert!(class_size(class) >= size, "size {size} in class {class}");
            if class > 0 {
                assert!(
                    class_size(class - 1) < size,
                    "size {size}: class {class} is not the smallest"
                );
            }
            // At most a quarter of a block above 64 bytes is padding.
            assert!(size <= 64 || (class_size(class) - size) * 4 < class_size(class));
        }
        for class in 0..CLASSES {
            assert_eq!(class_size(class) % ALIGN, 0);
            assert_eq!(class_of(class_size(class)), class);
        }
        assert_eq!(class_size(CLASSES - 1), MAX_CACHED);
    }

    #[test]
    fn a_freed_block_is_reused_and_a_full_list_gives_blocks_back() {
        // The largest class: its list keeps two blocks and no test touches it besides this.
        let layout = Layout::from_size_align(MAX_CACHED, 8).unwrap();
        let cache = Cache;
        unsafe {
            let blocks: Vec<*mut u8> = (0..4).map(|_| cache.alloc(layout)).collect();
            assert!(blocks
                .iter()
                .all(|b| !b.is_null() && b.align_offset(ALIGN) == 0));
            for &b in &blocks {
                cache.dealloc(b, layout);
            }
            assert_eq!(
                LISTS[CLASSES - 1].with(|l| l.len),
                2,
                "two kept, two given back"
            );
            let again = cache.alloc(layout);
            // The first two freed were kept; the last kept comes back first.
            assert_eq!(again, blocks[1]);
            cache.dealloc(again, layout);
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_and_the_block_while_it_fits() {
        let cache = Cache;
        unsafe {
            let layout = Layout::from_size_align(70, 1).unwrap();
            let block = cache.alloc(layout);
            ptr::copy_nonoverlapping(b"0123456789".as_ptr(), block, 10);
            assert_eq!(
                cache.realloc(block, layout, 80),
                block,
                "70 and 80 share a class"
            );
            let layout = Layout::from_size_align(80, 1).unwrap();
            let grown = cache.realloc(block, layout, 5000);
            assert_eq!(std::slice::from_raw_parts(grown, 10), b"0123456789");
            let layout = Layout::from_size_align(5000, 1).unwrap();
            let huge = cache.realloc(grown, layout, 3 * MAX_CACHED);
            assert_eq!(std::slice::from_raw_parts(huge, 10), b"0123456789");
            let layout = Layout::from_size_align(3 * MAX_CACHED, 1).unwrap();
            let back = cache.realloc(huge, layout, 10);
            assert_eq!(std::slice::from_raw_parts(back, 10), b"0123456789");
            cache.dealloc(back, Layout::from_size_align(10, 1).unwrap());
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_even_when_reused() {
        let cache = Cache;
        let layout = Layout::from_size_align(3000, 8).unwrap();
        unsafe {
            let block = cache.alloc(layout);
            ptr::write_bytes(block, 0xAB, 3000);
            cache.dealloc(block, layout);
            let zeroed = cache.alloc_zeroed(layout);
            assert!(std::slice::from_raw_parts(zeroed, 3000)
                .iter()
                .all(|&b| b == 0));
            cache.dealloc(zeroed, layout);
        }
    }

    #[test]
    fn over_aligned_blocks_go_to_the_system_allocator() {
        let cache = Cache;
        let layout = Layout::from_size_align(100, 4096).unwrap();
        assert_eq!(cached_class(layout), None);
        unsafe {
            let block = cache.alloc_zeroed(layout);
            assert_eq!(block.align_offset(4096), 0);
            assert!(std::slice::from_raw_parts(block, 100)
                .iter()
                .all(|&b| b == 0));
            cache.dealloc(block, layout);
        }
    }
}
