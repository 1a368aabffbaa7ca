use super::*;
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    serde_json::from_slice(&crate::fixture(name)).unwrap()
}

fn parse(v: &Value) -> Result<Answer, UpstreamFailure> {
    parse_capped(v, 10)
}

/// Reads `v` the way the server reads a reply: from its bytes.
fn parse_capped(v: &Value, max_citations: usize) -> Result<Answer, UpstreamFailure> {
    let bytes = serde_json::to_vec(v).unwrap();
    let body = ResponseBody::parse(&bytes).unwrap();
    parse_answer(&body, max_citations, "fallback", "2026-11-21")
}

#[test]
fn no_search_response() {
    let a = parse(&fixture("response-no-search.json")).unwrap();
    assert!(!a.used_search);
    assert!(a.citations.is_empty());
    assert!(!a.answer.contains("Sources:"));
    assert!(!a.answer.is_empty());
    assert_eq!(
        a.model,
        fixture("response-no-search.json")["model"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn real_web_search_response_dedupes_and_strips_tracking() {
    let body = fixture("response-web-search.json");
    let a = parse(&body).unwrap();
    assert!(a.used_search);
    // 10 url_citations over 7 distinct pages.
    assert_eq!(a.citations.len(), 7, "{:#?}", a.citations);
    assert!(a.citations.iter().all(|c| !c.url.contains("utm_source")));
    assert!(a.citations.iter().all(|c| c.title.is_some()));
    // The API gives no publication date: the day the page was read is said as such.
    assert!(a
        .citations
        .iter()
        .all(|c| c.published_at.is_none() && c.accessed_at == "2026-11-21"));
    // First-seen order: the first annotation's URL comes first.
    let first = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "message")
        .unwrap()["content"][0]["annotations"][0]["url"]
        .as_str()
        .unwrap();
    assert!(
        first.starts_with(&a.citations[0].url),
        "{first} vs {}",
        a.citations[0].url
    );
    assert_eq!(a.model, "gpt-5-mini-2025-08-07");
    // Every source appears in the answer with its date, in one Sources section.
    for c in &a.citations {
        assert!(a.answer.contains(&c.url), "{}", c.url);
    }
    assert!(a.answer.matches("Sources:").count() <= 1);
}

#[test]
fn citations_are_capped() {
    let a = parse_capped(&fixture("response-web-search.json"), 3).unwrap();
    assert_eq!(a.citations.len(), 3);
}

#[test]
fn web_search_preview_without_citations_uses_sources_or_nothing() {
    let a = parse(&fixture("response-web-search-preview.json")).unwrap();
    assert!(a.used_search);
    let spec = parse(&fixture("response-web-search-preview-spec-example.json")).unwrap();
    // Annotation indices point past the elided text; nothing panics and the URLs are kept.
    assert!(spec.used_search);
    assert!(!spec.citations.is_empty());
}

#[test]
fn phase_messages_take_the_final_answer() {
    let body = fixture("response-no-search-phase-messages.json");
    let a = parse(&body).unwrap();
    let finals: Vec<&str> = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["phase"] == "final_answer")
        .map(|m| m["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(a.answer, finals.join("\n\n"));
    let effort_max = parse(&fixture("response-no-search-gpt-5.6-effort-max.json")).unwrap();
    assert!(!effort_max.used_search);
}

#[test]
fn non_completed_statuses_are_errors() {
    let cancelled = parse(&fixture("response-cancelled-background-spec-example.json")).unwrap_err();
    assert_eq!(cancelled.kind, FailureKind::UnexpectedStatus);
    let incomplete = json!({"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
        "output":[{"type":"message","content":[{"type":"output_text","text":"partial"}]}]});
    let e = parse(&incomplete).unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (FailureKind::Incomplete, Some("max_output_tokens"))
    );
    let failed = json!({"status":"failed","error":{"code":"server_error","message":"boom"}});
    assert_eq!(
        parse(&failed).unwrap_err().code.as_deref(),
        Some("server_error")
    );
    let refusal = json!({"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]});
    assert_eq!(parse(&refusal).unwrap_err().kind, FailureKind::Refusal);
    assert_eq!(parse(&json!({})).unwrap_err().kind, FailureKind::NoAnswer);
    assert_eq!(
        parse(&json!({"output": 5})).unwrap_err().kind,
        FailureKind::NoAnswer
    );
}

#[test]
fn multibyte_text_with_out_of_range_indices() {
    let body = json!({"model":"gpt-5","output":[
        {"type":"reasoning"},
        {"type":"web_search_call","status":"completed","action":{"type":"search"}},
        {"type":"message","content":[{"type":"output_text","text":"東京は晴れ（[jma.go.jp](https://www.jma.go.jp/a?utm_source=openai)）。",
          "annotations":[
            {"type":"url_citation","url":"https://www.jma.go.jp/a?utm_source=openai","title":"気象庁","start_index":5,"end_index":9999},
            {"type":"url_citation","url":"https://www.jma.go.jp/a","start_index":usize::MAX,"end_index":0},
            {"type":"file_citation","file_id":"f"}]}]}]});
    let a = parse(&body).unwrap();
    assert_eq!(
        a.citations,
        vec![Citation {
            url: "https://www.jma.go.jp/a".into(),
            title: Some("気象庁".into()),
            published_at: None,
            accessed_at: "2026-11-21".into(),
        }]
    );
    assert!(
        a.answer
            .ends_with("\n\nSources:\n- https://www.jma.go.jp/a (accessed 2026-11-21)"),
        "{}",
        a.answer
    );
}

#[test]
fn model_written_sources_are_not_repeated() {
    let body = json!({"output":[{"type":"message","content":[{"type":"output_text",
        "text":"Answer.\n\nSources:\n- https://a.example/x (2026-01-01)",
        "annotations":[{"type":"url_citation","url":"https://a.example/x"},{"type":"url_citation","url":"https://b.example/y"}]}]}]});
    let a = parse(&body).unwrap();
    assert_eq!(a.answer.matches("Sources:").count(), 1);
    assert!(
        a.answer.ends_with(
            "- https://a.example/x (2026-01-01)\n- https://b.example/y (accessed 2026-11-21)"
        ),
        "{}",
        a.answer
    );
    assert_eq!(a.model, "fallback");
}

#[test]
fn non_url_sources_are_kept() {
    let body = json!({"output":[
        {"type":"web_search_call","action":{"sources":[{"type":"api","name":"oai-weather"},{"type":"url","url":"https://w.example/?utm_source=openai&q=1"}]}},
        {"type":"message","content":[{"type":"output_text","text":"Sunny."}]}]});
    let a = parse(&body).unwrap();
    let urls: Vec<&str> = a.citations.iter().map(|c| c.url.as_str()).collect();
    assert_eq!(urls, ["oai-weather", "https://w.example/?q=1"]);
}

/// The usage of a response read from its bytes.
fn usage_of(v: &Value) -> Usage {
    let bytes = serde_json::to_vec(v).unwrap();
    Usage::of(&ResponseBody::parse(&bytes).unwrap())
}

#[test]
fn openai_s_count_of_billed_searches_wins_over_the_search_calls() {
    // The recorded answer has one search call in its output (and page opens, which are
    // not searches); counted, that is the figure.
    let mut v = fixture("response-web-search.json");
    let counted = usage_of(&v);
    assert_eq!(
        (counted.web_searches, counted.searches_from),
        (1, SearchCount::Counted)
    );
    // With OpenAI's own count (a discounted search left out), that one.
    v["tool_usage"] = json!({"web_search": {"num_requests": 0}});
    let reported = usage_of(&v);
    assert_eq!(
        (reported.web_searches, reported.searches_from),
        (0, SearchCount::Reported)
    );
    // Also read where it sits inside `usage`.
    let mut inside = fixture("response-web-search.json");
    inside["usage"]["tool_usage"] = json!({"web_search": {"num_requests": 2}});
    assert_eq!(usage_of(&inside).web_searches, 2);
    // Anything but a count is no count.
    v["tool_usage"] = json!({"web_search": {"num_requests": "two"}});
    assert_eq!(usage_of(&v).searches_from, SearchCount::Counted);
}

#[test]
fn cache_writes_are_read_from_the_input_details() {
    let mut v = fixture("response-no-search.json");
    v["usage"]["input_tokens_details"]["cache_write_tokens"] = json!(1200);
    assert_eq!(usage_of(&v).cache_write_tokens, 1200);
}

#[test]
fn perplexity_search_results_are_sources_with_their_dates_and_its_cost_is_read() {
    let body = json!({"status": "completed", "model": "openai/gpt-5.5", "output": [
        {"type": "search_results", "results": [
            {"url": "https://a.example/x?utm_source=p", "title": "A", "date": "2026-11-20T08:00:00Z"},
            {"url": "https://b.example/", "title": "B", "date": "20 November"},
            {"url": "https://c.example/", "date": 2026},
            {"title": "no url"}]},
        {"type": "message", "content": [{"type": "output_text", "text": "Answer."}]}],
        "usage": {"input_tokens": 10, "output_tokens": 5,
                  "cost": {"currency": "USD", "total_cost": 0.02, "tool_calls_cost": 0.05},
                  "tool_calls_details": {"web_search": {"invocation": 2}}}});
    let a = parse(&body).unwrap();
    assert!(a.used_search);
    let got: Vec<(&str, Option<&str>)> = a
        .citations
        .iter()
        .map(|c| (c.url.as_str(), c.published_at.as_deref()))
        .collect();
    // Only a YYYY-MM-DD date is a publication date.
    assert_eq!(
        got,
        [
            ("https://a.example/x", Some("2026-11-20")),
            ("https://b.example/", None),
            ("https://c.example/", None)
        ]
    );
    let bytes = serde_json::to_vec(&body).unwrap();
    let usage = Usage::of(&ResponseBody::parse(&bytes).unwrap());
    assert_eq!(
        (usage.web_searches, usage.searches_from),
        (2, SearchCount::Reported)
    );
    // A tool cost above the total is held to it; another currency is no figure.
    let billed = usage.billed.unwrap();
    assert_eq!((billed.total, billed.tools), (billed.total, billed.total));
    let mut other = body.clone();
    other["usage"]["cost"]["currency"] = "EUR".into();
    let bytes = serde_json::to_vec(&other).unwrap();
    assert_eq!(
        Usage::of(&ResponseBody::parse(&bytes).unwrap()).billed,
        None
    );
}
