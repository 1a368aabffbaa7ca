use super::*;
use serde_json::Value;

fn scan(body: &[u8]) -> Option<RequestId> {
    let mut scan = IdScan::new();
    scan.feed(body);
    scan.finish()
}

/// What `serde_json` makes of the body's id, bounded as the scan bounds it.
fn reference(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    let message: IdOnly = serde_json::from_slice(body).ok()?;
    let id = RequestId::from_value(&message.id?)?;
    let (RequestId::Int(text) | RequestId::Str(text)) = &id;
    (text.len() <= MAX_ID).then_some(id)
}

#[test]
fn integers_and_short_strings_are_ids() {
    let cases: &[(&str, Option<RequestId>)] = &[
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            Some(RequestId::Int("1".into())),
        ),
        (r#"{"id":-0}"#, Some(RequestId::Int("-0".into()))),
        (
            r#"{"method":"x","params":{"id":9,"a":[1,{"id":2}]},"id":"a\"b\u00e9\ud83d\ude00"}"#,
            Some(RequestId::Str("a\"bé😀".into())),
        ),
        (
            r#" { "id" : 123456789012345678901234567890 } "#,
            Some(RequestId::Int("123456789012345678901234567890".into())),
        ),
        (r#"{"i\u0064":7}"#, Some(RequestId::Int("7".into()))),
        (r#"{"id":1,"x":23}"#, Some(RequestId::Int("1".into()))),
    ];
    for (body, want) in cases {
        assert_eq!(&scan(body.as_bytes()), want, "{body}");
        assert_eq!(
            &reference(body.as_bytes()),
            want,
            "the reference agrees: {body}"
        );
    }
}

#[test]
fn anything_else_is_no_id() {
    for body in [
        r#"{"id":1.5}"#,
        r#"{"id":1e3}"#,
        r#"{"id":null}"#,
        r#"{"id":true}"#,
        r#"{"id":[1]}"#,
        r#"{"id":{"a":1}}"#,
        r#"{"id":1,"id":2}"#,
        r#"{"method":"ping"}"#,
        r#"{"id":1"#,
        r#"{"id":1}x"#,
        r#"{"id":01}"#,
        r#"{"id":"\ud800"}"#,
        r#"{"id":"a\x"}"#,
        r#"{"id":1,}"#,
        r#"[{"id":1}]"#,
        r#"{"id":1,"a":[1}"#,
        r#"{"id":1,"a":"tab	in a string"}"#,
        "",
        "7",
    ] {
        assert_eq!(scan(body.as_bytes()), None, "{body}");
    }
}

#[test]
fn an_id_longer_than_the_bound_is_no_id_and_is_not_kept() {
    let at_bound = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID));
    assert!(scan(at_bound.as_bytes()).is_some());
    let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID + 1));
    assert_eq!(scan(long.as_bytes()), None);
    let digits = format!(r#"{{"id":{}}}"#, "9".repeat(MAX_ID + 1));
    assert_eq!(scan(digits.as_bytes()), None);
    let mut scanner = IdScan::new();
    scanner.feed(long.as_bytes());
    assert!(
        scanner.text.capacity() <= MAX_ID,
        "nothing past the bound is kept"
    );
}

#[test]
fn a_huge_id_array_keeps_nothing() {
    let mut body = br#"{"jsonrpc":"2.0","method":"tools/list","id":["#.to_vec();
    for _ in 0..200_000 {
        body.extend_from_slice(b"0,");
    }
    body.extend_from_slice(b"0]}");
    let mut scanner = IdScan::new();
    for piece in body.chunks(8192) {
        scanner.feed(piece);
        assert!(scanner.nest.len() <= 1 && scanner.text.capacity() <= MAX_ID);
    }
    assert_eq!(scanner.finish(), None);
}

#[test]
fn deep_nesting_is_skipped_up_to_the_bound() {
    let deep = |n: usize| {
        let mut body = br#"{"params":"#.to_vec();
        body.extend(std::iter::repeat_n(b'[', n));
        body.extend(std::iter::repeat_n(b']', n));
        body.extend_from_slice(br#","id":5}"#);
        body
    };
    assert_eq!(scan(&deep(5000)), Some(RequestId::Int("5".into())));
    assert_eq!(scan(&deep(MAX_DEPTH + 10)), None, "too deep to follow");
}

#[test]
fn every_cut_of_the_body_finds_the_same_id() {
    let bodies = [
        r#"{"jsonrpc":"2.0","id":"r\u00e9q-1","method":"tools/call","params":{"name":"answer","arguments":{"query":"x\"y"}}}"#,
        r#"{"a":[1.5e-3,true,false,null,{"b":"c"}],"id":-42}"#,
    ];
    for body in bodies {
        let whole = scan(body.as_bytes());
        assert_eq!(whole, reference(body.as_bytes()));
        for cut in 0..=body.len() {
            let mut scanner = IdScan::new();
            let (a, b) = body.as_bytes().split_at(cut);
            scanner.feed(a);
            scanner.feed(b);
            assert_eq!(scanner.finish(), whole, "cut at {cut}");
        }
    }
}
