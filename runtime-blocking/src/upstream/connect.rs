//! New connections: name resolution, TCP, an optional tunnel through a proxy (HTTP
//! `CONNECT` in the clear or over TLS, or SOCKS5), and the TLS handshake; blocking, on
//! the attempt's own thread.

use super::conn::{Conn, Tls};
use super::io_error;
use responses_mcp_config::client::socks::{self, Socks5};
use responses_mcp_config::client::target::Origin;
use responses_mcp_config::client::tunnel::{connect_request, failed, tunnel_open};
use responses_mcp_config::client::{invalid, tls_config, CONNECT_TIMEOUT};
use responses_mcp_config::proxy::{ProxyKind, ProxyUrl};
use responses_mcp_core::{TransportError, TransportErrorKind};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Opens connections with the configuration's proxy and TLS settings.
pub struct Connector {
    /// Every connection is a tunnel through this proxy when set.
    proxy: Option<ProxyUrl>,
    /// Root certificates (PEM) replacing the built-in ones, when configured.
    roots_pem: Option<Vec<u8>>,
    /// TLS settings, or why there are none: built at the first TLS connection, so that
    /// nothing in startup (parsing some 150 root certificates) delays the first reply.
    tls: OnceLock<Result<Arc<ClientConfig>, String>>,
    /// A socket read or write that takes longer fails: a backstop, since the core aborts
    /// an attempt at its own deadline.
    io_timeout: Duration,
}

/// What an origin's bytes travel over before its own TLS, if any.
enum Tunnel {
    Socket(TcpStream),
    /// TLS to an `https://` proxy.
    Tls(Box<Tls>),
}

impl Connector {
    /// A connector through `proxy` (if any), trusting `roots_pem` (if given) instead of
    /// the built-in roots.
    pub fn new(proxy: Option<ProxyUrl>, roots_pem: Option<&[u8]>, io_timeout: Duration) -> Self {
        Connector {
            proxy,
            roots_pem: roots_pem.map(<[u8]>::to_vec),
            tls: OnceLock::new(),
            io_timeout,
        }
    }

    /// A new connection to `origin`, TLS handshake included; `opened` sees the socket as
    /// soon as it exists (so that an abort can close it) and may refuse to go on.
    pub fn connect(
        &self,
        origin: &Origin,
        opened: impl FnOnce(&TcpStream) -> Result<(), TransportError>,
    ) -> Result<Conn, TransportError> {
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        let tunnel = self.open_or_tunnel(origin, deadline, opened)?;
        Ok(match (tunnel, origin.tls) {
            (Tunnel::Socket(socket), false) => Conn::Plain(socket),
            (Tunnel::Tls(tls), false) => Conn::Tls(tls),
            (Tunnel::Socket(socket), true) => {
                Conn::Tls(Box::new(self.tls_to(socket, &origin.host)?))
            }
            (Tunnel::Tls(outer), true) => {
                Conn::TlsInTls(Box::new(self.tls_to(*outer, &origin.host)?))
            }
        })
    }

