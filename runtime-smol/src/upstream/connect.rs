//! New connections: name resolution, TCP, an optional CONNECT tunnel through a proxy, and
//! the TLS handshake.

use super::proxy::Proxy;
use super::response;
use super::stream::Stream;
use super::target::Origin;
use super::{invalid, stream_error};
use responses_mcp_core::server::{TransportError, TransportErrorKind};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::lock::Mutex;
use smol::{Async, Timer};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long connecting (resolving and tunnelling included) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a host's resolved addresses are reused.
const DNS_TTL: Duration = Duration::from_secs(30);

/// Opens connections with the configuration's proxy and TLS settings.
pub struct Connector {
    /// Every connection is a tunnel through this proxy when set.
    proxy: Option<Proxy>,
    /// TLS settings, or why there are none.
    tls: Result<Arc<ClientConfig>, String>,
    /// One lookup at a time, so that many calls starting together share it.
    dns: Mutex<Option<Resolved>>,
}

struct Resolved {
    host: String,
    port: u16,
    addrs: Vec<SocketAddr>,
    at: Instant,
}

impl Connector {
    /// A connector through `proxy` (if any), trusting `roots_pem` (if given) instead of
    /// the built-in roots.
    pub fn new(proxy: Option<Proxy>, roots_pem: Option<&[u8]>) -> Self {
        Connector {
            proxy,
            tls: tls_config(roots_pem),
            dns: Mutex::new(None),
        }
    }

    /// A new connection to `origin`, TLS handshake included.
    pub async fn connect(&self, origin: &Origin) -> Result<Stream, TransportError> {
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
        tunnel(&mut socket, proxy, origin).await?;
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

    /// The addresses of `origin`: parsed from an IP literal, else looked up (off the
    /// executor thread) or taken from the last lookup of the same host.
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
) -> Result<(), TransportError> {
    let fail = |detail: String| TransportError {
        kind: TransportErrorKind::Connect,
        detail,
    };
    let host = &proxy.origin.host;
    socket
        .write_all(&proxy.connect_request(to, responses_mcp_config::USER_AGENT))
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
                    super::read_error(e).detail
                )))
            }
        }
    }
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
