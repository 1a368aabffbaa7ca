//! The smol runtime's HTTP client: HTTP/1.1 on non-blocking sockets (rustls for https),
//! each attempt a task on the runtime's executor, kept-alive connections pooled per origin.
//!
//! An attempt in flight costs its task, its socket and one read buffer; no thread. Aborting
//! is dropping the task, which drops the socket and so closes the connection.

pub mod proxy;
mod response;
mod stream;
mod target;

use proxy::Proxy;
use response::{ReadError, Reader, Response};
use responses_mcp_blocking::upstream::scrub;
use responses_mcp_config::Startup;
use responses_mcp_core::server::{HttpReply, TransportError, TransportErrorKind};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::lock::Mutex;
use smol::{Async, Timer};
use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stream::{Stream, StreamError};
use target::{Origin, Target};

/// Largest response body read; larger ones fail the attempt.
const MAX_BODY_BYTES: usize = responses_mcp_blocking::upstream::MAX_BODY_BYTES as usize;
/// How long connecting (resolving included) may take before the attempt fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused: servers drop idle
/// connections, and a request on one they are dropping is wasted.
const MAX_IDLE_AGE: Duration = Duration::from_secs(30);
/// How long a host's resolved addresses are reused.
const DNS_TTL: Duration = Duration::from_secs(30);

/// Sends attempts with the credentials and headers of the configuration.
pub struct Upstream {
    /// The request header lines every request carries, or why they cannot be sent.
    headers: Result<Vec<u8>, &'static str>,
    /// The key's bytes, to scrub from bodies that echo it back.
    key: Option<Vec<u8>>,
    user_agent: String,
    /// Every connection is a tunnel through this proxy when set.
    proxy: Option<Proxy>,
    /// TLS settings, or why there are none.
    tls: Result<Arc<ClientConfig>, String>,
    idle: RefCell<Vec<Idle>>,
    /// One lookup at a time, so that many calls starting together share it.
    dns: Mutex<Option<Resolved>>,
}

struct Idle {
    origin: Origin,
    stream: Stream,
    since: Instant,
}

struct Resolved {
    host: String,
    port: u16,
    addrs: Vec<SocketAddr>,
    at: Instant,
}

/// How an exchange on a connection failed.
struct Failed {
    error: TransportError,
    /// Some of the response arrived, so the request surely did.
    answered: bool,
}

impl Upstream {
    /// A client for `startup`'s configuration, connecting through `proxy` if given.
    pub fn new(startup: &Startup, proxy: Option<Proxy>) -> Upstream {
        let authorization = startup
            .api_key
            .as_ref()
            .map(|k| format!("Bearer {}", k.expose()));
        Upstream {
            headers: header_lines(&[
                ("Authorization", authorization.as_deref()),
                ("OpenAI-Organization", startup.organization.as_deref()),
                ("OpenAI-Project", startup.project.as_deref()),
            ]),
            key: startup
                .api_key
                .as_ref()
                .map(|k| k.expose().as_bytes().to_vec())
                .filter(|k| k.len() >= 8),
            user_agent: user_agent(),
            proxy,
            tls: tls_config(startup.ca_pem.as_deref()),
            idle: RefCell::new(Vec::new()),
            dns: Mutex::new(None),
        }
    }

    /// Performs one attempt: POSTs `body` to `url` and reads the whole reply.
    pub async fn send(&self, url: &str, body: Vec<u8>) -> Result<HttpReply, TransportError> {
        let target = Target::parse(url).map_err(invalid)?;
        let headers = self.headers.as_deref().map_err(|why| invalid(why))?;
        // The body is only needed inside the message, which lives until the reply.
        let message = message(&target, headers, &body);
        drop(body);
        let response = loop {
            let (mut stream, reused) = match self.take_idle(&target.origin) {
                Some(stream) => (stream, true),
                None => (self.connect(&target.origin).await?, false),
            };
            match exchange(&mut stream, &message).await {
                Ok(response) => {
                    if response.reusable {
                        self.keep_idle(target.origin, stream);
                    }
                    break response;
                }
                // The server closed the kept-alive connection before reading the request;
                // it is not a failure of this call.
                Err(Failed {
                    answered: false, ..
                }) if reused => log::debug!("a kept-alive connection was closed; reconnecting"),
                Err(failed) => return Err(failed.error),
            }
        };
        Ok(HttpReply {
            status: response.status,
            headers: response.headers,
            body: match &self.key {
                Some(key) => scrub(response.body, key),
                None => response.body,
            },
        })
    }

