//! Which proxy the upstream requests go through, resolved once at startup from the
//! environment snapshot, like the rest of the configuration, and shown by
//! `--show-config` (credentials masked).
//!
//! The variables are read in ureq's order (`ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY`, each
//! upper then lower case; the first that parses wins); `NO_PROXY` exempts the base URL's
//! host (names, suffixes, addresses and CIDR ranges). A plain `http://` base URL on this
//! machine never goes through a proxy: the proxy would read every request, the key
//! included, for a connection that never leaves the host. Go's `httpproxy` never proxies
//! `localhost` or a loopback address at all (golang.org/x/net/http/httpproxy, "As a
//! special case…", read 2026-11-29); curl proxies them unless `NO_PROXY` lists them, and
//! takes CIDR ranges there since 7.86.0 (curl.se/libcurl/c/CURLOPT_NOPROXY.html, read
//! 2026-11-29). An `https://` loopback URL is still proxied when asked: the proxy sees
//! only the `CONNECT`, never the key. Both runtimes speak every scheme accepted here:
//! `http://`, `https://` and `socks5://` / `socks5h://`.

use crate::env::Env;
use crate::error::ConfigError;
use crate::percent::percent_decode;
use responses_mcp_core::serve::gateway::Cidr;
use std::fmt;
use std::net::IpAddr;

/// The variables naming a proxy, in the order they are tried.
pub const PROXY_VARIABLES: [&str; 6] = [
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
];

/// How to talk to the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyKind {
    /// HTTP `CONNECT` over plain TCP.
    Http,
    /// HTTP `CONNECT` over TLS to the proxy.
    Https,
    /// SOCKS5; `remote_dns` (`socks5h://`) lets the proxy resolve the host name.
    Socks5 {
        /// Whether the proxy resolves names (`socks5h`) or we do (`socks5`).
        remote_dns: bool,
    },
}

impl ProxyKind {
    /// The URL scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            ProxyKind::Http => "http",
            ProxyKind::Https => "https",
            ProxyKind::Socks5 { remote_dns: false } => "socks5",
            ProxyKind::Socks5 { remote_dns: true } => "socks5h",
        }
    }
}

/// A proxy. `Debug` and `Display` mask the credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyUrl {
    /// The protocol.
    pub kind: ProxyKind,
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
    /// User name and password from the URL, percent-decoded.
    credentials: Option<(String, String)>,
}

impl ProxyUrl {
    /// The user name and password, for the proxy handshake only.
    pub fn credentials(&self) -> Option<(&str, &str)> {
        self.credentials
            .as_ref()
            .map(|(u, p)| (u.as_str(), p.as_str()))
    }

    /// The URL with its credentials, for a client library that takes a URL. Never log it.
    pub fn expose_url(&self) -> String {
        let auth = match &self.credentials {
            Some((u, p)) => format!("{}:{}@", percent_encode(u), percent_encode(p)),
            None => String::new(),
        };
        format!(
            "{}://{auth}{}:{}",
            self.kind.scheme(),
            bracketed(&self.host),
            self.port
        )
    }
}

impl fmt::Display for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = if self.credentials.is_some() {
            "***@"
        } else {
            ""
        };
        write!(
            f,
            "{}://{auth}{}:{}",
            self.kind.scheme(),
            bracketed(&self.host),
            self.port
        )
    }
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProxyUrl({self})")
    }
}

/// Why a configured proxy is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bypass {
    /// `NO_PROXY` names the base URL's host.
    NoProxy,
    /// The base URL is plain `http://` to this machine.
    Loopback,
}

impl Bypass {
    /// As `--show-config` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Bypass::NoProxy => "NO_PROXY",
            Bypass::Loopback => "loopback",
        }
    }
}

/// Where upstream requests go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProxyRoute {
    /// No proxy is configured.
    Direct,
    /// A proxy is configured, but not used for the base URL.
    Bypassed {
        /// The variable that named the proxy.
        variable: &'static str,
        /// Why.
        by: Bypass,
    },
    /// Through this proxy.
    Via {
        /// The proxy.
        proxy: ProxyUrl,
        /// The variable that named it.
        variable: &'static str,
    },
}

impl ProxyRoute {
    /// The proxy to use, if any.
    pub fn proxy(&self) -> Option<&ProxyUrl> {
        match self {
            ProxyRoute::Via { proxy, .. } => Some(proxy),
            _ => None,
        }
    }
}

