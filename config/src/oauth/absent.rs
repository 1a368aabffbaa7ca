//! A build without the `oauth` feature: OAuth mode is refused at startup, naming the
//! builds that have it.

use crate::error::ConfigError;
use responses_mcp_core::oauth::{TokenError, TokenVerifier};
use serde_json::{Map, Value};

/// Refuses `server.http.oauth.issuer`.
///
/// # Errors
/// Always.
pub fn available() -> Result<(), ConfigError> {
    Err(ConfigError::Invalid {
        key: "server.http.oauth.issuer".into(),
        value: "(set)".into(),
        origin: "configuration".into(),
        allowed: "null in this build, which has no OAuth mode: use a release archive, the npm package or the container image, or build with --features oauth".into(),
    })
}

/// Never called: `available` stops startup first.
pub fn verifier() -> Box<dyn TokenVerifier> {
    Box::new(Refusing)
}

struct Refusing;

impl TokenVerifier for Refusing {
    fn load(&mut self, _: &[u8]) -> Result<usize, String> {
        Err("this build has no OAuth mode".into())
    }
    fn verify(&mut self, _: &str) -> Result<Map<String, Value>, TokenError> {
        Err(TokenError::Invalid("this build has no OAuth mode".into()))
    }
}
