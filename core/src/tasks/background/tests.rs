//! The poll schedule alone: reads, pace, failures, bounds.

use super::*;
use crate::tasks::Status;

const PACE: Duration = Duration::from_secs(2);

fn seen(status: Status, at: Instant) -> Seen {
    Seen {
        status,
        outcome: None,
        updated: 0,
        read_at: at,
    }
}

#[test]
fn a_stale_state_is_read_once_for_every_poll_waiting_on_it() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(10, PACE);
    p.handle_state(t0, "r", seen(Status::Working, t0));
    // Fresh: answered without a read.
    assert!(matches!(
        p.handle_request(t0, "r", 1, Want::State),
        Served::Answer(1, _)
    ));
    assert_eq!(p.poll_read(), None);
    let t1 = t0 + PACE;
    assert!(matches!(
        p.handle_request(t1, "r", 2, Want::State),
        Served::Parked
    ));
    // A read is on its way: the next poll is answered with the last state.
    assert!(matches!(
        p.handle_request(t1, "r", 3, Want::State),
        Served::Answer(3, _)
    ));
    assert!(matches!(
        p.handle_request(t1, "r", 4, Want::End),
        Served::Parked
    ));
    assert_eq!(p.poll_read().as_deref(), Some("r"));
    assert_eq!(p.poll_read(), None, "one read");
    let answered = p.handle_read(t1, "r", ReadEnd::State(seen(Status::Working, t1)));
    assert_eq!(answered.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [2]);
    // The tasks/result waits for the next poll, a whole interval later.
    assert_eq!(p.poll_timeout(), Some(t1 + PACE));
    p.handle_timeout(t1 + PACE);
    assert_eq!(p.poll_read().as_deref(), Some("r"));
    let done = p.handle_read(t1 + PACE, "r", ReadEnd::State(seen(Status::Completed, t1)));
    assert_eq!(done.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [4]);
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn failed_reads_keep_the_pace_and_the_last_state_stands_in() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(10, PACE);
    p.handle_state(t0, "r", seen(Status::Working, t0));
    let t1 = t0 + PACE;
    p.handle_request(t1, "r", 1, Want::State);
    p.handle_request(t1, "r", 2, Want::End);
    p.poll_read();
    let t2 = t1 + Duration::from_secs(7);
    let answered = p.handle_read(t2, "r", ReadEnd::Failed { again: true });
    assert!(matches!(&answered[..], [(1, Some(s))] if s.status == Status::Working));
    // The next read waits a whole interval after the failure, for any request.
    assert!(matches!(
        p.handle_request(t2, "r", 3, Want::State),
        Served::Answer(3, _)
    ));
    assert_eq!(p.poll_read(), None);
    assert_eq!(p.poll_timeout(), Some(t2 + PACE));
    // A lasting failure ends the tasks/result.
    p.handle_timeout(t2 + PACE);
    p.poll_read();
    let answered = p.handle_read(t2 + PACE, "r", ReadEnd::Failed { again: false });
    assert!(matches!(&answered[..], [(2, None)]));
}

#[test]
fn without_a_state_a_failed_read_answers_with_none_and_waiters_are_bounded() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(10, PACE);
    for n in 0..MAX_WAITING as u32 {
        assert!(matches!(
            p.handle_request(t0, "r", n, Want::State),
            Served::Parked
        ));
    }
    assert!(matches!(
        p.handle_request(t0, "r", 99, Want::State),
        Served::TooMany(99)
    ));
    p.forget(|n| *n % 2 == 1);
    let answered = p.handle_read(t0, "r", ReadEnd::Failed { again: true });
    assert_eq!(answered.len(), MAX_WAITING / 2);
    assert!(answered.iter().all(|(n, s)| n % 2 == 0 && s.is_none()));
}

#[test]
fn idle_responses_beyond_the_cap_are_forgotten_busy_ones_kept() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(2, PACE);
    p.handle_request(t0, "busy", 1, Want::End);
    for id in ["a", "b", "c"] {
        p.handle_state(t0, id, seen(Status::Completed, t0));
    }
    assert!(p.seen("a").is_none() && p.seen("b").is_none());
    assert!(p.seen("c").is_some());
    assert_eq!(p.poll_read().as_deref(), Some("busy"));
    let end = ReadEnd::State(seen(Status::Completed, t0));
    assert_eq!(
        p.handle_read(t0, "busy", end).len(),
        1,
        "the busy one was kept"
    );
}

#[test]
fn a_followed_response_is_read_at_the_follow_pace_until_it_ends_unread() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(1, Duration::from_millis(100));
    let pace = p.follow_pace();
    assert_eq!(
        pace, FOLLOW_EVERY,
        "a short poll interval is not the follow's"
    );
    p.handle_state(t0, "r", seen(Status::Working, t0));
    p.follow(t0, "r");
    assert!(p.followed("r"));
    // Nobody asks: it is read all the same, one follow pace apart.
    assert_eq!(p.poll_timeout(), Some(t0 + pace));
    p.handle_timeout(t0 + pace);
    assert_eq!(p.poll_read().as_deref(), Some("r"));
    p.handle_read(t0 + pace, "r", ReadEnd::Failed { again: true });
    assert_eq!(
        p.poll_timeout(),
        Some(t0 + 2 * pace),
        "a failure keeps the pace"
    );
    // Kept beyond the cap while followed.
    p.handle_state(t0, "other", seen(Status::Working, t0));
    assert!(p.followed("r"));
    p.handle_timeout(t0 + 2 * pace);
    assert_eq!(p.poll_read().as_deref(), Some("r"));
    p.handle_read(
        t0 + 2 * pace,
        "r",
        ReadEnd::State(seen(Status::Cancelled, t0)),
    );
    assert!(!p.followed("r"), "an end ends the follow");
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn at_most_a_few_follow_reads_are_in_flight_and_waiters_are_not_held_back() {
    let t0 = crate::testing::start_instant();
    let mut p: Polls<u32> = Polls::new(100, PACE);
    let ids: Vec<String> = (0..MAX_FOLLOW_READS + 3).map(|n| format!("r{n}")).collect();
    for id in &ids {
        p.follow(t0, id);
    }
    let due = t0 + p.follow_pace();
    p.handle_timeout(due);
    let reads: Vec<String> = std::iter::from_fn(|| p.poll_read()).collect();
    assert_eq!(reads.len(), MAX_FOLLOW_READS);
    let left_out: Vec<&String> = ids.iter().filter(|id| !reads.contains(id)).collect();
    assert_eq!(left_out.len(), 3);
    // A client's poll of one left out is read at once.
    let waited = left_out[0];
    assert!(matches!(
        p.handle_request(due, waited, 1, Want::End),
        Served::Parked
    ));
    assert_eq!(p.poll_read().as_deref(), Some(waited.as_str()));
    // As follow reads end, the rest are read, one follow pace later.
    for id in &reads {
        p.handle_read(due, id, ReadEnd::State(seen(Status::Working, due)));
    }
    p.handle_timeout(due + p.follow_pace());
    let later: Vec<String> = std::iter::from_fn(|| p.poll_read()).collect();
    assert!(
        left_out[1..].iter().all(|id| later.contains(id)),
        "{later:?}"
    );
    assert!(later.len() <= MAX_FOLLOW_READS, "{later:?}");
}
