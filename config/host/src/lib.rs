//! The host layer of openai-responses-mcp under both runtimes: everything around the
//! sans-IO core that does IO the same way in the smol and the blocking build.
//!
//! - **Startup** ([`launch`]): the command line, the configuration (the configuration
//!   crate's resolution, with the logger installed between its two steps), `--help`,
//!   `--version`, `--show-config` and `doctor` ([`doctor`]).
//! - **Adapters**: the shared store's thread ([`store`]), the OTLP trace exporter
//!   ([`export`]), OAuth mode's JWT verifier on ring ([`oauth`]), the TLS crypto provider
//!   ([`tls`]), the sans-IO pieces of the HTTP clients and the header values both send
//!   ([`client`]), signals ([`signals`]), reading stdin on a thread of its own ([`stdin`]),
//!   the logger and the call log ([`logging`]), and the process's environment, clocks and
//!   entropy ([`process`]).
//!
//! - **The serving loop's shared half** ([`serve`]): startup in order, the driver's first
//!   `Event::Start`, and the loop's records, spans, store operations, exchanges, health
//!   and exit flush. A runtime keeps what differs between sync and async: how it writes
//!   stdout, starts and aborts an HTTP attempt, and waits for the next message.

#![deny(unsafe_code)]
// No function over 80 lines of code (clippy.toml's threshold) outside tests: issue 48.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]

pub mod client;
pub mod doctor;
#[cfg(feature = "traces")]
pub mod export;
#[cfg(not(feature = "traces"))]
#[path = "export/absent.rs"]
pub mod export;
mod launch;
pub mod logging;
pub mod oauth;
pub mod process;
pub mod serve;
pub mod signals;
pub mod stdin;
pub mod store;
pub mod tls;

pub use launch::{launch, Launch};
pub use process::{now, process_env, seed};
