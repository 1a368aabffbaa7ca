//! The signature check of OAuth mode, with jsonwebtoken (on ring, `signatures.rs`): the
//! provider's key set parsed key by key, and a token verified only under the algorithm
//! its key allows, from RS256, PS256, ES256 and EdDSA. Claims are the core's to judge
//! (its clock, its rules), so nothing else is validated here.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use responses_mcp_core::oauth::{KeySetError, TokenError, TokenVerifier};
use serde_json::{Map, Value};

/// Most keys kept from one set (providers publish a handful).
const MAX_KEYS: usize = 64;

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

/// Tokens remembered as verified, at most; then the memory starts afresh.
const MAX_VERIFIED: usize = 4096;
/// Tokens remembered as refused, at most; then the memory starts afresh.
const MAX_REFUSED: usize = 4096;
/// The longest key id carried into the gate's memory of unpublished keys.
const MAX_KID: usize = 256;

/// The loaded keys, and the tokens they verified (by SHA-256, so that no token is kept),
/// with their claims: a client sends the same token with every request until it
/// expires, and a signature check costs up to half a millisecond (ES256). Tokens these
/// keys refused are remembered too, with why: a forged token sent again costs a hash,
/// not a signature check.
#[derive(Default)]
struct Keys {
    keys: Vec<Key>,
    verified: std::collections::HashMap<[u8; 32], Map<String, Value>>,
    refused: std::collections::HashMap<[u8; 32], String>,
}

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
        // Ed25519 public keys are 32 bytes; a key of another length verifies nothing
        // (and jsonwebtoken's RustCrypto backend panicked on a short one, found by the
        // fuzz target `oauth`), so it is not kept.
        AlgorithmParameters::OctetKeyPair(p)
            if p.curve == EllipticCurve::Ed25519 && is_32_bytes_base64url(&p.x) =>
        {
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

/// Whether `text` is unpadded (or padded) base64url of exactly 32 bytes: 43 characters
/// of its alphabet, the last carrying no bits beyond the 256th.
fn is_32_bytes_base64url(text: &str) -> bool {
    let text = text.strip_suffix('=').unwrap_or(text);
    let alphabet = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    text.len() == 43
        && text.bytes().all(alphabet)
        && text
            .bytes()
            .last()
            .is_some_and(|c| b"AEIMQUYcgkosw048".contains(&c))
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
    fn load(&mut self, jwks: &[u8]) -> Result<usize, KeySetError> {
        // No token is checked before a key set is loaded.
        super::signatures::install();
        let doc: Value = serde_json::from_slice(jwks).map_err(|_| KeySetError::NotJson)?;
        let Some(list) = doc.get("keys").and_then(Value::as_array) else {
            return Err(KeySetError::NoKeys);
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
            return Err(KeySetError::NoSigningKey);
        }
        self.keys = keys;
        // A token is vouched for (or refused) by the keys that checked it, and those
        // just changed.
        self.verified.clear();
        self.refused.clear();
        Ok(self.keys.len())
    }

    fn verify(&mut self, token: &str) -> Result<Map<String, Value>, TokenError> {
        let digest = responses_mcp_core::sha256::sha256(token.as_bytes());
        if let Some(claims) = self.verified.get(&digest) {
            return Ok(claims.clone());
        }
        if let Some(why) = self.refused.get(&digest) {
            return Err(TokenError::Invalid(why.clone()));
        }
        let claims = match self.check(token) {
            Ok(claims) => claims,
            Err(TokenError::Invalid(why)) => {
                if self.refused.len() >= MAX_REFUSED {
                    self.refused.clear();
                }
                self.refused.insert(digest, why.clone());
                return Err(TokenError::Invalid(why));
            }
            // Not remembered: the next key set may hold the key.
            Err(unknown) => return Err(unknown),
        };
        if self.verified.len() >= MAX_VERIFIED {
            self.verified.clear();
        }
        self.verified.insert(digest, claims.clone());
        Ok(claims)
    }
}

impl Keys {
    /// The signature check itself.
    fn check(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
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
            .keys
            .iter()
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .filter(|k| k.algorithms.contains(&header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(match header.kid {
                Some(kid) if kid.len() > MAX_KID => {
                    invalid("its key id is longer than any provider's")
                }
                Some(kid) if !self.keys.iter().any(|k| k.kid.as_deref() == Some(&kid)) => {
                    TokenError::UnknownKey(kid)
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Public keys (RSA, P-256, Ed25519) whose private halves signed [`TOKENS`] and were
    /// thrown away (the fuzz target `oauth` has the same).
    const JWKS: &str = r#"{"keys":[{"kty":"RSA","n":"80MZtU8TEYZbtJwF26IvXv4QYvQo8rs5wK9dvMOXPmMjX99nOU9nKirsEpIoT5mPutYeEqz7yP-qj7INTa_BE9ldlu0DSVbyl9gVarnKq0zdghWpOsg-S5EsL5ZrIvqrFrk1GvlavOwmxbDwLWnqFmj4bzwbo8zi2Av02BHuXnusQN8vTUOmmGpWzH6INhTEIGGFSduOGM7p_N8lZofseXvG8Xc92geUeP3ojZ9a-LD5yeedWTFjYBujpv4muv_B6YGplsms7phKDnKsCVcJzmfB60KxwoBgF5-crtLHNbyz_pEZRfGCCXfqXuLJF__8Y1a2sOMcU9wAUKt4-C-Maw","e":"AQAB","kid":"fz-rs256"},{"kty":"EC","x":"FQ6G70h49lIHk0KUTg4L_iS2GLqtmb5kzT0SpBtooLY","y":"o27zYbGK2ednpGq3hzW6O5VaX-sf7rjUKYspWp64nmo","crv":"P-256","kid":"fz-es256"},{"crv":"Ed25519","x":"rpS33Q_AJqsRRitaeLbkrmn5FAb52zN_kh3JAzII9LU","kty":"OKP","kid":"fz-eddsa"}]}"#;
    const TOKENS: [&str; 3] = [
        "eyJhbGciOiJSUzI1NiIsImtpZCI6ImZ6LXJzMjU2In0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwiYXVkIjoiaHR0cHM6Ly9tY3AuZXhhbXBsZS9tY3AiLCJzdWIiOiJhbGljZSIsImV4cCI6NDEwMjQ0NDgwMCwic2NvcGUiOiJtY3A6YW5zd2VyIn0.3oVdqeaJynXSS7ucN03Y3fkuIVcPU5C1SeERLm3hOZRJrijjbDRYNg3LKuZffx5UgPLfbefceZrV9Moe5hYiusKnlxAaABGKl9nZs5S9iXOBqVsPebkBv28qG_ejKLhMJHRLHq1EmY7tcM7ylDNI6CwxO8Nx1QurbptkNHPeMQTLhEU0d4y9S3fO8BMv3KtAut-PI-fsvhtqzfp2wk6BhPsw8bsCx4Gp4dyAA4IEEWIDY5BsYLn90RgEggmBgk9kC7LOEyMsjGIsFaIQVDTcUhfezUrwP-mLb8KtxxyZX87uggAb4gHPNgieRdTJRRPp-mSHEtUqFBl4VxuYUEAKSA",
        "eyJhbGciOiJFUzI1NiIsImtpZCI6ImZ6LWVzMjU2In0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwiYXVkIjoiaHR0cHM6Ly9tY3AuZXhhbXBsZS9tY3AiLCJzdWIiOiJhbGljZSIsImV4cCI6NDEwMjQ0NDgwMCwic2NvcGUiOiJtY3A6YW5zd2VyIn0.0UImsSz0f3EWQM32qQk5wSG7oZKtUyed8tCBC_Viv_WL7FKg9jKHvp_aLLMx6NS6jLgKOqmpLGmaRVL15oqlzQ",
        "eyJhbGciOiJFZERTQSIsImtpZCI6ImZ6LWVkZHNhIn0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwiYXVkIjoiaHR0cHM6Ly9tY3AuZXhhbXBsZS9tY3AiLCJzdWIiOiJhbGljZSIsImV4cCI6NDEwMjQ0NDgwMCwic2NvcGUiOiJtY3A6YW5zd2VyIn0.77SjcYZJfoEobQNGS17ESPUWTFGX_XwmKYYkZWNHkzRUSa3ONi5DAmaMJ1QqBhtHXcg4GlBcl_wdsqYE7V_zDw",
    ];

    #[test]
    fn each_algorithm_verifies_and_a_changed_byte_does_not() {
        let mut keys = Keys::default();
        assert_eq!(keys.load(JWKS.as_bytes()), Ok(3));
        for token in TOKENS {
            let claims = keys.verify(token).unwrap();
            assert_eq!(claims["sub"], "alice");
            // Remembered: the same answer without a second check.
            assert!(keys.verified.len() <= 3);
            assert_eq!(keys.verify(token).unwrap(), claims);
            let (head, rest) = token.split_once('.').unwrap();
            let (payload, signature) = rest.split_once('.').unwrap();
            let mut forged = payload.to_owned();
            forged.replace_range(10..11, if &payload[10..11] == "A" { "B" } else { "A" });
            let tampered = format!("{head}.{forged}.{signature}");
            assert!(matches!(
                keys.verify(&tampered),
                Err(TokenError::Invalid(_))
            ));
        }
        assert_eq!(keys.verified.len(), 3);
        // New keys forget what the old ones vouched for.
        assert_eq!(keys.load(JWKS.as_bytes()), Ok(3));
        assert!(keys.verified.is_empty());
    }

    #[test]
    fn an_ed25519_key_of_another_length_is_not_kept() {
        let mut keys = Keys::default();
        let short = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAAAAAAAAAAAA","kid":"e"}]}"#;
        assert!(keys.load(short).is_err());
        let long = format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{}","kid":"e"}}]}}"#,
            "A".repeat(44)
        );
        assert!(keys.load(long.as_bytes()).is_err());
        assert!(is_32_bytes_base64url(&"A".repeat(43)));
        assert!(!is_32_bytes_base64url(&format!("{}B", "A".repeat(42))));
    }

    #[test]
    fn foreign_keys_and_algorithms_are_refused() {
        let mut keys = Keys::default();
        assert!(keys
            .load(br#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"m"}]}"#)
            .is_err());
        assert!(keys.load(b"[]").is_err());
        assert_eq!(keys.load(JWKS.as_bytes()), Ok(3));
        // alg none, and a token naming a key the set lacks.
        let none = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.";
        assert!(matches!(keys.verify(none), Err(TokenError::Invalid(_))));
        let (_, rest) = TOKENS[0].split_once('.').unwrap();
        let unknown = format!("{}.{rest}", b64(r#"{"alg":"RS256","kid":"gone"}"#));
        assert_eq!(
            keys.verify(&unknown),
            Err(TokenError::UnknownKey("gone".into()))
        );
        let hs = format!("{}.{rest}", b64(r#"{"alg":"HS256","kid":"fz-rs256"}"#));
        assert!(
            matches!(keys.verify(&hs), Err(TokenError::Invalid(why)) if why.contains("not accepted"))
        );
    }

    #[test]
    fn a_refused_token_is_remembered_until_the_keys_change() {
        let mut keys = Keys::default();
        assert_eq!(keys.load(JWKS.as_bytes()), Ok(3));
        let (head, rest) = TOKENS[1].split_once('.').unwrap();
        let (payload, _) = rest.split_once('.').unwrap();
        let forged = format!("{head}.{payload}.{}", "A".repeat(86));
        let first = keys.verify(&forged);
        assert!(matches!(&first, Err(TokenError::Invalid(why)) if why.contains("signature")));
        assert_eq!(keys.refused.len(), 1);
        // Sent again: the same answer from memory.
        assert_eq!(keys.verify(&forged), first);
        assert_eq!(keys.refused.len(), 1);
        // An unknown key is never remembered as refused: the next set may hold it.
        let unknown = format!("{}.{rest}", b64(r#"{"alg":"ES256","kid":"later"}"#));
        assert!(matches!(
            keys.verify(&unknown),
            Err(TokenError::UnknownKey(_))
        ));
        assert_eq!(keys.refused.len(), 1);
        assert_eq!(keys.load(JWKS.as_bytes()), Ok(3));
        assert!(keys.refused.is_empty());
        let long = format!(
            "{}.{rest}",
            b64(&format!(r#"{{"alg":"ES256","kid":"{}"}}"#, "k".repeat(300)))
        );
        assert!(matches!(keys.verify(&long), Err(TokenError::Invalid(_))));
    }

    fn b64(text: &str) -> String {
        const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in text.as_bytes().chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(char::from(T[(n >> (18 - 6 * i) & 63) as usize]));
            }
        }
        out
    }
}
