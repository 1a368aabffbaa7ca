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
mod settings;
mod token;
mod well_known;

pub use claims::{identity, TokenRejection};
pub use discovery::{jwks_uri, protected_resource_metadata, FetchError, MetadataError};
pub use gate::{Denial, Gate, GateStep, Passed, MAX_WAITING_BYTES};
pub use settings::{Challenge, OAuthSettings, MAX_WAIT};
pub use token::{BearerToken, KeySetError, TokenError, TokenVerifier, VerifierFactory};
pub use well_known::{metadata_urls, METADATA_PATH};

use std::fmt;

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
