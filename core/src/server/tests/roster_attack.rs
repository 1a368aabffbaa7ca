//! The roster and the gateway's credential attacked as a hostile tenant behind the
//! gateway would (issue 56, items 3 and 4). The tests that run were findings, fixed
//! since; each `#[ignore = "open …"]` one fails today and shows a finding left open
//! (the closing note of issue 56 says why); the measure prints what a newcomer costs.

use super::*;
use crate::clients::{ClientId, Clients, Limit, NamedClient};
use crate::ledger::{Arrival, CallOf, Reservation, Transport};
use crate::serve::exchange::{Credential, WayIn};

fn call(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}})
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"ping"})
}

/// `message` on exchange `x` as `client` with `credential`, naming `user` (if any).
fn ask(
    h: &mut Harness,
    x: u64,
    (client, credential): (ClientId, Credential),
    user: Option<&str>,
    message: Value,
) {
    h.feed(Input::Exchange {
        id: ExchangeId(x),
        asked: Asked::Rpc {
            message,
            version: Some(ProtocolVersion::V2025_11_25),
            client,
            trace: None,
            way: WayIn {
                credential,
                identity: user.map(|u| Ok(u.into())),
                ..WayIn::default()
            },
        },
    });
}

/// `message` from the gateway (the single token without a clients file) as `user`.
fn from_gateway(h: &mut Harness, x: u64, user: &str, message: Value) {
    let gateway = (ClientId::DEFAULT, Credential::StaticToken);
    ask(h, x, gateway, Some(user), message);
}

/// The status each exchange was answered or refused with, by exchange.
fn statuses(h: &mut Harness) -> Vec<(u64, u16)> {
    h.take_other()
        .into_iter()
        .filter_map(|o| match o {
            Output::Exchange(ExchangeId(x), ExchangeOut::Refused(denial)) => {
                Some((x, denial.status))
            }
            Output::Exchange(ExchangeId(x), ExchangeOut::Reply { .. }) => Some((x, 200)),
            _ => None,
        })
        .collect()
}

/// Finding: without a store, an identity that spent anything today holds its slot until
/// UTC midnight. A tenant who can be named by as many identities as the roster tells
/// apart (16,384: what the flood assumes) makes one cheap call as each, and for
/// the rest of the day every new user of the instance is refused 503 and `/ready` says
/// not ready (the load balancer takes the replica out; the same calls against each
/// replica take out the fleet). The spend of a forgotten identity should live on by name
/// (a compact table of name digests and the day's spend, far larger than the roster),
/// so that spend never pins a slot.
#[test]
fn identities_that_spent_today_do_not_lock_newcomers_out_until_midnight() {
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    config.clients.limit_identities(2);
    config.identity_limit = Limit {
        calls_per_minute: None,
        // $100 a day: far from reached by one call.
        spend_per_day: Some(crate::money::Picodollars(100_000_000_000_000)),
    };
    let mut h = Harness::new(config);
    for (x, user) in [(1, "mallory-1"), (2, "mallory-2")] {
        from_gateway(&mut h, x, user, call(x));
        let sent = h.take_http().remove(0);
        // A model with a price: the call costs something.
        let mut body: Value =
            serde_json::from_slice(&fixture("response-no-search.json")).unwrap_or_default();
        body["model"] = "gpt-6.1-terra".into();
        h.reply(sent.attempt, 200, body.to_string().as_bytes(), &[]);
        assert_eq!(statuses(&mut h), vec![(x, 200)]);
    }
    let spent = h.take_records();
    assert!(
        spent.iter().all(|r| r.cost.is_some_and(|c| c.0 > 0)),
        "{spent:?}"
    );
    // An hour later, nothing of theirs in flight: a new user arrives.
    h.advance(std::time::Duration::from_secs(3600));
    from_gateway(&mut h, 3, "carol", ping(3));
    assert_eq!(
        statuses(&mut h),
        vec![(3, 200)],
        "a newcomer is served while the roster holds only the day's spend of others"
    );
    assert_eq!(h.server.health().refusal(), None, "/ready stays ready");
}

