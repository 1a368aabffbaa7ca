//! OAuth mode (`server.http.oauth.*`): its settings resolved and checked at startup;
//! without the `oauth` feature, `absent.rs` refuses the issuer naming the builds that have
//! it. The signature check the core leaves to the host is the host crate's.

use crate::error::ConfigError;
use crate::resolve::Resolved;
use responses_mcp_core::clients::Limit;
use responses_mcp_core::money::Picodollars;
use responses_mcp_core::oauth::{OAuthSettings, MAX_WAIT};
use std::net::SocketAddr;
use std::time::Duration;

#[cfg(not(feature = "oauth"))]
#[path = "oauth/absent.rs"]
mod absent;

/// OAuth mode as configured, before the listener is bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthMode {
    /// Everything but the resource, which may be the bound address's.
    settings: OAuthSettings,
    /// `server.http.public_url`, without a trailing `/`.
    public_url: Option<String>,
}

impl OAuthMode {
    /// The settings once the listener is bound at `bound`: the resource is
    /// `<public_url>/mcp`, or `http://<bound>/mcp` without a public URL.
    pub fn at(&self, bound: SocketAddr) -> OAuthSettings {
        let base = match &self.public_url {
            Some(url) => url.clone(),
            None => format!("http://{bound}"),
        };
        OAuthSettings {
            resource: format!("{base}/mcp"),
            ..self.settings.clone()
        }
    }
}

/// `server.http.oauth.*`, when an issuer is set.
///
/// # Errors
/// An issuer or public URL that is not an absolute http(s) URL (http only on loopback),
/// or a build without the `oauth` feature.
pub fn resolve(resolved: &Resolved) -> Result<Option<OAuthMode>, ConfigError> {
    let http = &resolved.settings.server.http;
    let oauth = &http.oauth;
    let Some(issuer) = oauth.issuer.as_deref().map(str::trim) else {
        return Ok(None);
    };
    let invalid = |key: &str, value: &str, allowed: &str| ConfigError::Invalid {
        key: key.into(),
        value: format!("{value:?}"),
        origin: resolved
            .sources
            .get(key)
            .map(ToString::to_string)
            .unwrap_or_else(|| "default".into()),
        allowed: allowed.into(),
    };
    if !is_web_url(issuer) {
        return Err(invalid(
            "server.http.oauth.issuer",
            issuer,
            "the authorization server's issuer URL, exactly as its tokens' iss claim writes it: https://..., or http:// on loopback",
        ));
    }
    #[cfg(not(feature = "oauth"))]
    absent::available()?;
    let public_url = match http.public_url.as_deref().map(str::trim) {
        None => None,
        Some(url) if is_web_url(url) && !url.contains('?') && !url.contains('#') => {
            Some(public_base(url).to_owned())
        }
        Some(url) => {
            return Err(invalid(
                "server.http.public_url",
                url,
                "the URL clients reach this server at, without /mcp: https://answers.example.com (http:// on loopback)",
            ))
        }
    };
    let mut settings = OAuthSettings::new(issuer, "");
    settings.audiences.clone_from(&oauth.audiences);
    settings.scopes.clone_from(&oauth.scopes);
    settings.identity_claim.clone_from(&oauth.identity_claim);
    settings.leeway_secs = oauth.leeway_secs;
    settings.wait = Duration::from_millis(oauth.wait_ms).min(MAX_WAIT);
    settings.refetch_after = Duration::from_millis(oauth.refetch_after_ms);
    settings.identity_limit = Limit {
        calls_per_minute: oauth.calls_per_minute,
        spend_per_day: oauth.spend_per_day_usd.and_then(Picodollars::from_usd),
    };
    Ok(Some(OAuthMode {
        settings,
        public_url,
    }))
}

/// The public URL without a trailing `/`, and without `/mcp` when it ends so: every
/// client is configured with the MCP URL (`https://host/mcp`), so a public URL written
/// as that is the resource itself, never `…/mcp/mcp`.
fn public_base(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    url.strip_suffix("/mcp").unwrap_or(url)
}

/// An absolute `https://` URL, or `http://` to a loopback host.
fn is_web_url(url: &str) -> bool {
    if url.chars().any(|c| c.is_control() || c == ' ' || c == '"') {
        return false;
    }
    if let Some(rest) = url.strip_prefix("https://") {
        return !rest.is_empty() && !rest.starts_with('/');
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(name, "localhost" | "[::1]") || name.starts_with("127.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuers_and_public_urls_are_web_urls_in_the_clear_only_on_loopback() {
        assert!(is_web_url("https://login.microsoftonline.com/tid/v2.0"));
        assert!(is_web_url("http://127.0.0.1:9000/idp"));
        assert!(is_web_url("http://localhost:8080"));
        assert!(!is_web_url("http://idp.example.com"));
        assert!(!is_web_url("https://"));
        assert!(!is_web_url("ftp://x"));
        assert!(!is_web_url("https://a b"));
    }

    #[test]
    fn a_public_url_written_as_the_mcp_url_is_the_resource_itself() {
        for (written, base) in [
            ("https://answers.example.com", "https://answers.example.com"),
            (
                "https://answers.example.com/",
                "https://answers.example.com",
            ),
            (
                "https://answers.example.com/mcp",
                "https://answers.example.com",
            ),
            (
                "https://answers.example.com/mcp/",
                "https://answers.example.com",
            ),
            ("https://example.com/tools/mcp", "https://example.com/tools"),
            ("https://example.com/mcpx", "https://example.com/mcpx"),
        ] {
            assert_eq!(public_base(written), base, "{written}");
        }
    }
}
