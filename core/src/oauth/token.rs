//! A bearer token as a request offers it, and the host's check of its signature
//! ([`TokenVerifier`]): the core holds no cryptography.

use serde_json::{Map, Value};
use std::fmt;

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