    /// An idle connection to `origin` that is still good.
    fn take_idle(&self, origin: &Origin) -> Option<Stream> {
        let mut idle = self.idle.borrow_mut();
        while let Some(i) = idle.iter().rposition(|c| &c.origin == origin) {
            let mut conn = idle.remove(i);
            if conn.since.elapsed() < MAX_IDLE_AGE && conn.stream.is_quiet() {
                return Some(conn.stream);
            }
        }
        None
    }

    fn keep_idle(&self, origin: Origin, stream: Stream) {
        let mut idle = self.idle.borrow_mut();
        if idle.len() >= MAX_IDLE {
            idle.remove(0);
        }
        idle.push(Idle {
            origin,
            stream,
            since: Instant::now(),
        });
    }

    /// A new connection to `origin`, TLS handshake included.
    async fn connect(&self, origin: &Origin) -> Result<Stream, TransportError> {
        let timeout = async {
            Timer::after(CONNECT_TIMEOUT).await;
            Err(TransportError {
                kind: TransportErrorKind::Connect,
                detail: format!("connecting to {} timed out", origin.host),
            })
        };
        let socket = smol::future::or(self.open_or_tunnel(origin), timeout).await?;
        if !origin.tls {
            return Ok(Stream::Plain(socket));
        }
        let name = ServerName::try_from(origin.host.clone())
            .map_err(|_| invalid("the URL host is not a valid TLS server name"))?;
        let config = self.tls.clone().map_err(|detail| TransportError {
            kind: TransportErrorKind::Tls,
            detail,
        })?;
        Stream::tls(socket, config, name)
            .await
            .map_err(stream_error)
    }

    /// A TCP connection to `origin`, directly or through the proxy's tunnel.
    async fn open_or_tunnel(&self, origin: &Origin) -> Result<Async<TcpStream>, TransportError> {
        let Some(proxy) = &self.proxy else {
            return self.open(origin).await;
        };
        let mut socket = self.open(&proxy.origin).await?;
        tunnel(&mut socket, proxy, origin, &self.user_agent).await?;
        Ok(socket)
    }

    /// A TCP connection to the first address of `origin` that accepts.
    async fn open(&self, origin: &Origin) -> Result<Async<TcpStream>, TransportError> {
        let mut last = None;
        for addr in self.resolve(origin).await? {
            match Async::<TcpStream>::connect(addr).await {
                Ok(socket) => {
                    // Requests go out in one write; coalescing them only adds latency.
                    let _ = socket.get_ref().set_nodelay(true);
                    return Ok(socket);
                }
                Err(e) => last = Some(e),
            }
        }
        // The addresses may have moved: look them up again next time.
        *self.dns.lock().await = None;
        Err(TransportError {
            kind: TransportErrorKind::Connect,
            detail: match last {
                Some(e) => format!("cannot connect to {}: {e}", origin.host),
                None => format!("{} has no addresses", origin.host),
            },
        })
    }

    async fn resolve(&self, origin: &Origin) -> Result<Vec<SocketAddr>, TransportError> {
        if let Ok(ip) = origin.host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, origin.port)]);
        }
        let mut cache = self.dns.lock().await;
        if let Some(hit) = cache
            .as_ref()
            .filter(|c| c.host == origin.host && c.port == origin.port && c.at.elapsed() < DNS_TTL)
        {
            return Ok(hit.addrs.clone());
        }
        let (host, port) = (origin.host.clone(), origin.port);
        let addrs = smol::unblock(move || {
            (host.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect::<Vec<_>>)
        })
        .await
        .map_err(|e| TransportError {
            kind: TransportErrorKind::Connect,
            detail: format!("cannot resolve {}: {e}", origin.host),
        })?;
        *cache = Some(Resolved {
            host: origin.host.clone(),
            port: origin.port,
            addrs: addrs.clone(),
            at: Instant::now(),
        });
        Ok(addrs)
    }
}

