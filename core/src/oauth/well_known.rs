//! The well-known URLs, both ways: where this server's Protected Resource Metadata is
//! (RFC 9728, 3.1) and where its authorization server's may be (RFC 8414, OpenID
//! Connect Discovery 1.0).

/// The well-known path of this server's Protected Resource Metadata (RFC 9728, 3.1);
/// for the resource `<public_url>/mcp` it is served with the `/mcp` suffix as well.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the path (`""` for none) of an absolute URL.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let start = url.find("://")? + 3;
    let path_at = url[start..].find('/').map_or(url.len(), |i| start + i);
    Some((&url[..path_at], url[path_at..].trim_end_matches('/')))
}

/// Where the metadata of `resource` is: the well-known path inserted between its host
/// and its path (RFC 9728, 3.1), so `https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`.
pub(super) fn metadata_url_of(resource: &str) -> String {
    match split_url(resource) {
        Some((origin, path)) => format!("{origin}{METADATA_PATH}{path}"),
        None => format!("{resource}{METADATA_PATH}"),
    }
}

/// Where the issuer's metadata may be, in the order tried: OpenID Connect Discovery's
/// (the issuer with `/.well-known/openid-configuration` appended: Keycloak, Entra ID,
/// Okta, Auth0 and Google all serve it), then RFC 8414's (the well-known path inserted
/// before the issuer's path).
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    let appended = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let mut urls = vec![appended];
    if let Some((origin, path)) = split_url(issuer) {
        let inserted = format!("{origin}/.well-known/oauth-authorization-server{path}");
        if !urls.contains(&inserted) {
            urls.push(inserted);
        }
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_found_where_the_specifications_put_it() {
        assert_eq!(
            metadata_url_of("https://mcp.example/mcp"),
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url_of("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_urls("https://kc.example/realms/team"),
            [
                "https://kc.example/realms/team/.well-known/openid-configuration",
                "https://kc.example/.well-known/oauth-authorization-server/realms/team",
            ]
        );
        // Auth0's issuer ends in a slash.
        assert_eq!(
            metadata_urls("https://t.auth0.com/"),
            [
                "https://t.auth0.com/.well-known/openid-configuration",
                "https://t.auth0.com/.well-known/oauth-authorization-server",
            ]
        );
    }
}
