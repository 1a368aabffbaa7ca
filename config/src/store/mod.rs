//! Where the shared store is (`server.store.*`). With the `store` feature (the release
//! archives and the container image have it), the URL read as the Redis or Valkey client
//! reads it (`connect.rs`); without it, a build that refuses `server.store.url` saying
//! which builds have one (`absent.rs`), so that the static binaries built without it stay
//! small. The URL as messages show it, without its password, is `shown.rs`'s. The store's
//! thread is the host crate's.

#[cfg(feature = "store")]
mod connect;
#[cfg(feature = "store")]
pub use connect::StoreConnect;

#[cfg(not(feature = "store"))]
mod absent;
#[cfg(not(feature = "store"))]
pub use absent::StoreConnect;

mod shown;
pub use shown::without_password;
