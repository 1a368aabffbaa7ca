//! The call engine on its own: admission, queueing, outcomes, cancellation, timeouts,
//! retries and progress, with no MCP JSON anywhere.

use super::*;
use crate::fixture;
use crate::io::{HttpReply, TransportError, TransportErrorKind};
use crate::openai::{FailureKind, RequestPlan};
use crate::testing::start_instant;
use std::time::Duration;

fn settings(max_inflight: usize, max_queue: usize) -> Settings {
    Settings {
        max_inflight,
        max_queue,
        timeout: Duration::from_secs(10),
        max_retries: 2,
        progress_interval: Duration::from_secs(1),
        max_citations: 3,
        base: "http://upstream/v1".into(),
        url: "http://upstream/v1/responses".into(),
        instructions_json: b"\"be brief\"".to_vec(),
        stream: false,
        idle_timeout: Duration::from_secs(60),
        fetch_pace: Duration::from_secs(1),
        trace_attempts: false,
        flex_unavailable: crate::settings::FlexUnavailable::Default,
    }
}

fn plan() -> Planned {
    Planned {
        plan: RequestPlan {
            model: "gpt-5-mini".into(),
            input: "q".into(),
            ..RequestPlan::default()
        },
        adjustments: Vec::new(),
    }
}

struct Bench {
    engine: CallEngine<u32>,
    now: Now,
}

impl Bench {
    fn new(max_inflight: usize, max_queue: usize) -> Self {
        Bench {
            engine: CallEngine::new(settings(max_inflight, max_queue), 7),
            now: Now {
                instant: start_instant(),
                unix_secs: 0,
            },
        }
    }

    fn start(&mut self, id: u32, progress: bool) -> Result<(), Refused> {
        let token = progress.then(|| ProgressToken::from_value(&id.into()).unwrap());
        let rid = RequestId::Int(id.to_string());
        self.engine
            .start(self.now, rid.into(), id, plan(), token, "2025-08-09".into())
    }

    fn events(&mut self) -> Vec<CallEvent<u32>> {
        std::iter::from_fn(|| self.engine.poll_event()).collect()
    }

    fn sends(events: &[CallEvent<u32>]) -> Vec<AttemptId> {
        events
            .iter()
            .filter_map(|e| match e {
                CallEvent::Send(r) => Some(r.attempt),
                _ => None,
            })
            .collect()
    }

    fn ok(&mut self, attempt: AttemptId) {
        let reply = HttpReply {
            status: 200,
            headers: Vec::new(),
            body: fixture("response-no-search.json"),
        };
        self.engine.handle_reply(self.now, attempt, reply);
    }

    fn fire(&mut self) {
        self.now.instant = self.engine.poll_timeout().expect("a deadline");
        self.engine.handle_timeout(self.now);
    }
}

#[test]
fn a_call_sends_once_and_finishes_with_the_answer() {
    let mut b = Bench::new(4, 4);
    b.start(1, false).unwrap();
    let events = b.events();
    let [CallEvent::Send(request)] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(request.url, "http://upstream/v1/responses");
    assert!(std::str::from_utf8(&request.body)
        .unwrap()
        .contains("\"instructions\":\"be brief\""));
    b.ok(request.attempt);
    match b.events().as_slice() {
        [CallEvent::Finished {
            context: 1,
            outcome: Ok(answer),
            retries: 0,
            report,
        }] => {
            assert!(!answer.answer.is_empty());
            assert_eq!(report.attempts, 1);
            assert!(report.usage.is_some(), "the usage of the response is read");
        }
        other => panic!("{other:?}"),
    }
    assert!(b.engine.is_empty());
    assert_eq!(b.engine.poll_timeout(), None);
}

#[test]
fn calls_beyond_the_slots_queue_and_start_when_one_frees() {
    let mut b = Bench::new(1, 1);
    b.start(1, false).unwrap();
    b.start(2, false).unwrap();
    let first = Bench::sends(&b.events());
    assert_eq!(first.len(), 1, "the second call waits");
    assert_eq!(
        b.start(3, false),
        Err(Refused::Busy {
            running: 1,
            queued: 1
        })
    );
    assert_eq!(b.start(1, false), Err(Refused::DuplicateId));
    b.ok(first[0]);
    let events = b.events();
    assert!(matches!(events[0], CallEvent::Finished { context: 1, .. }));
    assert_eq!(Bench::sends(&events).len(), 1, "the queued call starts");
}

#[test]
fn a_call_backing_off_keeps_its_slot() {
    let mut b = Bench::new(1, 4);
    b.start(1, false).unwrap();
    b.start(2, false).unwrap();
    let first = Bench::sends(&b.events());
    b.fire(); // the first attempt times out and backs off
    let events = b.events();
    assert_eq!(
        events,
        [CallEvent::Abort(first[0])],
        "the queued call still waits"
    );
    b.fire(); // the retry takes the slot it kept
    assert_eq!(Bench::sends(&b.events()).len(), 1);
    assert_eq!(b.engine.queued(), 1);
}

