//! The profiles' models looked up at the provider, end to end: the loopback fake answers
//! `GET /models/{id}` with a past date, one within 30 days, a far one, `null`, a 404, or
//! never; the server refuses, warns once, or changes nothing, and never waits for it.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

/// Today in Asia/Tokyo shifted by `days`, as the server computes dates.
fn day(days: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let shifted = now.saturating_add_signed(days * 86_400);
    responses_mcp_core::date::Date::tokyo(shifted).to_string()
}

/// A server whose model lookup gets `lookup`, initialized at 2025-11-25 once the lookup
/// was answered (or, for one that hangs, was made).
fn looked_up(lookup: Action, hangs: bool) -> (FakeOpenAi, Mcp) {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &fixture("response-no-search.json")));
    let lookup = std::sync::Mutex::new(Some(lookup));
    fake.answer_lookups(move |_| lookup.lock().unwrap().take().unwrap_or(Action::Hang));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).arg("--debug"));
    mcp.initialize("2025-11-25");
    let started = Instant::now();
    let settled = |mcp: &Mcp| {
        let log = mcp.stderr();
        log.contains("shutdown date for gpt-6.1-terra")
    };
    let done = |mcp: &Mcp| match hangs {
        true => !fake.lookups().is_empty(),
        false => settled(mcp),
    };
    while !done(&mcp) {
        assert!(started.elapsed() < PATIENCE, "no lookup: {}", mcp.stderr());
        std::thread::sleep(Duration::from_millis(5));
    }
    let lookups = fake.lookups();
    assert_eq!(lookups.len(), 1, "one lookup at startup");
    assert_eq!(lookups[0].path, "/v1/models/gpt-6.1-terra");
    assert_eq!(
        lookups[0].header("authorization"),
        Some(format!("Bearer {PLANTED_KEY}").as_str())
    );
    (fake, mcp)
}

fn call(mcp: &mut Mcp) -> Value {
    mcp.call(1, "answer", json!({"query":"q"}))
}

pub fn a_past_provider_date_refuses_calls_before_any_request() {
    let past = day(-3);
    let body = format!(r#"{{"id":"gpt-6.1-terra","object":"model","shutdown_date":"{past}"}}"#);
    let (fake, mut mcp) = looked_up(Action::json(200, body.as_bytes()), false);
    let reply = call(&mut mcp);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("gpt-6.1-terra was shut down on {past}"))
            && text.contains("set model_profiles.answer.model"),
        "{text}"
    );
    assert!(
        fake.requests().is_empty(),
        "no request for a shut-down model"
    );
    let log = mcp.stderr();
    assert_eq!(
        log.matches("was shut down on").count(),
        1,
        "warned once: {log}"
    );
}

pub fn a_date_within_30_days_is_warned_about_once_and_calls_go_on() {
    let soon = day(10);
    let body = format!(r#"{{"id":"gpt-6.1-terra","shutdown_date":"{soon}"}}"#);
    let (fake, mut mcp) = looked_up(Action::json(200, body.as_bytes()), false);
    let reply = call(&mut mcp);
    assert!(reply["result"]["isError"] != true, "{reply}");
    assert_eq!(fake.requests().len(), 1);
    let log = mcp.stderr();
    let warning = format!("model gpt-6.1-terra will be shut down on {soon}");
    assert_eq!(log.matches(&warning).count(), 1, "{log}");
    assert!(log.contains("set model_profiles.answer.model"), "{log}");
}

pub fn a_far_null_or_missing_date_or_a_hung_lookup_changes_nothing() {
    let far = format!(r#"{{"id":"gpt-6.1-terra","shutdown_date":"{}"}}"#, day(400));
    for (lookup, hangs) in [
        (Action::json(200, far.as_bytes()), false),
        (
            Action::json(200, br#"{"id":"gpt-6.1-terra","shutdown_date":null}"#),
            false,
        ),
        (
            Action::json(404, br#"{"error":{"message":"no such model"}}"#),
            false,
        ),
        (Action::Hang, true),
    ] {
        let (fake, mut mcp) = looked_up(lookup, hangs);
        let started = Instant::now();
        let reply = call(&mut mcp);
        assert!(reply["result"]["isError"] != true, "{reply}");
        assert!(started.elapsed() < PATIENCE);
        assert_eq!(fake.requests().len(), 1);
        assert!(!mcp.stderr().contains("shut down on"), "{}", mcp.stderr());
    }
}

pub fn without_lookups_the_provider_is_not_asked() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &fixture("response-no-search.json")));
    let mut mcp = Mcp::spawn(Opts::upstream(&fake.url).env("OPENAI_MODEL_LOOKUPS", "false"));
    mcp.initialize("2025-11-25");
    let _ = call(&mut mcp);
    assert!(fake.lookups().is_empty());
}
