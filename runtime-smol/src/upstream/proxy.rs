//! HTTP CONNECT proxies: which one the environment names, and the tunnel request.
//!
//! The variables are read in ureq's order (`ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY`, each
//! upper then lower case; the first that parses wins), so both runtimes pick the same
//! proxy. Only `http://` proxies (or a bare `host:port`) are spoken here; others are left
//! to the blocking client.

use super::target::Origin;

/// The variables naming a proxy, in the order they are tried.
pub const PROXY_VARIABLES: [&str; 6] = [
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
];

/// An HTTP proxy that opens CONNECT tunnels.
#[derive(Debug, PartialEq, Eq)]
pub struct Proxy {
    pub origin: Origin,
    /// `Proxy-Authorization` value, from credentials in the proxy URL.
    authorization: Option<String>,
}

/// What the environment asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Choice {
    Direct,
    Http(Proxy),
    /// A proxy this client does not speak (`https://`, `socks5://`, ...).
    Other,
}

impl Choice {
    /// The proxy named by the first variable `get` returns that parses.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Choice {
        for name in PROXY_VARIABLES {
            let Some(value) = get(name) else { continue };
            match Proxy::parse(value.trim()) {
                Ok(Some(proxy)) => return Choice::Http(proxy),
                Ok(None) => return Choice::Other,
                Err(_) => {}
            }
        }
        Choice::Direct
    }
}

impl Proxy {
    /// `[http://][user[:password]@]host[:port][/]`; `Ok(None)` for another scheme.
    fn parse(url: &str) -> Result<Option<Proxy>, &'static str> {
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _))
                if ["https", "socks", "socks4", "socks4a", "socks5", "socks5h"]
                    .iter()
                    .any(|s| scheme.eq_ignore_ascii_case(s)) =>
            {
                return Ok(None)
            }
            Some(_) => return Err("unknown proxy scheme"),
            None => url,
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let (userinfo, host_port) = match authority.rsplit_once('@') {
            Some((userinfo, host_port)) => (Some(userinfo), host_port),
            None => (None, authority),
        };
        let target = super::target::Target::parse(&format!("http://{host_port}/"))?;
        let authorization = match userinfo {
            Some(userinfo) => {
                let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let credentials =
                    format!("{}:{}", percent_decode(user)?, percent_decode(password)?);
                Some(format!("Basic {}", base64(credentials.as_bytes())))
            }
            None => None,
        };
        Ok(Some(Proxy {
            origin: target.origin,
            authorization,
        }))
    }

    /// The CONNECT request for a tunnel to `to`.
    pub fn connect_request(&self, to: &Origin, user_agent: &str) -> Vec<u8> {
        let host = if to.host.contains(':') {
            format!("[{}]", to.host)
        } else {
            to.host.clone()
        };
        let mut out = format!(
            "CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: {user_agent}\r\n",
            port = to.port
        );
        if let Some(authorization) = &self.authorization {
            out.push_str("Proxy-Authorization: ");
            out.push_str(authorization);
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

/// `%XX` escapes decoded; the result must be UTF-8 without control characters (it goes
/// into a header).
fn percent_decode(s: &str) -> Result<String, &'static str> {
    const BAD: &str = "invalid escape in the proxy credentials";
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(BAD)?;
            let hex = std::str::from_utf8(hex).map_err(|_| BAD)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| BAD)?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).map_err(|_| BAD)?;
    if text.chars().any(char::is_control) {
        return Err(BAD);
    }
    Ok(text)
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

    fn choice(vars: &[(&str, &str)]) -> Choice {
        Choice::from_env(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    fn http(host: &str, port: u16, authorization: Option<&str>) -> Choice {
        Choice::Http(Proxy {
            origin: Origin {
                tls: false,
                host: host.into(),
                port,
            },
            authorization: authorization.map(str::to_owned),
        })
    }

    #[test]
    fn the_first_variable_that_parses_wins_in_ureqs_order() {
        assert_eq!(choice(&[]), Choice::Direct);
        assert_eq!(
            choice(&[("HTTP_PROXY", "http://p:3128"), ("https_proxy", "q:8080")]),
            http("q", 8080, None)
        );
        assert_eq!(
            choice(&[
                ("ALL_PROXY", "ftp://x"),
                ("HTTP_PROXY", "http://P.example/")
            ]),
            http("p.example", 80, None),
            "an unusable value is skipped"
        );
        assert_eq!(choice(&[("HTTPS_PROXY", "socks5://s:1080")]), Choice::Other);
        assert_eq!(choice(&[("HTTPS_PROXY", "https://p:443")]), Choice::Other);
    }

    #[test]
    fn credentials_become_basic_authorization() {
        assert_eq!(
            choice(&[("HTTP_PROXY", "http://Aladdin:open%20sesame@p:3128")]),
            http("p", 3128, Some("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="))
        );
        assert_eq!(
            choice(&[("HTTP_PROXY", "http://user@[::1]:3128")]),
            http("::1", 3128, Some("Basic dXNlcjo="))
        );
        assert_eq!(
            choice(&[("HTTP_PROXY", "http://u:%0d%0aX@p:1")]),
            Choice::Direct,
            "credentials that would break the header are refused"
        );
    }

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
    fn the_connect_request_names_host_and_port() {
        let Choice::Http(proxy) = choice(&[("HTTP_PROXY", "http://u:p@proxy:3128")]) else {
            panic!("no proxy");
        };
        let to = Origin {
            tls: true,
            host: "::1".into(),
            port: 443,
        };
        assert_eq!(
            String::from_utf8(proxy.connect_request(&to, "ua/1")).unwrap(),
            "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nUser-Agent: ua/1\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }
}