#[test]
fn cancel_aborts_a_running_call_and_drops_it_silently() {
    let mut b = Bench::new(1, 4);
    b.start(1, false).unwrap();
    b.start(2, false).unwrap();
    let attempt = Bench::sends(&b.events())[0];
    assert!(b.engine.cancel(b.now, &RequestId::Int("2".into()).into()));
    assert_eq!(
        b.events(),
        [CallEvent::Dropped {
            context: 2,
            spent: None
        }],
        "queued: no abort, and nothing spent"
    );
    assert!(b.engine.cancel(b.now, &RequestId::Int("1".into()).into()));
    let events = b.events();
    let [CallEvent::Abort(aborted), CallEvent::Dropped {
        context: 1,
        spent: Some(spent),
    }] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert_eq!(*aborted, attempt);
    // Its request reached OpenAI: charged an estimate of what it sent.
    assert!(spent.estimated);
    let usage = spent.usage.as_ref().expect("an estimate");
    assert!(usage.input_tokens > 0, "{usage:?}");
    assert_eq!(spent.attempts, 1);
    assert!(!b.engine.cancel(b.now, &RequestId::Int("1".into()).into()));
    b.ok(attempt);
    assert!(b.events().is_empty(), "a late reply is ignored");
}

#[test]
fn timeouts_abort_back_off_and_finally_fail() {
    let mut b = Bench::new(1, 1);
    b.start(1, false).unwrap();
    let mut attempts = Bench::sends(&b.events());
    for _ in 0..2 {
        b.fire(); // the attempt's deadline: abort, then back off
        let events = b.events();
        assert_eq!(events, [CallEvent::Abort(*attempts.last().unwrap())]);
        b.fire(); // the backoff's end: a new attempt
        attempts.extend(Bench::sends(&b.events()));
    }
    assert_eq!(attempts.len(), 3, "the first attempt and two retries");
    b.fire();
    match b.events().as_slice() {
        [CallEvent::Abort(_), CallEvent::Finished {
            outcome: Err(failure),
            retries: 2,
            ..
        }] => assert_eq!(failure.kind, FailureKind::Timeout),
        other => panic!("{other:?}"),
    }
}

#[test]
fn permanent_transport_failures_are_not_retried() {
    let mut b = Bench::new(1, 1);
    b.start(1, false).unwrap();
    let attempt = Bench::sends(&b.events())[0];
    let error = TransportError {
        kind: TransportErrorKind::Tls,
        detail: "bad certificate".into(),
    };
    b.engine.handle_failure(b.now, attempt, error);
    match b.events().as_slice() {
        [CallEvent::Finished {
            outcome: Err(failure),
            retries: 0,
            ..
        }] => assert_eq!(failure.kind, FailureKind::Tls),
        other => panic!("{other:?}"),
    }
}

#[test]
fn progress_increases_at_the_interval_and_stops_at_the_end() {
    let mut b = Bench::new(1, 1);
    b.start(1, true).unwrap();
    let events = b.events();
    let attempt = Bench::sends(&events)[0];
    let mut seen: Vec<u64> = Vec::new();
    let mut collect = |events: Vec<CallEvent<u32>>| {
        for e in events {
            if let CallEvent::Progress { progress, .. } = e {
                seen.push(progress);
            }
        }
    };
    collect(events);
    for _ in 0..3 {
        b.fire();
        collect(b.events());
    }
    assert_eq!(seen, [1, 2, 3, 4]);
    b.ok(attempt);
    let end = b.events();
    assert!(
        matches!(end.as_slice(), [CallEvent::Finished { .. }]),
        "{end:?}"
    );
    assert_eq!(b.engine.poll_timeout(), None, "no progress after the end");
}

#[test]
fn identity_fetches_have_a_room_of_their_own_beside_full_reads() {
    let mut b = Bench::new(2, 2);
    let now = b.now;
    let stored = |work: Work| (work, Planned::default());
    for n in 0..MAX_FETCHES {
        let (work, planned) = stored(Work::Read(format!("resp_{n}")));
        b.engine
            .start_internal(now, 1, work, planned, String::new())
            .unwrap();
    }
    let (work, planned) = stored(Work::Read("resp_more".into()));
    assert!(
        b.engine
            .start_internal(now, 1, work, planned, String::new())
            .is_err(),
        "reads are full"
    );
    // The identity provider's documents still go out, up to their own room.
    for n in 0..MAX_IDENTITY_FETCHES {
        let (work, planned) = stored(Work::Fetch(format!("http://idp/{n}")));
        b.engine
            .start_internal(now, 2, work, planned, String::new())
            .unwrap();
    }
    let (work, planned) = stored(Work::Fetch("http://idp/more".into()));
    assert!(b
        .engine
        .start_internal(now, 2, work, planned, String::new())
        .is_err());
}
