//! What a verified token's claims decide (RFC 9068, section 4; RFC 8707): whether it is
//! for this server, now, with the scopes it needs, and who holds it.

use super::settings::OAuthSettings;
use serde_json::{Map, Value};

/// Longest identity a token may name, in bytes (it becomes a label and a store key).
const MAX_IDENTITY: usize = 256;

/// Why verified claims do not admit a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenRejection {
    /// Not for this server, not now, or without an identity (401 `invalid_token`).
    Invalid(String),
    /// Valid, but without these required scopes (403 `insufficient_scope`).
    Scope(Vec<String>),
}

/// The caller `claims` name, when they admit a request at `now` (Unix seconds):
/// `iss` exactly the issuer, `aud` one of the accepted audiences, `exp` (required) and
/// `nbf` (when present) numbers around `now` within the leeway, every required scope,
/// and the identity claim a short string. A claim of the wrong type is a rejection,
/// never an absent claim.
///
/// # Errors
/// See [`TokenRejection`].
pub fn identity(
    settings: &OAuthSettings,
    claims: &Map<String, Value>,
    now: u64,
) -> Result<String, TokenRejection> {
    let invalid = |why: String| Err(TokenRejection::Invalid(why));
    if claims.get("iss").and_then(Value::as_str) != Some(settings.issuer.as_str()) {
        return invalid(format!(
            "the token was not issued by {} (its iss differs)",
            settings.issuer
        ));
    }
    let for_us = match claims.get("aud") {
        Some(Value::String(aud)) => settings.accepted_audiences().iter().any(|a| a == aud),
        Some(Value::Array(auds)) => auds
            .iter()
            .filter_map(Value::as_str)
            .any(|aud| settings.accepted_audiences().iter().any(|a| a == aud)),
        _ => false,
    };
    if !for_us {
        return invalid(format!(
            "the token is not for this server: its aud must name {} (ask for it with resource={})",
            settings.accepted_audiences().join(" or "),
            settings.resource
        ));
    }
    let leeway = settings.leeway_secs;
    let Some(exp) = claims.get("exp").and_then(seconds) else {
        return invalid("the token has no numeric exp".into());
    };
    if now >= exp.saturating_add(leeway) {
        return invalid("the token has expired: get a new one".into());
    }
    match claims.get("nbf") {
        None => {}
        Some(nbf) => match seconds(nbf) {
            Some(nbf) if nbf <= now.saturating_add(leeway) => {}
            Some(_) => return invalid("the token is not valid yet (nbf)".into()),
            None => return invalid("the token's nbf is not a number".into()),
        },
    }
    let granted = granted_scopes(claims);
    let missing: Vec<String> = settings
        .scopes
        .iter()
        .filter(|s| !granted.contains(&s.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(TokenRejection::Scope(missing));
    }
    let claim = &settings.identity_claim;
    match claims.get(claim.as_str()) {
        Some(Value::String(who))
            if !who.is_empty()
                && who.len() <= MAX_IDENTITY
                && !who.chars().any(char::is_control) =>
        {
            Ok(who.clone())
        }
        _ => invalid(format!(
            "the token names no caller: its {claim} claim must be a string of 1 to {MAX_IDENTITY} bytes"
        )),
    }
}

/// A NumericDate (RFC 7519, 2): seconds since the epoch, possibly fractional; never
/// negative here.
fn seconds(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // Truncation is meant: a fraction of a second changes nothing at this leeway.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (f.is_finite() && f >= 0.0).then(|| f.min(u64::MAX as f64) as u64)
}

/// The scopes a token grants: RFC 9068's `scope` (space-separated), or `scp` as Entra ID
/// (a string) and Okta (an array) write it.
fn granted_scopes(claims: &Map<String, Value>) -> Vec<&str> {
    let mut granted = Vec::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => granted.extend(s.split(' ').filter(|s| !s.is_empty())),
            Some(Value::Array(items)) => granted.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    granted
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_800_000_000;

    fn settings() -> OAuthSettings {
        let mut s = OAuthSettings::new("https://idp.example/", "https://mcp.example/mcp");
        s.scopes = vec!["mcp:answer".into()];
        s
    }

    fn claims(edit: impl FnOnce(&mut Value)) -> Map<String, Value> {
        let mut v = json!({
            "iss": "https://idp.example/", "aud": "https://mcp.example/mcp",
            "exp": NOW + 300, "nbf": NOW - 5, "sub": "alice", "scope": "openid mcp:answer",
        });
        edit(&mut v);
        match v {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn invalid(r: Result<String, TokenRejection>) -> String {
        match r {
            Err(TokenRejection::Invalid(why)) => why,
            other => format!("not invalid: {other:?}"),
        }
    }

    #[test]
    fn a_token_for_this_server_names_its_subject() {
        assert_eq!(
            identity(&settings(), &claims(|_| {}), NOW),
            Ok("alice".into())
        );
        let array_aud = claims(|v| v["aud"] = json!(["other", "https://mcp.example/mcp"]));
        assert_eq!(identity(&settings(), &array_aud, NOW), Ok("alice".into()));
        let okta = claims(|v| {
            v.as_object_mut().map(|m| m.remove("scope"));
            v["scp"] = json!(["mcp:answer"]);
        });
        assert_eq!(identity(&settings(), &okta, NOW), Ok("alice".into()));
        let mut machine = settings();
        machine.identity_claim = "client_id".into();
        let c = claims(|v| v["client_id"] = json!("ci-bot"));
        assert_eq!(identity(&machine, &c, NOW), Ok("ci-bot".into()));
    }

    #[test]
    fn issuer_audience_and_lifetime_are_exact() {
        let s = settings();
        assert!(invalid(identity(
            &s,
            &claims(|v| v["iss"] = json!("https://idp.example")),
            NOW
        ))
        .contains("not issued by"));
        assert!(invalid(identity(
            &s,
            &claims(|v| v["aud"] = json!("https://other/mcp")),
            NOW
        ))
        .contains("resource=https://mcp.example/mcp"));
        assert!(invalid(identity(&s, &claims(|v| v["aud"] = json!(7)), NOW))
            .contains("not for this server"));
        // Expired beyond the leeway; inside it still admitted.
        assert!(
            invalid(identity(&s, &claims(|v| v["exp"] = json!(NOW - 61)), NOW)).contains("expired")
        );
        assert!(identity(&s, &claims(|v| v["exp"] = json!(NOW - 30)), NOW).is_ok());
        // The type confusion of CVE-2026-25537: a string is no absent claim.
        assert!(invalid(identity(
            &s,
            &claims(|v| v["exp"] = json!("99999999999")),
            NOW
        ))
        .contains("no numeric exp"));
        assert!(
            invalid(identity(&s, &claims(|v| v["nbf"] = json!("0")), NOW))
                .contains("nbf is not a number")
        );
        assert!(
            invalid(identity(&s, &claims(|v| v["nbf"] = json!(NOW + 3600)), NOW))
                .contains("not valid yet")
        );
        let no_exp = claims(|v| {
            v.as_object_mut().map(|m| m.remove("exp"));
        });
        assert!(invalid(identity(&s, &no_exp, NOW)).contains("no numeric exp"));
        assert!(identity(&s, &claims(|v| v["exp"] = json!(NOW as f64 + 10.5)), NOW).is_ok());
    }

    #[test]
    fn a_missing_scope_is_named_and_the_identity_is_checked() {
        let s = settings();
        assert_eq!(
            identity(&s, &claims(|v| v["scope"] = json!("openid")), NOW),
            Err(TokenRejection::Scope(vec!["mcp:answer".into()]))
        );
        assert!(
            invalid(identity(&s, &claims(|v| v["sub"] = json!(42)), NOW)).contains("sub claim")
        );
        assert!(
            invalid(identity(&s, &claims(|v| v["sub"] = json!("a\nb")), NOW)).contains("sub claim")
        );
        assert!(invalid(identity(
            &s,
            &claims(|v| v["sub"] = json!("x".repeat(257))),
            NOW
        ))
        .contains("sub claim"));
    }
}
