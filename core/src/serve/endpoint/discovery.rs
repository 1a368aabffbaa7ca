//! The OAuth discovery paths: without OAuth mode, every one is 404 with an OAuth error
//! saying a bearer token is needed; in OAuth mode, this resource's metadata is served and
//! an authorization server's paths are 404 naming the issuer.

use super::paths::MCP_PATH;
use crate::http::{ReplyHead, Request};
use serde_json::json;

/// What an OAuth client is told where it looks for an authorization server.
pub const NO_OAUTH: &str = "this MCP server does not use OAuth: it needs a bearer token. Send the header 'Authorization: Bearer <token>' with the server's token (its MCP_HTTP_TOKEN); in Claude Code: claude mcp add --transport http <name> <url> --header \"Authorization: Bearer <token>\"";

/// The paths an OAuth client tries after a 401 without a token: protected-resource and
/// authorization-server metadata (RFC 9728, RFC 8414, OpenID discovery) and the default
/// endpoints of the 2025-03-26 authorization spec.
pub(super) fn is_oauth_path(path: &str) -> bool {
    path.starts_with("/.well-known/oauth-")
        || path.starts_with("/.well-known/openid-configuration")
        || matches!(path, "/register" | "/authorize" | "/token")
}

/// 404 with an OAuth error body (RFC 6749, section 5.2) whose description says how to
/// authenticate instead: clients that show the body of a failed discovery or
/// registration (Claude Code does) show the user what is missing.
pub(super) fn no_oauth(keep_alive: bool) -> Vec<u8> {
    let body = json!({ "error": "invalid_request", "error_description": NO_OAUTH });
    ReplyHead::new(404, keep_alive)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .with_body(body.to_string().as_bytes())
}

/// An OAuth discovery path in OAuth mode: this resource's metadata (at the well-known
/// path, bare or with the endpoint's path after it), readable from any origin as public
/// metadata is; any other (an authorization server's) is 404 naming the issuer.
pub(super) fn oauth_path(request: &Request, door: &crate::serve::access::OAuthDoor) -> Vec<u8> {
    let keep_alive = request.keep_alive;
    let path = request.path();
    let ours = path
        .strip_prefix(crate::oauth::METADATA_PATH)
        // Behind a proxy that serves it under a prefix, the suffix is `<prefix>/mcp`.
        .is_some_and(|rest| rest.is_empty() || rest.ends_with(MCP_PATH));
    if !ours {
        let description = format!(
            "this MCP server is an OAuth protected resource, not an authorization server: its authorization server is {} (see {}{MCP_PATH})",
            door.issuer,
            crate::oauth::METADATA_PATH
        );
        let body = json!({ "error": "invalid_request", "error_description": description });
        return ReplyHead::new(404, keep_alive)
            .header("content-type", "application/json")
            .header("cache-control", "no-store")
            .with_body(body.to_string().as_bytes());
    }
    if request.method != "GET" && request.method != "HEAD" && request.method != "OPTIONS" {
        return ReplyHead::new(405, keep_alive)
            .header("allow", "GET")
            .with_body(b"");
    }
    ReplyHead::new(200, keep_alive)
        .header("content-type", "application/json")
        .header("cache-control", "max-age=300")
        .header("access-control-allow-origin", "*")
        .with_body(&door.metadata)
}
