//! HTTP `CONNECT` tunnels: the request we send a proxy and what its reply means. Which
//! proxy to use is decided once at startup by the configuration ([`responses_mcp_config::proxy`]).

use super::target::Origin;
use responses_mcp_config::proxy::ProxyUrl;
use responses_mcp_core::http::tunnel_reply;
use responses_mcp_core::{TransportError, TransportErrorKind};

/// The CONNECT request for a tunnel to `to` through `proxy`.
pub fn connect_request(proxy: &ProxyUrl, to: &Origin, user_agent: &str) -> Vec<u8> {
    let host = if to.host.contains(':') {
        format!("[{}]", to.host)
    } else {
        to.host.clone()
    };
    let mut out = format!(
        "CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: {user_agent}\r\n",
        port = to.port
    );
    if let Some((user, password)) = proxy.credentials() {
        out.push_str("Proxy-Authorization: Basic ");
        out.push_str(&base64(format!("{user}:{password}").as_bytes()));
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// What the proxy's reply so far (`reply`, everything it sent) means: `Ok(false)` while
/// its head is incomplete, `Ok(true)` once the tunnel is open, and an error that names the
/// proxy `host` and what it did otherwise.
pub fn tunnel_open(reply: &[u8], host: &str) -> Result<bool, TransportError> {
    match tunnel_reply(reply) {
        Ok(None) => Ok(false),
        Ok(Some((status, _))) if !(200..300).contains(&status) => {
            let hint = if status == 407 {
                " (it wants credentials: put them in the proxy URL)"
            } else {
                ""
            };
            Err(failed(format!(
                "proxy {host} refused the tunnel with HTTP {status}{hint}"
            )))
        }
        Ok(Some((_, end))) if end < reply.len() => {
            Err(failed(format!("proxy {host} sent data into a new tunnel")))
        }
        Ok(Some(_)) => Ok(true),
        Err(e) => Err(failed(format!(
            "proxy {host} answered CONNECT with {}",
            super::read_error(e).detail
        ))),
    }
}

/// The tunnel through proxy `host` could not be opened: `detail` says why.
pub fn failed(detail: String) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Connect,
        detail,
    }
}

/// Standard base64 with padding, for `Basic` credentials.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use responses_mcp_config::proxy::{resolve_proxy, ProxyRoute};

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn the_connect_request_names_host_and_port_and_carries_credentials() {
        let env = [("HTTP_PROXY".to_owned(), "http://u:p@proxy:3128".to_owned())].into();
        let Ok(ProxyRoute::Via { proxy, .. }) = resolve_proxy(&env, "https://x/v1") else {
            panic!("no proxy");
        };
        let to = Origin {
            tls: true,
            host: "::1".into(),
            port: 443,
        };
        assert_eq!(
            String::from_utf8(connect_request(&proxy, &to, "ua/1")).unwrap(),
            "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nUser-Agent: ua/1\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }

    #[test]
    fn the_proxy_reply_opens_the_tunnel_or_says_why_not() {
        assert!(!tunnel_open(b"HTTP/1.1 200 Connection established\r\n", "p").unwrap());
        assert!(tunnel_open(b"HTTP/1.1 200 Connection established\r\n\r\n", "p").unwrap());
        for (reply, why) in [
            (
                &b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"[..],
                "proxy p refused the tunnel with HTTP 407 (it wants credentials: put them in the proxy URL)",
            ),
            (
                b"HTTP/1.1 403 Forbidden\r\n\r\n",
                "proxy p refused the tunnel with HTTP 403",
            ),
            (
                b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1",
                "proxy p sent data into a new tunnel",
            ),
        ] {
            let e = tunnel_open(reply, "p").unwrap_err();
            assert_eq!((e.kind, e.detail.as_str()), (TransportErrorKind::Connect, why));
        }
        let e = tunnel_open(b"SSH-2.0-OpenSSH\r\n\r\n", "p").unwrap_err();
        assert!(
            e.detail
                .starts_with("proxy p answered CONNECT with invalid HTTP response"),
            "{}",
            e.detail
        );
    }
}
