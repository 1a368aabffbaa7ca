use super::*;
use crate::oauth::token::KeySetError;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Tokens are `<kid>.<claims JSON>`; a key set is the list of kids, as JSON.
struct Fake(Vec<String>);

impl TokenVerifier for Fake {
    fn load(&mut self, jwks: &[u8]) -> Result<usize, KeySetError> {
        let kids: Vec<String> = serde_json::from_slice(jwks).map_err(|_| KeySetError::NotJson)?;
        self.0 = kids;
        Ok(self.0.len())
    }
    fn verify(&mut self, token: &str) -> Result<Map<String, Value>, TokenError> {
        let (kid, claims) = token
            .split_once('.')
            .ok_or(TokenError::Invalid("malformed".into()))?;
        if !self.0.iter().any(|k| k == kid) {
            return Err(TokenError::UnknownKey(kid.to_owned()));
        }
        serde_json::from_str(claims).map_err(|_| TokenError::Invalid("bad claims".into()))
    }
}

/// A fetch that failed saying `why`.
fn failed<T>(why: &str) -> Result<T, FetchError> {
    let failure = crate::openai::UpstreamFailure::local(crate::openai::FailureKind::Connect, why);
    Err(FetchError::Upstream(failure))
}

const ISSUER: &str = "http://127.0.0.1:9/idp";
const T0: u64 = 1_800_000_000;

fn gate() -> Gate<u32> {
    let settings = OAuthSettings::new(ISSUER, "http://127.0.0.1:8/mcp");
    Gate::new(settings, Box::new(Fake(Vec::new())))
}

fn token(kid: &str, sub: &str) -> BearerToken {
    let claims =
        json!({"iss": ISSUER, "aud": "http://127.0.0.1:8/mcp", "exp": T0 + 300, "sub": sub});
    BearerToken::new(&format!("{kid}.{claims}")).unwrap_or_else(|| unreachable!())
}

fn at(base: Instant, secs: u64) -> Now {
    Now {
        instant: base + Duration::from_secs(secs),
        unix_secs: T0 + secs,
    }
}

fn steps(gate: &mut Gate<u32>) -> Vec<GateStep<u32>> {
    std::iter::from_fn(|| gate.poll()).collect()
}

fn metadata() -> Vec<u8> {
    json!({"issuer": ISSUER, "jwks_uri": "http://127.0.0.1:9/idp/jwks"})
        .to_string()
        .into_bytes()
}

fn fetch(url: &str) -> GateStep<u32> {
    GateStep::Fetch(url.into())
}

#[test]
fn the_first_request_waits_for_discovery_and_keys_then_passes() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.start(at(base, 0));
    assert_eq!(
        steps(&mut g),
        [fetch(
            "http://127.0.0.1:9/idp/.well-known/openid-configuration"
        )]
    );
    assert!(g.not_ready().is_some_and(|w| w.contains("not fetched yet")));
    g.admit(at(base, 0), token("k1", "alice"), 1, 100);
    assert_eq!(steps(&mut g), []);
    // The OpenID path is missing: RFC 8414's is tried next.
    g.fetched(at(base, 0), failed("HTTP 404"));
    assert_eq!(
        steps(&mut g),
        [fetch(
            "http://127.0.0.1:9/.well-known/oauth-authorization-server/idp"
        )]
    );
    g.fetched(at(base, 0), Ok(metadata()));
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 1), Ok(br#"["k1"]"#.to_vec()));
    assert_eq!(
        steps(&mut g),
        [GateStep::Passed(
            1,
            Passed {
                identity: "alice".into()
            }
        )]
    );
    assert_eq!(g.not_ready(), None);
    // Nothing waits; the keys are read again on their own when they grow old.
    let refresh = g.settings().refresh_every;
    assert_eq!(
        g.poll_timeout(),
        Some(base + Duration::from_secs(1) + refresh)
    );
}

