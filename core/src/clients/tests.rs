use super::*;
use crate::openai::pricing::Picodollars;

const USD: u64 = 1_000_000_000_000;

fn clients() -> Clients {
    Clients::new(vec![
        NamedClient {
            name: "ci".into(),
            limit: Limit {
                calls_per_minute: Some(2),
                spend_per_day: None,
            },
            identity: None,
            gateway: false,
        },
        NamedClient {
            name: "alice".into(),
            limit: Limit {
                calls_per_minute: None,
                spend_per_day: Some(Picodollars(USD)),
            },
            identity: Some("00u1alice".into()),
            gateway: false,
        },
    ])
    .unwrap()
}

/// 2026-11-26 23:59:30 UTC.
const LATE: u64 = 1_795_737_570;

#[test]
fn ids_name_the_clients_of_the_file_and_the_default() {
    let clients = clients();
    let ids: Vec<(ClientId, &str)> = clients
        .iter()
        .map(|(id, c)| (id, c.name.as_str()))
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(clients.name(ids[0].0), "ci");
    assert_eq!(clients.name(ids[1].0), "alice");
    assert_eq!(clients.name(ClientId::DEFAULT), DEFAULT_NAME);
    assert_ne!(ids[0].0, ClientId::DEFAULT);
    assert_eq!(clients.limit(ClientId::DEFAULT), Limit::default());
    assert_eq!(clients.id(2), None);
}

#[test]
fn calls_per_minute_refuse_until_the_minute_ends() {
    let clients = clients();
    let ci = clients.id(0).unwrap();
    let mut limits = Limits::new(Limit::default());
    assert_eq!(LATE % 60, 30);
    limits
        .admit(ci, clients.limit(ci), LATE, Picodollars(0))
        .unwrap();
    limits
        .admit(ci, clients.limit(ci), LATE + 10, Picodollars(0))
        .unwrap();
    let refused = limits
        .admit(ci, clients.limit(ci), LATE + 20, Picodollars(0))
        .unwrap_err();
    assert_eq!(
        refused,
        Exceeded {
            scope: Scope::Client,
            kind: LimitKind::CallsPerMinute(2),
            resets_at: LATE + 30,
            retry_after_secs: 10,
        }
    );
    // A refused call counts nothing, and other clients are not held back.
    assert!(limits
        .admit(ci, clients.limit(ci), LATE + 29, Picodollars(0))
        .is_err());
    limits
        .admit(
            ClientId::DEFAULT,
            clients.limit(ClientId::DEFAULT),
            LATE + 29,
            Picodollars(0),
        )
        .unwrap();
    // The next minute admits again.
    limits
        .admit(ci, clients.limit(ci), LATE + 30, Picodollars(0))
        .unwrap();
}

#[test]
fn spend_per_day_refuses_once_reached_until_the_utc_day_ends() {
    let clients = clients();
    let alice = clients.id(1).unwrap();
    let mut limits = Limits::new(Limit::default());
    limits
        .admit(alice, clients.limit(alice), LATE, Picodollars(0))
        .unwrap();
    limits.spend(alice, LATE, Picodollars(USD / 2));
    // Below the limit: admitted, even though this call may take the day over it.
    limits
        .admit(alice, clients.limit(alice), LATE + 1, Picodollars(0))
        .unwrap();
    limits.spend(alice, LATE + 2, Picodollars(USD / 2 + 1));
    let refused = limits
        .admit(alice, clients.limit(alice), LATE + 3, Picodollars(0))
        .unwrap_err();
    assert_eq!(refused.scope, Scope::Client);
    assert_eq!(
        refused.kind,
        LimitKind::SpendPerDay {
            limit: Picodollars(USD),
            spent: Picodollars(USD + 1),
            held: Picodollars(0),
        }
    );
    assert_eq!(refused.resets_at % 86_400, 0);
    assert_eq!(refused.resets_at, LATE + 30);
    assert_eq!(refused.retry_after_secs, 27);
    limits
        .admit(alice, clients.limit(alice), LATE + 30, Picodollars(0))
        .unwrap();
}