    /// A TLS session to `host` over `carrier`, its handshake done.
    fn tls_to<C: Read + Write>(
        &self,
        mut carrier: C,
        host: &str,
    ) -> Result<StreamOwned<ClientConnection, C>, TransportError> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| invalid("the host is not a valid TLS server name"))?;
        let config = self
            .tls
            .get_or_init(|| tls_config(self.roots_pem.as_deref()));
        let tls_error = |detail: String| TransportError {
            kind: TransportErrorKind::Tls,
            detail: format!("TLS: {detail}"),
        };
        let config = config.clone().map_err(tls_error)?;
        let mut session =
            ClientConnection::new(config, name).map_err(|e| tls_error(e.to_string()))?;
        while session.is_handshaking() {
            match session.complete_io(&mut carrier) {
                Ok((0, 0)) if session.is_handshaking() => {
                    return Err(tls_error(
                        "the server closed the connection during the TLS handshake".into(),
                    ))
                }
                Ok(_) => {}
                Err(e) => return Err(io_error(e, true)),
            }
        }
        Ok(StreamOwned::new(session, carrier))
    }

    /// A byte channel to `origin`: directly, or through the proxy's tunnel.
    fn open_or_tunnel(
        &self,
        origin: &Origin,
        deadline: Instant,
        opened: impl FnOnce(&TcpStream) -> Result<(), TransportError>,
    ) -> Result<Tunnel, TransportError> {
        let Some(proxy) = &self.proxy else {
            let socket = self.open(origin, deadline)?;
            opened(&socket)?;
            return Ok(Tunnel::Socket(socket));
        };
        let at = Origin {
            tls: proxy.kind == ProxyKind::Https,
            host: proxy.host.clone(),
            port: proxy.port,
        };
        let mut socket = self.open(&at, deadline)?;
        opened(&socket)?;
        match proxy.kind {
            ProxyKind::Http => {
                http_tunnel(&mut socket, proxy, origin)?;
                Ok(Tunnel::Socket(socket))
            }
            ProxyKind::Https => {
                let mut tls = self
                    .tls_to(socket, &proxy.host)
                    .map_err(|e| TransportError {
                        detail: format!("proxy {}: {}", proxy.host, e.detail),
                        ..e
                    })?;
                http_tunnel(&mut tls, proxy, origin)?;
                Ok(Tunnel::Tls(Box::new(tls)))
            }
            ProxyKind::Socks5 { remote_dns } => {
                let resolved;
                let destination = match socks::destination(origin) {
                    socks::Destination::Name(_) if !remote_dns => {
                        resolved = resolve(origin)?;
                        let ip = resolved
                            .first()
                            .map(SocketAddr::ip)
                            .ok_or_else(|| failed(format!("{} has no addresses", origin.host)))?;
                        socks::Destination::Ip(ip)
                    }
                    other => other,
                };
                socks_handshake(&mut socket, destination, origin.port, proxy.credentials())
                    .map_err(|why| failed(format!("SOCKS5 proxy {}: {why}", proxy.host)))?;
                Ok(Tunnel::Socket(socket))
            }
        }
    }

    /// A TCP connection to the first address of `origin` that accepts before `deadline`.
    fn open(&self, origin: &Origin, deadline: Instant) -> Result<TcpStream, TransportError> {
        let mut last = None;
        for addr in resolve(origin)? {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(failed(format!("connecting to {} timed out", origin.host)));
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(socket) => {
                    // Requests go out in one write; coalescing them only adds latency.
                    let _ = socket.set_nodelay(true);
                    let _ = socket.set_read_timeout(Some(self.io_timeout));
                    let _ = socket.set_write_timeout(Some(self.io_timeout));
                    return Ok(socket);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(failed(match last {
            Some(e) => format!("cannot connect to {}: {e}", origin.host),
            None => format!("{} has no addresses", origin.host),
        }))
    }
}

/// The addresses of `origin`: parsed from an IP literal, else looked up.
fn resolve(origin: &Origin) -> Result<Vec<SocketAddr>, TransportError> {
    if let Ok(ip) = origin.host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, origin.port)]);
    }
    (origin.host.as_str(), origin.port)
        .to_socket_addrs()
        .map(Iterator::collect)
        .map_err(|e| failed(format!("cannot resolve {}: {e}", origin.host)))
}

/// Asks the proxy on `carrier` for a `CONNECT` tunnel to `to`.
fn http_tunnel(
    carrier: &mut (impl Read + Write),
    proxy: &ProxyUrl,
    to: &Origin,
) -> Result<(), TransportError> {
    let host = &proxy.host;
    let request = connect_request(proxy, to, responses_mcp_config::USER_AGENT);
    let io = |e| failed(format!("proxy {host}: {}", io_error(e, false).detail));
    carrier.write_all(&request).map_err(io)?;
    carrier.flush().map_err(io)?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = carrier.read(&mut chunk).map_err(io)?;
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
fn socks_handshake(
    carrier: &mut TcpStream,
    destination: socks::Destination<'_>,
    port: u16,
    credentials: Option<(&str, &str)>,
) -> Result<(), String> {
    let (mut handshake, mut next) = Socks5::start(destination, port, credentials)?;
    while next.read > 0 {
        if let Some(bytes) = &next.write {
            carrier.write_all(bytes).map_err(|e| e.to_string())?;
        }
        let mut buf = vec![0u8; next.read];
        carrier.read_exact(&mut buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => socks::CLOSED.to_owned(),
            _ => e.to_string(),
        })?;
        next = handshake.received(&buf)?;
    }
    Ok(())
}
