//! The static (musl) builds' global allocator: [mimalloc], with its options set in the
//! binary rather than by environment variables a user would have to know.
//!
//! Why not musl's own: its allocator (mallocng) hands a size class's memory back to the
//! kernel as soon as the last block in it is freed, and a call allocates and frees a few
//! hundred blocks, so every call mapped and unmapped dozens of pages and the static
//! binaries spent about twice the CPU of the glibc builds per call. mimalloc keeps freed
//! pages for reuse and returns them after a delay. The figures of musl's allocator,
//! mimalloc and the block cache this crate used to hold, side by side, are in
//! `docs/benchmarks.md` ("The card's stack").
//!
//! The one option changed: `arena_eager_commit`. On Linux mimalloc commits the whole
//! first arena it reserves, which put a short session's peak RSS at 12.5-14.7 MB instead
//! of about 3.5 MB; committed on demand, the arena costs only the pages in use. It is set
//! from an `.init_array` entry, which runs after mimalloc's own initialisation (a
//! constructor of priority 101) and before Rust's runtime makes its first allocation.
//!
//! [mimalloc]: https://github.com/microsoft/mimalloc

use std::alloc::{GlobalAlloc, Layout};

/// mimalloc, tuned by [`tune`]: `#[global_allocator] static A: Allocator = Allocator;`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Allocator;

/// `mi_option_arena_eager_commit`'s place in mimalloc's `mi_option_e` (`mimalloc.h` of
/// the mimalloc 3 sources libmimalloc-sys 0.1.49 builds: show_errors, show_stats, verbose,
/// deprecated_eager_commit, arena_eager_commit). libmimalloc-sys names no constant for it.
pub const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Sets the options this server runs mimalloc with; idempotent, and done before `main` in
/// every binary that links this crate on Linux.
pub fn tune() {
    // SAFETY: setting an option is a plain store into mimalloc's option table, valid at
    // any time; the value is one the option documents (0: commit on demand).
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}

/// What the option is now (for tests and `tune`'s callers).
pub fn arena_eager_commit() -> std::ffi::c_long {
    // SAFETY: reading an option is a plain load from mimalloc's option table.
    unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) }
}

/// Runs [`tune`] before `main` and before Rust's runtime allocates.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static TUNE_BEFORE_MAIN: extern "C" fn() = {
    extern "C" fn tune_before_main() {
        tune();
    }
    tune_before_main
};

// SAFETY: every method forwards to mimalloc, which upholds GlobalAlloc's contract.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which mimalloc's shares.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (so from mimalloc) with `layout`.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and `new_size` is the caller's to uphold.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}
