use super::*;
use crate::clients::Limit;
use crate::mcp::ProtocolVersion;
use crate::openai::pricing::Picodollars;
use crate::openai::FailureKind;
use crate::tools::Tool;

/// A ledger for `config`, and the roster its calls are of.
fn books(config: &ServerConfig) -> (Ledger, crate::clients::Clients) {
    (Ledger::new(config), config.clients.clone())
}

fn config() -> ServerConfig {
    ServerConfig {
        instance_limit: Limit {
            calls_per_minute: None,
            spend_per_day: Some(Picodollars(1)),
        },
        ..ServerConfig::default()
    }
}

fn call() -> CallOf {
    CallOf {
        tool: Tool::AnswerQuick,
        version: ProtocolVersion::V2025_11_25,
        transport: Transport::Http,
        client: ClientId::DEFAULT,
        task: true,
        trace: None,
        reservation: Reservation::default(),
        arrival: Default::default(),
    }
}

fn report(output_tokens: u64) -> Report {
    Report {
        usage: Some(Usage {
            response_id: Some("resp_1".into()),
            input_tokens: 100_000,
            output_tokens,
            ..Usage::default()
        }),
        adjustments: Vec::new(),
        model: crate::calls::ModelSource::default(),
        attempts: 1,
        wall: Duration::from_millis(5),
        upstream: crate::calls::Upstream::default(),
        estimated: false,
    }
}

fn end(report: &Report, lane: Lane) -> End<'_> {
    End {
        model: "gpt-6.1-terra",
        failure: None,
        report,
        took: Duration::from_secs(90),
        lane,
        cancelled: false,
    }
}

#[test]
fn a_background_end_is_counted_once_and_spent_against_the_limits() {
    let (mut ledger, clients) = books(&config());
    let report = report(0);
    assert_eq!(
        ledger.admit(&clients, &call(), None, 100),
        CallAdmission::Admitted(Reservation::default())
    );
    let first = ledger.background_ended(
        &clients,
        "resp_1",
        &call(),
        &end(&report, Lane::Background),
        100,
    );
    let again = ledger.background_ended(
        &clients,
        "resp_1",
        &call(),
        &end(&report, Lane::Background),
        101,
    );
    assert_eq!(first, again, "a second read is priced the same");
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(
        (record.task, record.outcome, record.duration),
        (true, Outcome::Ok, Duration::from_secs(90))
    );
    assert_eq!(record.cost, first.total());
    // The day's spend is over the limit of one picodollar: the next call is refused.
    let refused = ledger.admit(&clients, &call(), None, 102);
    assert!(
        matches!(refused, CallAdmission::Refused(e) if Refusal::from(e.kind) == Refusal::SpendPerDay),
        "{refused:?}"
    );
    let text = String::from_utf8(ledger.render(&clients, Gauges::default())).unwrap_or_default();
    let calls: Vec<_> = text
        .lines()
        .filter(|l| l.starts_with("openai_responses_mcp_calls_total{"))
        .collect();
    assert_eq!(calls.len(), 1, "{text}");
    assert!(calls[0].ends_with(" 1"), "{calls:?}");
}

#[test]
fn background_tokens_cost_the_completion_window_percent() {
    let mut c = config();
    c.tasks.completion_window = crate::tasks::CompletionWindow::EightHours;
    c.tasks.window_price_percent = Some(50);
    let (ledger, _) = books(&c);
    let report = report(0);
    let direct = ledger.cost("gpt-6.1-terra", report.usage.as_ref(), Lane::Direct);
    let background = ledger.cost("gpt-6.1-terra", report.usage.as_ref(), Lane::Background);
    // 100,000 input tokens at $1 per million, then at half price.
    assert_eq!(direct.total(), Some(Picodollars(100_000_000_000)));
    assert_eq!(background.total(), Some(Picodollars(50_000_000_000)));
}

#[test]
fn the_memory_of_counted_background_ends_is_bounded() {
    let (mut ledger, clients) = books(&ServerConfig::default());
    let report = report(1);
    for n in 0..=COUNTED_IDS {
        let id = format!("resp_{n}");
        ledger.background_ended(&clients, &id, &call(), &end(&report, Lane::Background), 1);
    }
    assert_eq!(ledger.counted.len(), COUNTED_IDS);
    assert_eq!(ledger.counted_set.len(), COUNTED_IDS);
    // The oldest was forgotten; the newest is still known.
    let before = std::iter::from_fn(|| ledger.poll_record()).count();
    assert_eq!(before, COUNTED_IDS + 1);
    let last = format!("resp_{COUNTED_IDS}");
    ledger.background_ended(&clients, &last, &call(), &end(&report, Lane::Background), 1);
    assert_eq!(ledger.poll_record(), None);
}

