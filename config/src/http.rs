//! `--http`: the Streamable HTTP endpoint's address, access rules and limits, resolved
//! from `server.http.*` and checked before anything listens.

use crate::error::ConfigError;
use crate::resolve::{Env, Resolved};
use responses_mcp_core::http::RequestLimits;
use responses_mcp_core::serve::access::{Access, ClientTokens, OAuthDoor, Token, LOOPBACK_NAMES};
use responses_mcp_core::serve::connection::Timeouts;
use responses_mcp_core::serve::gateway::{Cidr, Gateway};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

pub use crate::keys::{DEFAULT_LISTEN, DEFAULT_TOKEN_ENV};
/// How long a client refused for lack of connections is told to wait.
pub const RETRY_AFTER_SECS: u32 = 1;

/// Everything a runtime needs to serve HTTP. The token is inside [`Access`], masked.
#[derive(Debug, Clone)]
pub struct HttpServe {
    /// The address to bind.
    pub listen: SocketAddr,
    /// The bearer token, when its variable is set.
    pub token: Option<Token>,
    /// The named clients' token digests, from `server.http.clients_file`.
    pub clients: Option<ClientTokens>,
    /// `server.http.allowed_origins`.
    pub allowed_origins: Vec<String>,
    /// `server.http.allowed_hosts` as configured (empty: the default, see [`HttpServe::access`]).
    pub allowed_hosts: Vec<String>,
    /// Head and body caps of one request.
    pub limits: RequestLimits,
    /// Most open connections.
    pub max_connections: usize,
    /// Time to receive a whole request once it began.
    pub request_timeout: Duration,
    /// Time a kept-alive connection may sit idle, and a response may go unread.
    pub idle_timeout: Duration,
    /// Whether `/mcp` is served; false for the `--metrics-listen` listener.
    pub mcp: bool,
    /// OAuth mode (`server.http.oauth.*`), when an issuer is set.
    pub oauth: Option<crate::oauth::OAuthMode>,
    /// `server.http.trusted_proxies` and `server.http.identity_header`.
    pub gateway: Gateway,
}

impl HttpServe {
    /// How long each connection waits for its client.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            idle: self.idle_timeout,
            request: self.request_timeout,
        }
    }

    /// Reads `server.http.*` and the token's variable from `env`.
    ///
    /// # Errors
    /// An address that does not resolve, and a non-loopback address without a token
    /// (unless `allow_unauthenticated`).
    pub fn resolve(
        resolved: &Resolved,
        env: &Env,
        clients: Option<ClientTokens>,
    ) -> Result<HttpServe, ConfigError> {
        let http = &resolved.settings.server.http;
        HttpServe::at(
            resolved,
            env,
            "server.http.listen",
            &http.listen,
            true,
            clients,
        )
    }

    /// The `--metrics-listen` listener (`server.metrics_listen`), when set: `/metrics`,
    /// `/health` and `/ready` only, under the rules of `server.http.*` (the token
    /// included).
    ///
    /// # Errors
    /// As [`HttpServe::resolve`].
    pub fn resolve_metrics(
        resolved: &Resolved,
        env: &Env,
        clients: Option<ClientTokens>,
    ) -> Result<Option<HttpServe>, ConfigError> {
        let Some(listen) = &resolved.settings.server.metrics_listen else {
            return Ok(None);
        };
        HttpServe::at(
            resolved,
            env,
            "server.metrics_listen",
            listen,
            false,
            clients,
        )
        .map(Some)
    }

    /// A listener on `listen` (read from `key`), serving `/mcp` or not.
    fn at(
        resolved: &Resolved,
        env: &Env,
        key: &str,
        listen: &str,
        mcp: bool,
        clients: Option<ClientTokens>,
    ) -> Result<HttpServe, ConfigError> {
        let http = &resolved.settings.server.http;
        let source = resolved
            .sources
            .get(key)
            .map(ToString::to_string)
            .unwrap_or_else(|| "default".into());
        let listen = parse_listen(listen).ok_or_else(|| ConfigError::Invalid {
            key: key.into(),
            value: format!("{listen:?}"),
            origin: source.clone(),
            allowed: "host:port, such as 127.0.0.1:8787, [::1]:8787, localhost:8787 or 0.0.0.0:8787 (port 0 picks a free one)".into(),
        })?;
        let token = env.get(&http.token_env).and_then(|t| Token::new(t));
        // OAuth mode guards `/mcp`; a metrics-only listener takes static tokens.
        let oauth = match mcp {
            true => crate::oauth::resolve(resolved)?,
            false => None,
        };
        let unauthenticated = token.is_none() && clients.is_none() && oauth.is_none();
        if unauthenticated && !listen.ip().is_loopback() && !http.allow_unauthenticated {
            return Err(ConfigError::Unauthenticated {
                setting: match resolved.sources.get(key) {
                    Some(crate::Source::Cli(flag)) => format!("{flag} ({key})"),
                    _ => key.to_owned(),
                },
                listen: listen.to_string(),
                token_env: http.token_env.clone(),
            });
        }
        let gateway = gateway(
            resolved,
            token.is_some() || clients.is_some() || oauth.is_some(),
        )?;
        let max_message = resolved.settings.server.max_message_bytes;
        Ok(HttpServe {
            listen,
            token,
            clients,
            allowed_origins: http.allowed_origins.clone(),
            allowed_hosts: http.allowed_hosts.clone(),
            limits: RequestLimits {
                max_head: usize::try_from(http.max_head_bytes).unwrap_or(usize::MAX),
                max_body: usize::try_from(max_message).unwrap_or(usize::MAX),
            },
            max_connections: usize::try_from(http.max_connections).unwrap_or(usize::MAX),
            request_timeout: Duration::from_millis(http.request_timeout_ms),
            idle_timeout: Duration::from_millis(http.idle_timeout_ms),
            mcp,
            oauth,
            gateway,
        })
    }

    /// The access rules once bound to `bound` (its real port when 0 was asked for).
    /// Unless configured, a loopback endpoint answers only to the loopback names and the
    /// bound address (DNS-rebinding protection); any other answers to any `Host`, since
    /// the names clients use for it are not known here.
    pub fn access(&self, bound: SocketAddr) -> Access {
        let loopback = bound.ip().is_loopback();
        let allowed_hosts = if self.allowed_hosts.iter().any(|h| h == "*") {
            None
        } else if !self.allowed_hosts.is_empty() {
            Some(self.allowed_hosts.clone())
        } else if loopback {
            let mut hosts: Vec<String> = LOOPBACK_NAMES.iter().map(|n| (*n).to_owned()).collect();
            hosts.push(bound.to_string());
            Some(hosts)
        } else {
            None
        };
        Access {
            allowed_hosts,
            allowed_origins: self.allowed_origins.clone(),
            loopback_origins: loopback,
            token: self.token.clone(),
            clients: self.clients.clone(),
            mcp: self.mcp,
            oauth: self
                .oauth
                .as_ref()
                .map(|mode| OAuthDoor::of(&mode.at(bound))),
            gateway: self.gateway.clone(),
        }
    }
}

