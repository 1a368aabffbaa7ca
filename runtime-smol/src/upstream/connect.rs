//! New connections: name resolution, TCP, an optional tunnel through a proxy (HTTP
//! `CONNECT` in the clear or over TLS, or SOCKS5), and the TLS handshake.

use super::stream::{stream_error, Carrier, Stream, StreamError, TlsStream};
use responses_mcp_config::proxy::{ProxyKind, ProxyUrl};
use responses_mcp_core::{TransportError, TransportErrorKind};
use responses_mcp_host::client::socks::{self, Socks5, SocksError};
use responses_mcp_host::client::target::Origin;
use responses_mcp_host::client::tunnel::{connect_request, failed, tunnel_open};
use responses_mcp_host::client::{invalid, tls_config, TlsError, CONNECT_TIMEOUT};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use smol::lock::Mutex;
use smol::{Async, Timer};
use std::cell::OnceCell;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a host's resolved addresses are reused.
const DNS_TTL: Duration = Duration::from_secs(30);

/// Opens connections with the configuration's proxy and TLS settings.
pub struct Connector {
    /// Every connection is a tunnel through this proxy when set.
    proxy: Option<ProxyUrl>,
    /// Root certificates (PEM) replacing the built-in ones, when configured.
    roots_pem: Option<Vec<u8>>,
    /// TLS settings, or why there are none: built at the first TLS connection, so that
    /// nothing in startup (parsing some 150 root certificates) delays the first reply.
    tls: OnceCell<Result<Arc<ClientConfig>, TlsError>>,
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
    pub fn new(proxy: Option<ProxyUrl>, roots_pem: Option<&[u8]>) -> Self {
        Connector {
            proxy,
            roots_pem: roots_pem.map(<[u8]>::to_vec),
            tls: OnceCell::new(),
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
        let carrier = smol::future::or(self.open_or_tunnel(origin), timeout).await?;
        match (carrier, origin.tls) {
            (Tunnel::Socket(socket), false) => Ok(Stream::Plain(socket)),
            (Tunnel::Tls(tls), false) => Ok(Stream::Tls(tls)),
            (Tunnel::Socket(socket), true) => {
                let tls = self.tls_to(socket, &origin.host).await?;
                Ok(Stream::Tls(Box::new(tls)))
            }
            (Tunnel::Tls(outer), true) => {
                let tls = self.tls_to(*outer, &origin.host).await?;
                Ok(Stream::TlsInTls(Box::new(tls)))
            }
        }
    }

    /// A TLS session to `host` over `carrier`.
    async fn tls_to<C: Carrier>(
        &self,
        carrier: C,
        host: &str,
    ) -> Result<TlsStream<C>, TransportError> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| invalid("the host is not a valid TLS server name"))?;
        let config = self
            .tls
            .get_or_init(|| tls_config(self.roots_pem.as_deref()));
        let config = config.clone().map_err(|e| TransportError {
            kind: TransportErrorKind::Tls,
            detail: e.0,
        })?;
        TlsStream::handshake(carrier, config, name)
            .await
            .map_err(stream_error)
    }

    /// A byte channel to `origin`: directly, or through the proxy's tunnel.
    async fn open_or_tunnel(&self, origin: &Origin) -> Result<Tunnel, TransportError> {
        let Some(proxy) = &self.proxy else {
            return Ok(Tunnel::Socket(self.open(origin).await?));
        };
        let at = Origin {
            tls: proxy.kind == ProxyKind::Https,
            host: proxy.host.clone(),
            port: proxy.port,
        };
        let mut socket = self.open(&at).await?;
        match proxy.kind {
            ProxyKind::Http => {
                http_tunnel(&mut socket, proxy, origin).await?;
                Ok(Tunnel::Socket(socket))
            }
            ProxyKind::Https => {
                let mut tls =
                    self.tls_to(socket, &proxy.host)
                        .await
                        .map_err(|e| TransportError {
                            detail: format!("proxy {}: {}", proxy.host, e.detail),
                            ..e
                        })?;
                http_tunnel(&mut tls, proxy, origin).await?;
                Ok(Tunnel::Tls(Box::new(tls)))
            }
            ProxyKind::Socks5 { remote_dns } => {
                let resolved;
                let destination = match socks::destination(origin) {
                    socks::Destination::Name(_) if !remote_dns => {
                        resolved = self.resolve(origin).await?;
                        let ip =
                            resolved
                                .first()
                                .map(|a| a.ip())
                                .ok_or_else(|| TransportError {
                                    kind: TransportErrorKind::Connect,
                                    detail: format!("{} has no addresses", origin.host),
                                })?;
                        socks::Destination::Ip(ip)
                    }
                    other => other,
                };
                socks_handshake(&mut socket, destination, origin.port, proxy.credentials())
                    .await
                    .map_err(|why| TransportError {
                        kind: TransportErrorKind::Connect,
                        detail: format!("SOCKS5 proxy {}: {why}", proxy.host),
                    })?;
                Ok(Tunnel::Socket(socket))
            }
        }
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

/// What an origin's bytes travel over before its own TLS, if any.
enum Tunnel {
    Socket(Async<TcpStream>),
    /// TLS to an `https://` proxy.
    Tls(Box<TlsStream<Async<TcpStream>>>),
}

/// Asks the proxy on `carrier` for a `CONNECT` tunnel to `to`.
async fn http_tunnel<C: Carrier>(
    carrier: &mut C,
    proxy: &ProxyUrl,
    to: &Origin,
) -> Result<(), TransportError> {
    let host = &proxy.host;
    let request = connect_request(proxy, to, responses_mcp_config::USER_AGENT);
    carrier
        .write_all(&request)
        .await
        .map_err(|e| failed(format!("proxy {host}: {}", stream_error(e).detail)))?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = carrier
            .read(&mut chunk)
            .await
            .map_err(|e| failed(format!("proxy {host}: {}", stream_error(e).detail)))?;
        if n == 0 {
            return Err(failed(format!(
                "proxy {host} closed the connection instead of opening a tunnel"
            )));
        }
        reply.extend_from_slice(&chunk[..n]);
        if tunnel_open(&reply, host)? {
            return Ok(());
        }
    }
}

/// Opens a SOCKS5 tunnel to `destination:port` on `carrier`; an error says why.
async fn socks_handshake<C: Carrier>(
    carrier: &mut C,
    destination: socks::Destination<'_>,
    port: u16,
    credentials: Option<(&str, &str)>,
) -> Result<(), SocksError> {
    let io = |e: StreamError| SocksError(format!("{e:?}"));
    let (mut handshake, mut next) = Socks5::start(destination, port, credentials)?;
    while next.read > 0 {
        if let Some(bytes) = &next.write {
            carrier.write_all(bytes).await.map_err(io)?;
        }
        let mut buf = vec![0u8; next.read];
        let mut filled = 0;
        while filled < buf.len() {
            match carrier.read(&mut buf[filled..]).await.map_err(io)? {
                0 => return Err(socks::CLOSED.into()),
                n => filled += n,
            }
        }
        next = handshake.received(&buf)?;
    }
    Ok(())
}
