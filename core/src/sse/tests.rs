use super::*;
use crate::fixture;

fn read(chunks: &[&[u8]], max_line: usize, max_event: usize) -> Vec<Result<SseEvent, SseError>> {
    let mut reader = SseReader::new(max_line, max_event);
    let mut out = Vec::new();
    for chunk in chunks {
        reader.push(chunk);
        while let Some(e) = reader.next_event() {
            out.push(e);
        }
    }
    reader.finish();
    while let Some(e) = reader.next_event() {
        out.push(e);
    }
    out
}

fn whole(bytes: &[u8]) -> Vec<Result<SseEvent, SseError>> {
    read(&[bytes], 1 << 20, 1 << 20)
}

fn ev(event: &str, data: &str) -> Result<SseEvent, SseError> {
    Ok(SseEvent {
        event: event.into(),
        data: data.into(),
    })
}

#[test]
fn the_fixture_reads_as_openai_frames() {
    let events = whole(&fixture("stream-web-search.sse"));
    assert!(events.len() > 100, "{}", events.len());
    for e in &events {
        let e = e.as_ref().unwrap();
        let data: serde_json::Value = serde_json::from_str(&e.data).unwrap();
        assert_eq!(data["type"], e.event.as_str(), "event equals data.type");
    }
    assert_eq!(
        events.last().unwrap().as_ref().unwrap().event,
        "response.completed"
    );
}

#[test]
fn the_whatwg_rules() {
    let stream = b"\xEF\xBB\xBF: a comment\r\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\ndata: x\rid: 7\rretry: 10\r\rdata\n\nevent: only\n\ndata: [DONE]\n\nfield without colon\ndata: last\n";
    assert_eq!(
        whole(stream),
        vec![
            ev("a", "1\n2"),
            ev("message", "x"),
            ev("message", ""),
            ev("message", "[DONE]")
        ],
        "an event without a blank line at the end of the stream is dropped"
    );
    // A mark after the start is data: the line names the field "\u{feff}data", which is
    // ignored, so no second event.
    assert_eq!(
        whole(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"),
        vec![ev("message", "a")]
    );
}

#[test]
fn every_split_gives_the_same_events() {
    let stream = b"\xEF\xBB\xBFevent: a\r\ndata: 1\r\n\r\n: c\rdata: 2\r\rdata: \xE3\x81\x82\n\n";
    let expected = whole(stream);
    assert_eq!(
        expected,
        vec![ev("a", "1"), ev("message", "2"), ev("message", "あ")]
    );
    for a in 0..=stream.len() {
        for b in a..=stream.len() {
            let chunks = [&stream[..a], &stream[a..b], &stream[b..]];
            assert_eq!(
                read(&chunks, 1 << 20, 1 << 20),
                expected,
                "split at {a},{b}"
            );
        }
    }
    let fixture = fixture("stream-with-keepalive.sse");
    let bytes: Vec<&[u8]> = fixture.chunks(1).collect();
    assert_eq!(read(&bytes, 1 << 20, 1 << 20), whole(&fixture));
}

#[test]
fn limits_and_bad_bytes_end_the_stream() {
    let long = [b"data: ".as_slice(), &[b'x'; 100], b"\n\n"].concat();
    assert_eq!(
        read(&[&long], 64, 1 << 20),
        vec![Err(SseError::LineTooLong { max: 64 })]
    );
    let endless = vec![b'y'; 65];
    assert_eq!(
        read(&[&endless], 64, 1 << 20),
        vec![Err(SseError::LineTooLong { max: 64 })]
    );
    let many_lines = b"data: 0123456789\n".repeat(10);
    assert_eq!(
        read(&[&many_lines], 64, 100),
        vec![Err(SseError::EventTooLarge { max: 100 })]
    );
    let bad = b"data: \xFF\n\nevent: after\ndata: x\n\n";
    assert_eq!(
        whole(bad),
        vec![Err(SseError::InvalidUtf8)],
        "errors are final"
    );
}

#[test]
fn memory_stays_bounded_through_many_small_events() {
    let mut reader = SseReader::new(1024, 4096);
    let mut seen = 0;
    for _ in 0..10_000 {
        reader.push(b"event: keepalive\ndata: {}\n\n");
        while let Some(e) = reader.next_event() {
            assert!(e.is_ok());
            seen += 1;
        }
        assert!(reader.buffered() < 8192, "{}", reader.buffered());
    }
    assert_eq!(seen, 10_000);
}