/// The trusted proxies and the identity header, checked: every entry a network, and a
/// header only with proxies to set it and a credential for them to carry (`credential`).
fn gateway(resolved: &Resolved, credential: bool) -> Result<Gateway, ConfigError> {
    let http = &resolved.settings.server.http;
    let origin = |key: &str| {
        resolved
            .sources
            .get(key)
            .map(ToString::to_string)
            .unwrap_or_else(|| "default".into())
    };
    let trusted = http
        .trusted_proxies
        .iter()
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| Cidr::parse(entry))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|bad| ConfigError::Invalid {
            key: "server.http.trusted_proxies".into(),
            value: format!("{:?}", bad.entry),
            origin: origin("server.http.trusted_proxies"),
            allowed: format!(
                "IP addresses or networks such as 10.0.0.0/8 or fd00::/8 ({})",
                bad.why
            ),
        })?;
    let Some(header) = http.identity_header.as_deref().map(str::trim) else {
        return Ok(Gateway {
            trusted,
            identity_header: None,
        });
    };
    let invalid = |allowed: &str| ConfigError::Invalid {
        key: "server.http.identity_header".into(),
        value: format!("{header:?}"),
        origin: origin("server.http.identity_header"),
        allowed: allowed.into(),
    };
    let name = header.to_ascii_lowercase();
    if !is_header_name(&name)
        || matches!(name.as_str(), "authorization" | "host" | "x-forwarded-for")
    {
        return Err(invalid("a header name such as X-Forwarded-User (letters, digits and -), not one HTTP or this server gives another meaning"));
    }
    if trusted.is_empty() {
        return Err(invalid("a header only trusted proxies may set: list them in server.http.trusted_proxies (MCP_HTTP_TRUSTED_PROXIES), or leave identity_header unset"));
    }
    if !credential {
        return Err(invalid("a header honoured only beside a credential: set the bearer token's variable (server.http.token_env), a clients file or OAuth mode, so that the proxy proves itself as well as being at a trusted address"));
    }
    Ok(Gateway {
        trusted,
        identity_header: Some(name),
    })
}

