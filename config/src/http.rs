//! `--http`: the Streamable HTTP endpoint's address, access rules and limits, resolved
//! from `server.http.*` and checked before anything listens.

use crate::clients::NamedClients;
use crate::error::ConfigError;
use crate::resolve::{Env, Resolved};
use responses_mcp_core::http::RequestLimits;
use responses_mcp_core::serve::access::{Access, ClientTokens, OAuthDoor, Token, LOOPBACK_NAMES};
use responses_mcp_core::serve::connection::Timeouts;
use responses_mcp_core::serve::gateway::{self as gate, Cidr, Gateway};
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

    /// Reads `server.http.*` and the token's variable from `env`; `named`: the clients
    /// file's clients, if there is one.
    ///
    /// # Errors
    /// An address that does not resolve, and a non-loopback address without a token
    /// (unless `allow_unauthenticated`).
    pub fn resolve(
        resolved: &Resolved,
        env: &Env,
        named: Option<&NamedClients>,
    ) -> Result<HttpServe, ConfigError> {
        let http = &resolved.settings.server.http;
        HttpServe::at(
            resolved,
            env,
            "server.http.listen",
            &http.listen,
            true,
            named,
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
        named: Option<&NamedClients>,
    ) -> Result<Option<HttpServe>, ConfigError> {
        let Some(listen) = &resolved.settings.server.metrics_listen else {
            return Ok(None);
        };
        HttpServe::at(resolved, env, "server.metrics_listen", listen, false, named).map(Some)
    }

    /// A listener on `listen` (read from `key`), serving `/mcp` or not.
    fn at(
        resolved: &Resolved,
        env: &Env,
        key: &str,
        listen: &str,
        mcp: bool,
        named: Option<&NamedClients>,
    ) -> Result<HttpServe, ConfigError> {
        let http = &resolved.settings.server.http;
        let clients = named.map(|n| n.tokens.clone());
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
        let gateway = gateway(resolved, token.is_some(), named)?;
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

/// The trusted proxies and the identity header, checked: every entry a network, none
/// that trusts every peer, and a header of its own, only with proxies to set it and a
/// credential of the gateway's for them to carry: a clients-file client marked
/// `gateway: true` (`named`), or the single token (`token`) when there is no clients
/// file. Any other credential's header is ignored, so without one it never counts.
fn gateway(
    resolved: &Resolved,
    token: bool,
    named: Option<&NamedClients>,
) -> Result<Gateway, ConfigError> {
    let http = &resolved.settings.server.http;
    let origin = |key: &str| {
        resolved
            .sources
            .get(key)
            .map(ToString::to_string)
            .unwrap_or_else(|| "default".into())
    };
    let proxies = |value: String, allowed: String| ConfigError::Invalid {
        key: "server.http.trusted_proxies".into(),
        value,
        origin: origin("server.http.trusted_proxies"),
        allowed,
    };
    let trusted = http
        .trusted_proxies
        .iter()
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| Cidr::parse(entry))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|bad| {
            proxies(
                format!("{:?}", bad.entry),
                format!(
                    "IP addresses or networks such as 10.0.0.0/8 or fd00::/8 ({})",
                    bad.why
                ),
            )
        })?;
    gate::check_trusted(&trusted).map_err(|everyone| {
        proxies(
            format!("{:?}", http.trusted_proxies),
            format!("the gateway's own addresses, or the network it runs in (such as 10.0.0.0/8): {everyone}. To trust a gateway whose address is not known in advance, list the networks it can come from; there is no setting to trust every address"),
        )
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
    if !is_header_name(&name) {
        return Err(invalid(
            "a header name such as X-Forwarded-User (letters, digits and -)",
        ));
    }
    if let Some(carries) = gate::carries_something_else(&name) {
        return Err(invalid(&format!("a header of the gateway's own, such as X-Forwarded-User: {header} carries {carries}, which clients send or proxies pass on as they are")));
    }
    if trusted.is_empty() {
        return Err(invalid("a header only trusted proxies may set: list them in server.http.trusted_proxies (MCP_HTTP_TRUSTED_PROXIES), or leave identity_header unset"));
    }
    match named {
        Some(named) if !named.clients.iter().any(|(_, c)| c.gateway) => {
            return Err(invalid("a header honoured only beside the gateway's credential: mark the gateway's client in the clients file (server.http.clients_file) with gateway: true; with a clients file, no other credential (the single token included) may name users"));
        }
        None if !token => {
            return Err(invalid("a header honoured only beside the gateway's credential: set the bearer token's variable (server.http.token_env) and give the token to the gateway alone, or mark the gateway's client in a clients file with gateway: true; an OAuth token names its own identity, never a user's"));
        }
        _ => {}
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
        serve_named(yaml, env, None)
    }

    /// `yaml` with `env` resolved and served, beside the clients file `named`, if any.
    fn serve_named(
        yaml: &str,
        env: &[(&str, &str)],
        named: Option<&crate::clients::NamedClients>,
    ) -> Result<HttpServe, ConfigError> {
        let env: Env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let path = std::path::Path::new("/c.yaml");
        let input = crate::YamlInput { text: yaml, path };
        let resolved = crate::resolve(Some(input), &env, &Cli::default())?;
        HttpServe::resolve(&resolved, &env, named)
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
                "the gateway's credential",
            ),
            (
                "server: {http: {trusted_proxies: [10.0.0.1], identity_header: 'X Forwarded User'}}",
                vec![("MCP_HTTP_TOKEN", "tok-123")],
                "a header name",
            ),
            (
                "server: {http: {trusted_proxies: [10.0.0.1], identity_header: Authorization}}",
                vec![("MCP_HTTP_TOKEN", "tok-123")],
                "carries a credential",
            ),
        ] {
            let e = serve(yaml, &env).unwrap_err().to_string();
            assert!(e.contains(says), "{yaml}: {e}");
            assert!(!e.contains("tok-123"), "{e}");
        }
    }

    /// `serve` with the clients file `clients` beside it.
    fn serve_with(
        yaml: &str,
        env: &[(&str, &str)],
        clients: &str,
    ) -> Result<HttpServe, ConfigError> {
        let named = crate::clients::parse(clients).unwrap();
        serve_named(yaml, env, Some(&named))
    }

    const GATEWAY: &str =
        "server: {http: {trusted_proxies: [10.0.0.1], identity_header: X-Forwarded-User}}";
    const DIGEST: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn an_identity_header_needs_a_credential_marked_as_the_gateways() {
        let ci = format!("clients: [{{name: ci, token_sha256: {DIGEST}}}]");
        let gw = format!("clients: [{{name: gw, token_sha256: {DIGEST}, gateway: true}}]");
        // A clients file without a gateway client: the header could never be honoured,
        // not even beside the single token.
        for env in [vec![], vec![("MCP_HTTP_TOKEN", "tok-123")]] {
            let e = serve_with(GATEWAY, &env, &ci).unwrap_err().to_string();
            assert!(
                e.contains("server.http.identity_header") && e.contains("gateway: true"),
                "{e}"
            );
            assert!(!e.contains("tok-123") && !e.contains(DIGEST), "{e}");
        }
        assert!(serve_with(GATEWAY, &[], &gw).is_ok());
        // A gateway that proves itself with an OAuth token: its client claims the identity.
        let oauth_gw = "clients: [{name: gw, identity: svc-gateway, gateway: true}]";
        assert!(serve_with(GATEWAY, &[], oauth_gw).is_ok());
        // Without a clients file, the single token is the gateway's; OAuth alone is not.
        assert!(serve(GATEWAY, &[("MCP_HTTP_TOKEN", "tok-123")]).is_ok());
        let oauth = "server: {http: {trusted_proxies: [10.0.0.1], identity_header: X-Forwarded-User, oauth: {issuer: 'https://id.example'}}}";
        let e = serve(oauth, &[]).unwrap_err().to_string();
        if cfg!(feature = "oauth") {
            assert!(e.contains("an OAuth token names its own identity"), "{e}");
        }
    }

    #[test]
    fn trusted_proxies_that_hold_every_address_are_refused_saying_why() {
        for (list, says) in [
            ("['0.0.0.0/0']", "0.0.0.0/0 holds every IPv4 address"),
            ("['::ffff:0:0/96']", "0.0.0.0/0 holds every IPv4 address"),
            (
                "['::ffff:0.0.0.0/96']",
                "0.0.0.0/0 holds every IPv4 address",
            ),
            ("['10.0.0.1', '::/0']", "::/0 holds every IPv6 address"),
            ("['::/80']", "the IPv4-mapped form of every IPv4 address"),
            (
                "['::fffe:0:0/95']",
                "the IPv4-mapped form of every IPv4 address",
            ),
            (
                "['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/2']",
                "the entries together hold every IPv4 address",
            ),
        ] {
            let yaml = format!("server: {{http: {{trusted_proxies: {list}}}}}");
            let e = serve(&yaml, &[]).unwrap_err().to_string();
            assert!(
                e.contains("server.http.trusted_proxies")
                    && e.contains(says)
                    && e.contains("X-Forwarded-For")
                    && e.contains("list the networks it can come from"),
                "{list}: {e}"
            );
        }
        // Wide, but not everyone: allowed.
        for list in [
            "['10.0.0.0/8', '0.0.0.0/1']",
            "['::1', 'fd00::/8', '2000::/3']",
        ] {
            let yaml = format!("server: {{http: {{trusted_proxies: {list}}}}}");
            assert!(serve(&yaml, &[]).is_ok(), "{list}");
        }
    }

    #[test]
    fn an_identity_header_that_carries_something_else_is_refused() {
        for header in [
            "Cookie",
            "Authorization",
            "Proxy-Authorization",
            "Forwarded",
            "X-Forwarded-For",
            "X-Forwarded-Proto",
            "X-Forwarded-Host",
            "X-Real-IP",
            "User-Agent",
            "Host",
            "Content-Type",
            "Content-Length",
            "Transfer-Encoding",
            "Connection",
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Mcp-Method",
            "Accept",
            "Accept-Language",
            "Origin",
            "Referer",
            "Traceparent",
            "Last-Event-ID",
            "Sec-Fetch-Site",
            "If-None-Match",
            "Expect",
        ] {
            let yaml = format!(
                "server: {{http: {{trusted_proxies: [10.0.0.1], identity_header: '{header}'}}}}"
            );
            let e = serve(&yaml, &[("MCP_HTTP_TOKEN", "tok-123")])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("server.http.identity_header")
                    && e.contains(&format!("{header} carries"))
                    && e.contains("X-Forwarded-User"),
                "{header}: {e}"
            );
        }
        for header in [
            "X-Forwarded-User",
            "X-Auth-Request-Email",
            "X-Goog-Authenticated-User-Email",
            "Remote-User",
        ] {
            let yaml = format!(
                "server: {{http: {{trusted_proxies: [10.0.0.1], identity_header: '{header}'}}}}"
            );
            assert!(
                serve(&yaml, &[("MCP_HTTP_TOKEN", "tok-123")]).is_ok(),
                "{header}"
            );
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
