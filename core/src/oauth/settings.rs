//! OAuth mode's settings, resolved, and the `WWW-Authenticate` challenges written under
//! them (or under the static token's realm): what this server says of itself as a
//! protected resource.

use super::well_known::metadata_url_of;
use crate::clients::Limit;
use std::time::Duration;

/// Longest a request may wait for the identity provider's keys (the issue's bound).
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// OAuth mode's settings (`server.http.oauth.*`), resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthSettings {
    /// The authorization server's issuer, exactly as its tokens' `iss` name it.
    pub issuer: String,
    /// This resource's identifier: `<public_url>/mcp`, what clients ask tokens for
    /// (`resource=`, RFC 8707) and what the metadata's `resource` says.
    pub resource: String,
    /// The `aud` values a token may carry to be for this server; empty: the resource
    /// (a provider may name its APIs otherwise, as Entra ID does).
    pub audiences: Vec<String>,
    /// Scopes every token must carry.
    pub scopes: Vec<String>,
    /// The claim that names the caller (`sub`, or `client_id` / `azp` for machines).
    pub identity_claim: String,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    pub leeway_secs: u64,
    /// Longest a request waits for the provider's keys ([`MAX_WAIT`] at most).
    pub wait: Duration,
    /// Fetches of the keys are at least this far apart when a token names a key the set
    /// does not hold (a token cannot make the server hammer its provider).
    pub refetch_after: Duration,
    /// The keys are fetched again in the background when older than this, so that a
    /// key the provider withdrew stops being accepted.
    pub refresh_every: Duration,
    /// The limits of identities no client of the clients file names.
    pub identity_limit: Limit,
}

impl OAuthSettings {
    /// Settings for `issuer` guarding `resource`, with the defaults for the rest.
    pub fn new(issuer: &str, resource: &str) -> OAuthSettings {
        OAuthSettings {
            issuer: issuer.to_owned(),
            resource: resource.to_owned(),
            audiences: Vec::new(),
            scopes: Vec::new(),
            identity_claim: "sub".to_owned(),
            leeway_secs: 60,
            wait: Duration::from_secs(5),
            refetch_after: Duration::from_secs(5),
            refresh_every: Duration::from_secs(3600),
            identity_limit: Limit::default(),
        }
    }

    /// The `aud` values that make a token this server's.
    pub fn accepted_audiences(&self) -> &[String] {
        match self.audiences.is_empty() {
            true => std::slice::from_ref(&self.resource),
            false => &self.audiences,
        }
    }

    /// Where this server's Protected Resource Metadata is (the challenge points there).
    pub fn metadata_url(&self) -> String {
        metadata_url_of(&self.resource)
    }

    /// How long a request may wait for keys: `wait`, never beyond [`MAX_WAIT`].
    pub fn bounded_wait(&self) -> Duration {
        self.wait.min(MAX_WAIT)
    }

    /// The `WWW-Authenticate` challenge `what` calls for, under this server's resource.
    pub fn challenge(&self, what: Challenge<'_>) -> String {
        what.header(Some(self))
    }
}

/// What a `WWW-Authenticate` challenge says (RFC 6750, 3). Every challenge the server
/// sends is written by [`Challenge::header`]: the static token's (`realm="mcp"`) and
/// OAuth mode's, which points MCP clients at the Protected Resource Metadata (RFC 9728,
/// 5.1) and names the scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Challenge<'a> {
    /// No credentials: the bare challenge.
    Missing,
    /// A token that is not valid (401 `invalid_token`), and why.
    InvalidToken(&'a str),
    /// A valid token without a scope it needs (403 `insufficient_scope`), and why.
    InsufficientScope(&'a str),
}

impl Challenge<'_> {
    /// Why a token is refused when nothing more is known.
    pub const NOT_VALID: Challenge<'static> =
        Challenge::InvalidToken("the bearer token is not valid");

    /// The header's value: under OAuth mode's `settings`, or the static token's realm.
    pub fn header(self, settings: Option<&OAuthSettings>) -> String {
        let mut challenge = match settings {
            Some(s) => {
                let mut c = format!("Bearer resource_metadata=\"{}\"", s.metadata_url());
                if !s.scopes.is_empty() {
                    c.push_str(&format!(", scope=\"{}\"", s.scopes.join(" ")));
                }
                c
            }
            None => r#"Bearer realm="mcp""#.to_owned(),
        };
        let error = match self {
            Challenge::Missing => None,
            Challenge::InvalidToken(why) => Some(("invalid_token", why)),
            Challenge::InsufficientScope(why) => Some(("insufficient_scope", why)),
        };
        if let Some((error, description)) = error {
            // A quoted-string may not hold `"` or `\` unescaped; descriptions are ours.
            let description: String = description
                .chars()
                .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
                .collect();
            challenge.push_str(&format!(
                ", error=\"{error}\", error_description=\"{description}\""
            ));
        }
        challenge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_names_the_metadata_scopes_and_error() {
        let mut s = OAuthSettings::new("https://idp.example/", "https://mcp.example/mcp");
        s.scopes = vec!["mcp:answer".into()];
        assert_eq!(
            s.challenge(Challenge::Missing),
            r#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="mcp:answer""#
        );
        let bad = s.challenge(Challenge::InvalidToken("a \"quoted\" \\ reason"));
        assert!(
            bad.ends_with(r#"error="invalid_token", error_description="a quoted  reason""#),
            "{bad}"
        );
        let scope = s.challenge(Challenge::InsufficientScope("needs mcp:answer"));
        assert!(scope.contains(r#"error="insufficient_scope""#), "{scope}");
        // The static token's challenge: the realm, the same error parts.
        assert_eq!(Challenge::Missing.header(None), r#"Bearer realm="mcp""#);
        assert_eq!(
            Challenge::NOT_VALID.header(None),
            r#"Bearer realm="mcp", error="invalid_token", error_description="the bearer token is not valid""#
        );
    }
}
