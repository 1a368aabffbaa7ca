//! The `sse` fuzz target.

type SseOutcome = Vec<Result<responses_mcp_core::sse::SseEvent, responses_mcp_core::sse::SseError>>;

/// Feeds `stream` to an SSE reader cut at `cuts`, then ends it.
fn read_sse(stream: &[u8], cuts: &[usize], max_line: usize, max_event: usize) -> SseOutcome {
    let mut reader = responses_mcp_core::sse::SseReader::new(max_line, max_event);
    let mut out = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        let cut = cut.clamp(from, stream.len());
        reader.push(&stream[from..cut]);
        from = cut;
        while let Some(e) = reader.next_event() {
            out.push(e);
        }
        assert!(
            reader.buffered() <= max_line + max_event + 2 * stream.len().min(1 << 16) + 8,
            "the reader holds more than a line, an event and the last push"
        );
    }
    reader.finish();
    while let Some(e) = reader.next_event() {
        out.push(e);
    }
    out
}

/// Differential: an event stream read in one push and cut into reads anywhere gives the
/// same events and errors; no event's data exceeds the limit. The first 4 bytes choose
/// cut points, the rest is the stream.
pub fn sse(data: &[u8]) {
    let Some((head, stream)) = data.split_first_chunk::<4>() else {
        return;
    };
    let (max_line, max_event) = (64, 256);
    let whole = read_sse(stream, &[], max_line, max_event);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    let cut = read_sse(stream, &cuts, max_line, max_event);
    assert_eq!(whole, cut, "the cut changed the events");
    for e in whole.iter().flatten() {
        assert!(e.data.len() < max_event, "an event over the limit");
    }
    // Whatever the events, folding them ends in an answer within the caps or a failure.
    let mut fold = responses_mcp_core::openai::stream::StreamFold::new();
    for e in whole.iter().flatten() {
        if fold.feed(e) == responses_mcp_core::openai::stream::Folded::End {
            break;
        }
    }
    if let responses_mcp_core::openai::stream::StreamEnd::Answer(answer, _) =
        fold.finish(3, "m", "2025-01-01")
    {
        assert!(answer.citations.len() <= 3);
        assert!(!answer.answer.trim().is_empty());
    }
}