#[test]
fn an_unknown_key_refetches_at_most_once_per_interval() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.start(at(base, 0));
    g.fetched(at(base, 0), Ok(metadata()));
    g.fetched(at(base, 0), Ok(br#"["k1"]"#.to_vec()));
    steps(&mut g);
    // Rotated: k2 is new. Too soon after the last fetch: the requests wait for the
    // interval's end, then one fetch of the keys (the metadata is known) serves both.
    g.admit(at(base, 1), token("k2", "bob"), 3, 100);
    g.admit(at(base, 2), token("k2", "carol"), 4, 100);
    assert_eq!(steps(&mut g), []);
    assert_eq!(g.poll_timeout(), Some(base + Duration::from_secs(5)));
    g.timeout(at(base, 5));
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 5), Ok(br#"["k2"]"#.to_vec()));
    let passed = |n, who: &str| {
        GateStep::Passed(
            n,
            Passed {
                identity: who.into(),
            },
        )
    };
    assert_eq!(steps(&mut g), [passed(3, "bob"), passed(4, "carol")]);
    // A forged kid right after: refused once the next fetch shows it is not published.
    g.admit(at(base, 6), token("k9", "mallory"), 2, 100);
    g.timeout(at(base, 10));
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 10), Ok(br#"["k2"]"#.to_vec()));
    let refused = steps(&mut g);
    assert!(
        matches!(&refused[..], [GateStep::Refused(2, d)] if d.status == 401 && d.message.contains("does not publish")),
        "{refused:?}"
    );
    // The withdrawn key no longer verifies, and a forged kid after a refetch is refused.
    g.admit(at(base, 20), token("k1", "alice"), 5, 100);
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 20), Ok(br#"["k2"]"#.to_vec()));
    assert!(matches!(&steps(&mut g)[..], [GateStep::Refused(5, d)] if d.status == 401));
}

#[test]
fn a_silent_or_failing_provider_is_a_bounded_503() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.admit(at(base, 0), token("k1", "alice"), 1, 100);
    assert_eq!(steps(&mut g).len(), 1);
    assert_eq!(g.poll_timeout(), Some(base + Duration::from_secs(5)));
    g.timeout(at(base, 4));
    assert_eq!(steps(&mut g), []);
    g.timeout(at(base, 5));
    let refused = steps(&mut g);
    assert!(
        matches!(&refused[..], [GateStep::Refused(1, d)] if d.status == 503 && d.challenge.is_none() && d.message.contains("did not answer within 5 s")),
        "{refused:?}"
    );
    assert!(g.not_ready().is_some_and(|w| w.contains("did not answer")));
    // Both metadata URLs fail: whoever waits hears why, and /ready says it.
    g.admit(at(base, 6), token("k1", "alice"), 2, 100);
    // (The fetch started at 0 is still the one in flight: the request joins it.)
    g.fetched(at(base, 6), failed("connection refused"));
    assert_eq!(
        steps(&mut g),
        [fetch(
            "http://127.0.0.1:9/.well-known/oauth-authorization-server/idp"
        )]
    );
    g.fetched(at(base, 6), failed("connection refused"));
    let refused = steps(&mut g);
    assert!(
        matches!(&refused[..], [GateStep::Refused(2, d)] if d.status == 503 && d.message.contains("connection refused")),
        "{refused:?}"
    );
    // Within the interval: the request waits for the next fetch, due when it ends.
    g.admit(at(base, 7), token("k1", "alice"), 3, 100);
    assert_eq!(steps(&mut g), []);
    g.timeout(at(base, 11));
    assert_eq!(
        steps(&mut g),
        [fetch(
            "http://127.0.0.1:9/idp/.well-known/openid-configuration"
        )]
    );
    // Later it works again.
    g.admit(at(base, 12), token("k1", "alice"), 4, 100);
    g.forget(|p| *p == 99);
    g.fetched(at(base, 12), Ok(metadata()));
    g.fetched(at(base, 12), Ok(br#"["k1"]"#.to_vec()));
    let passed = steps(&mut g);
    assert_eq!(
        passed.last(),
        Some(&GateStep::Passed(
            4,
            Passed {
                identity: "alice".into()
            }
        ))
    );
    assert_eq!(g.not_ready(), None);
}

#[test]
fn metadata_for_another_issuer_and_bad_claims_are_refused() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.admit(at(base, 0), token("k1", "alice"), 1, 100);
    steps(&mut g);
    g.fetched(
        at(base, 0),
        Ok(br#"{"issuer":"http://evil","jwks_uri":"http://evil/jwks"}"#.to_vec()),
    );
    let refused = steps(&mut g);
    assert!(
        matches!(&refused[..], [GateStep::Refused(1, d)] if d.message.contains("another issuer")),
        "{refused:?}"
    );
    g.admit(at(base, 10), token("k1", "alice"), 2, 100);
    g.fetched(at(base, 10), Ok(metadata()));
    g.fetched(at(base, 10), Ok(br#"["k1"]"#.to_vec()));
    steps(&mut g);
    let expired =
        json!({"iss": ISSUER, "aud": "http://127.0.0.1:8/mcp", "exp": T0 - 100, "sub": "a"});
    g.admit(
        at(base, 10),
        BearerToken::new(&format!("k1.{expired}")).unwrap_or_else(|| unreachable!()),
        3,
        100,
    );
    let refused = steps(&mut g);
    assert!(
        matches!(&refused[..], [GateStep::Refused(3, d)] if d.status == 401 && d.challenge.as_deref().is_some_and(|c| c.contains("error=\"invalid_token\"")) && d.message.contains("expired")),
        "{refused:?}"
    );
    g.admit(
        at(base, 10),
        BearerToken::new("k1.not json").unwrap_or_else(|| unreachable!()),
        4,
        100,
    );
    assert!(matches!(&steps(&mut g)[..], [GateStep::Refused(4, d)] if d.status == 401));
    assert_eq!(format!("{:?}", token("k1", "alice")), "BearerToken(***)");
}

#[test]
fn a_failed_fetch_is_retried_by_itself_and_readiness_comes_back() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.start(at(base, 0));
    steps(&mut g);
    g.fetched(at(base, 0), failed("connection refused"));
    steps(&mut g);
    g.fetched(at(base, 0), failed("connection refused"));
    assert!(g.not_ready().is_some());
    // No request comes: the retries come by themselves, each later than the last, never
    // more than 15 s apart.
    let mut last = base;
    let mut gaps = Vec::new();
    for _ in 0..6 {
        let due = g.poll_timeout().expect("a retry is due");
        gaps.push(due.saturating_duration_since(last).as_secs());
        let now = Now {
            instant: due,
            unix_secs: T0 + due.saturating_duration_since(base).as_secs(),
        };
        g.timeout(now);
        assert_eq!(steps(&mut g).len(), 1, "one fetch");
        g.fetched(now, failed("connection refused"));
        steps(&mut g);
        g.fetched(now, failed("connection refused"));
        last = due;
    }
    assert_eq!(gaps, [5, 10, 15, 15, 15, 15]);
    // The provider is back: the next retry loads the keys and /ready is ready.
    let due = g.poll_timeout().expect("a retry is due");
    let now = Now {
        instant: due,
        unix_secs: T0 + due.saturating_duration_since(base).as_secs(),
    };
    g.timeout(now);
    steps(&mut g);
    g.fetched(now, Ok(metadata()));
    steps(&mut g);
    g.fetched(now, Ok(br#"["k1"]"#.to_vec()));
    assert_eq!((g.not_ready(), g.degraded()), (None, None));
    // Later the provider fails a refresh: the keys in hand still serve (ready, degraded).
    let later = Now {
        instant: due + g.settings().refresh_every,
        unix_secs: now.unix_secs + g.settings().refresh_every.as_secs(),
    };
    g.timeout(later);
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(later, failed("HTTP 502"));
    assert_eq!(g.not_ready(), None);
    assert!(g.degraded().is_some_and(|why| why.contains("HTTP 502")));
    let claims = json!({"iss": ISSUER, "aud": "http://127.0.0.1:8/mcp", "exp": later.unix_secs + 300, "sub": "alice"});
    let fresh = BearerToken::new(&format!("k1.{claims}")).unwrap_or_else(|| unreachable!());
    g.admit(later, fresh, 7, 100);
    let passed = steps(&mut g);
    assert!(
        matches!(&passed[..], [GateStep::Passed(7, _)]),
        "{passed:?}"
    );
}

#[test]
fn a_key_id_the_latest_set_lacks_is_refused_at_once_until_the_next_fetch() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    g.start(at(base, 0));
    g.fetched(at(base, 0), Ok(metadata()));
    g.fetched(at(base, 0), Ok(br#"["k1"]"#.to_vec()));
    steps(&mut g);
    g.admit(at(base, 6), token("k9", "mallory"), 1, 100);
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 6), Ok(br#"["k1"]"#.to_vec()));
    assert!(matches!(&steps(&mut g)[..], [GateStep::Refused(1, d)] if d.status == 401));
    // The same kid again before the next fetch is allowed: refused at once, not parked.
    g.admit(at(base, 7), token("k9", "mallory"), 2, 100);
    assert!(matches!(&steps(&mut g)[..], [GateStep::Refused(2, d)] if d.status == 401));
    assert_eq!(g.waiting_bytes(), 0);
    // Once a fetch is allowed again, it may have been published meanwhile.
    g.admit(at(base, 12), token("k9", "mallory"), 3, 100);
    assert_eq!(steps(&mut g), [fetch("http://127.0.0.1:9/idp/jwks")]);
    g.fetched(at(base, 12), Ok(br#"["k1","k9"]"#.to_vec()));
    assert!(matches!(&steps(&mut g)[..], [GateStep::Passed(3, _)]));
}

#[test]
fn what_waits_for_keys_is_capped_in_bytes() {
    let base = crate::testing::start_instant();
    let mut g = gate();
    let big = MAX_WAITING_BYTES / 4;
    for n in 0..4 {
        g.admit(at(base, 0), token("k1", "alice"), n, big);
    }
    steps(&mut g);
    assert_eq!(g.waiting_bytes(), 4 * big);
    // Over the cap: 503 at once.
    g.admit(at(base, 0), token("k1", "alice"), 9, 1);
    assert!(
        matches!(&steps(&mut g)[..], [GateStep::Refused(9, d)] if d.status == 503 && d.message.contains("too many requests")),
    );
    // Those that leave free their bytes.
    g.forget(|n| *n < 2);
    assert_eq!(g.waiting_bytes(), 2 * big);
    g.timeout(at(base, 5));
    steps(&mut g);
    assert_eq!(g.waiting_bytes(), 0);
}