/// Asks the proxy on `socket` for a tunnel to `to`.
async fn tunnel(
    socket: &mut Async<TcpStream>,
    proxy: &Proxy,
    to: &Origin,
    user_agent: &str,
) -> Result<(), TransportError> {
    let fail = |detail: String| TransportError {
        kind: TransportErrorKind::Connect,
        detail,
    };
    let host = &proxy.origin.host;
    socket
        .write_all(&proxy.connect_request(to, user_agent))
        .await
        .map_err(|e| fail(format!("proxy {host}: {e}")))?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = socket
            .read(&mut chunk)
            .await
            .map_err(|e| fail(format!("proxy {host}: {e}")))?;
        if n == 0 {
            return Err(fail(format!(
                "proxy {host} closed the connection instead of opening a tunnel"
            )));
        }
        reply.extend_from_slice(&chunk[..n]);
        match response::tunnel_reply(&reply) {
            Ok(None) => {}
            Ok(Some((status, _))) if !(200..300).contains(&status) => {
                let hint = if status == 407 {
                    " (it wants credentials: put them in the proxy URL)"
                } else {
                    ""
                };
                return Err(fail(format!(
                    "proxy {host} refused the tunnel with HTTP {status}{hint}"
                )));
            }
            Ok(Some((_, end))) if end < reply.len() => {
                return Err(fail(format!("proxy {host} sent data into a new tunnel")));
            }
            Ok(Some(_)) => return Ok(()),
            Err(e) => {
                return Err(fail(format!(
                    "proxy {host} answered CONNECT with {}",
                    read_error(e).detail
                )))
            }
        }
    }
}

/// Writes the request and reads its response.
async fn exchange(stream: &mut Stream, message: &[u8]) -> Result<Response, Failed> {
    if let Err(e) = stream.write_all(message).await {
        return Err(Failed {
            error: stream_error(e),
            answered: false,
        });
    }
    let mut reader = Reader::new(MAX_BODY_BYTES);
    loop {
        let read = stream.read(reader.space()).await;
        let outcome = match read {
            Ok(n) => reader.filled(n).map_err(read_error),
            Err(e) => Err(stream_error(e)),
        };
        match outcome {
            Ok(Some(response)) => return Ok(response),
            Ok(None) => {}
            Err(error) => {
                return Err(Failed {
                    error,
                    answered: reader.started(),
                })
            }
        }
    }
}

/// The request: head and body in one buffer, written at once.
fn message(target: &Target, headers: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + headers.len() + body.len());
    for part in [
        b"POST ",
        target.path.as_bytes(),
        b" HTTP/1.1\r\nHost: ",
        target.host_header.as_bytes(),
        b"\r\n",
        headers,
        b"Content-Length: ",
        body.len().to_string().as_bytes(),
        b"\r\n\r\n",
        body,
    ] {
        out.extend_from_slice(part);
    }
    out
}

/// The fixed header lines, each ending in CRLF; a value that could break the head (a line
/// break or another control character) is refused without repeating it.
fn header_lines(optional: &[(&str, Option<&str>)]) -> Result<Vec<u8>, &'static str> {
    let mut out = format!(
        "User-Agent: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\n",
        user_agent()
    )
    .into_bytes();
    for (name, value) in optional {
        let Some(value) = value else { continue };
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(
                "the API key, organization or project has a character an HTTP header cannot carry",
            );
        }
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    Ok(out)
}

fn user_agent() -> String {
    format!("openai-responses-mcp/{}", responses_mcp_config::VERSION)
}

/// The TLS settings: the built-in web PKI roots, or only the certificates of `roots_pem`
/// (`openai.ca_file` / `SSL_CERT_FILE`) when given.
fn tls_config(roots_pem: Option<&[u8]>) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    match roots_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem).flatten() {
                if let Err(e) = roots.add(cert) {
                    log::warn!("skipping a CA certificate: {e}");
                }
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS settings: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn invalid(why: &str) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Invalid,
        detail: why.to_owned(),
    }
}

fn stream_error(e: StreamError) -> TransportError {
    match e {
        StreamError::Tls(detail) => TransportError {
            kind: TransportErrorKind::Tls,
            detail: format!("TLS: {detail}"),
        },
        StreamError::Io(e) => TransportError {
            kind: TransportErrorKind::Io,
            detail: e.to_string(),
        },
    }
}

fn read_error(e: ReadError) -> TransportError {
    match e {
        ReadError::TooLarge => TransportError {
            kind: TransportErrorKind::BodyTooLarge,
            detail: format!("the response body is larger than {MAX_BODY_BYTES} bytes"),
        },
        ReadError::Closed => TransportError {
            kind: TransportErrorKind::Io,
            detail: "the connection closed before the response was complete".into(),
        },
        ReadError::Malformed(why) => TransportError {
            kind: TransportErrorKind::Io,
            detail: format!("invalid HTTP response: {why}"),
        },
    }
}

#[cfg(test)]
mod tests;
