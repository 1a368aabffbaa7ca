//! Fuzz targets as plain functions. The cargo-fuzz binaries in `fuzz/fuzz_targets/` call
//! them, and `tests/corpus.rs` replays every committed corpus file through them on the
//! stable toolchain, so ordinary `cargo test` exercises the corpora too.
//!
//! Each function panics only when a checked property fails.

#![warn(clippy::too_many_lines)]

mod abi;
mod alloc;
mod clients_file;
mod config;
mod drift;
mod framer;
mod gateway;
mod http_connection;
mod http_request;
mod http_response;
mod id_scan;
mod lease;
mod oauth;
mod otel_env;
mod proxy_replies;
mod responses_parser;
mod roster;
mod seal;
mod server;
mod sse;
mod store_ids;
mod store_replies;
mod store_tasks;
mod tasks;
mod traceparent;

pub use abi::abi;
pub use alloc::alloc;
pub use clients_file::clients_file;
pub use config::config;
pub use drift::drift;
pub use framer::{framer, framer_split};
pub use gateway::gateway;
pub use http_connection::http_connection;
pub use http_request::http_request;
pub use http_response::http_response;
pub use id_scan::id_scan;
pub use lease::lease;
pub use oauth::oauth;
pub use otel_env::otel_env;
pub use proxy_replies::proxy_replies;
pub use responses_parser::responses_parser;
pub use roster::roster;
pub use seal::seal;
pub use server::server;
pub use sse::sse;
pub use store_replies::store_replies;
pub use store_tasks::store_tasks;
pub use tasks::tasks;
pub use traceparent::traceparent;
