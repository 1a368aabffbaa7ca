//! [mimalloc] with its options set in the binary rather than by environment variables a
//! user would have to know: the static smol build's global allocator (feature
//! `mimalloc`).
//!
//! Two options change, both about memory that a short session would never use:
//! `arena_eager_commit` off (on Linux mimalloc commits the whole first arena it reserves,
//! which put a short session's peak RSS at 10.2 MB instead of 2.9 MB) and `arena_reserve`
//! 4 MiB instead of 1 GiB (a further 5 % of a short session's peak). They are set from an
//! `.init_array` entry, which runs after mimalloc's own initialisation (a constructor of
//! priority 101) and before Rust's runtime makes its first allocation.
//!
//! [mimalloc]: https://github.com/microsoft/mimalloc

use std::alloc::{GlobalAlloc, Layout};

/// mimalloc, tuned by [`tune`]: `#[global_allocator] static A: Tuned = Tuned;`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tuned;

/// `mi_option_arena_eager_commit`'s place in mimalloc's `mi_option_e` (`mimalloc.h` of
/// the mimalloc 3 sources libmimalloc-sys 0.1.49 builds). libmimalloc-sys names no
/// constant for it.
pub const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
/// `mi_option_arena_reserve`'s place in the same enum (in KiB).
pub const ARENA_RESERVE: libmimalloc_sys::mi_option_t = 23;
/// What an arena reserves at a time, in KiB.
const ARENA_RESERVE_KIB: std::ffi::c_long = 4 * 1024;

/// Sets the options this server runs mimalloc with; idempotent, and done before `main` in
/// every binary that links this module on Linux.
pub fn tune() {
    // SAFETY: setting an option is a plain store into mimalloc's option table, valid at
    // any time; the values are ones the options document (0: commit on demand; a
    // reservation size in KiB).
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(ARENA_RESERVE, ARENA_RESERVE_KIB);
    }
}

/// What `option` is now (for tests).
pub fn option(option: libmimalloc_sys::mi_option_t) -> std::ffi::c_long {
    // SAFETY: reading an option is a plain load from mimalloc's option table.
    unsafe { libmimalloc_sys::mi_option_get(option) }
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
unsafe impl GlobalAlloc for Tuned {
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
