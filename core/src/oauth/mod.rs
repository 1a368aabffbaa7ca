//! OAuth 2.1 resource server, sans IO (MCP authorization, 2025-06-18 on): what this
//! server publishes about itself (Protected Resource Metadata, RFC 9728), how it reads
//! its authorization server's metadata (RFC 8414 / OpenID Connect Discovery), and what
//! it decides from a JWT access token's verified claims (RFC 9068, RFC 8707).
//!
//! The core holds no cryptography: signatures are checked by a [`TokenVerifier`] the
//! host passes in (config's, with a maintained JOSE crate), which also parses the key
//! set the call engine fetched. The core decides the rest from the claims, with its own
//! clock: issuer, audience, lifetime, scopes, and who the caller is.

mod claims;
mod discovery;
mod gate;

pub use claims::{identity, TokenRejection};
pub use discovery::{jwks_uri, metadata_urls, protected_resource_metadata, MetadataError};
pub use gate::{Denial, Gate, GateStep, Passed, MAX_WAITING_BYTES};

use crate::clients::Limit;
use serde_json::{Map, Value};
use std::fmt;
use std::time::Duration;

/// Longest a request may wait for the identity provider's keys (the issue's bound).
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// The well-known path of this server's Protected Resource Metadata (RFC 9728, 3.1);
/// for the resource `<public_url>/mcp` it is served with the `/mcp` suffix as well.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

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
        discovery::metadata_url_of(&self.resource)
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

/// A bearer token as a request offered it: unverified, and never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    /// The token; `None` when empty.
    pub fn new(token: &str) -> Option<BearerToken> {
        let token = token.trim();
        (!token.is_empty()).then(|| BearerToken(token.to_owned()))
    }

    /// Its text, for the verifier alone.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(***)")
    }
}

/// Why a token's signature was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// The token names a key (this `kid`) the loaded set does not hold, or no key was
    /// loaded yet: the set may be out of date.
    UnknownKey(String),
    /// Malformed, an algorithm outside the allow-list, or a signature that does not
    /// verify: what the token's holder is told (never the token).
    Invalid(String),
}

/// Why a key set document is not used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeySetError {
    /// Not a JSON document.
    #[error("the key set is not JSON")]
    NotJson,
    /// No `keys` array.
    #[error("the key set has no keys array")]
    NoKeys,
    /// No key an allowed algorithm can use.
    #[error("the key set holds no signing key for RS256, PS256, ES256 or EdDSA")]
    NoSigningKey,
    /// This build cannot check signatures.
    #[error("this build has no OAuth mode")]
    Unsupported,
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

/// The host's signature check (the core has no cryptography).
pub trait TokenVerifier {
    /// Replaces the keys with those of a JWKS document (RFC 7517), keeping the ones an
    /// allowed algorithm can use; says how many, or why the document is unusable.
    ///
    /// # Errors
    /// The document is not a key set, or holds no usable key.
    fn load(&mut self, jwks: &[u8]) -> Result<usize, KeySetError>;

    /// The claims of `token` when it is a JWS whose signature verifies with a loaded key
    /// under an allowed algorithm (RS256, PS256, ES256, EdDSA; never `none`, never a
    /// MAC). Nothing but the signature is checked here. A verifier may remember the
    /// tokens it verified (a client sends one token many times) until its keys change.
    ///
    /// # Errors
    /// See [`TokenError`].
    fn verify(&mut self, token: &str) -> Result<Map<String, Value>, TokenError>;
}

/// Makes the host's verifier (a function, so that the settings stay plain data).
pub type VerifierFactory = fn() -> Box<dyn TokenVerifier>;

/// OAuth mode as the server runs it: the settings and the host's verifier.
#[derive(Clone)]
pub struct OAuthConfig {
    /// The settings.
    pub settings: OAuthSettings,
    /// Makes the verifier.
    pub verifier: VerifierFactory,
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl PartialEq for OAuthConfig {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings
    }
}
impl Eq for OAuthConfig {}
