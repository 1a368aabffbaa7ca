//! The blocking HTTP client: one ureq agent (its connection pool, keep-alive, proxies and
//! rustls with the configuration's narrowed crypto provider), each attempt on a thread of
//! its own. ureq owns HTTP/1.1, TLS and the proxy tunnels; the core keeps reading what
//! arrives: a 2xx event stream is handed over piece by piece as it comes, anything else is
//! read whole.
//!
//! To abort, [`Attempt::abort`] shuts down the socket the attempt runs on (see
//! `attempt.rs`): a blocked read or write returns at once and the server sees the
//! connection close.

mod attempt;

pub use attempt::Attempt;
use attempt::Tracking;
use responses_mcp_config::proxy::{ProxyKind, ProxyUrl};
use responses_mcp_config::Startup;
use responses_mcp_core::http::{is_event_stream, is_kept_header, scrub, MAX_BODY_BYTES};
use responses_mcp_core::Message;
use responses_mcp_core::{
    AttemptId, HttpHead, HttpMethod, HttpReply, HttpRequest, TransportError, TransportErrorKind,
};
use responses_mcp_host::client::{invalid, CONNECT_TIMEOUT};
use std::io::{self, Read};
use std::sync::Arc;
use std::time::Duration;
use ureq::unversioned::resolver::DefaultResolver;

/// Stack of the thread that runs one attempt; ureq and rustls need far less than the
/// 2 MiB default, and many attempts may be in flight.
pub const ATTEMPT_STACK: usize = 256 * 1024;
/// Per-connection read buffer (ureq's default is 128 KiB), allocated and zeroed once per
/// connection: a response head must fit in it (OpenAI's are about 1.5 KiB), bodies stream
/// through it, and ureq borrows 10 KiB of it to read request bodies, so less buys nothing.
/// With 1,000 calls in flight each KiB here is a MB (docs/benchmarks.md).
pub(crate) const INPUT_BUFFER: usize = 10 * 1024;
/// Per-connection write buffer (ureq's default is 128 KiB): the request head (about
/// 400 bytes) is written into it, the body streams through it.
pub(crate) const OUTPUT_BUFFER: usize = 4 * 1024;
/// Per-connection buffers, each way, of the TCP connection under TLS: they carry TLS
/// records between the socket and rustls (which keeps its own), never a whole message.
const TLS_RECORDS_BUFFER: usize = 4 * 1024;
/// Idle connections kept for reuse (all to the one upstream origin, in practice).
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused: servers drop idle
/// connections, and a request on one they are dropping is wasted.
const MAX_IDLE_AGE: Duration = Duration::from_secs(30);
/// Bytes read from a streamed body at a time.
const STREAM_READ: usize = 16 * 1024;

/// Sends attempts upstream with the credentials and headers of the configuration.
#[derive(Clone)]
pub struct Upstream {
    shared: Arc<Shared>,
}

struct Shared {
    agent: ureq::Agent,
    /// The headers every request carries, or why they cannot be sent.
    headers: Result<Vec<(&'static str, String)>, &'static str>,
    /// The key's bytes, to scrub from bodies that echo it back.
    key: Option<Vec<u8>>,
}

impl Upstream {
    /// A client for `startup`'s configuration, through its proxy if it has one.
    pub fn new(startup: &Startup) -> Self {
        Upstream::with(
            responses_mcp_host::client::startup_headers(startup),
            startup
                .api_key
                .as_ref()
                .map(|k| k.expose().as_bytes().to_vec()),
            startup.proxy.proxy(),
            startup.ca_pem.as_deref(),
            // The core aborts attempts at their deadline; this only backs it up.
            startup.resolved.timeout() + Duration::from_secs(30),
        )
    }

