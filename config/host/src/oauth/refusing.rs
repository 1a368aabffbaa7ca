//! A build without the `oauth` feature: a verifier that refuses every key set and
//! token. Startup refuses `server.http.oauth.issuer` first (the configuration crate's
//! `oauth/absent.rs`), so it is never asked.

use responses_mcp_core::oauth::{KeySetError, TokenError, TokenVerifier};
use serde_json::{Map, Value};

/// Never called: the configuration's `oauth::resolve` stops startup first.
pub fn verifier() -> Box<dyn TokenVerifier> {
    Box::new(Refusing)
}

struct Refusing;

impl TokenVerifier for Refusing {
    fn load(&mut self, _: &[u8]) -> Result<usize, KeySetError> {
        Err(KeySetError::Unsupported)
    }
    fn verify(&mut self, _: &str) -> Result<Map<String, Value>, TokenError> {
        Err(TokenError::Invalid("this build has no OAuth mode".into()))
    }
}
