//! Discovery, both ways: the Protected Resource Metadata this server serves (RFC 9728)
//! and the authorization server's metadata it reads (RFC 8414, OpenID Connect Discovery
//! 1.0) to find the keys, and why such a document could not be had. Where these
//! documents are is `well_known`'s.

use super::settings::OAuthSettings;
use serde_json::{json, Value};

/// Most bytes of a URL taken from the provider's metadata.
const MAX_URL: usize = 2048;

/// This server's Protected Resource Metadata: the resource, its authorization server,
/// the scopes it requires and that tokens come in the `Authorization` header only.
pub fn protected_resource_metadata(settings: &OAuthSettings) -> Vec<u8> {
    let mut doc = json!({
        "resource": settings.resource,
        "authorization_servers": [settings.issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "openai-responses-mcp",
    });
    if !settings.scopes.is_empty() {
        doc["scopes_supported"] = json!(settings.scopes);
    }
    doc.to_string().into_bytes()
}

/// Why the issuer's metadata is not used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// Not a JSON document.
    #[error("the metadata is not JSON")]
    NotJson,
    /// It describes another issuer (RFC 8414, 3.3).
    #[error("the metadata names another issuer ({named}) than server.http.oauth.issuer ({issuer}): set the issuer exactly as the provider writes it")]
    OtherIssuer {
        /// What it names (at most 200 characters), or `none`.
        named: String,
        /// The configured issuer.
        issuer: String,
    },
    /// It names no key set.
    #[error("the metadata names no jwks_uri")]
    NoKeySet,
    /// Its key set's URL is not one to fetch keys from.
    #[error("the metadata's jwks_uri is not an https URL")]
    InsecureKeySet,
}

/// The `jwks_uri` of the issuer's metadata `body`, which must name `issuer` exactly (RFC
/// 8414, 3.3: metadata about another issuer is not used). The URL must be https, or http
/// when the issuer itself is (a provider on loopback, in tests and development).
///
/// # Errors
/// Why the document is not usable ([`MetadataError`]).
pub fn jwks_uri(issuer: &str, body: &[u8]) -> Result<String, MetadataError> {
    let doc: Value = serde_json::from_slice(body).map_err(|_| MetadataError::NotJson)?;
    let named = doc.get("issuer").and_then(Value::as_str);
    if named != Some(issuer) {
        return Err(MetadataError::OtherIssuer {
            named: named.map_or_else(|| "none".to_owned(), |n| n.chars().take(200).collect()),
            issuer: issuer.to_owned(),
        });
    }
    let uri = doc
        .get("jwks_uri")
        .and_then(Value::as_str)
        .ok_or(MetadataError::NoKeySet)?;
    let secure = uri.starts_with("https://")
        || (issuer.starts_with("http://") && uri.starts_with("http://"));
    if !secure || uri.len() > MAX_URL || uri.chars().any(|c| c.is_control() || c == ' ') {
        return Err(MetadataError::InsecureKeySet);
    }
    Ok(uri.to_owned())
}

/// Why a document of the identity provider could not be had.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FetchError {
    /// The request failed, as the call engine says.
    #[error("{}", .0.message)]
    Upstream(crate::openai::UpstreamFailure),
    /// The engine had no room for another fetch.
    #[error("could not be asked now: the server has too many fetches in flight")]
    NoRoom,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_must_name_the_issuer_and_a_safe_key_url() {
        let issuer = "https://idp.example";
        let doc = |iss: &str, jwks: &str| format!(r#"{{"issuer":"{iss}","jwks_uri":"{jwks}"}}"#);
        assert_eq!(
            jwks_uri(issuer, doc(issuer, "https://idp.example/jwks").as_bytes()),
            Ok("https://idp.example/jwks".into())
        );
        let other = jwks_uri(
            issuer,
            doc("https://evil.example", "https://e/jwks").as_bytes(),
        );
        assert!(other.is_err_and(|e| e
            .to_string()
            .contains("another issuer (https://evil.example)")));
        assert_eq!(
            jwks_uri(issuer, doc(issuer, "http://idp.example/jwks").as_bytes()),
            Err(MetadataError::InsecureKeySet)
        );
        assert_eq!(jwks_uri(issuer, b"<html>"), Err(MetadataError::NotJson));
        assert_eq!(
            jwks_uri(issuer, br#"{"issuer":"https://idp.example"}"#),
            Err(MetadataError::NoKeySet)
        );
        // A provider on loopback in the clear may name keys in the clear.
        let local = "http://127.0.0.1:9000";
        assert!(jwks_uri(local, doc(local, "http://127.0.0.1:9000/jwks").as_bytes()).is_ok());
    }

    #[test]
    fn the_resource_metadata_names_issuer_scopes_and_header_use() {
        let mut s = OAuthSettings::new("https://idp.example", "https://mcp.example/mcp");
        s.scopes = vec!["mcp:answer".into()];
        let doc: Value =
            serde_json::from_slice(&protected_resource_metadata(&s)).unwrap_or_default();
        assert_eq!(doc["resource"], "https://mcp.example/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://idp.example"]));
        assert_eq!(doc["scopes_supported"], json!(["mcp:answer"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
}
