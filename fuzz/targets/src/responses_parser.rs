//! The `responses_parser` fuzz target.

use responses_mcp_core::openai::pricing::Prices;
use responses_mcp_core::openai::{classify_reply, parse_answer, UpstreamVerdict, Usage};

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
        // Its usage and its price: whatever the counts, the money neither wraps nor
        // panics, and no input token costs more than the dearest input rate (gpt-6.2-sol's
        // cache write, $2.50 per million, doubled for long context and for priority).
        let usage = Usage::of(&value);
        let estimate = Prices::default().estimate("gpt-6.2-sol", &usage);
        if let Some(total) = estimate.total() {
            let input = u128::from(usage.input_tokens) * 2_500_000 * 4;
            let output = u128::from(usage.output_tokens) * 10_000_000 * 3;
            let searches = u128::from(usage.web_searches) * 10_000_000_000;
            assert!(u128::from(total.0) <= input + output + searches);
        }
        if let Ok(answer) = parse_answer(&value, 3, "fallback", "2026-01-01") {
            assert!(answer.citations.len() <= 3);
            assert!(!answer.answer.trim().is_empty());
            assert!(answer.used_search || answer.citations.is_empty());
        }
    }
}
