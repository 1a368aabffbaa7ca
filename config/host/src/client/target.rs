//! Where a request goes: the parts of an `http(s)://host[:port]/path` URL that the client
//! needs, checked so that nothing in them can break the request line or headers.

/// A server: scheme, host and port. Kept-alive connections are pooled per origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// `https`.
    pub tls: bool,
    /// Without IPv6 brackets.
    pub host: String,
    /// The port, the scheme's default when the URL names none.
    pub port: u16,
}

/// A parsed request URL.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    /// The server.
    pub origin: Origin,
    /// The `Host` header: the authority as written, without a default port.
    pub host_header: String,
    /// Path and query, for the request line.
    pub path: String,
}

impl Target {
    /// Parses `url`; the error says what is wrong without repeating the URL.
    pub fn parse(url: &str) -> Result<Target, &'static str> {
        let (scheme, rest) = url.split_once("://").ok_or("the URL has no scheme")?;
        let tls = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err("the URL scheme is not http or https");
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if authority.contains('@') {
            return Err("credentials in the URL are not supported");
        }
        let (host, port) = split_port(authority)?;
        if host.is_empty() {
            return Err("the URL has no host");
        }
        if !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b))
        {
            return Err("the URL host has characters a host name cannot have");
        }
        let default_port = if tls { 443 } else { 80 };
        let port = match port {
            None => default_port,
            Some(p) => p.parse().map_err(|_| "the URL port is not a number")?,
        };
        let path = path.split('#').next().unwrap_or_default();
        if path.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err("the URL path has spaces, controls or non-ASCII characters");
        }
        let bracketed = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        let host_header = if port == default_port {
            bracketed
        } else {
            format!("{bracketed}:{port}")
        };
        Ok(Target {
            origin: Origin {
                tls,
                host: host.to_ascii_lowercase(),
                port,
            },
            host_header,
            path: if path.is_empty() { "/" } else { path }.to_owned(),
        })
    }
}

/// `host[:port]` or `[v6][:port]`.
fn split_port(authority: &str) -> Result<(&str, Option<&str>), &'static str> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("the URL has an unclosed '['")?;
        return match after {
            "" => Ok((host, None)),
            _ => after
                .strip_prefix(':')
                .map(|port| (host, Some(port)))
                .ok_or("the URL has text after its IPv6 address"),
        };
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> (bool, String, u16, String, String) {
        let t = Target::parse(url).unwrap();
        (
            t.origin.tls,
            t.origin.host,
            t.origin.port,
            t.host_header,
            t.path,
        )
    }

    #[test]
    fn urls_the_config_can_give() {
        assert_eq!(
            parse("https://api.openai.com/v1/responses"),
            (
                true,
                "api.openai.com".into(),
                443,
                "api.openai.com".into(),
                "/v1/responses".into()
            )
        );
        assert_eq!(
            parse("http://127.0.0.1:8080/v1/responses?x=1#frag"),
            (
                false,
                "127.0.0.1".into(),
                8080,
                "127.0.0.1:8080".into(),
                "/v1/responses?x=1".into()
            )
        );
        assert_eq!(
            parse("HTTP://[::1]:80"),
            (false, "::1".into(), 80, "[::1]".into(), "/".into())
        );
        assert_eq!(
            parse("https://Gateway.Example:443/openai/v1/responses").3,
            "Gateway.Example"
        );
    }

    #[test]
    fn urls_that_cannot_be_requested() {
        for (url, why) in [
            ("api.openai.com/v1", "the URL has no scheme"),
            ("ftp://x/v1", "the URL scheme is not http or https"),
            (
                "https://user:pw@x/v1",
                "credentials in the URL are not supported",
            ),
            ("https:///v1", "the URL has no host"),
            ("https://x:99999/v1", "the URL port is not a number"),
            ("https://x:/v1", "the URL port is not a number"),
            ("https://[::1/v1", "the URL has an unclosed '['"),
            (
                "https://[::1]x/v1",
                "the URL has text after its IPv6 address",
            ),
            (
                "https://a b/v1",
                "the URL host has characters a host name cannot have",
            ),
            (
                "https://x/v1 HTTP/1.1\r\nX: y",
                "the URL path has spaces, controls or non-ASCII characters",
            ),
            (
                "https://x/v1/ré",
                "the URL path has spaces, controls or non-ASCII characters",
            ),
        ] {
            assert_eq!(Target::parse(url), Err(why), "{url}");
        }
    }
}
