use super::*;
use serde_json::json;

fn now(secs: u64, base: Instant) -> Now {
    Now {
        instant: base + Duration::from_secs(secs),
        unix_secs: 1_764_000_000 + secs,
    }
}

fn store(max_tasks: usize, max_bytes: usize) -> TaskStore<u32> {
    TaskStore::new(TaskSettings {
        max_tasks,
        max_bytes,
        key: TaskKey([7; 32]),
        ..TaskSettings::default()
    })
}

#[test]
fn a_task_works_then_completes_and_its_waiters_are_handed_back() {
    let base = crate::testing::start_instant();
    let mut s = store(10, 1 << 20);
    let id = s
        .create(now(0, base), Some(60_000), ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    assert!(id.starts_with("task-"));
    let task = s.get(&id).unwrap();
    assert_eq!(
        (task.status, task.ttl),
        (Status::Working, Duration::from_secs(60))
    );
    task.waiters.push(1);
    let waiters = s.finish(
        &id,
        now(5, base).unix_secs,
        Ok(json!({"content": []})),
        (Status::Completed, None),
    );
    assert_eq!(waiters, vec![1]);
    let task = s.get(&id).unwrap();
    assert_eq!(task.status, Status::Completed);
    assert_eq!(task.updated - task.created, 5);
    assert_eq!(task.outcome, Some(Outcome::new(Ok(json!({"content": []})))));
    assert_eq!(
        task.outcome.as_ref().unwrap().get(),
        Ok(json!({"content": []}))
    );
}

#[test]
fn forged_tampered_and_foreign_ids_are_refused_before_any_lookup() {
    let base = crate::testing::start_instant();
    let mut s = store(10, 1 << 20);
    let id = s
        .create(now(0, base), None, ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    assert!(s.get(&id).is_ok());
    // One flipped hex digit in the number or the seal.
    for at in [5, id.len() - 1] {
        let mut forged = id.clone().into_bytes();
        forged[at] = if forged[at] == b'0' { b'1' } else { b'0' };
        let forged = String::from_utf8(forged).unwrap();
        assert_eq!(s.get(&forged).err(), Some(Unknown::NotMinted), "{forged}");
    }
    for junk in [
        "",
        "task-",
        "task-zz",
        "786512e2-9e0d-44bd-8f29-789f320fe840",
    ] {
        assert_eq!(s.get(junk).err(), Some(Unknown::NotMinted));
    }
    assert_eq!(
        s.get(&id.to_ascii_uppercase()).err(),
        Some(Unknown::NotMinted)
    );
    // Another key (another process without the shared secret) refuses it too.
    let mut other = TaskStore::<u32>::new(TaskSettings {
        key: TaskKey([8; 32]),
        ..TaskSettings::default()
    });
    assert_eq!(other.get(&id).err(), Some(Unknown::NotMinted));
}

#[test]
fn the_ttl_is_capped_and_expiry_drops_the_task_with_its_call_and_waiters() {
    let base = crate::testing::start_instant();
    let mut s = store(10, 1 << 20);
    let id = s
        .create(now(0, base), Some(u64::MAX), ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    assert_eq!(s.get(&id).unwrap().ttl, TaskSettings::default().max_ttl);
    let short = s
        .create(now(0, base), Some(1_000), ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    s.get(&short).unwrap().waiters.push(9);
    assert_eq!(s.poll_timeout(), Some(base + Duration::from_secs(1)));
    assert!(s.expire(base).is_empty());
    let gone = s.expire(base + Duration::from_secs(1));
    assert_eq!(gone.len(), 1);
    assert_eq!(
        (gone[0].id.as_str(), gone[0].waiters.as_slice()),
        (short.as_str(), &[9][..])
    );
    assert_eq!(s.get(&short).err(), Some(Unknown::Gone));
    assert!(s.get(&id).is_ok());
}

#[test]
fn when_full_the_oldest_finished_task_goes_and_all_working_refuses() {
    let base = crate::testing::start_instant();
    let mut s = store(2, 1 << 20);
    let a = s
        .create(now(0, base), None, ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    let b = s
        .create(now(0, base), None, ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    assert_eq!(
        s.create(now(0, base), None, ClientId::DEFAULT).err(),
        Some(Full { tasks: 2 })
    );
    s.finish(
        &a,
        now(1, base).unix_secs,
        Ok(json!({})),
        (Status::Completed, None),
    );
    let c = s
        .create(now(2, base), None, ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    assert_eq!(s.get(&a).err(), Some(Unknown::Gone));
    assert!(s.get(&b).is_ok() && s.get(&c).is_ok());
}

#[test]
fn outcomes_are_held_within_the_byte_budget() {
    let base = crate::testing::start_instant();
    let mut s = store(100, 3_000);
    let big = json!({ "text": "x".repeat(1_000) });
    let ids: Vec<String> = (0..5)
        .map(|i| {
            let id = s
                .create(now(i, base), None, ClientId::DEFAULT)
                .unwrap()
                .id
                .clone();
            s.finish(
                &id,
                now(i, base).unix_secs,
                Ok(big.clone()),
                (Status::Completed, None),
            );
            id
        })
        .collect();
    assert!(s.bytes <= 3_000, "{}", s.bytes);
    assert_eq!(s.get(&ids[0]).err(), Some(Unknown::Gone));
    assert!(s.get(&ids[4]).is_ok());
}

#[test]
fn a_cancelled_task_stays_cancelled_and_cancelling_twice_does_nothing() {
    let base = crate::testing::start_instant();
    let mut s = store(10, 1 << 20);
    let id = s
        .create(now(0, base), None, ClientId::DEFAULT)
        .unwrap()
        .id
        .clone();
    let (call, _) = s.cancel(&id, now(1, base).unix_secs, "cancelled by the client");
    assert!(call.is_none());
    s.finish(
        &id,
        now(2, base).unix_secs,
        Ok(json!({})),
        (Status::Completed, None),
    );
    let task = s.get(&id).unwrap();
    assert_eq!(task.status, Status::Cancelled);
    assert!(task.outcome.is_none());
    assert_eq!(
        s.cancel(&id, now(3, base).unix_secs, "again"),
        (None, Vec::new())
    );
}

#[test]
fn pages_walk_every_task_once_in_creation_order() {
    let base = crate::testing::start_instant();
    let mut s = store(100, 1 << 20);
    let ids: Vec<String> = (0..7)
        .map(|_| {
            s.create(now(0, base), None, ClientId::DEFAULT)
                .unwrap()
                .id
                .clone()
        })
        .collect();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let (page, next) = s.page(cursor.as_deref(), 3, ClientId::DEFAULT).unwrap();
        seen.extend(page.iter().map(|t| t.id.clone()));
        match next {
            Some(n) => cursor = Some(n),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    assert_eq!(
        s.page(Some("task-bogus"), 3, ClientId::DEFAULT).err(),
        Some(Unknown::NotMinted)
    );
}

#[test]
fn the_poll_interval_starts_small_and_grows_to_the_configured_one() {
    let ceiling = Duration::from_secs(2);
    let at = |age| super::poll_interval(age, ceiling).as_millis();
    assert_eq!(
        [
            at(0),
            at(9),
            at(10),
            at(29),
            at(30),
            at(59),
            at(60),
            at(3600)
        ],
        [250, 250, 500, 500, 1000, 1000, 2000, 2000]
    );
    // Under a minute, never more than a second; a configured interval below that wins.
    assert!((0..60).all(|age| at(age) <= 1000));
    assert_eq!(
        super::poll_interval(0, Duration::from_millis(100)).as_millis(),
        100
    );
    assert_eq!(
        super::poll_interval(600, Duration::from_millis(100)).as_millis(),
        100
    );
}
