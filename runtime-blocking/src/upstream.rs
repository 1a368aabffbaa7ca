//! The blocking HTTP client: ureq agents with keep-alive, one agent per attempt so that an
//! abort can close exactly that attempt's connection.
//!
//! An attempt takes an idle agent (with its kept-alive connection) from the pool, or makes
//! a new one. When the attempt ends normally the agent goes back to the pool, so the next
//! call reuses the TLS connection. To abort, [`Attempt::abort`] shuts the agent down,
//! which closes its socket at once: a blocked read or write returns an error straight
//! away and the server sees the connection close.

use responses_mcp_config::proxy::ProxyRoute;
use responses_mcp_config::{ApiKey, Startup};
use responses_mcp_core::http::{is_event_stream, is_kept_header, scrub, MAX_BODY_BYTES};
use responses_mcp_core::Message;
use responses_mcp_core::{
    AttemptId, HttpHead, HttpMethod, HttpReply, HttpRequest, TransportError, TransportErrorKind,
};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Per-connection read buffer (ureq's default is 128 KiB).
const INPUT_BUFFER: usize = 16 * 1024;
/// Per-connection write buffer (ureq's default is 128 KiB).
const OUTPUT_BUFFER: usize = 8 * 1024;
/// Stack of the thread that runs one attempt; ureq and rustls need far less than the
/// 2 MiB default, and many attempts may be in flight.
pub const ATTEMPT_STACK: usize = 256 * 1024;
/// Idle agents (kept-alive connections) kept for reuse.
const MAX_IDLE_AGENTS: usize = 256;

/// Sends attempts upstream with the credentials and headers of the configuration.
#[derive(Clone)]
pub struct Upstream {
    shared: Arc<Shared>,
}

struct Shared {
    config: ureq::config::Config,
    /// The header carrying the key, and its value.
    authorization: Option<(&'static str, String)>,
    /// The key's bytes, to scrub from bodies that echo it back.
    key: Option<Vec<u8>>,
    organization: Option<String>,
    project: Option<String>,
    idle: Mutex<Vec<ureq::Agent>>,
}

/// One attempt in flight: the agent it runs on.
pub struct Attempt {
    agent: ureq::Agent,
}

impl Attempt {
    /// Closes the attempt's connection; the request in progress fails at once.
    pub fn abort(self) {
        self.agent.shutdown();
    }
}

impl Upstream {
    /// A client for `startup`'s configuration.
    pub fn new(startup: &Startup) -> Self {
        Upstream::with_key(
            startup.auth_header(),
            startup.api_key.as_ref(),
            startup.organization.clone(),
            startup.project.clone(),
            startup.resolved.timeout(),
            &startup.proxy,
            startup.ca_pem.as_deref(),
        )
    }

    /// A client with explicit settings, through `proxy`; `roots_pem` replaces the built-in
    /// root certificates.
    pub fn with_key(
        authorization: Option<(&'static str, String)>,
        key: Option<&ApiKey>,
        organization: Option<String>,
        project: Option<String>,
        timeout: Duration,
        proxy: &ProxyRoute,
        roots_pem: Option<&[u8]>,
    ) -> Self {
        // The proxy was resolved with the rest of the configuration; ureq must not read
        // the environment again (it would ignore NO_PROXY on some paths).
        let proxy = proxy
            .proxy()
            .and_then(|p| ureq::Proxy::new(&p.expose_url()).ok());
        let roots = match roots_pem {
            Some(pem) => {
                let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(pem)
                    .filter_map(|item| match item {
                        Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
                        _ => None,
                    })
                    .collect();
                ureq::tls::RootCerts::new_with_certs(&certs)
            }
            None => ureq::tls::RootCerts::WebPki,
        };
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(roots)
            .unversioned_rustls_crypto_provider(Arc::new(responses_mcp_config::tls::provider()))
            .build();
        let config = ureq::Agent::config_builder()
            .proxy(proxy)
            .tls_config(tls)
            .http_status_as_error(false)
            // POST bodies and credentials must not follow a redirect somewhere else.
            .max_redirects(0)
            .user_agent(responses_mcp_config::USER_AGENT)
            .timeout_connect(Some(Duration::from_secs(15)))
            // The core aborts attempts at their deadline; this only backs it up.
            .timeout_global(Some(timeout + Duration::from_secs(30)))
            // ureq's 128 KiB default buffers per connection dominated the memory of many
            // calls in flight; OpenAI's headers and our bodies stream fine through less.
            .input_buffer_size(INPUT_BUFFER)
            .output_buffer_size(OUTPUT_BUFFER)
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            .build();
        Upstream {
            shared: Arc::new(Shared {
                config,
                authorization,
                key: key.map(|k| k.expose().as_bytes().to_vec()),
                organization,
                project,
                idle: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Takes an agent for a new attempt.
    pub fn begin(&self) -> Attempt {
        let idle = self
            .shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        Attempt {
            agent: idle.unwrap_or_else(|| ureq::Agent::new_with_config(self.shared.config.clone())),
        }
    }

    /// A handle on the same agent, kept by the driver so that it can abort the attempt.
    pub fn abort_handle(attempt: &Attempt) -> Attempt {
        Attempt {
            agent: attempt.agent.clone(),
        }
    }

    /// Returns the agent of a finished, not aborted, attempt for reuse.
    pub fn finish(&self, attempt: Attempt) {
        let mut idle = self
            .shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE_AGENTS {
            idle.push(attempt.agent);
        }
    }

    /// The headers every request carries: what we accept, and the credentials.
    fn headers<B>(&self, builder: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let mut builder = builder.header("Accept", "application/json");
        if let Some((name, value)) = &self.shared.authorization {
            builder = builder.header(*name, value);
        }
        if let Some(org) = &self.shared.organization {
            builder = builder.header("OpenAI-Organization", org);
        }
        if let Some(project) = &self.shared.project {
            builder = builder.header("OpenAI-Project", project);
        }
        builder
    }

    /// Performs one attempt, blocking until it ends. A 2xx event stream goes to `stream`
    /// as it arrives (its head, then body pieces; the caller sends the end); any other
    /// reply is read whole.
    pub fn send(
        &self,
        attempt: &Attempt,
        request: &HttpRequest,
        stream: impl FnMut(Message) -> bool,
    ) -> Result<Delivered, TransportError> {
        let https = request.url.starts_with("https://");
        let sent = match request.method {
            HttpMethod::Post => self
                .headers(attempt.agent.post(&request.url))
                .header("Content-Type", "application/json")
                .send(&request.body[..]),
            HttpMethod::Get => self.headers(attempt.agent.get(&request.url)).call(),
        };
        let mut response = sent.map_err(|e| transport_error(e, https))?;
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter(|(name, _)| is_kept_header(name.as_str()))
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect();
        if is_event_stream(status, &headers) {
            return stream_body(response, request.attempt, status, headers, stream, https);
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES as u64)
            .read_to_vec()
            .map_err(|e| transport_error(e, https))?;
        let body = match &self.shared.key {
            Some(key) => scrub(body, key),
            None => body,
        };
        Ok(Delivered::Whole(HttpReply {
            status,
            headers,
            body,
        }))
    }
}

/// How a reply was handed over.
pub enum Delivered {
    /// Read whole.
    Whole(HttpReply),
    /// Sent as it arrived; the caller sends its end.
    Streamed,
}

/// Bytes read from a streamed body at a time.
const STREAM_READ: usize = 16 * 1024;

/// Hands a 2xx event stream to `deliver` as it arrives. The total is not capped: the core
/// bounds each line and event, and the attempt's deadline bounds the whole.
fn stream_body(
    mut response: ureq::http::Response<ureq::Body>,
    attempt: AttemptId,
    status: u16,
    headers: Vec<(String, String)>,
    mut deliver: impl FnMut(Message) -> bool,
    https: bool,
) -> Result<Delivered, TransportError> {
    let gone = || TransportError {
        kind: TransportErrorKind::Io,
        detail: "the server is shutting down".into(),
    };
    if !deliver(Message::Head(attempt, HttpHead { status, headers })) {
        return Err(gone());
    }
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; STREAM_READ];
    loop {
        match std::io::Read::read(&mut reader, &mut buf) {
            Ok(0) => return Ok(Delivered::Streamed),
            Ok(n) => {
                if !deliver(Message::Body(attempt, buf[..n].to_vec())) {
                    return Err(gone());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(transport_error(ureq::Error::Io(e), https)),
        }
    }
}

/// Maps a ureq error to a kind the core can decide on, with a description that holds no
/// secrets (ureq's messages name hosts and causes, never headers).
fn transport_error(e: ureq::Error, https: bool) -> TransportError {
    use std::io::ErrorKind;
    let kind = match &e {
        ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::ConnectProxyFailed(_) => TransportErrorKind::Connect,
        // A SOCKS proxy refusing our credentials is PermissionDenied.
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::AddrNotAvailable
                    | ErrorKind::PermissionDenied
            ) =>
        {
            TransportErrorKind::Connect
        }
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::TlsRequired => {
            TransportErrorKind::Tls
        }
        // rustls reports a peer that does not speak TLS, or a broken record, as
        // invalid data.
        ureq::Error::Io(io) if https && io.kind() == ErrorKind::InvalidData => {
            TransportErrorKind::Tls
        }
        ureq::Error::BodyExceedsLimit(_) => TransportErrorKind::BodyTooLarge,
        ureq::Error::BadUri(_)
        | ureq::Error::InvalidProxyUrl
        | ureq::Error::RequireHttpsOnly(_) => TransportErrorKind::Invalid,
        _ => TransportErrorKind::Io,
    };
    let detail = match &e {
        ureq::Error::BodyExceedsLimit(_) => {
            format!("the response body is larger than {MAX_BODY_BYTES} bytes")
        }
        other => other.to_string(),
    };
    TransportError { kind, detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use responses_mcp_core::AttemptId;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn a_get_carries_no_body_and_reads_the_stored_response() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/v1/responses/resp_1",
            listener.local_addr().unwrap()
        );
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 4096];
            let n = conn.read(&mut buf).unwrap();
            buf.truncate(n);
            let body = b"{\"id\":\"resp_1\",\"status\":\"queued\"}";
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
            conn.write_all(head.as_bytes()).unwrap();
            conn.write_all(body).unwrap();
            buf
        });
        let upstream = Upstream::with_key(
            None,
            None,
            None,
            None,
            Duration::from_secs(5),
            &ProxyRoute::Direct,
            None,
        );
        let attempt = upstream.begin();
        let request = HttpRequest {
            attempt: AttemptId(1),
            method: HttpMethod::Get,
            url,
            body: Vec::new(),
        };
        let Ok(Delivered::Whole(reply)) = upstream.send(&attempt, &request, |_| true) else {
            panic!("not a whole reply")
        };
        assert_eq!(reply.body, b"{\"id\":\"resp_1\",\"status\":\"queued\"}");
        let head = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(
            head.starts_with("GET /v1/responses/resp_1 HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            !head.to_ascii_lowercase().contains("content-type"),
            "{head}"
        );
    }
}