/// An HTTP field name (RFC 9110's token).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `host:port` as an address: IP literals, `localhost`, or a name the system resolves
/// (its first address).
fn parse_listen(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(addr);
    }
    let (host, port) = text.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    if host.eq_ignore_ascii_case("localhost") {
        return Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    (host, port).to_socket_addrs().ok()?.next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    fn serve(yaml: &str, env: &[(&str, &str)]) -> Result<HttpServe, ConfigError> {
        let env: Env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let path = std::path::Path::new("/c.yaml");
        let input = crate::YamlInput { text: yaml, path };
        let resolved = crate::resolve(Some(input), &env, &Cli::default())?;
        HttpServe::resolve(&resolved, &env, None)
    }

    #[test]
    fn loopback_by_default_with_the_documented_port() {
        let s = serve("", &[]).unwrap();
        assert_eq!(s.listen.to_string(), DEFAULT_LISTEN);
        assert!(s.token.is_none());
        let access = s.access("127.0.0.1:8787".parse().unwrap());
        let hosts = access.allowed_hosts.unwrap();
        assert!(hosts.contains(&"localhost".to_owned()));
        assert!(hosts.contains(&"127.0.0.1:8787".to_owned()));
        assert!(access.loopback_origins);
    }

    #[test]
    fn a_public_address_needs_a_token_or_an_explicit_opt_out() {
        let e = serve("server: {http: {listen: '0.0.0.0:9000'}}", &[]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("MCP_HTTP_TOKEN") && text.contains("allow_unauthenticated"),
            "{text}"
        );
        let s = serve(
            "server: {http: {listen: '0.0.0.0:9000', token_env: MY_TOKEN}}",
            &[("MY_TOKEN", "s3cret-value")],
        )
        .unwrap();
        assert!(s.token.is_some());
        assert!(!format!("{s:?}").contains("s3cret"), "the token is masked");
        // Any Host, since the names clients use are not known here.
        assert!(s.access(s.listen).allowed_hosts.is_none());
        let s = serve(
            "server: {http: {listen: '0.0.0.0:9000', allow_unauthenticated: true}}",
            &[],
        )
        .unwrap();
        assert!(s.token.is_none());
    }

    #[test]
    fn configured_hosts_replace_the_default_and_star_means_any() {
        let s = serve("server: {http: {allowed_hosts: [mcp.example]}}", &[]).unwrap();
        let bound = "127.0.0.1:8787".parse().unwrap();
        assert_eq!(
            s.access(bound).allowed_hosts,
            Some(vec!["mcp.example".into()])
        );
        let s = serve("server: {http: {allowed_hosts: ['*']}}", &[]).unwrap();
        assert_eq!(s.access(bound).allowed_hosts, None);
    }

    #[test]
    fn a_gateway_needs_proxies_to_set_its_header_and_a_credential_beside_it() {
        let s = serve(
            "server: {http: {trusted_proxies: ['10.0.0.0/8', ' fd00::/8 '], identity_header: X-Forwarded-User}}",
            &[("MCP_HTTP_TOKEN", "tok-123")],
        )
        .unwrap();
        let gateway = s.access(s.listen).gateway;
        assert_eq!(gateway.identity_header.as_deref(), Some("x-forwarded-user"));
        assert!(gateway.trusts("10.9.8.7".parse().unwrap()));
        assert!(gateway.trusts("fd00::1".parse().unwrap()));
        assert!(!gateway.trusts("127.0.0.1".parse().unwrap()));
        // The variable, comma-separated.
        let s = serve("", &[("MCP_HTTP_TRUSTED_PROXIES", "192.0.2.7, 10.0.0.0/8")]).unwrap();
        assert_eq!(s.gateway.trusted.len(), 2);
        for (yaml, env, says) in [
            (
                "server: {http: {trusted_proxies: ['10.1.0.0/8']}}",
                vec![],
                "bits set past the prefix",
            ),
            (
                "server: {http: {trusted_proxies: [proxy.internal]}}",
                vec![],
                "not an IPv4 or IPv6 address",
            ),
            (
                "server: {http: {identity_header: X-Forwarded-User}}",
                vec![("MCP_HTTP_TOKEN", "tok-123")],
                "server.http.trusted_proxies",
            ),
            (
                "server: {http: {trusted_proxies: [10.0.0.1], identity_header: X-Forwarded-User}}",
                vec![],
                "a clients file or OAuth mode",
            ),
            (
                "server: {http: {trusted_proxies: [10.0.0.1], identity_header: 'X Forwarded User'}}",
                vec![("MCP_HTTP_TOKEN", "tok-123")],
                "a header name",
            ),
            (
                "server: {http: {trusted_proxies: [10.0.0.1], identity_header: Authorization}}",
                vec![("MCP_HTTP_TOKEN", "tok-123")],
                "a header name",
            ),
        ] {
            let e = serve(yaml, &env).unwrap_err().to_string();
            assert!(e.contains(says), "{yaml}: {e}");
            assert!(!e.contains("tok-123"), "{e}");
        }
    }

    #[test]
    fn listen_forms() {
        for (text, want) in [
            ("localhost:0", "127.0.0.1:0"),
            ("[::1]:8787", "[::1]:8787"),
            ("127.0.0.1:65535", "127.0.0.1:65535"),
        ] {
            assert_eq!(parse_listen(text).unwrap().to_string(), want);
        }
        for bad in ["8787", "127.0.0.1", "127.0.0.1:99999", "host name:1", ""] {
            assert!(parse_listen(bad).is_none(), "{bad}");
        }
        let e = serve("server: {http: {listen: 'nowhere'}}", &[]).unwrap_err();
        assert!(e.to_string().contains("server.http.listen"), "{e}");
    }

    #[test]
    fn limits_follow_the_configuration() {
        let s = serve(
            "server: {max_message_bytes: 2048, http: {max_head_bytes: 4096, max_connections: 3}}",
            &[],
        )
        .unwrap();
        assert_eq!((s.limits.max_head, s.limits.max_body), (4096, 2048));
        assert_eq!(s.max_connections, 3);
    }
}
