use super::*;

const NOW: u64 = 1_764_201_599; // 2025-11-26T23:59:59Z: the last second of a minute and a day

fn limits() -> (Limit, Limit) {
    let own = Limit {
        calls_per_minute: Some(2),
        spend_per_day: None,
    };
    let service = Limit {
        calls_per_minute: None,
        spend_per_day: Some(Picodollars(5_000)),
    };
    (own, service)
}

#[test]
fn a_reserve_names_the_windows_of_now_and_the_limits_to_check() {
    let name = HoldName {
        holder: "h".into(),
        n: 1,
    };
    let held = (Picodollars(9), &name);
    let StoreOp::Reserve { keys, args, hold } = reserve("ci", limits(), NOW, held) else {
        panic!("a reserve");
    };
    let (minute, day) = (NOW / 60, NOW / 86_400);
    assert_eq!(
        keys,
        [
            format!("orm:c:ci:{minute}"),
            format!("orm:c:*:{minute}"),
            format!("orm:s:ci:{day}"),
            format!("orm:s:*:{day}"),
            format!("orm:r:ci:{day}"),
            format!("orm:r:*:{day}"),
            format!("orm:r:ci:{}", day - 1),
            format!("orm:r:*:{}", day - 1),
        ]
    );
    // The client's calls and the service's spend are limited; the calls keys live two
    // minutes, so a count outlives its window by one at most; the estimate is held in
    // keys that live two days.
    assert_eq!(args, [2, -1, -1, 5_000, 120, 9, 172_800]);
    assert_eq!(hold, name);
    // One second later is another minute and another day: other keys.
    let StoreOp::Reserve { keys: next, .. } = reserve("ci", limits(), NOW + 1, held) else {
        panic!("a reserve");
    };
    assert!(keys.iter().zip(&next).all(|(a, b)| a != b));
}

#[test]
fn the_answer_of_a_reserve_says_which_limit_and_when_it_resets() {
    assert_eq!(reserved((0, 0, 0), limits(), NOW), Ok(Ok(())));
    let Ok(Err(calls)) = reserved((1, 2, 0), limits(), NOW) else {
        panic!("the client's calls per minute");
    };
    assert_eq!(
        (
            calls.scope,
            calls.kind,
            calls.resets_at,
            calls.retry_after_secs
        ),
        (Scope::Client, LimitKind::CallsPerMinute(2), NOW + 1, 1)
    );
    let Ok(Err(spend)) = reserved((4, 7_000, 300), limits(), NOW) else {
        panic!("the service's spend");
    };
    assert_eq!(
        spend.kind,
        LimitKind::SpendPerDay {
            limit: Picodollars(5_000),
            spent: Picodollars(7_000),
            held: Picodollars(300),
        }
    );
    assert_eq!(spend.scope, Scope::Instance);
    // A limit it was not asked about, or a number out of range, is the store's error.
    for reached in [2, 3, 5, -1] {
        assert!(
            reserved((reached, 1, 0), limits(), NOW).is_err(),
            "{reached}"
        );
    }
}

#[test]
fn spend_and_release_name_the_same_windows_and_never_overflow() {
    let StoreOp::Spend {
        keys,
        amount,
        ttl_secs,
    } = spend("ci", Picodollars(u64::MAX), NOW)
    else {
        panic!("a spend");
    };
    let day = NOW / 86_400;
    assert_eq!(keys, [format!("orm:s:ci:{day}"), format!("orm:s:*:{day}")]);
    assert_eq!((amount, ttl_secs), (i64::MAX, 2 * 86_400));
    let StoreOp::Release { keys } = release("ci", NOW) else {
        panic!("a release");
    };
    let minute = NOW / 60;
    assert_eq!(
        keys,
        [format!("orm:c:ci:{minute}"), format!("orm:c:*:{minute}")]
    );
}

#[test]
fn a_hold_and_its_claim_name_the_same_keys_and_the_claim_is_read_as_untrusted() {
    let usage = crate::openai::Usage {
        input_tokens: 781,
        web_searches: 2,
        ..crate::openai::Usage::default()
    };
    let run = HeldRun {
        response_id: "resp_1",
        client: "ci",
        tool: "answer",
        model: "gpt-6.1-terra",
        amount: Picodollars(781_000_000),
        usage: &usage,
        created: NOW,
        ends: NOW + 3_600,
    };
    let StoreOp::Script { script, keys, args } = hold_background(&run) else {
        panic!("a script");
    };
    let day = NOW / 86_400;
    assert_eq!(script, HOLD_SCRIPT);
    assert_eq!(
        keys,
        [
            format!("orm:s:ci:{day}"),
            format!("orm:s:*:{day}"),
            "orm:h:resp_1".to_owned(),
            "orm:hq".to_owned()
        ]
    );
    assert_eq!(args[0], "781000000");
    assert_eq!(args[3..7], ["781", "0", "0", "2"]);
    // Swept a minute after its task's end, if nobody claimed it by then.
    assert_eq!(args[7], (NOW + 3_660).to_string());
    let StoreOp::Script { script, keys, .. } = claim_background_end("resp_1") else {
        panic!("a script");
    };
    assert_eq!(script, CLAIM_SCRIPT);
    assert_eq!(keys, ["orm:b:resp_1", "orm:h:resp_1", "orm:hq"]);
    let row = |cells: &[&str]| vec![cells.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>()];
    assert_eq!(end_claimed(&row(&["lost"])), Ok(EndClaim::Lost));
    assert_eq!(
        end_claimed(&row(&["won"])),
        Ok(EndClaim::Won { held: None })
    );
    let Ok(EndClaim::Won { held: Some(held) }) = end_claimed(&row(&["won", "781", "0", "5", "2"]))
    else {
        panic!("a hold's estimate");
    };
    assert_eq!(
        (held.input_tokens, held.output_tokens, held.web_searches),
        (781, 5, 2)
    );
    for odd in [
        row(&[]),
        row(&["won", "1"]),
        row(&["won", "-1", "0", "0", "0"]),
        row(&["maybe"]),
        Vec::new(),
    ] {
        assert!(end_claimed(&odd).is_err(), "{odd:?}");
    }
}

#[test]
fn a_sweeps_answer_is_read_as_untrusted() {
    let row = |cells: &[&str]| cells.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>();
    let good = row(&[
        "resp_1",
        "781000000",
        "781",
        "0",
        "0",
        "2",
        "ci",
        "answer",
        "gpt-6.1-terra",
        "900",
    ]);
    let runs = swept(std::slice::from_ref(&good)).unwrap_or_default();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0].amount, runs[0].usage.web_searches, runs[0].created),
        (Picodollars(781_000_000), 2, 900)
    );
    assert_eq!(swept(&[]), Ok(Vec::new()));
    let mut short = good.clone();
    short.pop();
    let mut negative = good.clone();
    negative[1] = "-5".into();
    for odd in [vec![short], vec![negative], vec![good; 17]] {
        assert!(swept(&odd).is_err(), "{odd:?}");
    }
}

#[test]
fn an_unhold_names_the_held_keys_of_the_day_it_was_admitted() {
    let name = HoldName {
        holder: "h".into(),
        n: 1,
    };
    let StoreOp::Unhold { keys, hold } = unhold("ci", &name, NOW) else {
        panic!("an unhold");
    };
    let day = NOW / 86_400;
    assert_eq!(keys, [format!("orm:r:ci:{day}"), format!("orm:r:*:{day}")]);
    assert_eq!(hold, name);
}
