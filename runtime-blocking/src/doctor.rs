//! `doctor`'s HTTP requests through this runtime's client, each on its own thread
//! so that a deadline can abort it.

use crate::upstream::{Delivered, Upstream};
use responses_mcp_config::Startup;
use responses_mcp_core::{AttemptId, HttpMethod, HttpReply, HttpRequest, TransportError};
use responses_mcp_host::doctor::{self, DoctorHttp};
use std::sync::mpsc;
use std::time::Duration;

/// The client `doctor` checks with: the one calls use.
pub struct Client {
    upstream: Upstream,
}

impl Client {
    /// A client for `startup`'s configuration.
    pub fn new(startup: &Startup) -> Client {
        Client {
            upstream: Upstream::new(startup),
        }
    }
}

impl DoctorHttp for Client {
    fn send(
        &mut self,
        method: HttpMethod,
        url: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<HttpReply, TransportError> {
        let attempt = self.upstream.begin();
        let abort = attempt.clone();
        let upstream = self.upstream.clone();
        let request = HttpRequest {
            attempt: AttemptId(0),
            method,
            url: url.to_owned(),
            body,
            to: responses_mcp_core::Destination::Provider,
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(upstream.send(&attempt, &request, |_| true));
        });
        match rx.recv_timeout(timeout) {
            Ok(Ok(Delivered::Whole(reply))) => Ok(reply),
            Ok(Ok(Delivered::Streamed)) => Err(doctor::not_json()),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                abort.abort();
                Err(doctor::timed_out(timeout))
            }
        }
    }
}
