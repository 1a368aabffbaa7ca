//! The static (musl) builds' global allocators, one per runtime, each chosen by measuring
//! it against the others (`docs/benchmarks.md`, "The card's stack").
//!
//! musl's own allocator (mallocng) hands a size class's memory back to the kernel as soon
//! as the last block in it is freed, and a call allocates and frees a few hundred blocks,
//! so with it the static binaries spent 1.6-2.0× the CPU of the glibc builds per call.
//!
//! - `mimalloc` (the smol build: one thread): mimalloc, tuned in the binary
//!   (`mimalloc::Tuned`).
//! - `cache` (the blocking build: a thread per call): a bounded cache of freed blocks in
//!   front of musl's allocator (`cache::Cache`). mimalloc gives every thread a heap of
//!   its own, which with 1,000 calls in flight cost 1.8× the peak memory of the glibc
//!   build (139 MB against 78 MB) and up to 10 % more CPU per call; the cache matches glibc.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::too_many_lines)]

#[cfg(feature = "cache")]
pub mod cache;
#[cfg(feature = "mimalloc")]
pub mod mimalloc;
