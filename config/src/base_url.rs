//! What the resolver reads of a base URL to judge where the key goes: the part that may
//! be printed, and whether the key would cross the network in the clear.

use std::net::IpAddr;

/// `scheme://host[:port]` of `url`: no credentials, path or query, which may hold a
/// secret (a gateway's token in its path, a password before the `@`).
pub fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = authority(rest);
    format!("{scheme}://{authority}")
}

/// The host of `url`, lower-cased, without brackets, port or credentials.
pub fn host_of(url: &str) -> String {
    let (_, rest) = url.split_once("://").unwrap_or(("", url));
    host(authority(rest)).to_ascii_lowercase()
}

/// Whether a request to `url` carries its headers unencrypted beyond this machine: a
/// plain `http://` URL whose host is not a loopback name or address.
pub fn in_the_clear(url: &str) -> bool {
    // The key table admits only these lower-case schemes.
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    !is_loopback(host(authority(rest)))
}

/// Whether `url` is plain `http://` to this machine (a loopback name or address): a
/// connection that never leaves the host, so a proxy would only add a reader.
pub fn plain_http_here(url: &str) -> bool {
    url.strip_prefix("http://")
        .is_some_and(|rest| is_loopback(host(authority(rest))))
}

/// The host and port after the scheme, without `user:password@`.
fn authority(after_scheme: &str) -> &str {
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

/// The host of `host[:port]` or `[v6][:port]`, brackets removed.
fn host(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority.split(':').next().unwrap_or_default()
}

/// `localhost` or a loopback address (`127.0.0.0/8`, `::1`).
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_drops_credentials_path_and_query() {
        assert_eq!(
            origin("http://user:s3cret@gw.example:8080/v1/acct/tok?k=v"),
            "http://gw.example:8080"
        );
        assert_eq!(
            origin("https://api.perplexity.ai/v1"),
            "https://api.perplexity.ai"
        );
        assert_eq!(origin("http://[::1]:4010/v1"), "http://[::1]:4010");
    }

    #[test]
    fn only_plain_http_off_this_machine_is_in_the_clear() {
        for url in [
            "http://gw.example/v1",
            "http://10.0.0.7:8080/v1",
            "http://127.0.0.1.nip.io/v1",
            "http://localhost@gw.example/v1",
            "http://[::ffff:10.0.0.1]/v1",
        ] {
            assert!(in_the_clear(url), "{url}");
        }
        for url in [
            "https://gw.example/v1",
            "http://localhost:11434/v1",
            "http://LOCALHOST/v1",
            "http://127.0.0.1:1234/v1",
            "http://127.8.9.10/v1",
            "http://[::1]:4010/v1",
            "http://user:pw@127.0.0.1/v1",
        ] {
            assert!(!in_the_clear(url), "{url}");
        }
    }
}