/// Finding: the gateway's own credential without an identity header is served as the
/// gateway's client, which the clients file forbids to have limits: its calls are held
/// to no per-client limit at all (only `server.limits`). A user the gateway forwards
/// without naming (an unauthenticated route of the gateway, a header the gateway's rule
/// failed to set, a health-check route that proxies `/mcp`) is unlimited, and all such
/// users share one client's tasks. Either refuse the gateway's request that names nobody
/// (400: the gateway must name the user), or hold it to the identities' limits.
#[test]
#[ignore = "open (found by the attack on the roster): the gateway's credential without an identity header runs with no per-client limit"]
fn the_gateways_request_that_names_nobody_is_not_unlimited() {
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    config.clients = Clients::new(vec![NamedClient {
        name: "gw".into(),
        limit: Limit::default(),
        identity: None,
        gateway: true,
    }])
    .unwrap();
    config.identity_limit = Limit {
        calls_per_minute: Some(1),
        spend_per_day: None,
    };
    let gw = config.clients.id(0).unwrap();
    let mut h = Harness::new(config);
    // A user named by the gateway is held to one call a minute.
    from_gateway_as(&mut h, gw, 1, Some("alice"), call(1));
    from_gateway_as(&mut h, gw, 2, Some("alice"), call(2));
    assert_eq!(h.take_http().len(), 1, "alice: one call a minute");
    let _ = statuses(&mut h);
    // The same gateway, naming nobody: every call reaches OpenAI.
    for x in 3..=12 {
        from_gateway_as(&mut h, gw, x, None, call(x));
    }
    let sent = h.take_http().len();
    assert!(
        sent <= 1,
        "{sent} calls of the gateway's credential naming no user reached OpenAI in one minute"
    );
}

fn from_gateway_as(h: &mut Harness, gw: ClientId, x: u64, user: Option<&str>, message: Value) {
    ask(h, x, (gw, Credential::ClientsFile), user, message);
}

/// What `drain_gate` does for an OAuth request whose token the gate passed as `sub`:
/// room made, the identity numbered, the exchange remembered as verified while its body
/// is read. `None`: refused, the roster full of holders.
fn passed(h: &mut Harness, x: u64, sub: &str) -> Option<ClientId> {
    let now = h.now;
    h.server.keep_room(now);
    let client = h.server.clients.identify("sub", sub)?;
    h.server.verifying.insert(ExchangeId(x), client);
    Some(client)
}

/// Finding: an OAuth request is told its `ClientId` when its token passes, and asks as
/// that id once its body is read (up to `request_timeout`, 10 s). The id holds its
/// identity in the roster only while the exchange is among the last 1,024 verified
/// (`VERIFYING`), but `server.http.max_connections` may be up to 100,000: with more than
/// 1,024 bodies being read at once, the oldest verified identity can be forgotten, its
/// id given to a newcomer, and the slow request then runs as that newcomer (its spend,
/// its tasks, its `safety_identifier`). Carry the identity's name (or a generation) with
/// `Verified` and resolve it again when the request asks, or bound `VERIFYING` by
/// `max_connections` / pin by exchange without a cap.
#[test]
fn a_slow_oauth_body_never_runs_as_another_identity() {
    let mut config = Harness::keyed();
    config.clients.limit_identities(2);
    let key = config.tasks.key.clone();
    let mut h = Harness::new(config);
    // Mallory's token passes; she sends her body slowly.
    let mallory = passed(&mut h, 1, "mallory").unwrap();
    // 1,024 other OAuth requests (any identity's) are verified and being read meanwhile:
    // possible with max_connections above 1,024.
    for x in 0..1024 {
        h.server
            .verifying
            .insert(ExchangeId(10_000 + x), ClientId::DEFAULT);
    }
    // Two newcomers: the roster (of two here, 16,384 in production) is full, and
    // mallory, held by nothing any more, is forgotten; carol takes her id.
    let bob = passed(&mut h, 2, "bob").unwrap();
    assert_ne!(bob, mallory);
    // Carol finds a roster full of holders (mallory's body is still read): she is
    // refused rather than given mallory's id.
    let carol = passed(&mut h, 3, "carol");
    assert_ne!(
        carol,
        Some(mallory),
        "carol took mallory's id while mallory's body was read"
    );
    // Mallory's body arrives: she asks as the id she was told, and runs as herself.
    ask(&mut h, 1, (mallory, Credential::OAuth), None, call(1));
    let sent = h.take_http();
    assert_eq!(sent.len(), 1);
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    let mallorys = super::super::user_ids::user_ids(&key, "sub:mallory");
    assert_eq!(
        body["safety_identifier"],
        json!(mallorys.safety_identifier),
        "mallory's request ran as someone else"
    );
}