    /// A client sending `headers` through `proxy` (if any), trusting `roots_pem` (if
    /// given) instead of the built-in roots; a socket read or write that takes longer
    /// than `io_timeout` fails.
    fn with(
        headers: Result<Vec<(&'static str, String)>, &'static str>,
        key: Option<Vec<u8>>,
        proxy: Option<&ProxyUrl>,
        roots_pem: Option<&[u8]>,
        io_timeout: Duration,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .proxy(proxy.and_then(ureq_proxy))
            .tls_config(tls_config(roots_pem))
            .http_status_as_error(false)
            // POST bodies and credentials must not follow a redirect somewhere else.
            .max_redirects(0)
            .user_agent(responses_mcp_config::USER_AGENT)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_per_read(Some(io_timeout))
            .timeout_per_write(Some(io_timeout))
            // ureq's 128 KiB default buffers per connection dominated the memory of many
            // calls in flight; OpenAI's heads and our bodies stream fine through less.
            .input_buffer_size(INPUT_BUFFER)
            .output_buffer_size(OUTPUT_BUFFER)
            .max_idle_connections(MAX_IDLE)
            .max_idle_connections_per_host(MAX_IDLE)
            .max_idle_age(MAX_IDLE_AGE)
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            Tracking::new(TLS_RECORDS_BUFFER),
            DefaultResolver::default(),
        );
        Upstream {
            shared: Arc::new(Shared {
                agent,
                headers,
                key,
            }),
        }
    }

    /// A new attempt, not yet connected.
    pub fn begin(&self) -> Attempt {
        Attempt::default()
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
        let headers = self.shared.headers.as_deref().map_err(|why| invalid(why))?;
        // The identity provider gets no credential of the model provider's.
        let headers = match request.to {
            responses_mcp_core::Destination::Provider => headers,
            responses_mcp_core::Destination::IdentityProvider => &[],
        };
        let https = request.url.starts_with("https://");
        let _entered = attempt.enter();
        let response = loop {
            match self.request(request, headers) {
                Ok(response) => break response,
                // The server had closed the kept-alive connection before it read the
                // request: not a failure of this call. (A timeout is no such closing: a
                // request that may be running upstream is never sent twice.)
                Err(e) if !matches!(e, ureq::Error::Timeout(_)) && attempt.take_stale() => {
                    log::debug!("a kept-alive connection was closed; reconnecting");
                }
                Err(e) => return Err(transport_error(e, https)),
            }
        };
        self.receive(response, request.attempt, stream, https)
    }

    /// Sends the request; its response once the head is in.
    fn request(
        &self,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let agent = &self.shared.agent;
        match request.method {
            HttpMethod::Post => with_headers(agent.post(&request.url), headers)
                .header("Content-Type", "application/json")
                .send(&request.body[..]),
            HttpMethod::Get => with_headers(agent.get(&request.url), headers).call(),
        }
    }

    /// Reads the response: handed over as it arrives when it is a 2xx event stream,
    /// else whole (capped, and scrubbed of the key).
    fn receive(
        &self,
        mut response: ureq::http::Response<ureq::Body>,
        attempt: AttemptId,
        stream: impl FnMut(Message) -> bool,
        https: bool,
    ) -> Result<Delivered, TransportError> {
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
            return stream_body(
                response,
                attempt,
                HttpHead { status, headers },
                stream,
                https,
            );
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES as u64)
            .read_to_vec()
            .map_err(|e| transport_error(e, https))?;
        Ok(Delivered::Whole(HttpReply {
            status,
            headers,
            body: match &self.shared.key {
                Some(key) => scrub(body, key),
                None => body,
            },
        }))
    }
}

