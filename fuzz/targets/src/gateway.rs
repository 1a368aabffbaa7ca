//! The `gateway` fuzz target.

use responses_mcp_core::http::Request;
use responses_mcp_core::serve::gateway::{check_trusted, Cidr, Gateway, MAX_IDENTITY};
use std::net::IpAddr;

/// Peers a case comes from: inside and outside the usual trusted networks, IPv4, IPv6
/// and IPv4 written as IPv6.
const PEERS: [&str; 6] = [
    "10.0.0.2",
    "192.0.2.1",
    "::ffff:10.0.0.3",
    "fd00::5",
    "2001:db8::9",
    "127.0.0.1",
];

/// Arbitrary text as `server.http.trusted_proxies` (the first line, comma-separated) and
/// a request's headers (the other lines, `name: value`), from a peer the first byte
/// picks. Never a panic; a parsed network prints back to itself and holds its own
/// address; an identity comes only from a trusted peer, 1 to 256 printable ASCII
/// characters; from an untrusted peer the address is the peer's own.
pub fn gateway(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut lines = text.split('\n');
    let entries = lines.next().unwrap_or_default();
    let mut trusted = Vec::new();
    for entry in entries.split(',') {
        if let Ok(cidr) = Cidr::parse(entry) {
            let printed = cidr.to_string();
            assert_eq!(Cidr::parse(&printed), Ok(cidr));
            let (network, _) = printed.split_once('/').unwrap_or_default();
            let network: IpAddr = network.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
            assert!(cidr.contains(network), "{printed}");
            trusted.push(cidr);
        }
    }
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.to_owned()))
        .collect();
    let request = Request {
        method: "POST".into(),
        target: "/mcp".into(),
        headers,
        body: Vec::new(),
        keep_alive: true,
    };
    // Refusing a list that trusts everyone is arithmetic on every prefix: never a panic.
    let _ = check_trusted(&trusted);
    let gateway = Gateway {
        trusted,
        identity_header: Some("x-forwarded-user".into()),
    };
    let peer: IpAddr = PEERS[usize::from(pick) % PEERS.len()]
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = gateway.read(&request, Some(peer));
    assert!(seen.remote.is_some());
    if seen.identity.is_some() {
        assert!(
            gateway.trusts(peer),
            "only a trusted peer's header is judged"
        );
    }
    if let Some(Ok(identity)) = &seen.identity {
        assert!((1..=MAX_IDENTITY).contains(&identity.len()), "{identity}");
        assert!(
            identity.bytes().all(|b| (b' '..=b'~').contains(&b)),
            "{identity}"
        );
    }
    if !gateway.trusts(peer) {
        assert_eq!(seen.identity, None);
        assert_eq!(
            seen.remote,
            Some(responses_mcp_core::serve::gateway::canonical(peer))
        );
    }
}
