use super::*;
use crate::fixture;
use crate::sse::SseReader;

fn events(name: &str) -> Vec<SseEvent> {
    let mut reader = SseReader::new(1 << 20, 1 << 22);
    reader.push(&fixture(name));
    reader.finish();
    std::iter::from_fn(|| reader.next_event())
        .map(Result::unwrap)
        .collect()
}

/// Folds `events`, collecting the hints, and finishes.
fn fold(events: &[SseEvent]) -> (StreamEnd, Vec<StreamHint>) {
    let mut fold = StreamFold::new();
    let mut hints = Vec::new();
    for e in events {
        match fold.feed(e) {
            Folded::More(Some(h)) => hints.push(h),
            Folded::More(None) => {}
            Folded::End => break,
        }
    }
    (fold.finish(3, "fallback", "2025-12-05"), hints)
}

/// The same call read two ways: folded event by event, and as the whole response object
/// that the stream's own `response.completed` carries, read by the non-streamed reader.
#[test]
fn a_streamed_answer_equals_the_whole_response_read_whole() {
    for name in ["stream-web-search.sse", "stream-with-keepalive.sse"] {
        let events = events(name);
        let (streamed, _) = fold(&events);
        let StreamEnd::Answer(streamed, usage) = streamed else {
            panic!("{name}: {streamed:?}")
        };
        let completed = events
            .iter()
            .rev()
            .find(|e| e.event == "response.completed")
            .unwrap();
        let data: Value = serde_json::from_str(&completed.data).unwrap();
        let whole = data["response"].to_string();
        let body = ResponseBody::parse(whole.as_bytes()).unwrap();
        let read_whole = parse_answer(&body, 3, "fallback", "2025-12-05").unwrap();
        assert_eq!(streamed, read_whole, "{name}");
        assert_eq!(
            usage.response_id.as_deref(),
            data["response"]["id"].as_str()
        );
        assert_eq!(
            usage.input_tokens,
            data["response"]["usage"]["input_tokens"].as_u64().unwrap()
        );
    }
}

#[test]
fn usage_and_hints_follow_what_the_model_did() {
    let events = events("stream-web-search.sse");
    let (end, hints) = fold(&events);
    let StreamEnd::Answer(answer, usage) = end else {
        panic!()
    };
    assert!(answer.used_search);
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens
        ),
        (31073, 4416, 3712)
    );
    let searches = hints
        .iter()
        .filter(|h| matches!(h, StreamHint::Searching(Some(_))))
        .count();
    assert_eq!(usage.web_searches as usize, searches);
    assert!(searches >= 2, "{hints:?}");
    assert!(hints.contains(&StreamHint::Searching(Some(
        "tech news today December 5 2025".into()
    ))));
    assert!(
        hints.iter().any(|h| matches!(h, StreamHint::Reading(_))),
        "{hints:?}"
    );
    assert_eq!(
        hints.iter().filter(|h| **h == StreamHint::Writing).count(),
        1
    );
}

#[test]
fn failures_inside_a_stream_are_classified_like_statuses() {
    let (end, _) = fold(&events("stream-response-failed-rate-limit.sse"));
    assert!(
        matches!(&end, StreamEnd::Retry(f) if f.code.as_deref() == Some("rate_limit_exceeded")),
        "{end:?}"
    );
    let (end, _) = fold(&events("stream-error-event-spec-shape.sse"));
    assert!(
        matches!(&end, StreamEnd::Retry(f) if f.code.as_deref() == Some("rate_limit_exceeded")),
        "flat error event: {end:?}"
    );
    let (end, _) = fold(&events("stream-error-insufficient-quota.sse"));
    assert!(
        matches!(&end, StreamEnd::Fail(f) if f.code.as_deref() == Some("insufficient_quota")),
        "{end:?}"
    );
}

#[test]
fn a_stream_cut_before_its_end_is_retried() {
    let mut events = events("stream-web-search.sse");
    events.retain(|e| e.event != "response.completed");
    let (end, _) = fold(&events);
    assert!(
        matches!(&end, StreamEnd::Retry(f) if f.kind == FailureKind::Io),
        "{end:?}"
    );
    let done = SseEvent {
        event: "message".into(),
        data: "[DONE]".into(),
    };
    let (end, _) = fold(&[done]);
    assert!(matches!(end, StreamEnd::Retry(_)));
}

#[test]
fn odd_events_are_skipped() {
    let odd = [
        SseEvent {
            event: "message".into(),
            data: "not json".into(),
        },
        SseEvent {
            event: "keepalive".into(),
            data: r#"{"type":"keepalive","sequence_number":2}"#.into(),
        },
        SseEvent {
            event: "x".into(),
            data: "[1,2]".into(),
        },
        SseEvent {
            event: "response.output_item.done".into(),
            data: r#"{"type":"response.output_item.done","item":7}"#.into(),
        },
    ];
    let mut fold = StreamFold::new();
    for e in &odd {
        assert_eq!(fold.feed(e), Folded::More(None));
    }
}

#[test]
fn the_searches_a_cut_stream_had_begun_are_counted() {
    let all = events("stream-web-search.sse");
    let added = all
        .iter()
        .position(|e| {
            e.data.contains(r#""type":"web_search_call""#)
                && e.event == "response.output_item.added"
        })
        .expect("the fixture begins a search");
    let mut fold = StreamFold::new();
    for e in &all[..=added] {
        fold.feed(e);
    }
    // Begun, not yet done: OpenAI bills it all the same.
    assert_eq!(fold.searches_begun(), 1);
    let mut whole = StreamFold::new();
    for e in &all {
        whole.feed(e);
    }
    assert!(whole.searches_begun() >= 1);
}
