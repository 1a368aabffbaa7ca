//! The cryptography of every TLS connection we make (both runtimes' HTTP
//! clients, `doctor`): rustls' *ring* provider, narrowed to what a client that
//! never presents a certificate needs. Built by hand rather than from
//! `rustls::crypto::ring::default_provider()`, because that one references every cipher
//! suite and the private-key loader, and the linker then keeps their code.
//!
//! - Cipher suites: AES-GCM only. Every TLS 1.3 server must offer TLS_AES_128_GCM_SHA256
//!   (RFC 8446, section 9.1) and TLS 1.2 servers offer the ECDHE AES-GCM suites, so no
//!   server is lost; ChaCha20-Poly1305 (40 KB of code) stays out.
//! - Key exchange: X25519, P-256, P-384 (rustls' defaults).
//! - Signatures: exactly rustls' table for *ring* (ECDSA P-256/P-384, Ed25519, RSA PSS and
//!   PKCS#1 with 2048-8192 bit keys).
//! - No key provider: loading a private key fails (we never do client authentication).

use ring::rand::SecureRandom as _;
use rustls::crypto::ring::{cipher_suite as suite, kx_group};
use rustls::crypto::{
    CryptoProvider, GetRandomFailed, KeyProvider, SecureRandom, WebPkiSupportedAlgorithms,
};
use rustls::SignatureScheme;
use std::sync::Arc;
use webpki::ring as alg;

/// The provider every connection uses.
pub fn provider() -> CryptoProvider {
    CryptoProvider {
        cipher_suites: vec![
            suite::TLS13_AES_128_GCM_SHA256,
            suite::TLS13_AES_256_GCM_SHA384,
            suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        ],
        kx_groups: vec![kx_group::X25519, kx_group::SECP256R1, kx_group::SECP384R1],
        signature_verification_algorithms: SIGNATURES,
        secure_random: &SystemRandom,
        key_provider: &NoClientKeys,
    }
}

/// rustls' signature verification table for *ring*, as in its `SUPPORTED_SIG_ALGS`.
static SIGNATURES: WebPkiSupportedAlgorithms = WebPkiSupportedAlgorithms {
    all: &[
        alg::ECDSA_P256_SHA256,
        alg::ECDSA_P256_SHA384,
        alg::ECDSA_P384_SHA256,
        alg::ECDSA_P384_SHA384,
        alg::ED25519,
        alg::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
        alg::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
        alg::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
        alg::RSA_PKCS1_2048_8192_SHA256,
        alg::RSA_PKCS1_2048_8192_SHA384,
        alg::RSA_PKCS1_2048_8192_SHA512,
        alg::RSA_PKCS1_2048_8192_SHA256_ABSENT_PARAMS,
        alg::RSA_PKCS1_2048_8192_SHA384_ABSENT_PARAMS,
        alg::RSA_PKCS1_2048_8192_SHA512_ABSENT_PARAMS,
    ],
    mapping: &[
        // For TLS 1.2 the curve is not fixed by the scheme; for TLS 1.3 it is.
        (
            SignatureScheme::ECDSA_NISTP384_SHA384,
            &[alg::ECDSA_P384_SHA384, alg::ECDSA_P256_SHA384],
        ),
        (
            SignatureScheme::ECDSA_NISTP256_SHA256,
            &[alg::ECDSA_P256_SHA256, alg::ECDSA_P384_SHA256],
        ),
        (SignatureScheme::ED25519, &[alg::ED25519]),
        (
            SignatureScheme::RSA_PSS_SHA512,
            &[alg::RSA_PSS_2048_8192_SHA512_LEGACY_KEY],
        ),
        (
            SignatureScheme::RSA_PSS_SHA384,
            &[alg::RSA_PSS_2048_8192_SHA384_LEGACY_KEY],
        ),
        (
            SignatureScheme::RSA_PSS_SHA256,
            &[alg::RSA_PSS_2048_8192_SHA256_LEGACY_KEY],
        ),
        (
            SignatureScheme::RSA_PKCS1_SHA512,
            &[alg::RSA_PKCS1_2048_8192_SHA512],
        ),
        (
            SignatureScheme::RSA_PKCS1_SHA384,
            &[alg::RSA_PKCS1_2048_8192_SHA384],
        ),
        (
            SignatureScheme::RSA_PKCS1_SHA256,
            &[alg::RSA_PKCS1_2048_8192_SHA256],
        ),
    ],
};

/// The operating system's random numbers, through *ring*.
#[derive(Debug)]
struct SystemRandom;

impl SecureRandom for SystemRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        ring::rand::SystemRandom::new()
            .fill(buf)
            .map_err(|_| GetRandomFailed)
    }
}

/// A key provider for a client that never authenticates with a certificate.
#[derive(Debug)]
struct NoClientKeys;

impl KeyProvider for NoClientKeys {
    fn load_private_key(
        &self,
        _key: rustls::pki_types::PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn rustls::sign::SigningKey>, rustls::Error> {
        Err(rustls::Error::General(
            "client certificates are not supported".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrowed_provider_is_consistent_and_matches_rustls_signatures() {
        let ours = provider();
        // The builder checks that the suites and key exchange groups fit together.
        let built = rustls::ClientConfig::builder_with_provider(Arc::new(provider()))
            .with_safe_default_protocol_versions();
        assert!(built.is_ok());
        let theirs = rustls::crypto::ring::default_provider();
        let schemes = |p: &CryptoProvider| p.signature_verification_algorithms.supported_schemes();
        assert_eq!(schemes(&ours), schemes(&theirs));
        assert!(ours
            .cipher_suites
            .iter()
            .all(|s| theirs.cipher_suites.contains(s)));
        let mut buf = [0u8; 32];
        assert!(ours.secure_random.fill(&mut buf).is_ok());
        assert_ne!(buf, [0u8; 32]);
    }
}
