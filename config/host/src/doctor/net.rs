//! The network probes of `doctor`: name resolution, a TCP connection and a TLS handshake
//! to the base URL (or to the proxy), each with a short deadline and its time.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Why a probe failed, in words for the report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProbeError(pub String);

impl From<String> for ProbeError {
    fn from(message: String) -> Self {
        ProbeError(message)
    }
}

impl From<&str> for ProbeError {
    fn from(message: &str) -> Self {
        ProbeError(message.to_owned())
    }
}

/// How long a name may take to resolve.
pub const DNS_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a TCP connection may take.
pub const TCP_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the TLS handshake may take.
pub const TLS_TIMEOUT: Duration = Duration::from_secs(5);

/// Resolves `host:port` on a helper thread, so that a stuck resolver cannot hold the
/// doctor past [`DNS_TIMEOUT`].
pub fn resolve(host: &str, port: u16) -> Result<(Vec<SocketAddr>, Duration), ProbeError> {
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    let target = (host.to_owned(), port);
    std::thread::spawn(move || {
        let _ = tx.send(target.to_socket_addrs().map(Iterator::collect::<Vec<_>>));
    });
    match rx.recv_timeout(DNS_TIMEOUT) {
        Ok(Ok(addrs)) if !addrs.is_empty() => Ok((addrs, started.elapsed())),
        Ok(Ok(_)) => Err(format!("{host} resolves to no address").into()),
        Ok(Err(e)) => Err(format!("cannot resolve {host}: {e}").into()),
        Err(_) => Err(format!(
            "resolving {host} took longer than {} s",
            DNS_TIMEOUT.as_secs()
        )
        .into()),
    }
}

/// Connects to the first address that answers.
pub fn connect(addrs: &[SocketAddr]) -> Result<(TcpStream, SocketAddr, Duration), ProbeError> {
    let started = Instant::now();
    let mut last = String::from("no address to connect to");
    for addr in addrs.iter().take(4) {
        match TcpStream::connect_timeout(addr, TCP_TIMEOUT) {
            Ok(stream) => return Ok((stream, *addr, started.elapsed())),
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    Err(last.into())
}

/// What a successful handshake found.
pub struct Handshake {
    /// `TLSv1_3` and the like.
    pub version: String,
    /// Time taken.
    pub took: Duration,
}

/// Runs a TLS handshake with `host` over `stream`, trusting `roots_pem` when given (the
/// configured CA file) or the built-in Mozilla roots, with the cryptography the runtimes
/// use ([`crate::tls`]).
pub fn handshake(
    mut stream: TcpStream,
    host: &str,
    roots_pem: Option<&[u8]>,
) -> Result<Handshake, ProbeError> {
    let provider = Arc::new(crate::tls::provider());
    let started = Instant::now();
    let mut roots = rustls::RootCertStore::empty();
    match roots_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem).flatten() {
                let _ = roots.add(cert);
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS settings: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_owned())
        .map_err(|_| format!("{host} is not a name a certificate can be checked against"))?;
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name)
        .map_err(|e| format!("TLS settings: {e}"))?;
    let deadline = started + TLS_TIMEOUT;
    while conn.is_handshaking() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "the TLS handshake took longer than {} s",
                TLS_TIMEOUT.as_secs()
            )
            .into());
        }
        let _ = stream.set_read_timeout(Some(left));
        let _ = stream.set_write_timeout(Some(left));
        match conn.complete_io(&mut stream) {
            Ok(_) => {}
            Err(e) => return Err(describe_tls_error(&e).into()),
        }
    }
    // Say goodbye properly; the answer does not matter.
    conn.send_close_notify();
    let _ = conn.write_tls(&mut stream);
    let _ = stream.flush();
    let _ = stream.read(&mut [0u8; 0]);
    Ok(Handshake {
        version: conn
            .protocol_version()
            .map_or_else(|| "TLS".to_owned(), |v| format!("{v:?}")),
        took: started.elapsed(),
    })
}

/// A handshake failure in words a user can act on.
fn describe_tls_error(e: &std::io::Error) -> String {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(cert)) => {
            format!("the server's certificate is not trusted ({cert:?})")
        }
        Some(other) => format!("the TLS handshake failed: {other}"),
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the TLS handshake (does it speak TLS on this port?)".into()
        }
        None => format!("the TLS handshake failed: {e}"),
    }
}
