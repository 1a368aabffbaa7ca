use super::*;

fn request(headers: &[(&str, &str)]) -> Request {
    Request {
        method: "POST".into(),
        target: "/mcp".into(),
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: Vec::new(),
        keep_alive: true,
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn gateway() -> Gateway {
    Gateway {
        trusted: vec![
            Cidr::parse("10.0.0.0/8").unwrap(),
            Cidr::parse("fd00::/8").unwrap(),
            Cidr::parse("127.0.0.1").unwrap(),
        ],
        identity_header: Some("x-forwarded-user".into()),
    }
}

#[test]
fn networks_hold_their_addresses_and_mapped_ipv4_is_ipv4() {
    let net = Cidr::parse(" 10.0.0.0/8 ").unwrap();
    assert!(net.contains(ip("10.255.0.1")));
    assert!(net.contains(ip("::ffff:10.1.2.3")));
    assert!(!net.contains(ip("11.0.0.1")));
    assert!(
        !net.contains(ip("::a00:1")),
        "IPv6 is not IPv4 unless mapped"
    );
    let one = Cidr::parse("192.0.2.7").unwrap();
    assert!(one.contains(ip("192.0.2.7")) && !one.contains(ip("192.0.2.8")));
    let any = Cidr::parse("0.0.0.0/0").unwrap();
    assert!(any.contains(ip("203.0.113.9")));
    let v6 = Cidr::parse("fd00::/8").unwrap();
    assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe80::1")));
    assert!(Cidr::parse("::/0").unwrap().contains(ip("2001:db8::1")));
    assert_eq!(net.to_string(), "10.0.0.0/8");
}

#[test]
fn networks_written_as_mapped_ipv6_are_their_ipv4_selves() {
    // Found by the `gateway` fuzz target: `::ffff:13.221.0.223` held no peer at all.
    let one = Cidr::parse("0::ffff:ddd:df").unwrap();
    assert_eq!(one.to_string(), "13.221.0.223/32");
    assert!(one.contains(ip("13.221.0.223")) && one.contains(ip("::ffff:13.221.0.223")));
    let net = Cidr::parse("::ffff:10.0.0.0/104").unwrap();
    assert_eq!(net, Cidr::parse("10.0.0.0/8").unwrap());
    assert!(net.contains(ip("::ffff:10.9.8.7")) && !net.contains(ip("11.0.0.1")));
    let all = Cidr::parse("::ffff:0:0/96").unwrap();
    assert_eq!(all.to_string(), "0.0.0.0/0");
    assert_eq!(
        Cidr::parse_widened("::ffff:10.1.2.3/104")
            .unwrap()
            .to_string(),
        "10.0.0.0/8"
    );
    // Wider than the mapped block: an IPv6 network, which holds no IPv4 peer.
    let wide = Cidr::parse("::/64").unwrap();
    assert_eq!(wide.to_string(), "::/64");
    assert!(!wide.contains(ip("10.0.0.1")));
}

#[test]
fn entries_that_are_no_network_are_refused_with_the_reason() {
    for (bad, why) in [
        ("", "not an IPv4"),
        ("proxy.internal", "not an IPv4"),
        ("10.0.0.0/33", "longer than the address"),
        ("fd00::/129", "longer than the address"),
        ("10.0.0.0/", "not a number"),
        ("10.0.0.0/+8", "not a number"),
        ("10.0.0.0/0008", "not a number"),
        ("10.1.0.0/8", "bits set past the prefix"),
        ("10.0.0.0/8/8", "not a number"),
    ] {
        let e = Cidr::parse(bad).unwrap_err();
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_trusted_proxy_names_the_user_and_the_client_address() {
    let seen = gateway().read(
        &request(&[
            ("x-forwarded-user", " alice@example.com "),
            ("x-forwarded-for", "203.0.113.5, 10.0.0.9"),
        ]),
        Some(ip("10.0.0.2")),
    );
    assert_eq!(seen.identity, Some(Ok("alice@example.com".to_owned())));
    assert_eq!(seen.remote, Some(ip("203.0.113.5")));
    assert!(!seen.ignored);
}

#[test]
fn another_peer_names_nobody_and_keeps_its_own_address() {
    let seen = gateway().read(
        &request(&[
            ("x-forwarded-user", "alice"),
            ("x-forwarded-for", "203.0.113.5"),
        ]),
        Some(ip("192.0.2.1")),
    );
    assert_eq!(seen.identity, None);
    assert_eq!(seen.remote, Some(ip("192.0.2.1")));
    assert!(seen.ignored);
    // Without a peer (not a socket) nothing is trusted either.
    let seen = gateway().read(&request(&[("x-forwarded-user", "alice")]), None);
    assert_eq!((seen.identity, seen.ignored), (None, true));
    // Without the header there is nothing to ignore.
    let seen = gateway().read(&request(&[]), Some(ip("192.0.2.1")));
    assert!(!seen.ignored);
}

#[test]
fn a_malformed_identity_from_a_trusted_proxy_is_a_claim_of_an_error_naming_the_header() {
    let long = "a".repeat(MAX_IDENTITY + 1);
    for (headers, why) in [
        (vec![("x-forwarded-user", "")], "empty"),
        (vec![("x-forwarded-user", "  ")], "empty"),
        (
            vec![("x-forwarded-user", "al\u{7}ice")],
            "not printable ASCII",
        ),
        (
            vec![("x-forwarded-user", "al\u{202e}ice")],
            "not printable ASCII",
        ),
        (vec![("x-forwarded-user", "é")], "not printable ASCII"),
        (vec![("x-forwarded-user", long.as_str())], "longer than 256"),
        (
            vec![("x-forwarded-user", "alice"), ("x-forwarded-user", "bob")],
            "more than once",
        ),
    ] {
        let e = gateway()
            .read(&request(&headers), Some(ip("10.0.0.2")))
            .identity
            .unwrap()
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("x-forwarded-user") && text.contains(why),
            "{text}"
        );
    }
    let longest = "a~ ".repeat(MAX_IDENTITY / 3) + "z";
    assert_eq!(longest.len(), MAX_IDENTITY);
    assert_eq!(identity(&longest), Ok(longest.as_str()));
}

#[test]
fn forwarded_for_is_walked_from_the_right_past_trusted_hops_only() {
    let g = gateway();
    let remote = |xff: &[&str]| {
        let headers: Vec<(&str, &str)> = xff.iter().map(|v| ("x-forwarded-for", *v)).collect();
        g.read(&request(&headers), Some(ip("10.0.0.2"))).remote
    };
    // The client spoofed the leftmost entry; the gateway appended the real one.
    assert_eq!(remote(&["1.1.1.1, 198.51.100.4"]), Some(ip("198.51.100.4")));
    // Several headers are one list.
    assert_eq!(
        remote(&["198.51.100.4", "10.0.0.7"]),
        Some(ip("198.51.100.4"))
    );
    // Ports and brackets, as some proxies write them.
    assert_eq!(remote(&["[2001:db8::1]:443"]), Some(ip("2001:db8::1")));
    assert_eq!(remote(&["192.0.2.1:8080"]), Some(ip("192.0.2.1")));
    assert_eq!(remote(&["[2001:db8::2]"]), Some(ip("2001:db8::2")));
    // Every hop trusted: the leftmost.
    assert_eq!(remote(&["10.0.0.3, 10.0.0.4"]), Some(ip("10.0.0.3")));
    // Garbage ends the walk at the nearest trusted hop, or the peer.
    assert_eq!(
        remote(&["198.51.100.4, junk, 10.0.0.5"]),
        Some(ip("10.0.0.5"))
    );
    assert_eq!(remote(&["unknown"]), Some(ip("10.0.0.2")));
    assert_eq!(remote(&[]), Some(ip("10.0.0.2")));
    // A mapped IPv4 peer is its IPv4 self.
    let seen = g.read(&request(&[]), Some(ip("::ffff:10.0.0.2")));
    assert_eq!(seen.remote, Some(ip("10.0.0.2")));
}

#[test]
fn a_list_that_trusts_every_address_of_a_family_is_refused_naming_the_entry() {
    let list = |entries: &[&str]| -> Vec<Cidr> {
        entries.iter().map(|e| Cidr::parse(e).unwrap()).collect()
    };
    for (entries, says) in [
        (&["0.0.0.0/0"][..], "0.0.0.0/0 holds every IPv4"),
        (&["::ffff:0:0/96"], "0.0.0.0/0 holds every IPv4"),
        (&["10.0.0.1", "::/0"], "::/0 holds every IPv6"),
        (
            &["::/80"],
            "::/80 holds ::ffff:0:0/96, the IPv4-mapped form of every IPv4",
        ),
        (&["::/1"], "::/1 holds ::ffff:0:0/96"),
        (
            &["128.0.0.0/1", "0.0.0.0/1"],
            "the entries together hold every IPv4",
        ),
        (
            &[
                "0.0.0.0/2",
                "64.0.0.0/2",
                "128.0.0.0/2",
                "192.0.0.0/3",
                "224.0.0.0/3",
            ],
            "together",
        ),
    ] {
        let e = check_trusted(&list(entries)).unwrap_err().to_string();
        assert!(
            e.contains(says) && e.contains("X-Forwarded-For"),
            "{entries:?}: {e}"
        );
    }
    for entries in [
        &["10.0.0.0/8", "0.0.0.0/1"][..],
        &["0.0.0.0/1", "128.0.0.0/2", "224.0.0.0/3"],
        &[
            "255.255.255.255",
            "0.0.0.0/1",
            "128.0.0.0/2",
            "192.0.0.0/3",
            "224.0.0.0/4",
            "240.0.0.0/5",
        ],
        &["::ffff:0:0/97", "fd00::/8", "8000::/1"],
        &[],
    ] {
        assert_eq!(check_trusted(&list(entries)), Ok(()), "{entries:?}");
    }
}

#[test]
fn headers_that_carry_something_else_cannot_name_the_user() {
    for name in [
        "authorization",
        "cookie",
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-proto",
        "user-agent",
        "host",
        "content-type",
        "transfer-encoding",
        "mcp-session-id",
        "mcp-protocol-version",
        "traceparent",
        "sec-fetch-mode",
        "if-match",
        "accept-language",
    ] {
        assert!(carries_something_else(name).is_some(), "{name}");
    }
    for name in [
        "x-forwarded-user",
        "x-forwarded-email",
        "remote-user",
        "x-auth-request-user",
    ] {
        assert_eq!(carries_something_else(name), None, "{name}");
    }
}

/// Finding (attack of issue 56, item 3): the check refuses lists that hold every
/// address, but not lists that hold every address a peer can have. Leaving out only
/// space no socket peer ever has (`0.0.0.0/8`, the reserved `240.0.0.0/4`, multicast) or
/// only the IPv4-mapped block (every IPv6 peer trusted) passes, and with it any client
/// on the internet sets `X-Forwarded-For` and, beside a leaked gateway token, names any
/// user. Judge the union against the unicast space a peer can come from (IPv4 without
/// 0/8, 224/4, 240/4; IPv6's 2000::/3 and fc00::/7), or refuse any union wider than a
/// few private networks together (more than 2^25 IPv4 addresses, an IPv6 entry shorter
/// than /16).
#[test]
#[ignore = "open (found by the attack on the roster): trusted_proxies that hold every address a peer can have (all but reserved space) pass the check"]
fn lists_that_hold_every_address_a_peer_can_have_are_refused() {
    let list = |entries: &[&str]| -> Vec<Cidr> {
        entries.iter().map(|e| Cidr::parse(e).unwrap()).collect()
    };
    // Every unicast IPv4 address but 0.0.0.0/8 (no peer has one).
    let all_but_this_network = [
        "1.0.0.0/8",
        "2.0.0.0/7",
        "4.0.0.0/6",
        "8.0.0.0/5",
        "16.0.0.0/4",
        "32.0.0.0/3",
        "64.0.0.0/2",
        "128.0.0.0/2",
        "192.0.0.0/3",
    ];
    // Every address below the reserved 240.0.0.0/4.
    let all_but_class_e = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4"];
    // Every global unicast IPv6 address.
    let global_v6 = ["2000::/3"];
    // Every IPv6 address but the IPv4-mapped block: the siblings of its path.
    let mapped = u128::from(std::net::Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0));
    let siblings: Vec<String> = (0..96u32)
        .map(|depth| {
            let bit = 1u128 << (127 - depth);
            let keep = u128::MAX.checked_shl(128 - depth).unwrap_or(0);
            let network = (mapped & keep) ^ (mapped & bit) ^ bit;
            format!("{}/{}", std::net::Ipv6Addr::from(network), depth + 1)
        })
        .collect();
    let siblings: Vec<&str> = siblings.iter().map(String::as_str).collect();
    for entries in [
        &all_but_this_network[..],
        &all_but_class_e,
        &global_v6,
        &siblings,
    ] {
        assert!(
            check_trusted(&list(entries)).is_err(),
            "accepted as trusted proxies: {entries:?}"
        );
    }
}