/// `builder` with what we accept and the configuration's credentials.
fn with_headers<B>(
    builder: ureq::RequestBuilder<B>,
    headers: &[(&'static str, String)],
) -> ureq::RequestBuilder<B> {
    headers.iter().fold(
        builder.header("Accept", "application/json"),
        |builder, (name, value)| builder.header(*name, value),
    )
}

/// How a reply was handed over.
pub enum Delivered {
    /// Read whole.
    Whole(HttpReply),
    /// Sent as it arrived; the caller sends its end.
    Streamed,
}

/// Hands a 2xx event stream to `deliver` as it arrives. The total is not capped: the core
/// bounds each line and event, and the attempt's deadline bounds the whole.
fn stream_body(
    mut response: ureq::http::Response<ureq::Body>,
    attempt: AttemptId,
    head: HttpHead,
    mut deliver: impl FnMut(Message) -> bool,
    https: bool,
) -> Result<Delivered, TransportError> {
    let gone = || TransportError {
        kind: TransportErrorKind::Io,
        detail: "the server is shutting down".into(),
    };
    if !deliver(Message::Head(attempt, head)) {
        return Err(gone());
    }
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; STREAM_READ];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(Delivered::Streamed),
            Ok(n) => {
                if !deliver(Message::Body(attempt, buf[..n].to_vec())) {
                    return Err(gone());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(transport_error(ureq::Error::Io(e), https)),
        }
    }
}

/// ureq's proxy for ours: the same protocol, host, port and credentials. `socks5://`
/// resolves the target here, `socks5h://` lets the proxy resolve it.
fn ureq_proxy(proxy: &ProxyUrl) -> Option<ureq::Proxy> {
    use ureq::ProxyProtocol as P;
    let (protocol, resolve_here) = match proxy.kind {
        ProxyKind::Http => (P::Http, false),
        ProxyKind::Https => (P::Https, false),
        ProxyKind::Socks5 { remote_dns: false } => (P::Socks5, true),
        ProxyKind::Socks5 { remote_dns: true } => (P::Socks5h, false),
    };
    let mut builder = ureq::Proxy::builder(protocol)
        .host(&proxy.host)
        .port(proxy.port)
        .resolve_target(resolve_here);
    if let Some((user, password)) = proxy.credentials() {
        builder = builder.username(user).password(password);
    }
    match builder.build() {
        Ok(proxy) => Some(proxy),
        Err(e) => {
            log::error!("the proxy cannot be used ({e}); connecting directly");
            None
        }
    }
}

/// The built-in web PKI roots, or only the certificates of `roots_pem`
/// (`openai.ca_file` / `SSL_CERT_FILE`), with the narrowed crypto provider.
pub(crate) fn tls_config(roots_pem: Option<&[u8]>) -> ureq::tls::TlsConfig {
    use ureq::tls::{parse_pem, PemItem, RootCerts};
    let roots = match roots_pem {
        Some(pem) => {
            let certs: Vec<_> = parse_pem(pem)
                .filter_map(|item| match item {
                    Ok(PemItem::Certificate(cert)) => Some(cert),
                    _ => None,
                })
                .collect();
            RootCerts::new_with_certs(&certs)
        }
        None => RootCerts::WebPki,
    };
    ureq::tls::TlsConfig::builder()
        .root_certs(roots)
        .unversioned_rustls_crypto_provider(Arc::new(responses_mcp_host::tls::provider()))
        .build()
}

/// Maps a ureq error to a kind the core can decide on, with a description that holds no
/// secrets (ureq's messages name hosts and causes, never headers).
fn transport_error(e: ureq::Error, https: bool) -> TransportError {
    use io::ErrorKind;
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
        | ureq::Error::Http(_)
        | ureq::Error::InvalidProxyUrl
        | ureq::Error::RequireHttpsOnly(_) => TransportErrorKind::Invalid,
        _ => TransportErrorKind::Io,
    };
    let detail = match &e {
        ureq::Error::BodyExceedsLimit(_) => {
            format!("the response body is larger than {MAX_BODY_BYTES} bytes")
        }
        ureq::Error::Rustls(e) => format!("TLS: {e}"),
        other => other.to_string(),
    };
    TransportError { kind, detail }
}

#[cfg(test)]
mod tests;
