//! OAuth mode's signature check, the part the core leaves to the host: with the `oauth`
//! feature, jsonwebtoken (`jwt.rs`), its signatures checked by ring (`signatures.rs`);
//! without it, a verifier that refuses everything (`refusing.rs`), never reached because
//! startup refuses the issuer first.

use responses_mcp_config::oauth::OAuthMode;
use responses_mcp_core::oauth::OAuthConfig;
use std::net::SocketAddr;

#[cfg(feature = "oauth")]
mod jwt;
#[cfg(feature = "oauth")]
mod signatures;
#[cfg(feature = "oauth")]
pub use jwt::verifier;

#[cfg(not(feature = "oauth"))]
mod refusing;
#[cfg(not(feature = "oauth"))]
pub use refusing::verifier;

/// The core's OAuth configuration for `mode` once its listener is bound at `bound`, with
/// this build's verifier.
pub fn config(mode: &OAuthMode, bound: SocketAddr) -> OAuthConfig {
    OAuthConfig {
        settings: mode.at(bound),
        verifier,
    }
}
