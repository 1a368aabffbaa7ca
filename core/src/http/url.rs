//! The one reader of an absolute URL's authority the core needs: the host and port a
//! request goes to (for traces' `server.address`, a stream's "reading" hint, the
//! data-residency region of a base URL).

/// The host and port of `url` (`scheme://[user@]host[:port]/…`; the scheme's port when
/// none is given, 443 for `https`, else 80). `None` without a scheme, with an empty host
/// or with a port that is not a number.
pub(crate) fn host_and_port(url: &str) -> Option<(&str, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let default = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        (host, port.unwrap_or(default))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().ok()?),
            None => (authority, default),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_its_host_and_port() {
        assert_eq!(
            host_and_port("https://api.openai.com/v1/responses"),
            Some(("api.openai.com", 443))
        );
        assert_eq!(
            host_and_port("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1", 8080))
        );
        assert_eq!(host_and_port("http://[::1]:9/x"), Some(("::1", 9)));
        assert_eq!(host_and_port("http://u:p@h/x"), Some(("h", 80)));
        assert_eq!(host_and_port("not a url"), None);
        assert_eq!(host_and_port("https:///v1"), None);
    }
}
