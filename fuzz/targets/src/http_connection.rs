//! The `http_connection` fuzz target.

/// Drives a [`Connection`](responses_mcp_core::serve::connection::Connection) over `wire`
/// cut at `cuts`, answering each exchange at once (progress, then a reply); returns what
/// it wrote. Every step terminates; the connection never holds more than one request
/// and one read beyond the exchange in progress.
fn serve_connection(wire: &[u8], cuts: &[usize], mcp: bool) -> Vec<u8> {
    use responses_mcp_core::serve::connection::{Connection, Step, Timeouts};
    use responses_mcp_core::serve::endpoint::Health;
    let limits = responses_mcp_core::http::RequestLimits {
        max_head: 256,
        max_body: 256,
    };
    let access = responses_mcp_core::serve::access::Access {
        allowed_hosts: None,
        allowed_origins: Vec::new(),
        loopback_origins: true,
        token: None,
        clients: None,
        mcp,
        oauth: None,
    };
    let load = || Health {
        running: 1,
        queued: 0,
        draining: false,
        ..Health::default()
    };
    let timeouts = Timeouts {
        idle: std::time::Duration::from_secs(60),
        request: std::time::Duration::from_secs(10),
    };
    let now = std::time::Instant::now();
    let mut conn = Connection::new(limits, timeouts);
    let mut written = Vec::new();
    let mut from = 0;
    let ends = cuts.iter().copied().chain(std::iter::once(wire.len()));
    'reads: for cut in ends {
        let cut = cut.clamp(from, wire.len());
        conn.feed(&wire[from..cut]);
        from = cut;
        // Each step writes, hands out an exchange (answered at once) or stops: bounded by
        // the bytes fed.
        for _ in 0..=2 * wire.len() + 4 {
            match conn.step(now, &access, load) {
                // `100 Continue` depends on whether the body came with the head.
                Step::Write(bytes) if bytes == responses_mcp_core::http::CONTINUE => {}
                Step::Write(bytes) => written.extend(bytes),
                Step::Exchange {
                    asked: responses_mcp_core::Asked::Metrics,
                } => {
                    let text = b"# TYPE up gauge\nup 1\n".to_vec();
                    written.extend(conn.reply(responses_mcp_core::ExchangeOut::Metrics(text)));
                    assert!(!conn.in_exchange(), "the metrics end the exchange");
                }
                Step::Exchange { .. } => {
                    let note = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
                    written.extend(
                        conn.reply(responses_mcp_core::ExchangeOut::Notification(note.to_vec())),
                    );
                    written.extend(conn.reply(responses_mcp_core::ExchangeOut::Reply {
                        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
                        error: None,
                        // A limit's refusal: the head gains Retry-After.
                        retry_after_secs: Some(7),
                    }));
                    assert!(!conn.in_exchange(), "a reply ends the exchange");
                }
                Step::Await => panic!("an exchange left open"),
                Step::Read => continue 'reads,
                Step::Close => break 'reads,
            }
        }
        panic!("the connection never asked for more bytes");
    }
    written
}

/// Differential over a whole connection: the bytes written back are the same however the
/// client's bytes are cut. The first 4 bytes choose cut points, the rest is the wire.
pub fn http_connection(data: &[u8]) {
    let Some((head, wire)) = data.split_first_chunk::<4>() else {
        return;
    };
    // A listener without /mcp (`--metrics-listen`) when the first byte is odd.
    let mcp = head[0] % 2 == 0;
    let whole = serve_connection(wire, &[], mcp);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    assert_eq!(
        whole,
        serve_connection(wire, &cuts, mcp),
        "the cut changed the responses"
    );
}
