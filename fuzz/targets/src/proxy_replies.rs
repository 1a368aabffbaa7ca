//! The `proxy_replies` fuzz target.

use responses_mcp_host::client::socks::{Destination, Socks5};
use responses_mcp_host::client::tunnel::tunnel_open;

/// What a proxy sends back is judged without a panic: the SOCKS5 handshake asks for a
/// bounded number of bytes per step (at most a name's 255 and a port), ends within a few
/// steps or fails with a reason, and never writes after it is done; the reply to
/// `CONNECT`, read in any cut, gives one judgement once its head is in, and more bytes
/// never reopen a refused tunnel. The first byte chooses credentials and the
/// destination's kind; the rest is what the proxy sent.
pub fn proxy_replies(data: &[u8]) {
    let Some((&choice, wire)) = data.split_first() else {
        return;
    };
    let credentials = (choice & 1 == 1).then_some(("user", "password"));
    let destination = match choice >> 1 & 3 {
        0 => Destination::Ip([127, 0, 0, 1].into()),
        1 => Destination::Ip(std::net::Ipv6Addr::LOCALHOST.into()),
        _ => Destination::Name("api.openai.com"),
    };
    let (mut socks, mut next) = match Socks5::start(destination, 443, credentials) {
        Ok(started) => started,
        Err(e) => panic!("a handshake could not start: {e}"),
    };
    let mut rest = wire;
    let mut steps = 0;
    while next.read > 0 {
        steps += 1;
        assert!(steps <= 5, "the handshake did not end");
        assert!(next.read <= 255 + 2, "asked for {} bytes", next.read);
        if rest.len() < next.read {
            break;
        }
        let (bytes, after) = rest.split_at(next.read);
        rest = after;
        match socks.received(bytes) {
            Ok(step) => next = step,
            Err(why) => {
                assert!(!why.0.is_empty());
                break;
            }
        }
        if next.read == 0 {
            assert!(next.write.is_none(), "a write after the tunnel opened");
        }
    }
    // The same bytes as a reply to CONNECT, as they arrive.
    let mut judged = None;
    for end in 0..=wire.len().min(512) {
        match (tunnel_open(&wire[..end], "proxy"), &judged) {
            (Ok(false), None) => {}
            (Ok(false), Some(_)) => panic!("more bytes made a judged reply incomplete"),
            (Ok(true), _) => {
                assert!(judged.is_none(), "a tunnel opened after a judgement");
                judged = Some(true);
            }
            (Err(e), _) => {
                assert!(e.detail.starts_with("proxy proxy "), "{}", e.detail);
                if judged == Some(true) {
                    // Bytes after the head: data sent into the tunnel.
                    assert!(
                        e.detail.contains("sent data into a new tunnel"),
                        "{}",
                        e.detail
                    );
                }
                break;
            }
        }
    }
}
