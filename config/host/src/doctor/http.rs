//! The one thing `doctor` asks of a runtime: its HTTP client, as [`DoctorHttp`], with the
//! two failures a client reports the way calls report them.

use responses_mcp_core::{HttpMethod, HttpReply, TransportError, TransportErrorKind};
use std::time::Duration;

/// The upstream requests `doctor` makes, performed by the runtime's client.
pub trait DoctorHttp {
    /// One request, ended after `timeout`.
    ///
    /// # Errors
    /// The transport failure (connection, TLS, timeout), as calls report it.
    fn send(
        &mut self,
        method: HttpMethod,
        url: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<HttpReply, TransportError>;
}

/// What a [`DoctorHttp`] reports for a request that outlived its deadline.
pub fn timed_out(timeout: Duration) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        detail: format!("no reply within {} s", timeout.as_secs()),
    }
}

/// What a [`DoctorHttp`] reports for an event stream where a JSON reply was expected.
pub fn not_json() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Invalid,
        detail: "an event stream where a JSON reply was expected".into(),
    }
}
