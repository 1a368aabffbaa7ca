//! What the runtimes' HTTP clients share, sans IO: where a request goes ([`target`]),
//! the bytes of the request, the proxy tunnels' messages ([`tunnel`] for HTTP `CONNECT`,
//! [`socks`] for SOCKS5), the TLS settings, and how a failed read is reported: the smol
//! client only moves these bytes over its own sockets. The blocking build's client is
//! ureq, which takes the checked header values ([`startup_headers`]) and the connect
//! timeout from here.

pub mod socks;
pub mod target;
pub mod tunnel;

use responses_mcp_core::http::{ReadError, MAX_BODY_BYTES};
use responses_mcp_core::{HttpMethod, TransportError, TransportErrorKind};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use std::sync::Arc;
use target::Target;

/// Why the TLS settings cannot be made (the roots of `openai.ca_file`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(pub String);

impl From<String> for TlsError {
    fn from(message: String) -> Self {
        TlsError(message)
    }
}

impl From<&str> for TlsError {
    fn from(message: &str) -> Self {
        TlsError(message.to_owned())
    }
}

/// How long connecting (resolving and tunnelling included) may take.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// The request: head and body in one buffer, written at once.
pub fn message(method: HttpMethod, target: &Target, headers: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + headers.len() + body.len());
    for part in [
        method.as_str().as_bytes(),
        b" ",
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

/// The fixed header lines every request carries, each ending in CRLF: ours, then the
/// credentials the configuration gives (`None` values are left out). A value that could
/// break the head (a line break or another control character) is refused without
/// repeating it.
pub fn header_lines(optional: &[(&'static str, Option<&str>)]) -> Result<Vec<u8>, &'static str> {
    let mut out = format!(
        "User-Agent: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\n",
        responses_mcp_config::USER_AGENT
    )
    .into_bytes();
    for (name, value) in checked(optional)? {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    Ok(out)
}

/// The credentials' headers that are set (`None` values are left out), each value checked
/// as [`header_lines`] does.
pub fn checked(
    optional: &[(&'static str, Option<&str>)],
) -> Result<Vec<(&'static str, String)>, &'static str> {
    let mut out = Vec::with_capacity(optional.len());
    for (name, value) in optional {
        let Some(value) = value else { continue };
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(
                "the API key, organization or project has a character an HTTP header cannot carry",
            );
        }
        out.push((*name, (*value).to_owned()));
    }
    Ok(out)
}

/// The credentials `startup` gives, as header name and value pairs (see [`checked`]).
pub fn startup_headers(
    startup: &responses_mcp_config::Startup,
) -> Result<Vec<(&'static str, String)>, &'static str> {
    let auth = startup.auth_header();
    let (auth_name, auth_value) = match &auth {
        Some((name, value)) => (*name, Some(value.as_str())),
        None => ("Authorization", None),
    };
    checked(&[
        (auth_name, auth_value),
        ("OpenAI-Organization", startup.organization.as_deref()),
        ("OpenAI-Project", startup.project.as_deref()),
    ])
}

/// The header lines for `startup`'s credentials (see [`header_lines`]).
pub fn startup_header_lines(
    startup: &responses_mcp_config::Startup,
) -> Result<Vec<u8>, &'static str> {
    let mut out = header_lines(&[])?;
    for (name, value) in startup_headers(startup)? {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    Ok(out)
}

/// A request that cannot be sent as configured.
pub fn invalid(why: &str) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Invalid,
        detail: why.to_owned(),
    }
}

/// A failure to read the response, as the core decides on it.
pub fn read_error(e: ReadError) -> TransportError {
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

/// The TLS settings: the built-in web PKI roots, or only the certificates of `roots_pem`
/// (`openai.ca_file` / `SSL_CERT_FILE`) when given; HTTP/1.1 by ALPN.
pub fn tls_config(roots_pem: Option<&[u8]>) -> Result<Arc<ClientConfig>, TlsError> {
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
    let mut config = ClientConfig::builder_with_provider(Arc::new(crate::tls::provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS settings: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