/// Resolves the proxy for requests to `base_url`.
///
/// # Errors
/// A proxy variable naming a scheme neither runtime speaks (SOCKS4): going direct instead
/// would silently bypass a proxy the user asked for.
pub fn resolve_proxy(env: &Env, base_url: &str) -> Result<ProxyRoute, ConfigError> {
    for variable in PROXY_VARIABLES {
        let Some(value) = env
            .get(variable)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
        else {
            continue;
        };
        let proxy = match parse(value) {
            Ok(proxy) => proxy,
            Err(Unusable::Skip) => continue,
            Err(Unusable::Unsupported(scheme)) => {
                return Err(ConfigError::Invalid {
                    key: variable.to_owned(),
                    value: format!("{scheme}://…"),
                    origin: "the proxy for upstream requests".into(),
                    allowed: "an http://, https://, socks5:// or socks5h:// proxy URL".into(),
                })
            }
        };
        let no_proxy = env
            .get("NO_PROXY")
            .or_else(|| env.get("no_proxy"))
            .map_or("", String::as_str);
        return Ok(if bypasses_proxy(base_url, no_proxy) {
            ProxyRoute::Bypassed {
                variable,
                by: Bypass::NoProxy,
            }
        } else if crate::base_url::plain_http_here(base_url) {
            ProxyRoute::Bypassed {
                variable,
                by: Bypass::Loopback,
            }
        } else {
            ProxyRoute::Via { proxy, variable }
        });
    }
    Ok(ProxyRoute::Direct)
}

/// A warning when plain `http://` requests go through a proxy: the proxy reads each one,
/// the key in its headers included.
pub fn warning(route: &ProxyRoute, base_url: &str) -> Option<String> {
    let ProxyRoute::Via { proxy, variable } = route else {
        return None;
    };
    base_url.starts_with("http://").then(|| {
        format!(
            "openai.base_url ({}) is plain http and goes through the proxy in {variable} ({proxy}): the proxy reads every request, the API key included; use an https:// URL (the proxy then sees only the host), or list the host in NO_PROXY",
            crate::base_url::origin(base_url),
        )
    })
}

enum Unusable {
    /// Not a proxy URL we can read; the next variable is tried.
    Skip,
    /// A proxy scheme we recognise but do not speak.
    Unsupported(String),
}

/// `[scheme://][user[:password]@]host[:port][/]`; a bare `host:port` is HTTP.
fn parse(url: &str) -> Result<ProxyUrl, Unusable> {
    let (kind, rest) = match url.split_once("://") {
        Some((scheme, rest)) => {
            let kind = match scheme.to_ascii_lowercase().as_str() {
                "http" => ProxyKind::Http,
                "https" => ProxyKind::Https,
                "socks5" | "socks" => ProxyKind::Socks5 { remote_dns: false },
                "socks5h" => ProxyKind::Socks5 { remote_dns: true },
                s @ ("socks4" | "socks4a") => return Err(Unusable::Unsupported(s.to_owned())),
                _ => return Err(Unusable::Skip),
            };
            (kind, rest)
        }
        None => (ProxyKind::Http, url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, authority),
    };
    let default_port = match kind {
        ProxyKind::Http => 80,
        ProxyKind::Https => 443,
        ProxyKind::Socks5 { .. } => 1080,
    };
    let (host, port) = host_and_port(host_port, default_port).ok_or(Unusable::Skip)?;
    let credentials = match userinfo {
        Some(userinfo) => {
            let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            let decode = |s| percent_decode(s).ok_or(Unusable::Skip);
            Some((decode(user)?, decode(password)?))
        }
        None => None,
    };
    Ok(ProxyUrl {
        kind,
        host,
        port,
        credentials,
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the host lower-cased.
pub fn host_and_port(s: &str, default_port: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match s.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (s, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|p| *p != 0)?,
        None => default_port,
    };
    let ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'_'));
    ok.then(|| (host.to_ascii_lowercase(), port))
}

/// Whether `NO_PROXY` (comma-separated: `*`, exact hosts, `.suffix` or `*.suffix`, IP
/// addresses, CIDR ranges such as `127.0.0.0/8` or `fd00::/8`; ports ignored) exempts
/// the host of `base_url` from the proxy.
pub fn bypasses_proxy(base_url: &str, no_proxy: &str) -> bool {
    let host = crate::base_url::host_of(base_url);
    let ip = host.parse::<IpAddr>().ok();
    no_proxy
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = entry.to_ascii_lowercase();
            // Drop a port, but keep IPv6 addresses (`::1`, `[::1]:8080`) whole.
            let entry = match entry.strip_prefix('[') {
                Some(rest) => rest.split(']').next().unwrap_or(""),
                None if entry.matches(':').count() == 1 => entry.split(':').next().unwrap_or(""),
                None => entry.as_str(),
            };
            if entry == "*" {
                return true;
            }
            if let Some(ip) = ip {
                if entry.contains('/') {
                    return Cidr::parse_widened(entry).is_ok_and(|net| net.contains(ip));
                }
                // `::1` and `0:0::1` are one address.
                if let Ok(entry) = entry.parse::<IpAddr>() {
                    return entry == ip;
                }
            }
            match entry.strip_prefix("*.").or_else(|| entry.strip_prefix('.')) {
                Some(suffix) => host == suffix || host.ends_with(&format!(".{suffix}")),
                None => host == entry,
            }
        })
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests;
