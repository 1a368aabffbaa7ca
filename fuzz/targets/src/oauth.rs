//! OAuth mode's parsers under arbitrary input: a token's claims judged, the issuer's
//! metadata read, a key set loaded, a token verified against a fixed key set (no input
//! but the three tokens signed with its private keys, now discarded, may verify, and a
//! verified token says only what those said), and the gate under arbitrary requests,
//! documents and times (every request is answered exactly once).
//!
//! The first byte picks the part; the rest is its input.

use responses_mcp_core::oauth::{identity, jwks_uri, BearerToken, Gate, GateStep, OAuthSettings};
use responses_mcp_core::Now;
use serde_json::Value;
use std::time::Duration;

/// Public keys (RSA, P-256, Ed25519) whose private halves signed the corpus's tokens and
/// were thrown away.
const JWKS: &str = r#"{"keys":[{"kty":"RSA","n":"80MZtU8TEYZbtJwF26IvXv4QYvQo8rs5wK9dvMOXPmMjX99nOU9nKirsEpIoT5mPutYeEqz7yP-qj7INTa_BE9ldlu0DSVbyl9gVarnKq0zdghWpOsg-S5EsL5ZrIvqrFrk1GvlavOwmxbDwLWnqFmj4bzwbo8zi2Av02BHuXnusQN8vTUOmmGpWzH6INhTEIGGFSduOGM7p_N8lZofseXvG8Xc92geUeP3ojZ9a-LD5yeedWTFjYBujpv4muv_B6YGplsms7phKDnKsCVcJzmfB60KxwoBgF5-crtLHNbyz_pEZRfGCCXfqXuLJF__8Y1a2sOMcU9wAUKt4-C-Maw","e":"AQAB","kid":"fz-rs256"},{"kty":"EC","x":"FQ6G70h49lIHk0KUTg4L_iS2GLqtmb5kzT0SpBtooLY","y":"o27zYbGK2ednpGq3hzW6O5VaX-sf7rjUKYspWp64nmo","crv":"P-256","kid":"fz-es256"},{"crv":"Ed25519","x":"rpS33Q_AJqsRRitaeLbkrmn5FAb52zN_kh3JAzII9LU","kty":"OKP","kid":"fz-eddsa"}]}"#;

const ISSUER: &str = "https://idp.example";

fn settings() -> OAuthSettings {
    let mut s = OAuthSettings::new(ISSUER, "https://mcp.example/mcp");
    s.scopes = vec!["mcp:answer".into()];
    s
}

pub fn oauth(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match mode % 5 {
        0 => claims(rest),
        1 => {
            if let Ok(uri) = jwks_uri(ISSUER, rest) {
                assert!(uri.starts_with("https://"), "{uri}");
                assert!(!uri.chars().any(|c| c.is_control() || c == ' '));
            }
        }
        2 => {
            let mut v = responses_mcp_host::oauth::verifier();
            if let Ok(n) = v.load(rest) {
                assert!(n > 0);
                let _ = v.verify(&text);
            }
        }
        3 => verify(&text),
        _ => gate(rest),
    }
}

/// Claims that admit a request say what the rules require.
fn claims(bytes: &[u8]) {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let now = 1_800_000_000;
    if let Ok(who) = identity(&settings(), &map, now) {
        assert_eq!(map.get("iss").and_then(Value::as_str), Some(ISSUER));
        assert!(map
            .get("exp")
            .and_then(Value::as_f64)
            .is_some_and(|e| e + 60.0 > now as f64));
        assert!(!who.is_empty() && who.len() <= 256);
    }
}

/// Against the fixed keys, only the signed tokens' claims ever verify.
fn verify(token: &str) {
    let mut v = responses_mcp_host::oauth::verifier();
    assert_eq!(v.load(JWKS.as_bytes()), Ok(3));
    if let Ok(claims) = v.verify(token) {
        let says = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
        assert_eq!(says("sub").as_deref(), Some("alice"), "{claims:?}");
        assert_eq!(says("iss").as_deref(), Some(ISSUER), "{claims:?}");
        assert_eq!(claims.len(), 5, "{claims:?}");
    }
}

/// The gate answers each request once, whatever the documents and times.
fn gate(bytes: &[u8]) {
    let mut g: Gate<usize> = Gate::new(settings(), responses_mcp_host::oauth::verifier());
    let base = responses_mcp_core::testing::start_instant();
    let mut secs = 0u64;
    let mut asked = 0usize;
    let mut answered = vec![0u8; 0];
    let at = |s: u64| Now {
        instant: base + Duration::from_secs(s),
        unix_secs: 1_800_000_000 + s,
    };
    // Documents and tokens are the input's 0xff-separated pieces.
    for piece in bytes.split(|b| *b == 0xff).take(64) {
        let Some((&op, body)) = piece.split_first() else {
            continue;
        };
        match op % 4 {
            0 => {
                if let Some(token) = BearerToken::new(&String::from_utf8_lossy(body)) {
                    g.admit(at(secs), token, asked, body.len() << 16);
                    asked += 1;
                    answered.push(0);
                }
            }
            1 => g.fetched(at(secs), Ok(body.to_vec())),
            2 => g.fetched(at(secs), Err(responses_mcp_core::oauth::FetchError::NoRoom)),
            _ => {
                secs += u64::from(body.first().copied().unwrap_or(1) % 16);
                g.timeout(at(secs));
            }
        }
        drain(&mut g, &mut answered);
        assert!(g.waiting_bytes() <= responses_mcp_core::oauth::MAX_WAITING_BYTES);
    }
    // Long after: nothing still waits.
    g.timeout(at(secs + 3600));
    g.timeout(at(secs + 7200));
    drain(&mut g, &mut answered);
    assert!(answered.iter().all(|n| *n == 1), "{answered:?}");
    // Nothing waits; what is still due is a fetch of the gate's own (a retry, a refresh).
    assert_eq!(g.waiting_bytes(), 0);
}

fn drain(g: &mut Gate<usize>, answered: &mut [u8]) {
    while let Some(step) = g.poll() {
        match step {
            GateStep::Passed(n, _) | GateStep::Refused(n, _) => answered[n] += 1,
            // The metadata may name keys on another https host (Google does).
            GateStep::Fetch(url) => assert!(url.starts_with("https://"), "{url}"),
        }
    }
}