#[test]
fn the_instance_limits_hold_every_client_together() {
    let clients = clients();
    let (ci, alice) = (clients.id(0).unwrap(), clients.id(1).unwrap());
    let instance = Limit {
        calls_per_minute: Some(3),
        spend_per_day: Some(Picodollars(2 * USD)),
    };
    let mut limits = Limits::new(instance);
    limits
        .admit(ci, clients.limit(ci), LATE, Picodollars(0))
        .unwrap();
    limits
        .admit(alice, clients.limit(alice), LATE, Picodollars(0))
        .unwrap();
    limits
        .admit(
            ClientId::DEFAULT,
            clients.limit(ClientId::DEFAULT),
            LATE,
            Picodollars(0),
        )
        .unwrap();
    let refused = limits
        .admit(alice, clients.limit(alice), LATE, Picodollars(0))
        .unwrap_err();
    assert_eq!(
        (refused.scope, refused.kind),
        (Scope::Instance, LimitKind::CallsPerMinute(3))
    );
    assert_eq!(
        limits
            .admit(ci, clients.limit(ci), LATE, Picodollars(0))
            .unwrap_err()
            .scope,
        Scope::Instance
    );
    // The client's own limit is named first when both refuse.
    limits
        .admit(ci, clients.limit(ci), LATE + 30, Picodollars(0))
        .unwrap();
    limits
        .admit(ci, clients.limit(ci), LATE + 31, Picodollars(0))
        .unwrap();
    limits
        .admit(alice, clients.limit(alice), LATE + 32, Picodollars(0))
        .unwrap();
    assert_eq!(
        limits
            .admit(ci, clients.limit(ci), LATE + 33, Picodollars(0))
            .unwrap_err()
            .scope,
        Scope::Client
    );
    // Spend adds up across clients.
    limits.spend(ClientId::DEFAULT, LATE + 40, Picodollars(USD));
    limits.spend(ci, LATE + 40, Picodollars(USD));
    let refused = limits
        .admit(
            ClientId::DEFAULT,
            clients.limit(ClientId::DEFAULT),
            LATE + 90,
            Picodollars(0),
        )
        .unwrap_err();
    assert_eq!(refused.kind.label(), "spend_per_day_usd");
    assert_eq!(refused.scope, Scope::Instance);
}

#[test]
fn identities_are_clients_of_their_own_or_the_named_client_that_claims_them() {
    let mut clients = clients();
    clients.set_identity_limit(Limit {
        calls_per_minute: Some(1),
        spend_per_day: None,
    });
    let alice = clients.identify("sub", "00u1alice").unwrap();
    assert_eq!(clients.name(alice), "alice");
    let bob = clients.identify("sub", "bob").unwrap();
    assert_eq!(clients.name(bob), "sub:bob");
    assert_eq!(clients.identify("sub", "bob"), Some(bob));
    assert_eq!(clients.resolve("sub:bob"), Some(bob));
    // Another claim's `bob` is someone else; a named client's name is not an identity's.
    let other = clients.identify("client_id", "bob").unwrap();
    assert_ne!(other, bob);
    assert_ne!(clients.identify("sub", "ci"), Some(clients.find("ci")));
    assert_eq!(clients.limit(bob).calls_per_minute, Some(1));
    assert_eq!(clients.limit(alice).calls_per_minute, None);
    // Each identity counts on its own.
    let mut limits = Limits::new(Limit::default());
    limits
        .admit(bob, clients.limit(bob), LATE, Picodollars(0))
        .unwrap();
    assert!(limits
        .admit(bob, clients.limit(bob), LATE + 1, Picodollars(0))
        .is_err());
    limits
        .admit(other, clients.limit(other), LATE + 1, Picodollars(0))
        .unwrap();
    // Labels stay few: identities past the first 32 share one.
    for n in 0..40 {
        clients.identify("sub", &format!("user{n}")).unwrap();
    }
    let late = clients.identify("sub", "user39").unwrap();
    assert_eq!(clients.label(late), OTHER_LABEL);
    assert_eq!(clients.label(bob), "sub:bob");
    assert_eq!(clients.name(late), "sub:user39");
}

/// A roster of `most` identities of their own beside the two named clients.
fn small_roster(most: usize) -> Clients {
    let mut clients = clients();
    clients.limit_identities(most);
    clients
}

#[test]
fn a_full_roster_forgets_the_least_recently_seen_idle_identities_first() {
    let mut clients = small_roster(3);
    let a = clients.identify("sub", "a").unwrap();
    let b = clients.identify("sub", "b").unwrap();
    let c = clients.identify("sub", "c").unwrap();
    assert!(clients.is_full());
    assert_eq!(
        clients.identify("sub", "d"),
        None,
        "no room until some are forgotten"
    );
    // `a` is seen again: `b` is now the least recently seen.
    assert_eq!(clients.identify("sub", "a"), Some(a));
    assert_eq!(clients.forget_idle(|_| false, 1), vec![b]);
    assert_eq!(clients.known("sub:b"), None);
    let d = clients.identify("sub", "d").unwrap();
    assert_eq!(d, b, "the forgotten id is taken again");
    assert_eq!(clients.name(d), "sub:d");
    assert_eq!(clients.forget_idle(|_| false, 2), vec![c, a]);
    assert_eq!(clients.identity_count(), 1);
    // Named clients and the default are never among the forgotten.
    assert_eq!(clients.forget_idle(|_| false, 10), vec![d]);
    assert_eq!(clients.name(clients.id(0).unwrap()), "ci");
    assert_eq!(clients.identify("sub", "00u1alice"), clients.id(1));
}

