//! `doctor`'s HTTP requests through this runtime's client, each raced against its
//! deadline on a one-off executor.

use crate::upstream::{Delivered, Upstream};
use responses_mcp_config::Startup;
use responses_mcp_core::{HttpMethod, HttpReply, TransportError};
use responses_mcp_host::doctor::{self, DoctorHttp};
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
        let request = async {
            let to = responses_mcp_core::Destination::Provider;
            match self.upstream.deliver(method, to, url, body, None).await? {
                Delivered::Whole(reply) => Ok(reply),
                Delivered::Streamed => Err(doctor::not_json()),
            }
        };
        let deadline = async {
            smol::Timer::after(timeout).await;
            Err(doctor::timed_out(timeout))
        };
        smol::block_on(smol::future::or(request, deadline))
    }
}
