//! The shared store's thread: with the `store` feature the Redis or Valkey client
//! (`redis_thread.rs`, its round trips built in `batch.rs`); without it, a handle that
//! can never be made (`absent.rs`).

#[cfg(feature = "store")]
mod batch;
#[cfg(feature = "store")]
mod redis_thread;
#[cfg(feature = "store")]
pub use redis_thread::Store;

#[cfg(not(feature = "store"))]
mod absent;
#[cfg(not(feature = "store"))]
pub use absent::Store;