#[test]
fn an_identity_that_holds_something_is_never_forgotten() {
    let mut clients = small_roster(2);
    let holder = clients.identify("sub", "holder").unwrap();
    let idle = clients.identify("sub", "idle").unwrap();
    let held = |id: ClientId| id == holder;
    assert_eq!(clients.forget_idle(held, 2), vec![idle]);
    let next = clients.identify("sub", "next").unwrap();
    // Only holders left: nothing is forgotten, and a new identity finds no room.
    assert_eq!(
        clients.forget_idle(|id| id == holder || id == next, 2),
        vec![]
    );
    assert_eq!(clients.identify("sub", "another"), None);
    assert_eq!(clients.known("sub:holder"), Some(holder));
    assert_eq!(clients.name(holder), "sub:holder");
}

#[test]
fn a_returning_identity_keeps_its_days_spend_and_a_reused_id_starts_from_nothing() {
    let mut clients = small_roster(1);
    let limit = Limit {
        calls_per_minute: None,
        spend_per_day: Some(Picodollars(USD)),
    };
    clients.set_identity_limit(limit);
    let mut limits = Limits::new(Limit::default());
    let spender = clients.identify("sub", "spender").unwrap();
    limits
        .admit(spender, clients.limit(spender), LATE, Picodollars(0))
        .unwrap();
    limits.spend(spender, LATE, Picodollars(USD));
    // Its day's spend does not pin it: it holds no call in flight.
    assert!(!limits.holds(spender));
    assert_eq!(clients.forget_idle(|id| limits.holds(id), 1), vec![spender]);
    // Its counts leave its id, to be kept by its name while its limits read them.
    let kept = limits.forget(spender, limit, LATE + 10);
    assert!(kept.is_some(), "today's spend is kept");
    let newcomer = clients.identify("sub", "newcomer").unwrap();
    assert_eq!(newcomer, spender);
    limits
        .admit(newcomer, clients.limit(newcomer), LATE + 11, Picodollars(0))
        .unwrap();
    // The spender returns, under another id once the newcomer is forgotten, and takes
    // back its day: still refused.
    assert_eq!(clients.forget_idle(|_| false, 1), vec![newcomer]);
    assert!(
        limits.forget(newcomer, limit, LATE + 12).is_none(),
        "it spent nothing"
    );
    let back = clients.identify("sub", "spender").unwrap();
    if let Some(counts) = kept {
        limits.restore(back, counts);
    }
    let refused = limits
        .admit(back, clients.limit(back), LATE + 20, Picodollars(0))
        .unwrap_err();
    assert_eq!(refused.kind.label(), "spend_per_day_usd");
    // The next UTC day (LATE is 30 s before midnight) nothing is left to keep.
    assert!(limits.forget(back, limit, LATE + 30).is_none());
    // A call in flight holds its identity.
    limits
        .admit(back, clients.limit(back), LATE + 31, Picodollars(5))
        .unwrap();
    assert!(limits.holds(back));
}

#[test]
fn labels_belong_to_names_for_life_and_are_never_taken_by_another() {
    let mut clients = small_roster(LABELLED_IDENTITIES + 8);
    let first: Vec<ClientId> = (0..LABELLED_IDENTITIES + 8)
        .map(|n| clients.identify("sub", &format!("user{n}")).unwrap())
        .collect();
    assert_eq!(clients.label(first[0]), "sub:user0");
    assert_eq!(clients.label(first[LABELLED_IDENTITIES]), OTHER_LABEL);
    // The labelled `user0` is forgotten; its id goes to a newcomer, unlabelled.
    assert_eq!(clients.forget_idle(|_| false, 1), vec![first[0]]);
    let newcomer = clients.identify("sub", "newcomer").unwrap();
    assert_eq!(newcomer, first[0]);
    assert_eq!(clients.label(newcomer), OTHER_LABEL);
    // `user0` comes back under another id, with its own label.
    clients.forget_idle(|id| id == newcomer, 1);
    let back = clients.identify("sub", "user0").unwrap();
    assert_ne!(back, first[0]);
    assert_eq!(clients.label(back), "sub:user0");
}
