use super::*;
use crate::fixture;

fn h(k: &str, v: &str) -> Vec<(String, String)> {
    vec![(k.into(), v.into())]
}

#[test]
fn rate_limit_is_retried_with_the_servers_wait() {
    let body = fixture("error-429-rate-limit-exceeded.json");
    match classify_reply(429, &h("retry-after", "2"), &body) {
        UpstreamVerdict::Retry(f, after) => {
            assert_eq!(after, Some(Duration::from_secs(2)));
            assert_eq!(f.code.as_deref(), Some("rate_limit_exceeded"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        retry_after(&h("retry-after-ms", "1500.5")),
        Some(Duration::from_micros(1_500_500))
    );
    assert_eq!(
        retry_after(&h("retry-after", "99999")),
        Some(MAX_RETRY_AFTER)
    );
    assert_eq!(
        retry_after(&h("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")),
        None
    );
}

#[test]
fn quota_is_not_retried() {
    let body = fixture("error-429-insufficient-quota.json");
    assert!(matches!(
        classify_reply(429, &[], &body),
        UpstreamVerdict::Fail(_)
    ));
}

#[test]
fn server_errors_are_retried() {
    for name in [
        "error-500-server-error.json",
        "error-500-azure-server-error.json",
    ] {
        assert!(matches!(
            classify_reply(500, &[], &fixture(name)),
            UpstreamVerdict::Retry(..)
        ));
    }
    assert!(matches!(
        classify_reply(503, &[], b"<html>down</html>"),
        UpstreamVerdict::Retry(..)
    ));
    assert!(matches!(
        classify_reply(501, &[], b""),
        UpstreamVerdict::Fail(_)
    ));
}

#[test]
fn unsupported_effort_is_recognised() {
    let body = fixture("error-400-unsupported-reasoning-effort.json");
    assert!(matches!(
        classify_reply(400, &[], &body),
        UpstreamVerdict::Unsupported(
            crate::openai::ParamRejection {
                param: crate::openai::Param::ReasoningEffort,
                ..
            },
            _
        )
    ));
    // The minimal-effort-with-web-search 400 names `tools`, not a droppable param.
    let body = fixture("error-400-web-search-minimal-effort.json");
    assert!(matches!(
        classify_reply(400, &[], &body),
        UpstreamVerdict::Fail(_)
    ));
}

#[test]
fn bodies_that_are_not_json() {
    match classify_reply(200, &[], b"<html>") {
        UpstreamVerdict::Fail(f) => assert_eq!(f.kind, FailureKind::InvalidResponse),
        other => panic!("{other:?}"),
    }
    match classify_reply(404, &[], b"<!doctype html><p>not found") {
        UpstreamVerdict::Fail(f) => assert!(f.message.contains("HTML page"), "{}", f.message),
        other => panic!("{other:?}"),
    }
    let long = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(1000));
    match classify_reply(400, &[], long.as_bytes()) {
        UpstreamVerdict::Fail(f) => assert!(f.message.chars().count() <= 401),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ok_status_with_error_object() {
    let body = br#"{"error":{"code":"server_error","message":"boom"}}"#;
    assert!(matches!(
        classify_reply(200, &[], body),
        UpstreamVerdict::Retry(..)
    ));
    let body = br#"{"error":{"code":"invalid_prompt","message":"no"}}"#;
    assert!(matches!(
        classify_reply(200, &[], body),
        UpstreamVerdict::Fail(_)
    ));
}

#[test]
fn an_api_error_is_kept_without_key_fragments_even_past_the_cut() {
    let long = format!("{} sk-proj-{}", "x ".repeat(195), "A1".repeat(40));
    let body = serde_json::json!({"error":{
        "message": long,
        "type": "invalid_request_error",
        "code": "pplx-0123456789abcdef"}});
    let UpstreamVerdict::Fail(f) = classify_reply(401, &[], body.to_string().as_bytes()) else {
        panic!("a 401 fails");
    };
    assert!(
        !f.message.contains("sk-proj") && !f.message.contains("A1A1"),
        "{}",
        f.message
    );
    assert_eq!(f.code.as_deref(), Some("[redacted]"));
    let f = UpstreamFailure::local(FailureKind::Connect, "proxy said: Bearer 0123456789abcdef");
    assert_eq!(f.message, "proxy said: Bearer [redacted]");
}