/// Measure: what a newcomer costs when the roster is full of identities that hold
/// something but one. Each newcomer then scans every identity (`keep_room`: what holds
/// each, a set of 16,384), forgets the one idle (the previous newcomer), and takes its
/// slot: the 100 ms recheck never applies, since the roster is not full after the scan.
/// Run with `--ignored --nocapture`; compares with a roster with room. Measured
/// (release, 16,383 holders): 2.9 ms a newcomer, against 3.2 µs with room (debug: 25 ms
/// against 35 µs).
#[test]
#[ignore = "measure: keep_room's scan per newcomer on a roster full of holders but one"]
#[allow(clippy::print_stderr)] // the measure is what it prints
fn measure_a_newcomer_on_a_roster_full_of_holders_but_one() {
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    config.identity_limit = Limit {
        calls_per_minute: Some(1_000),
        spend_per_day: None,
    };
    let mut baseline = Harness::new(config.clone());
    let mut h = Harness::new(config);
    let most = crate::clients::MAX_IDENTITIES;
    let unix = h.now.unix_secs;
    // Baseline: newcomers while there is room.
    let started = crate::testing::start_instant();
    for x in 0..2_000u64 {
        from_gateway(&mut baseline, x, &format!("idle-{x}"), ping(x));
    }
    let _ = baseline.take_other();
    let with_room = started.elapsed() / 2_000;
    // Every identity but one holds a call counted this minute.
    for i in 0..most - 1 {
        let client = h
            .server
            .clients
            .identify("x-forwarded-user", &format!("holder-{i}"));
        let call = CallOf {
            tool: crate::tools::Tool::Answer,
            version: ProtocolVersion::V2025_11_25,
            transport: Transport::Http,
            client: client.unwrap(),
            task: false,
            trace: None,
            reservation: Reservation::default(),
            arrival: Arrival::default(),
        };
        let _ = h.server.ledger.admit(&h.server.clients, &call, None, unix);
    }
    h.server.keep_room(h.now);
    let holders = h.server.clients.identity_count();
    let started = crate::testing::start_instant();
    let n = 500u64;
    for x in 0..n {
        from_gateway(&mut h, 100_000 + x, &format!("newcomer-{x}"), ping(x));
    }
    let answered = statuses(&mut h).iter().filter(|(_, s)| *s == 200).count();
    let full = started.elapsed() / u32::try_from(n).unwrap();
    eprintln!(
        "identities {holders}; newcomer with room: {with_room:?}; newcomer on a roster full of holders but one: {full:?} ({answered}/{n} answered)"
    );
    assert_eq!(answered, n as usize);
}

/// Finding (design risk): a named client's `identity` is matched against the gateway's
/// header value whatever the namespace: `identify` ignores the claim, so a gateway user
/// whose name equals an OAuth identity of the clients file (`admin`, a numeric id, an
/// email the IdP and the gateway spell alike) *is* that named client: its limits, its
/// local tasks (`tasks/list`), its spend. Where the gateway's names are chosen by users
/// (self-service sign-up) and the clients file's are the IdP's subjects, one tenant takes
/// over another's client. Match a named client to a gateway user only when the clients
/// file says so for that header (say, `identity: x-forwarded-user:admin`), or keep
/// `identity` to OAuth's claim.
#[test]
#[ignore = "open (found by the attack on the roster): a gateway user whose name equals a named client's OAuth identity is served as that named client"]
fn a_gateway_user_is_not_a_named_client_by_an_oauth_identity_of_the_same_spelling() {
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    let named = |name: &str, identity: Option<&str>, gateway| NamedClient {
        name: name.into(),
        limit: Limit::default(),
        identity: identity.map(Into::into),
        gateway,
    };
    config.clients = Clients::new(vec![
        named("gw", None, true),
        named("ops", Some("admin"), false),
    ])
    .unwrap();
    let gw = config.clients.id(0).unwrap();
    let mut h = Harness::new(config);
    from_gateway_as(&mut h, gw, 1, Some("admin"), call(1));
    let sent = h.take_http().remove(0);
    h.reply(sent.attempt, 200, &fixture("response-no-search.json"), &[]);
    let clients: Vec<String> = h.take_records().into_iter().map(|r| r.client).collect();
    assert_eq!(clients, ["x-forwarded-user:admin"]);
}
