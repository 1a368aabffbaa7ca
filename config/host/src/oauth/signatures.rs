//! jsonwebtoken's signature checks on ring, the cryptography the binaries already link for
//! TLS: a `CryptoProvider` (jsonwebtoken's extension point for a backend) whose verifiers
//! hand the message, the signature and the key to `ring::signature`. Everything else of
//! JOSE (the compact form, base64url, headers, JWKs) stays jsonwebtoken's; nothing here is
//! cryptography of our own. The server only verifies, so signing and the JWK helpers that
//! derive a public key from a private one refuse.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::jwk::ThumbprintHash;
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature as ring_sig;
use std::sync::Once;

/// The provider, installed once per process by [`install`].
static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: |_| Err(no_private_keys()),
        rsa_pub_components_from_public_key: |_| Err(no_private_keys()),
        ec_pub_components_from_private_key: |_, _| Err(no_private_keys()),
        ed_pub_components_from_private_key: |_, _| Err(no_private_keys()),
        compute_digest: digest,
    },
};

/// Makes ring jsonwebtoken's backend for this process. jsonwebtoken is built without a
/// backend of its own, so there is no other to race with; every verifier calls this
/// before its first check.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err only if a provider is already installed, which in this process is this one.
        let _ = PROVIDER.install_default();
    });
}

/// The server never signs a token.
fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::InvalidAlgorithm.into())
}

/// The JWK helpers that read private keys: never needed to verify.
fn no_private_keys() -> Error {
    ErrorKind::InvalidKeyFormat.into()
}

/// A JWK thumbprint's digest.
fn digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>, Error> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &ring::digest::SHA256,
        ThumbprintHash::SHA384 => &ring::digest::SHA384,
        ThumbprintHash::SHA512 => &ring::digest::SHA512,
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    Ok(ring::digest::digest(algorithm, data).as_ref().to_vec())
}

/// The verifier of `algorithm` under `key`: RSA PKCS#1 v1.5 and PSS (2048 to 8192 bits),
/// ECDSA P-256 and P-384, Ed25519. HMAC is refused: a key published in a JWKS is public.
fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    let scheme = Scheme::of(*algorithm).ok_or(ErrorKind::InvalidAlgorithm)?;
    if key.family() != algorithm.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let key = match (scheme, key.kind()) {
        (Scheme::Rsa(params), DecodingKeyKind::RsaModulusExponent { n, e }) => RingKey::Rsa {
            params,
            n: minimal(n).to_vec(),
            e: minimal(e).to_vec(),
        },
        (Scheme::Rsa(params), DecodingKeyKind::SecretOrDer(der)) => RingKey::Bytes {
            algorithm: params,
            bytes: der.clone(),
        },
        // An EC key is the uncompressed point (0x04 ‖ x ‖ y), an Ed25519 key its 32 bytes.
        (Scheme::Other(algorithm), DecodingKeyKind::SecretOrDer(bytes)) => RingKey::Bytes {
            algorithm,
            bytes: bytes.clone(),
        },
        (Scheme::Other(_), DecodingKeyKind::RsaModulusExponent { .. }) => {
            return Err(ErrorKind::InvalidKeyFormat.into())
        }
    };
    Ok(Box::new(RingVerifier {
        algorithm: *algorithm,
        key,
    }))
}

/// `bytes` without leading zero octets: RFC 7518 forbids them in `n` and `e`, some
/// providers write them anyway, and ring reads only the minimal form.
fn minimal(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

/// ring's verification algorithm for a JWS algorithm.
#[derive(Clone, Copy)]
enum Scheme {
    Rsa(&'static ring_sig::RsaParameters),
    Other(&'static dyn ring_sig::VerificationAlgorithm),
}

impl Scheme {
    fn of(algorithm: Algorithm) -> Option<Scheme> {
        Some(match algorithm {
            Algorithm::RS256 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA256),
            Algorithm::RS384 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA384),
            Algorithm::RS512 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA512),
            Algorithm::PS256 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA256),
            Algorithm::PS384 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA384),
            Algorithm::PS512 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA512),
            // JWS carries ECDSA signatures as r ‖ s, ring's "fixed" form.
            Algorithm::ES256 => Scheme::Other(&ring_sig::ECDSA_P256_SHA256_FIXED),
            Algorithm::ES384 => Scheme::Other(&ring_sig::ECDSA_P384_SHA384_FIXED),
            Algorithm::EdDSA => Scheme::Other(&ring_sig::ED25519),
            // HMAC, and whatever a later jsonwebtoken adds.
            _ => return None,
        })
    }
}

/// A public key with the algorithm ring checks it under.
enum RingKey {
    /// RSA as a JWK gives it: its modulus and exponent.
    Rsa {
        params: &'static ring_sig::RsaParameters,
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// Bytes ring parses itself: an RSAPublicKey DER, an uncompressed EC point, or
    /// Ed25519's 32 bytes.
    Bytes {
        algorithm: &'static dyn ring_sig::VerificationAlgorithm,
        bytes: Vec<u8>,
    },
}

struct RingVerifier {
    algorithm: Algorithm,
    key: RingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], sig: &Vec<u8>) -> Result<(), signature::Error> {
        let checked = match &self.key {
            RingKey::Rsa { params, n, e } => {
                ring_sig::RsaPublicKeyComponents { n, e }.verify(params, message, sig)
            }
            RingKey::Bytes { algorithm, bytes } => {
                ring_sig::UnparsedPublicKey::new(*algorithm, bytes).verify(message, sig)
            }
        };
        checked.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_and_signing_are_refused() {
        let key = DecodingKey::from_secret(b"shared");
        assert!(verifier(&Algorithm::HS256, &key).is_err());
        assert!(no_signer(&Algorithm::RS256, &EncodingKey::from_secret(b"s")).is_err());
        // A key of one family never verifies under another's algorithm.
        let ed = DecodingKey::from_ed_der(&[0; 32]);
        assert!(verifier(&Algorithm::ES256, &ed).is_err());
        assert!(verifier(&Algorithm::EdDSA, &ed).is_ok());
    }

    #[test]
    fn leading_zeros_are_dropped() {
        assert_eq!(minimal(&[0, 0, 1, 0]), &[1, 0]);
        assert_eq!(minimal(&[0, 0]), &[] as &[u8]);
        assert_eq!(minimal(&[]), &[] as &[u8]);
    }

    #[test]
    fn thumbprint_digests_are_ring_s() {
        let sha = digest(b"abc", ThumbprintHash::SHA256).unwrap_or_default();
        assert_eq!(sha[..4], [0xba, 0x78, 0x16, 0xbf]);
    }
}
