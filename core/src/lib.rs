//! The sans-IO core of openai-responses-mcp: an MCP server that answers with the OpenAI
//! Responses API and its web search, as a pure state machine.
//!
//! It takes bytes and events in and hands actions out. It never touches sockets, files,
//! clocks, the environment or threads, so it is deterministic, fuzzable and embeddable
//! (it builds for `wasm32-unknown-unknown`). A host (the smol and blocking runtimes in
//! this repository, or yours) owns the IO.
//!
//! **What it does:** framing (newline-delimited JSON and `Content-Length`), JSON-RPC, MCP
//! 2026-07-28 (stateless, `server/discover`) beside the `initialize`-based lifecycle of
//! 2024-11-05 to 2025-11-25 on one process, the three answer tools
//! and their argument checks, the Responses API request body and the reading of its
//! answers and citations, and the call engine: attempts, timeouts, retries with backoff,
//! cancellation, queueing and progress.
//!
//! **What it does not do:** open connections, add credentials (the host adds the API key
//! to each request; the core never sees it), read a clock (every input carries [`Now`]),
//! spawn anything, or panic on input.
//!
//! # The driving loop
//!
//! A host runs a [`Driver`]: one [`Driver::poll`] says what to do next.
//!
//! 1. Call [`Driver::poll`] and act on the answer:
//!    [`Poll::Write`] the bytes to stdout, then report [`Driver::written`];
//!    [`Poll::Start`] the HTTP attempt, then report its handle with [`Driver::started`];
//!    [`Poll::Abort`] the attempt whose handle it returns (close its connection).
//! 2. Repeat until it says [`Poll::Wait`] (with the next deadline, if any) or
//!    [`Poll::Exit`].
//! 3. Wait for the first of: stdin bytes, an attempt's completion, the deadline.
//! 4. Read the clock once into a [`Now`] and report what happened:
//!    [`Driver::handle`] with an [`Event`] (stdin bytes, stdin closed, timeout, shutdown),
//!    or [`Driver::completed`] for an attempt (it returns the handle, to release).
//!    A host whose threads report over a channel sends a [`Message`] (the same, owned)
//!    and feeds it with [`Driver::deliver`].
//! 5. Go to 1.
//!
//! ```
//! use responses_mcp_core::{Driver, Event, Now, Poll, ServerConfig};
//!
//! let mut driver: Driver<()> = Driver::new(ServerConfig::default());
//! let now = Now { instant: std::time::Instant::now(), unix_secs: 1_754_708_400 };
//! let stdin = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
//!     "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
//!     "\n",
//! );
//! driver.handle(now, Event::Stdin(stdin.as_bytes()));
//! let mut stdout = Vec::new();
//! loop {
//!     match driver.poll() {
//!         Poll::Write(bytes) => {
//!             stdout.extend_from_slice(bytes);
//!             driver.written(now, true);
//!         }
//!         Poll::Wait(_) | Poll::Exit => break,
//!         _ => unreachable!("no tool was called, so no attempt starts"),
//!     }
//! }
//! let stdout = String::from_utf8(stdout).unwrap();
//! let replies: Vec<&str> = stdout.lines().collect();
//! assert!(replies[0].contains(r#""protocolVersion":"2025-06-18""#));
//! assert_eq!(replies[1], r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
//! ```
//!
//! `core/examples/in_memory_host.rs` is a whole host in a page: its own loop, a virtual
//! clock and an in-memory upstream, calling a tool from start to answer.
//!
//! [`Server`] is the state machine underneath, for hosts that want each output one by
//! one ([`Server::poll_output`]); the driver adds the batching of writes and the
//! bookkeeping of attempt handles.
#![forbid(unsafe_code)]
// No function over 80 lines of code (clippy.toml's threshold) outside tests: issue 48.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]

mod calls;
pub mod clients;
#[doc(hidden)]
pub mod date;
mod desk;
mod driver;
#[doc(hidden)]
pub mod framing;
pub mod http;
pub mod io;
#[doc(hidden)]
pub mod jsonrpc;
pub mod ledger;
#[doc(hidden)]
pub mod mcp;
pub mod metrics;
pub mod money;
pub mod oauth;
#[doc(hidden)]
pub mod openai;
pub mod outcome;
pub mod policy;
pub mod redact;
mod routing;
pub mod serve;
#[doc(hidden)]
pub mod server;
pub mod settings;
pub mod sha256;
pub mod spans;
pub mod sse;
pub mod store;
pub mod tasks;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod timers;
pub mod tools;
pub mod trace_context;
pub mod vocab;

pub use driver::{Driver, Event, Message, Poll, MAX_PENDING_OUTPUT};
pub use io::{
    AttemptId, Destination, ExchangeId, HttpHead, HttpMethod, HttpReply, HttpRequest, Now,
    TransportError, TransportErrorKind,
};
pub use serve::exchange::{Asked, ExchangeOut};
pub use server::io::{Input, Output};
pub use server::Server;
pub use settings::{
    Profile, Profiles, SearchDefaults, SearchOptions, ServerConfig, UserLocation, WebSearch,
};

/// Reference data for unit tests: the OpenAI fixtures under `core/testdata/openai`.
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Test fixtures live on disk.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/testdata/openai/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
