use super::*;

fn parse(json: &str) -> ResponseBody<'_> {
    ResponseBody::parse(json.as_bytes()).unwrap()
}

#[test]
fn fields_of_unexpected_types_read_as_absent() {
    let b = parse(
        r#"{"status":5,"model":["gpt"],"incomplete_details":"x","error":"boom","output":{"type":"message"}}"#,
    );
    assert_eq!(b.status.get(), None);
    assert_eq!(b.model.get(), None);
    assert_eq!(b.incomplete_details.reason.get(), None);
    assert_eq!(b.error.get(), None);
    assert!(b.output.is_empty());
    // Numbers, whatever their size, are skipped like any other odd value.
    let b = parse(r#"{"error":12345678901234567890123,"model":1.5e400,"output":[1e3]}"#);
    assert_eq!((b.error.get(), b.model.get()), (None, None));
    assert_eq!(b.output.len(), 1);
    assert_eq!(b.output[0], Item::default());
}

#[test]
fn odd_list_elements_do_not_spoil_the_others() {
    let b = parse(
        r#"{"output":[5,"x",null,[1],{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[7,{"type":"url_citation","url":"u"}]}]}]}"#,
    );
    assert_eq!(b.output.len(), 5);
    assert!(b.output[..4].iter().all(|i| *i == Item::default()));
    let part = &b.output[4].content[0];
    assert_eq!(
        (part.kind.get(), part.text.get()),
        (Some("output_text"), Some("hi"))
    );
    assert_eq!(part.annotations.len(), 2);
    assert_eq!(part.annotations[1].url.get(), Some("u"));
}

#[test]
fn a_repeated_key_keeps_its_last_value_as_a_value_lookup_does() {
    let b = parse(r#"{"model":"a","output":[{}],"model":"b","output":7}"#);
    assert_eq!(b.model.get(), Some("b"));
    assert!(b.output.is_empty());
    let b = parse(r#"{"error":{"code":"x"},"error":null}"#);
    assert_eq!(b.error.get(), None);
}

#[test]
fn strings_are_unescaped_and_plain_ones_borrowed() {
    let b = parse(r#"{"model":"gpt-5","status":"compl\u0065ted\n"}"#);
    assert!(matches!(b.model.0, Some(Cow::Borrowed("gpt-5"))));
    assert_eq!(b.status.get(), Some("completed\n"));
}

#[test]
fn the_error_object_is_kept_whole() {
    let b = parse(r#"{"error":{"code":"server_error","message":"m","extra":[1,{"a":2}]}}"#);
    let e = b.error.get().unwrap();
    assert_eq!(e["code"], "server_error");
    assert_eq!(e["extra"][1]["a"], 2);
}

#[test]
fn only_malformed_json_fails() {
    for bad in [
        &b"{\"model\":"[..],
        b"{\"model\":\"x\"} trailing",
        b"",
        b"{\"a\":\"unterminated}",
    ] {
        assert!(
            ResponseBody::parse(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    for odd in ["[]", "\"text\"", "5", "null"] {
        assert_eq!(parse(odd), ResponseBody::default(), "{odd}");
    }
}

#[test]
fn deep_nesting_is_skipped_without_recursion() {
    // serde_json skips values with an explicit stack, so depth costs a byte each, never
    // stack frames; a `Value` would refuse past 128 levels instead.
    let depth = 1_000_000;
    for key in ["ignored", "output", "model"] {
        let deep = format!(r#"{{"{key}":{}{}}}"#, "[".repeat(depth), "]".repeat(depth));
        let b = ResponseBody::parse(deep.as_bytes()).unwrap();
        assert_eq!(b.model.get(), None);
    }
    let unclosed = format!(r#"{{"output":[{{"content":{}"#, "[".repeat(depth));
    assert!(ResponseBody::parse(unclosed.as_bytes()).is_err());
}
