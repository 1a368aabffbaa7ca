use super::*;
use serde_json::json;

fn parse(text: &str) -> Result<Incoming, Box<Rejected>> {
    classify(serde_json::from_str(text).unwrap())
}

#[test]
fn ids_are_echoed_exactly() {
    for raw in [
        "1",
        "-7",
        "123456789012345678901234567890",
        "\"abc\"",
        "\"\"",
    ] {
        let Ok(Incoming::Request(r)) = parse(&format!(
            r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#
        )) else {
            panic!("{raw}")
        };
        let reply = Reply::Success {
            id: r.id,
            result: json!({}),
        };
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(
            text,
            format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
        );
    }
}

#[test]
fn bad_ids_are_invalid_requests() {
    for raw in ["1.5", "1e3", "null", "true", "{}", "[]"] {
        let err = parse(&format!(
            r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#
        ))
        .unwrap_err();
        assert_eq!(err.error.code, code::INVALID_REQUEST, "{raw}");
        assert!(
            err.error.message.contains("id must be"),
            "{}",
            err.error.message
        );
        assert_eq!(err.id, None);
    }
}

#[test]
fn envelope_errors_name_the_problem() {
    let cases = [
        (
            r#"{"id":1,"method":"ping"}"#,
            code::INVALID_REQUEST,
            "missing \"jsonrpc\"",
        ),
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            code::INVALID_REQUEST,
            "must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            code::INVALID_REQUEST,
            "method must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            code::INVALID_REQUEST,
            "missing \"method\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            code::INVALID_PARAMS,
            "params must be an object",
        ),
        (
            "7",
            code::INVALID_REQUEST,
            "expected a JSON object, got an integer",
        ),
        ("\"s\"", code::INVALID_REQUEST, "got a string"),
        ("null", code::INVALID_REQUEST, "got null"),
    ];
    for (text, code, needle) in cases {
        let err = parse(text).unwrap_err();
        assert_eq!(err.error.code, code, "{text}");
        assert!(
            err.error.message.contains(needle),
            "{text}: {}",
            err.error.message
        );
    }
    // The id is echoed when it was readable.
    assert_eq!(
        parse(r#"{"id":5,"method":"ping"}"#).unwrap_err().id,
        Some(RequestId::Int("5".into()))
    );
}

#[test]
fn notifications_and_responses() {
    assert!(matches!(
        parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Ok(Incoming::Notification(_))
    ));
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        Ok(Incoming::Response)
    );
}

#[test]
fn failure_with_unknown_id_serializes_null() {
    let reply = Reply::Failure {
        id: None,
        error: RpcError::new(ErrorKind::Parse, "parse error"),
    };
    assert_eq!(
        serde_json::to_string(&reply).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
    );
}
