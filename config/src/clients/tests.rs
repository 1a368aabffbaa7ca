use super::*;

/// SHA-256 of "ci-token" and "alice-token", as `sha256sum` prints them.
fn hex(token: &str) -> String {
    sha256(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn sha256_matches_the_standard_vector() {
    // FIPS 180-2, "abc".
    assert_eq!(
        hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn a_file_of_clients_gives_names_limits_and_digests() {
    let text = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 30\n  - name: alice.b\n    token_sha256: {}\n    spend_per_day_usd: 2.5\n",
        hex("ci-token"),
        hex("alice-token").to_uppercase()
    );
    let named = parse(&text).unwrap();
    let ids: Vec<_> = named
        .clients
        .iter()
        .map(|(id, c)| (id, c.clone()))
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(named.clients.name(ids[0].0), "ci");
    assert_eq!(ids[0].1.limit.calls_per_minute, Some(30));
    assert_eq!(ids[1].1.limit.spend_per_day, Picodollars::from_usd(2.5));
    assert_eq!(
        named.tokens.digests,
        vec![
            (ids[0].0, sha256(b"ci-token")),
            (ids[1].0, sha256(b"alice-token"))
        ]
    );
    assert!(!format!("{named:?}").contains(&hex("ci-token")));
}

#[test]
fn each_mistake_is_named_without_the_digest() {
    let ci = hex("ci-token");
    for (text, why) in [
        ("clients: []".to_owned(), "names no client".to_owned()),
        ("clients: nope".to_owned(), "not a list of clients".to_owned()),
        ("clients: [\n".to_owned(), "not YAML at line".to_owned()),
        ("- a\n- b\n".to_owned(), "not a list of clients".to_owned()),
        ("clients: [7]".to_owned(), "client 1: not a mapping".to_owned()),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n    color: red\n"),
            "client 1: unknown field".to_owned(),
        ),
        (
            "clients:\n  - name: ci\n".to_owned(),
            "client 1: name and token_sha256 or identity are required".to_owned(),
        ),
        (
            "clients:\n  - name: a\n    identity: u1\n  - name: b\n    identity: u1\n".to_owned(),
            "client 2 (\"b\"): an earlier client has the same identity".to_owned(),
        ),
        (
            "clients:\n  - name: a\n    identity: ''\n".to_owned(),
            "client 1: identity must be 1 to 256 bytes".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n    calls_per_minute: many\n"),
            "client 1: calls_per_minute must be a whole number".to_owned(),
        ),
        (
            format!("clients:\n  - name: 'a b'\n    token_sha256: {ci}\n"),
            "client 1: name must be".to_owned(),
        ),
        (
            format!("clients:\n  - name: default\n    token_sha256: {ci}\n"),
            "client 1 (\"default\"): \"default\" names the single token's client".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n  - name: ci\n    token_sha256: {}\n", hex("x")),
            "client 2 (\"ci\"): the name is taken".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n  - name: cd\n    token_sha256: {ci}\n"),
            "client 2 (\"cd\"): an earlier client has the same token".to_owned(),
        ),
        (
            "clients:\n  - name: ci\n    token_sha256: ci-token\n".to_owned(),
            "client 1 (\"ci\"): token_sha256 must be 64 hex digits".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n    calls_per_minute: 0\n"),
            "calls_per_minute must be at least 1".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n    spend_per_day_usd: -1\n"),
            "spend_per_day_usd must be an amount".to_owned(),
        ),
        (
            format!("clients:\n  - name: ci\n    token_sha256: {ci}\n    metrics: yes please\n"),
            "client 1: metrics must be true or false".to_owned(),
        ),
        (
            "clients:\n  - name: a\n    identity: u1\n    metrics: true\n".to_owned(),
            "client 1 (\"a\"): metrics: true needs token_sha256".to_owned(),
        ),
        (
            format!("clients:\n  - name: gw\n    token_sha256: {ci}\n    gateway: 1\n"),
            "client 1: gateway must be true or false".to_owned(),
        ),
        (
            format!("clients:\n  - name: gw\n    token_sha256: {ci}\n    gateway: true\n    calls_per_minute: 100\n"),
            "client 1 (\"gw\"): gateway: true takes no calls_per_minute or spend_per_day_usd: the gateway's requests are its users'".to_owned(),
        ),
        (
            "clients:\n  - name: gw\n    identity: svc\n    gateway: true\n    spend_per_day_usd: 5\n".to_owned(),
            "gateway: true takes no calls_per_minute or spend_per_day_usd".to_owned(),
        ),
    ] {
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains(&why), "{text}: {e}");
        assert!(!e.contains(&ci), "{e}");
        assert!(!e.contains("ci-token") || why.contains("64 hex"), "{e}");
    }
}

#[test]
fn only_the_clients_marked_metrics_read_them() {
    let text = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n  - name: ops\n    token_sha256: {}\n    metrics: true\n  - name: bob\n    token_sha256: {}\n    metrics: false\n",
        hex("ci-token"),
        hex("ops-token"),
        hex("bob-token")
    );
    let named = parse(&text).unwrap();
    let id = |name: &str| {
        named
            .clients
            .iter()
            .find(|(_, c)| c.name == name)
            .map(|(id, _)| id)
            .unwrap()
    };
    assert_eq!(named.tokens.metrics, vec![id("ops")]);
    assert!(named.tokens.reads_metrics(id("ops")));
    assert!(!named.tokens.reads_metrics(id("ci")) && !named.tokens.reads_metrics(id("bob")));
}

#[test]
fn the_clients_marked_gateway_are_the_gateways_and_there_may_be_several() {
    // Two entries: the gateway's token is rotated without a moment when neither works.
    let text = format!(
        "clients:\n  - name: ci\n    token_sha256: {}\n  - name: gw\n    token_sha256: {}\n    gateway: true\n  - name: gw-next\n    token_sha256: {}\n    gateway: true\n    metrics: true\n  - name: gw-oauth\n    identity: svc-gateway\n    gateway: true\n",
        hex("ci-token"),
        hex("gw-token"),
        hex("gw-next-token")
    );
    let named = parse(&text).unwrap();
    let gateways: Vec<&str> = named
        .clients
        .iter()
        .filter(|(_, c)| c.gateway)
        .map(|(_, c)| c.name.as_str())
        .collect();
    assert_eq!(gateways, ["gw", "gw-next", "gw-oauth"]);
}
