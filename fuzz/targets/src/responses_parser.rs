//! The `responses_parser` fuzz target.

use responses_mcp_core::openai::{classify_reply, parse_answer, UpstreamVerdict};

/// Arbitrary bytes as an OpenAI reply body, with a status picked by the first byte.
pub fn responses_parser(data: &[u8]) {
    const STATUSES: [u16; 8] = [200, 200, 400, 401, 429, 500, 503, 302];
    let (status, body) = match data.split_first() {
        Some((s, rest)) => (STATUSES[usize::from(*s) % STATUSES.len()], rest),
        None => (200, data),
    };
    let headers = vec![(
        "retry-after".to_owned(),
        String::from_utf8_lossy(&body[..body.len().min(4)]).into_owned(),
    )];
    if let UpstreamVerdict::Success(value) = classify_reply(status, &headers, body) {
        if let Ok(answer) = parse_answer(&value, 3, "fallback", "2026-01-01") {
            assert!(answer.citations.len() <= 3);
            assert!(!answer.answer.trim().is_empty());
            assert!(answer.used_search || answer.citations.is_empty());
        }
    }
}