#[test]
fn a_refusal_is_counted_and_recorded_under_its_reason_with_a_span_of_its_own() {
    let (mut ledger, clients) = books(&ServerConfig::default());
    let trace = crate::trace_context::TraceParent {
        trace_id: [1; 16],
        parent_id: [2; 8],
        flags: 1,
    };
    let traced = CallOf {
        trace: Some(trace),
        ..call()
    };
    ledger.refused(
        &clients,
        &traced,
        Refusal::NoApiKey,
        Some("gpt-6.1-terra"),
        7,
    );
    ledger.refused(&clients, &traced, Refusal::NoApiKey, None, 8);
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].outcome, Outcome::Refused(Refusal::NoApiKey));
    assert_eq!(records[0].model.as_deref(), Some("gpt-6.1-terra"));
    let spans: Vec<_> = records
        .iter()
        .filter_map(|r| r.trace.map(|t| t.1))
        .collect();
    assert_eq!(spans.len(), 2);
    assert_ne!(spans[0], spans[1]);
    let line: serde_json::Value = serde_json::from_str(&records[0].to_json()).unwrap_or_default();
    assert_eq!(line["outcome"], "refused_no_api_key", "{line}");
    assert_eq!(line["transport"], "http", "{line}");
    let text = String::from_utf8(ledger.render(&clients, Gauges::default())).unwrap_or_default();
    assert!(
        text.contains("openai_responses_mcp_refusals_total{reason=\"no_api_key\"} 2"),
        "{text}"
    );
}

#[test]
fn without_a_call_log_calls_are_counted_and_no_record_is_built() {
    let (mut ledger, clients) = books(&ServerConfig {
        call_records: false,
        ..config()
    });
    let report = report(0);
    ledger.ended(&clients, &call(), &end(&report, Lane::Direct), 1);
    ledger.refused(&clients, &call(), Refusal::Busy, None, 2);
    assert_eq!(ledger.poll_record(), None);
    let text = String::from_utf8(ledger.render(&clients, Gauges::default())).unwrap_or_default();
    let calls = text
        .lines()
        .filter(|l| l.starts_with("openai_responses_mcp_calls_total{"))
        .count();
    assert_eq!(calls, 2, "{text}");
    // The spend still counts: the next call is refused by the day's limit.
    assert!(matches!(
        ledger.admit(&clients, &call(), None, 3),
        CallAdmission::Refused(_)
    ));
}

#[test]
fn with_a_store_a_background_end_is_counted_by_the_instance_that_claims_it() {
    use crate::settings::{OnUnavailable, StoreSettings};
    use crate::store::StoreOp;
    let config = ServerConfig {
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        call_records: true,
        ..config()
    };
    let report = report(1_000);
    let mut claims = Vec::new();
    for (response, claimed) in [("resp_a", true), ("resp_b", false), ("resp_c", true)] {
        let (mut ledger, mut clients) = books(&config);
        let estimate = ledger.background_ended(
            &clients,
            response,
            &call(),
            &end(&report, Lane::Background),
            7,
        );
        assert!(estimate.total().is_some(), "the result is priced at once");
        assert!(
            ledger.poll_record().is_none(),
            "nothing is counted before the claim"
        );
        let (id, op) = ledger.poll_store_op().expect("a claim is asked");
        let StoreOp::Script { script, keys, args } = &op else {
            panic!("not a claim: {op:?}");
        };
        assert_eq!(*script, crate::store::CLAIM_SCRIPT);
        assert_eq!(
            (keys[0].as_str(), args[0].as_str()),
            (format!("orm:b:{response}").as_str(), "172800")
        );
        claims.push(keys[0].clone());
        // A second read on this instance asks nothing more.
        ledger.background_ended(
            &clients,
            response,
            &call(),
            &end(&report, Lane::Background),
            8,
        );
        assert!(ledger.poll_store_op().is_none());
        let decided = ledger.store_answered(
            &mut clients,
            id,
            claim_answer(claimed, None),
            Duration::ZERO,
            false,
        );
        assert!(decided.is_none(), "a claim decides no call");
        let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
        assert_eq!(
            records.len(),
            usize::from(claimed),
            "{response}: {records:?}"
        );
        let spends: Vec<_> = std::iter::from_fn(|| ledger.poll_store_op()).collect();
        assert_eq!(
            spends
                .iter()
                .filter(|(_, op)| matches!(op, StoreOp::Spend { .. }))
                .count(),
            usize::from(claimed),
            "{response}: spent once, by the claimer: {spends:?}"
        );
    }
    assert_eq!(claims.len(), 3);
}

