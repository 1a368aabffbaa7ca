//! The `http_connection` fuzz target.

/// Which access rules the connection serves under.
#[derive(Clone, Copy)]
enum Mode {
    /// `/mcp` open to every caller.
    Open,
    /// A metrics-only listener.
    Metrics,
    /// `/mcp` behind a static token: refused callers' bodies are skipped.
    Token,
    /// OAuth mode: other bearer tokens are asked of the gate first, which passes those
    /// whose text ends in an even digit and refuses the rest.
    OAuth,
}

/// Drives a [`Connection`](responses_mcp_core::serve::connection::Connection) over `wire`
/// cut at `cuts`, answering each exchange at once (progress, then a reply); returns what
/// it wrote. Every step terminates; the connection never holds more than one request
/// and one read beyond the exchange in progress, and nothing of a body while its token
/// is verified or after its caller was refused.
fn serve_connection(wire: &[u8], cuts: &[usize], mode: Mode) -> Vec<u8> {
    use responses_mcp_core::serve::connection::{Connection, Step, Timeouts};
    use responses_mcp_core::serve::endpoint::Health;
    let limits = responses_mcp_core::http::RequestLimits {
        max_head: 256,
        max_body: 256,
    };
    let settings =
        responses_mcp_core::oauth::OAuthSettings::new("https://idp.example", "http://h/mcp");
    let access = access(mode, &settings);
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
    let mut conn = Connection::new(limits, timeouts, None);
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
                Step::Exchange { asked } => answer(&mut conn, asked, &mut written),
                Step::Await => panic!("an exchange left open"),
                Step::Read => continue 'reads,
                Step::Close => break 'reads,
            }
        }
        panic!("the connection never asked for more bytes");
    }
    written
}

/// Answers an exchange at once: the gate's word on a token, the metrics, or progress then
/// a reply; each ends the exchange.
fn answer(
    conn: &mut responses_mcp_core::serve::connection::Connection,
    asked: responses_mcp_core::Asked,
    written: &mut Vec<u8>,
) {
    match asked {
        responses_mcp_core::Asked::Token(token) => {
            let passes = token
                .expose()
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_digit() && b % 2 == 0);
            let out = if passes {
                responses_mcp_core::ExchangeOut::Verified(
                    responses_mcp_core::clients::ClientId::DEFAULT,
                )
            } else {
                responses_mcp_core::ExchangeOut::Refused(responses_mcp_core::oauth::Denial {
                    status: 401,
                    challenge: Some("Bearer error=\"invalid_token\"".into()),
                    message: "the bearer token is not valid".into(),
                })
            };
            written.extend(conn.reply(out));
            assert!(!conn.in_exchange(), "the gate's word ends the exchange");
        }
        responses_mcp_core::Asked::Metrics => {
            let text = b"# TYPE up gauge\nup 1\n".to_vec();
            written.extend(conn.reply(responses_mcp_core::ExchangeOut::Metrics(text)));
            assert!(!conn.in_exchange(), "the metrics end the exchange");
        }
        _ => {
            let note = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
            written
                .extend(conn.reply(responses_mcp_core::ExchangeOut::Notification(note.to_vec())));
            written.extend(conn.reply(responses_mcp_core::ExchangeOut::Reply {
                json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
                error: None,
                // A limit's refusal: the head gains Retry-After.
                retry_after_secs: Some(7),
            }));
            assert!(!conn.in_exchange(), "a reply ends the exchange");
        }
    }
}

/// The access rules of `mode`.
fn access(
    mode: Mode,
    settings: &responses_mcp_core::oauth::OAuthSettings,
) -> responses_mcp_core::serve::access::Access {
    responses_mcp_core::serve::access::Access {
        allowed_hosts: None,
        allowed_origins: Vec::new(),
        loopback_origins: true,
        token: match mode {
            Mode::Token | Mode::OAuth => responses_mcp_core::serve::access::Token::new("t0k3n"),
            Mode::Open | Mode::Metrics => None,
        },
        clients: None,
        mcp: !matches!(mode, Mode::Metrics),
        oauth: matches!(mode, Mode::OAuth)
            .then(|| responses_mcp_core::serve::access::OAuthDoor::of(settings)),
        gateway: Default::default(),
    }
}

/// Differential over a whole connection: the bytes written back are the same however the
/// client's bytes are cut. The first 4 bytes choose cut points, the rest is the wire.
pub fn http_connection(data: &[u8]) {
    let Some((head, wire)) = data.split_first_chunk::<4>() else {
        return;
    };
    // The first byte's low bits choose the access rules.
    let mode = [Mode::Open, Mode::Metrics, Mode::Token, Mode::OAuth][usize::from(head[0] % 4)];
    let whole = serve_connection(wire, &[], mode);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    assert_eq!(
        whole,
        serve_connection(wire, &cuts, mode),
        "the cut changed the responses"
    );
}
