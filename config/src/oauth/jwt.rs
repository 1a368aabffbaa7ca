//! The signature check of OAuth mode, with jsonwebtoken (RustCrypto's verifiers): the
//! provider's key set parsed key by key, and a token verified only under the algorithm
//! its key allows, from RS256, PS256, ES256 and EdDSA. Claims are the core's to judge
//! (its clock, its rules), so nothing else is validated here.

use crate::error::ConfigError;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use responses_mcp_core::oauth::{TokenError, TokenVerifier};
use serde_json::{Map, Value};

/// Most keys kept from one set (providers publish a handful).
const MAX_KEYS: usize = 64;

/// This build has OAuth mode.
///
/// # Errors
/// Never.
#[allow(clippy::unnecessary_wraps)]
pub fn available() -> Result<(), ConfigError> {
    Ok(())
}

/// A verifier with no keys yet.
pub fn verifier() -> Box<dyn TokenVerifier> {
    Box::new(Keys::default())
}

/// One usable key.
struct Key {
    kid: Option<String>,
    /// The algorithms it may verify: its family's within the allow-list, or only the
    /// one its `alg` names.
    algorithms: Vec<Algorithm>,
    key: DecodingKey,
}

/// The loaded keys.
#[derive(Default)]
struct Keys(Vec<Key>);

/// The algorithms `jwk` may verify under, from the allow-list; none for a key of another
/// type, use or curve.
fn algorithms(jwk: &Jwk) -> Vec<Algorithm> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return Vec::new();
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![Algorithm::RS256, Algorithm::PS256],
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => {
            vec![Algorithm::ES256]
        }
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            vec![Algorithm::EdDSA]
        }
        // A shared secret (`oct`) never verifies a token here: a public document
        // cannot hold a MAC key, and an HMAC under a public key is the classic forgery.
        _ => return Vec::new(),
    };
    match jwk.common.key_algorithm {
        None => family,
        Some(named) => family
            .into_iter()
            .filter(|alg| key_algorithm(*alg) == Some(named))
            .collect(),
    }
}

/// The JWK `alg` value of an algorithm of the allow-list.
fn key_algorithm(alg: Algorithm) -> Option<KeyAlgorithm> {
    Some(match alg {
        Algorithm::RS256 => KeyAlgorithm::RS256,
        Algorithm::PS256 => KeyAlgorithm::PS256,
        Algorithm::ES256 => KeyAlgorithm::ES256,
        Algorithm::EdDSA => KeyAlgorithm::EdDSA,
        _ => return None,
    })
}

impl TokenVerifier for Keys {
    fn load(&mut self, jwks: &[u8]) -> Result<usize, String> {
        let doc: Value =
            serde_json::from_slice(jwks).map_err(|_| "the key set is not JSON".to_owned())?;
        let Some(list) = doc.get("keys").and_then(Value::as_array) else {
            return Err("the key set has no keys array".into());
        };
        // Key by key: one key of a type this crate does not know spoils nothing else.
        let mut keys = Vec::new();
        for value in list.iter().take(MAX_KEYS) {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            let algorithms = algorithms(&jwk);
            if algorithms.is_empty() {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            keys.push(Key {
                kid: jwk.common.key_id.clone(),
                algorithms,
                key,
            });
        }
        if keys.is_empty() {
            return Err("the key set holds no signing key for RS256, PS256, ES256 or EdDSA".into());
        }
        self.0 = keys;
        Ok(self.0.len())
    }

    fn verify(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        let header = decode_header(token)
            .map_err(|_| invalid("it is not a JWT signed with RS256, PS256, ES256 or EdDSA"))?;
        if key_algorithm(header.alg).is_none() {
            return Err(invalid(&format!(
                "its algorithm {:?} is not accepted (RS256, PS256, ES256 or EdDSA only)",
                header.alg
            )));
        }
        let candidates: Vec<&Key> = self
            .0
            .iter()
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .filter(|k| k.algorithms.contains(&header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(match header.kid {
                Some(_) if !self.0.iter().any(|k| k.kid == header.kid) => TokenError::UnknownKey,
                _ => invalid("no key of the identity provider verifies its algorithm"),
            });
        }
        let mut validation = Validation::new(header.alg);
        // The core judges the claims with its own clock and rules.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        for key in candidates {
            if let Ok(data) = decode::<Map<String, Value>>(token, &key.key, &validation) {
                return Ok(data.claims);
            }
        }
        Err(invalid("its signature does not verify"))
    }
}