/// What the claim script answers: `won` (with the hold's estimate) or `lost`.
fn claim_answer(won: bool, held: Option<[u64; 4]>) -> crate::store::StoreReply {
    let mut row = vec![if won { "won" } else { "lost" }.to_owned()];
    row.extend(held.into_iter().flatten().map(|n| n.to_string()));
    crate::store::StoreReply::Rows(vec![row])
}

#[test]
fn a_cancelled_call_is_charged_its_estimate_and_recorded_as_cancelled() {
    let (mut ledger, clients) = books(&config());
    assert_eq!(
        ledger.admit(&clients, &call(), None, 100),
        CallAdmission::Admitted(Reservation::default())
    );
    let mut spent = report(0);
    spent.estimated = true;
    spent.model.model = "gpt-6.1-terra".into();
    if let Some(usage) = &mut spent.usage {
        usage.response_id = None;
        usage.web_searches = 2;
    }
    ledger.cancelled(&clients, &call(), &spent, 100);
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    let [record] = records.as_slice() else {
        panic!("{records:?}");
    };
    assert_eq!(record.outcome, Outcome::Cancelled);
    assert!(record.usage_estimated);
    assert!(record.cost.is_some_and(|c| c.0 > 0), "{record:?}");
    let line = record.to_json();
    assert!(line.contains(r#""outcome":"cancelled""#), "{line}");
    assert!(line.contains(r#""usage_estimated":true"#), "{line}");
    // Charged like any call: the day's spend is over the limit, the next is refused.
    let refused = ledger.admit(&clients, &call(), None, 101);
    assert!(
        matches!(refused, CallAdmission::Refused(e) if Refusal::from(e.kind) == Refusal::SpendPerDay),
        "{refused:?}"
    );
    // An estimate is no report: the token counters stay OpenAI's.
    let text = String::from_utf8(ledger.render(&clients, Gauges::default())).unwrap_or_default();
    assert!(!text.contains("tokens_total{"), "{text}");
    assert!(text.contains(r#"outcome="cancelled""#), "{text}");
}

/// A config whose client has a day's spend limit of `usd`, and no instance limit.
fn capped(usd: f64) -> ServerConfig {
    ServerConfig {
        instance_limit: Limit {
            calls_per_minute: None,
            spend_per_day: Picodollars::from_usd(usd),
        },
        call_records: true,
        ..ServerConfig::default()
    }
}

fn sent(input_tokens: u64) -> Usage {
    Usage {
        input_tokens,
        ..Usage::default()
    }
}

/// The cost of `usage` on gpt-6.1-terra, in picodollars.
fn priced(ledger: &Ledger, usage: &Usage, lane: Lane) -> u64 {
    ledger
        .cost("gpt-6.1-terra", Some(usage), lane)
        .total()
        .map_or(0, |c| c.0)
}

#[test]
fn a_cancelled_call_is_charged_its_profiles_median_never_below_its_input() {
    let (mut ledger, clients) = books(&capped(1000.0));
    let mut answered = report(4_416);
    answered.model.model = "gpt-6.1-terra".into();
    for input in [31_073, 20_000, 45_000] {
        if let Some(usage) = &mut answered.usage {
            usage.input_tokens = input;
        }
        let end = End {
            model: "gpt-6.1-terra",
            ..end(&answered, Lane::Direct)
        };
        ledger.ended(&clients, &call(), &end, 100);
    }
    let mut spent = report(0);
    spent.estimated = true;
    spent.model.model = "gpt-6.1-terra".into();
    spent.usage = Some(sent(789));
    ledger.cancelled(&clients, &call(), &spent, 100);
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    let Some(record) = records.last() else {
        panic!("no record");
    };
    let usage = record.usage.clone().unwrap_or_default();
    assert_eq!((usage.input_tokens, usage.output_tokens), (31_073, 4_416));
    assert!(record.usage_estimated);
    // The input sent wins over a smaller median.
    spent.usage = Some(sent(60_000));
    ledger.cancelled(&clients, &call(), &spent, 100);
    let record = std::iter::from_fn(|| ledger.poll_record()).last();
    let usage = record.and_then(|r| r.usage).unwrap_or_default();
    assert_eq!((usage.input_tokens, usage.output_tokens), (60_000, 4_416));
    // Another profile's calls are no ground for this one's estimate.
    let other = CallOf {
        tool: Tool::AnswerDetailed,
        ..call()
    };
    spent.usage = Some(sent(789));
    ledger.cancelled(&clients, &other, &spent, 100);
    let record = std::iter::from_fn(|| ledger.poll_record()).last();
    let usage = record.and_then(|r| r.usage).unwrap_or_default();
    let bound = (FIRST_CALL_INPUT_TOKENS, FIRST_CALL_OUTPUT_TOKENS);
    assert_eq!((usage.input_tokens, usage.output_tokens), bound);
}

#[test]
fn a_cancelled_call_is_never_charged_what_another_clients_calls_cost() {
    let mut config = capped(1000.0);
    config.clients = crate::clients::Clients::new(vec![
        crate::clients::NamedClient {
            name: "big".into(),
            limit: Limit::default(),
            identity: None,
            gateway: false,
        },
        crate::clients::NamedClient {
            name: "small".into(),
            limit: Limit::default(),
            identity: None,
            gateway: false,
        },
    ])
    .unwrap_or_default();
    let (mut ledger, clients) = books(&config);
    let (Some(big), Some(small)) = (clients.id(0), clients.id(1)) else {
        panic!("two clients");
    };
    let of = |client| CallOf { client, ..call() };
    // Three large calls of one client, one small call of the other.
    let mut answered = report(200_000);
    answered.model.model = "gpt-6.1-terra".into();
    for _ in 0..3 {
        ledger.ended(&clients, &of(big), &end(&answered, Lane::Direct), 100);
    }
    let small_call = report(400);
    ledger.ended(&clients, &of(small), &end(&small_call, Lane::Direct), 100);
    let _ = std::iter::from_fn(|| ledger.poll_record()).count();
    // The small client abandons a call OpenAI had not reported yet.
    let mut spent = report(0);
    spent.estimated = true;
    spent.model.model = "gpt-6.1-terra".into();
    spent.usage = Some(sent(789));
    ledger.cancelled(&clients, &of(small), &spent, 101);
    let record = std::iter::from_fn(|| ledger.poll_record()).last();
    let usage = record.and_then(|r| r.usage).unwrap_or_default();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (100_000, 400),
        "its own median call, not the other client's"
    );
}

#[test]
fn a_running_background_task_holds_its_estimate_until_its_end_settles_it() {
    // A cap the hold alone reaches: the owner is refused while the run goes on.
    let (mut ledger, clients) = books(&capped(0.00001));
    assert_eq!(
        ledger.admit(&clients, &call(), None, 100),
        CallAdmission::Admitted(Reservation::default())
    );
    let known = sent(1_000);
    ledger.background_started(
        &clients,
        ("resp_h", 4_000),
        &call(),
        "gpt-6.1-terra",
        Some(&known),
        100,
    );
    assert!(
        matches!(
            ledger.admit(&clients, &call(), None, 101),
            CallAdmission::Refused(_)
        ),
        "a running task counts against the cap"
    );
    assert!(ledger.poll_record().is_none(), "no line until it ends");
    // It ends, reporting less than the hold: the day holds what OpenAI reported.
    let mut ended = report(0);
    if let Some(usage) = &mut ended.usage {
        usage.input_tokens = 10;
    }
    ledger.background_ended(
        &clients,
        "resp_h",
        &call(),
        &end(&ended, Lane::Background),
        102,
    );
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    let [record] = records.as_slice() else {
        panic!("{records:?}");
    };
    let reported = priced(&ledger, &sent(10), Lane::Background);
    assert_eq!(record.cost, Some(Picodollars(reported)));
    assert!(!record.usage_estimated);
    let text = String::from_utf8(ledger.render(
        &clients,
        Gauges {
            now: 102,
            ..Gauges::default()
        },
    ))
    .unwrap_or_default();
    let today = text
        .lines()
        .find(|l| l.starts_with("openai_responses_mcp_spend_today_usd{"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        today.ends_with(&format!(" {}", Picodollars(reported).usd())),
        "the hold left the day's spend: {today}"
    );
}

#[test]
fn a_background_task_cancelled_or_gone_without_a_report_is_charged_its_hold() {
    for cancelled in [true, false] {
        let (mut ledger, clients) = books(&capped(1000.0));
        let known = sent(2_000);
        ledger.background_started(
            &clients,
            ("resp_c", 4_000),
            &call(),
            "gpt-6.1-terra",
            Some(&known),
            100,
        );
        let mut silent = report(0);
        silent.usage = None;
        let end = End {
            failure: (!cancelled).then_some(FailureKind::Expired),
            cancelled,
            ..end(&silent, Lane::Background)
        };
        ledger.background_ended(&clients, "resp_c", &call(), &end, 130);
        let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
        let [record] = records.as_slice() else {
            panic!("{records:?}");
        };
        // No history of its own: the first-call bound, raised to what was sent.
        let expected = priced(&ledger, &recent::first_call(None), Lane::Background);
        assert!(expected > 0);
        assert_eq!(record.cost, Some(Picodollars(expected)), "{cancelled}");
        assert!(record.usage_estimated);
        let outcome = if cancelled {
            Outcome::Cancelled
        } else {
            Outcome::Upstream(FailureKind::Expired)
        };
        assert_eq!(record.outcome, outcome);
    }
}

#[test]
fn with_a_store_the_hold_is_the_stores_and_the_claim_gives_it_back() {
    use crate::settings::{OnUnavailable, StoreSettings};
    use crate::store::{StoreOp, CLAIM_SCRIPT, HOLD_SCRIPT};
    let config = ServerConfig {
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        ..capped(1000.0)
    };
    let (mut ledger, clients) = books(&config);
    ledger.background_started(
        &clients,
        ("resp_s", 4_000),
        &call(),
        "gpt-6.1-terra",
        Some(&sent(500)),
        100,
    );
    let (_, hold) = ledger.poll_store_op().expect("the hold goes to the store");
    let StoreOp::Script { script, keys, .. } = &hold else {
        panic!("not a hold: {hold:?}");
    };
    assert_eq!(*script, HOLD_SCRIPT);
    assert_eq!(keys[2..], ["orm:h:resp_s", "orm:hq"]);
    ledger.background_ended(
        &clients,
        "resp_s",
        &call(),
        &end(&report(3), Lane::Background),
        101,
    );
    let (_, claim) = ledger.poll_store_op().expect("a claim");
    let StoreOp::Script { script, keys, .. } = &claim else {
        panic!("not a claim: {claim:?}");
    };
    assert_eq!(*script, CLAIM_SCRIPT);
    assert_eq!(keys.as_slice(), ["orm:b:resp_s", "orm:h:resp_s", "orm:hq"]);
}

#[test]
fn a_run_nobody_claimed_is_swept_once_a_minute_and_charged_its_hold() {
    use crate::settings::{OnUnavailable, StoreSettings};
    use crate::store::{StoreOp, StoreReply, SWEEP_SCRIPT};
    let mut config = ServerConfig {
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        ..capped(1000.0)
    };
    config.tasks.background = true;
    let (mut ledger, mut clients) = books(&config);
    let _ = ledger.admit(&clients, &call(), None, 1_000);
    let ops: Vec<_> = std::iter::from_fn(|| ledger.poll_store_op()).collect();
    let sweep = ops
        .iter()
        .find(|(_, op)| matches!(op, StoreOp::Script { script, .. } if *script == SWEEP_SCRIPT));
    let Some((id, _)) = sweep else {
        panic!("the first admission sweeps: {ops:?}");
    };
    // Not again within the minute.
    let _ = ledger.admit(&clients, &call(), None, 1_030);
    let again = std::iter::from_fn(|| ledger.poll_store_op())
        .filter(|(_, op)| matches!(op, StoreOp::Script { script, .. } if *script == SWEEP_SCRIPT))
        .count();
    assert_eq!(again, 0);
    let row = [
        "resp_o",
        "781000000",
        "781",
        "0",
        "0",
        "0",
        "default",
        "answer",
        "gpt-6.1-terra",
        "900",
    ]
    .map(str::to_owned)
    .to_vec();
    ledger.store_answered(
        &mut clients,
        *id,
        StoreReply::Rows(vec![row]),
        Duration::ZERO,
        true,
    );
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    let [record] = records.as_slice() else {
        panic!("{records:?}");
    };
    assert_eq!(record.outcome, Outcome::Upstream(FailureKind::Expired));
    assert!(record.usage_estimated && record.task);
    assert_eq!(record.duration, Duration::from_secs(100));
    // Its charge is its hold, already in the store's days: nothing is spent again.
    let spends = std::iter::from_fn(|| ledger.poll_store_op())
        .filter(|(_, op)| matches!(op, StoreOp::Spend { .. }))
        .count();
    assert_eq!(spends, 0);
    // A late read of it on this instance counts nothing more.
    ledger.background_ended(
        &clients,
        "resp_o",
        &call(),
        &end(&report(1), Lane::Background),
        1_040,
    );
    assert!(ledger.poll_record().is_none());
}

#[test]
fn an_end_claimed_elsewhere_without_a_report_is_charged_the_holds_estimate() {
    use crate::settings::{OnUnavailable, StoreSettings};
    let config = ServerConfig {
        store: Some(StoreSettings {
            on_unavailable: OnUnavailable::Refuse,
        }),
        ..capped(1000.0)
    };
    // This instance did not start the run: it knows no hold, and no call of the profile.
    let (mut ledger, mut clients) = books(&config);
    let mut silent = report(0);
    silent.usage = None;
    let cancelled = End {
        cancelled: true,
        ..end(&silent, Lane::Background)
    };
    ledger.background_ended(&clients, "resp_x", &call(), &cancelled, 200);
    let (id, _) = ledger.poll_store_op().expect("a claim");
    // The store's hold had estimated 2,000 input tokens and 2 searches.
    let answer = claim_answer(true, Some([2_000, 0, 0, 2]));
    ledger.store_answered(&mut clients, id, answer, Duration::ZERO, true);
    let records: Vec<_> = std::iter::from_fn(|| ledger.poll_record()).collect();
    let [record] = records.as_slice() else {
        panic!("{records:?}");
    };
    let usage = record.usage.clone().unwrap_or_default();
    assert_eq!((usage.input_tokens, usage.web_searches), (2_000, 2));
    assert!(record.usage_estimated && record.cost.is_some_and(|c| c.0 > 0));
    assert_eq!(record.outcome, Outcome::Cancelled);
    // What the store answered is read as untrusted: an answer the script never gives
    // counts the end here, at this instance's own estimate.
    let (mut ledger, mut clients) = books(&config);
    ledger.background_ended(&clients, "resp_y", &call(), &cancelled, 200);
    let (id, _) = ledger.poll_store_op().expect("a claim");
    let odd = crate::store::StoreReply::Rows(vec![vec!["won".into(), "x".into()]]);
    ledger.store_answered(&mut clients, id, odd, Duration::ZERO, true);
    assert_eq!(std::iter::from_fn(|| ledger.poll_record()).count(), 1);
}

#[test]
fn the_spend_limits_are_gauges_under_the_labels_the_cost_counter_uses() {
    let named = crate::clients::NamedClient {
        name: "alice".into(),
        limit: Limit {
            calls_per_minute: Some(5),
            spend_per_day: Picodollars::from_usd(2.5),
        },
        identity: None,
        gateway: false,
    };
    let unlimited = crate::clients::NamedClient {
        name: "bob".into(),
        limit: Limit::default(),
        identity: None,
        gateway: false,
    };
    let config = ServerConfig {
        clients: crate::clients::Clients::new(vec![named, unlimited]).unwrap_or_default(),
        instance_limit: Limit {
            calls_per_minute: None,
            spend_per_day: Picodollars::from_usd(40.0),
        },
        ..ServerConfig::default()
    };
    let (ledger, clients) = books(&config);
    let text = String::from_utf8(ledger.render(&clients, Gauges::default())).unwrap_or_default();
    let limits: Vec<_> = text
        .lines()
        .filter(|l| l.starts_with("openai_responses_mcp_spend_limit_usd"))
        .collect();
    assert_eq!(
        limits,
        [
            r#"openai_responses_mcp_spend_limit_usd{scope="instance"} 40"#,
            r#"openai_responses_mcp_spend_limit_usd{scope="client",client="alice"} 2.5"#,
        ],
        "{text}"
    );
    assert!(text.contains("\nopenai_responses_mcp_ready 0\n"), "{text}");
    assert!(!text.contains("store_up"), "no store, no gauge: {text}");
}
