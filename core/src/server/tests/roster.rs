//! The bounded roster through the server: identities with a call in flight keep their
//! ids through a full roster, a roster full of them refuses a new identity with 503 and
//! `/ready` says so until one lets go, and an id taken again never carries its former
//! identity's calls, records or user ids.

use super::*;
use crate::outcome::Refusal;
use crate::serve::exchange::{Credential, WayIn};

fn call(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}})
}

/// `message` on exchange `x` from the gateway, as `user`.
fn from_gateway(h: &mut Harness, x: u64, user: &str, message: Value) {
    h.feed(Input::Exchange {
        id: ExchangeId(x),
        asked: Asked::Rpc {
            message,
            version: Some(ProtocolVersion::V2025_11_25),
            client: crate::clients::ClientId::DEFAULT,
            trace: None,
            way: WayIn {
                // The single token without a clients file: the gateway's credential.
                credential: Credential::StaticToken,
                identity: Some(Ok(user.into())),
                ..WayIn::default()
            },
        },
    });
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

#[test]
fn a_roster_full_of_callers_refuses_a_newcomer_and_says_not_ready_until_one_is_done() {
    let mut config = Harness::keyed();
    config.identity_header = Some("x-forwarded-user".into());
    config.clients.limit_identities(2);
    let key = config.tasks.key.clone();
    let mut h = Harness::new(config);
    from_gateway(&mut h, 1, "alice", call(1));
    from_gateway(&mut h, 2, "bob", call(2));
    let mut sent = h.take_http();
    assert_eq!(sent.len(), 2);
    let (alices, bobs) = (sent.remove(0), sent.remove(0));

    // Both have a call in flight: carol finds no room.
    from_gateway(
        &mut h,
        3,
        "carol",
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
    );
    assert_eq!(statuses(&mut h), vec![(3, 503)]);
    assert_eq!(
        h.server.health().refusal(),
        Some(Refusal::TooManyIdentities)
    );

    // Alice's call ends: she holds nothing, and the roster is looked at again within
    // its recheck, with no other input.
    h.reply(
        alices.attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    assert_eq!(statuses(&mut h), vec![(1, 200)]);
    h.fire();
    assert_eq!(h.server.health().refusal(), None);
    from_gateway(&mut h, 4, "carol", call(4));
    let carols = h.take_http().remove(0);
    assert_eq!(statuses(&mut h), vec![]);
    let body: Value = serde_json::from_slice(&carols.body).unwrap();
    let carol_ids = super::super::user_ids::user_ids(&key, "x-forwarded-user:carol");
    assert_eq!(
        body["safety_identifier"],
        json!(carol_ids.safety_identifier),
        "carol, on alice's former id, is told to OpenAI as herself"
    );

    // Bob kept his id through it all: his call is still his.
    h.reply(bobs.attempt, 200, &fixture("response-no-search.json"), &[]);
    h.reply(
        carols.attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    assert_eq!(statuses(&mut h), vec![(2, 200), (4, 200)]);
    let clients: Vec<String> = h.take_records().into_iter().map(|r| r.client).collect();
    assert_eq!(
        clients,
        [
            "x-forwarded-user:alice",
            "x-forwarded-user:bob",
            "x-forwarded-user:carol"
        ]
    );
}
