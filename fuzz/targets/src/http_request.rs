//! The `http_request` fuzz target.

/// Everything a request reader makes of `wire` fed in pieces cut at `cuts`, until its
/// first error; `Continue` is left out (it depends on where a read ended). With `skip`,
/// the reader announces each head and skips every body: the pieces it hands out are put
/// back together as the request's body, and it never holds more than a head, a chunk
/// size line and a read.
fn read_requests(
    wire: &[u8],
    cuts: &[usize],
    limits: responses_mcp_core::http::RequestLimits,
    skip: bool,
) -> Vec<Result<responses_mcp_core::http::Request, responses_mcp_core::http::RequestError>> {
    use responses_mcp_core::http::{Incoming, RequestReader};
    let mut reader = if skip {
        RequestReader::announcing_heads(limits)
    } else {
        RequestReader::new(limits)
    };
    let mut skipped = Vec::new();
    let mut out = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&wire.len())) {
        let cut = cut.clamp(from, wire.len());
        reader.feed(&wire[from..cut]);
        let read = cut - from;
        from = cut;
        loop {
            match reader.next_incoming() {
                Ok(Some(Incoming::Request(mut r))) => {
                    if skip {
                        assert!(r.body.is_empty(), "a skipped body was held");
                        r.body = std::mem::take(&mut skipped);
                    }
                    out.push(Ok(r));
                }
                Ok(Some(Incoming::Head)) => {
                    assert!(skip, "a plain reader announced a head");
                    assert!(reader.head().is_some_and(|h| h.body.is_empty()));
                    reader.skip_body();
                }
                Ok(Some(Incoming::Skipped(piece))) => {
                    assert!(skip && piece.len() <= read.max(1) + limits.max_body);
                    skipped.extend(piece);
                }
                Ok(Some(Incoming::Continue)) => {}
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
        // One request at most (head, and a chunked body with its framing) and this read;
        // when bodies are skipped, no body.
        let bound = if skip {
            limits.max_head + 4 * 1024 + 2 + read
        } else {
            limits.max_head + 2 * limits.max_body + 8 * 1024 + read
        };
        assert!(
            reader.buffered() <= bound,
            "the reader holds {} bytes",
            reader.buffered()
        );
    }
    out
}

/// Differential: a client's bytes give the same requests and the same error however the
/// reads cut them; no body exceeds the limit; memory stays within one request and one
/// read. The first 4 bytes choose cut points, the rest is what the client sent.
pub fn http_request(data: &[u8]) {
    let Some((head, wire)) = data.split_first_chunk::<4>() else {
        return;
    };
    let limits = responses_mcp_core::http::RequestLimits {
        max_head: 256,
        max_body: 256,
    };
    let whole = read_whole_and_cut(wire, head, limits);
    // The decisions taken on a parsed request never panic, and refusals never echo the
    // token.
    let access = access();
    for r in whole.iter().flatten() {
        assert!(r.body.len() <= limits.max_body, "a body over the limit");
        check_decisions(r, &access);
    }
}

/// The requests in `wire` read whole, asserted the same when cut where `head` says, with
/// the bodies skipped, and a few bytes at a time.
fn read_whole_and_cut(
    wire: &[u8],
    head: &[u8; 4],
    limits: responses_mcp_core::http::RequestLimits,
) -> Vec<Result<responses_mcp_core::http::Request, responses_mcp_core::http::RequestError>> {
    let whole = read_requests(wire, &[], limits, false);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    let cut = read_requests(wire, &cuts, limits, false);
    assert_eq!(whole, cut, "the cut changed the requests");
    assert_eq!(
        whole,
        read_requests(wire, &cuts, limits, true),
        "skipping the bodies changed the requests"
    );
    let bytes: Vec<usize> = (1..=7).collect();
    let bytewise: Vec<usize> = bytes
        .iter()
        .scan(0, |at, n| {
            *at += n;
            Some(*at)
        })
        .collect();
    assert_eq!(
        whole,
        read_requests(wire, &bytewise, limits, false),
        "small reads changed the requests"
    );
    whole
}

/// The endpoint's access rules: the single token, and a named client's.
fn access() -> responses_mcp_core::serve::access::Access {
    responses_mcp_core::serve::access::Access {
        allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1:8787".into()]),
        allowed_origins: vec!["https://app.example".into()],
        loopback_origins: true,
        token: responses_mcp_core::serve::access::Token::new("fuzz-token-1234"),
        // A named client too: requests may carry either token.
        clients: Some(responses_mcp_core::serve::access::ClientTokens {
            sha256: responses_mcp_core::sha256::sha256,
            digests: vec![(
                named_client(),
                responses_mcp_core::sha256::sha256(b"fuzz-client-5678"),
            )],
            metrics: vec![],
        }),
        mcp: true,
        oauth: None,
        gateway: Default::default(),
    }
}

/// What the endpoint decides for `r`: never a panic, never a token in a refusal or a
/// response, a `HEAD` answered with a head alone.
fn check_decisions(
    r: &responses_mcp_core::http::Request,
    access: &responses_mcp_core::serve::access::Access,
) {
    let _ = r.path();
    match access.check(r) {
        Err(e) => assert!(
            !e.to_string().contains("fuzz-token-1234") && !names_client_token(&e.to_string()),
            "a token leaked"
        ),
        // Only the named client's own token names it.
        Ok(responses_mcp_core::serve::exchange::Caller::Client(client))
            if client == named_client() =>
        {
            assert!(r
                .header("authorization")
                .is_some_and(|a| a.contains("fuzz-client-5678")))
        }
        Ok(_) => {}
    }
    if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&r.body) {
        let _ = responses_mcp_core::serve::headers::check(&r.headers, &message);
    }
    let bytes = respond(r, access);
    assert!(
        !String::from_utf8_lossy(&bytes).contains("fuzz-token-1234")
            && !names_client_token(&String::from_utf8_lossy(&bytes)),
        "the token leaked into a response: {}",
        String::from_utf8_lossy(&bytes)
    );
    if r.method == "HEAD" {
        // A `HEAD` answer is a head alone (RFC 9110, 9.3.2): a client's reader takes
        // nothing after it as a body, so a byte there would be a broken next response.
        let head_end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| at + 4);
        assert_eq!(head_end, Some(bytes.len()), "HEAD got a body");
        // Where the answer says what the server is (health, readiness), it is the
        // head GET would get.
        let get = responses_mcp_core::http::Request {
            method: "GET".into(),
            ..r.clone()
        };
        let full = respond(&get, access);
        assert_readable(&full);
        let path = r.path();
        if path == "/health" || path == "/ready" {
            assert!(full.starts_with(&bytes), "HEAD is not GET's head");
        }
    } else {
        assert_readable(&bytes);
    }
}

/// Whatever the endpoint decides for `r`, as bytes on the wire.
fn respond(
    r: &responses_mcp_core::http::Request,
    access: &responses_mcp_core::serve::access::Access,
) -> Vec<u8> {
    use responses_mcp_core::serve::endpoint::{health, ready, route, Health, Routed};
    let load = Health {
        full: r.body.len() % 2 == 1,
        ..Health::default()
    };
    match route(r, access) {
        Routed::Respond(bytes) => bytes,
        Routed::Health => health(r, load),
        Routed::Ready => ready(r, load),
        Routed::Exchange { mut response, .. } => {
            let note = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#.to_vec();
            let (mut bytes, _) =
                response.write(responses_mcp_core::ExchangeOut::Notification(note));
            let (end, done) = response.write(responses_mcp_core::ExchangeOut::Ended);
            assert!(done);
            bytes.extend(end);
            bytes
        }
    }
}

/// `bytes`, if any, are one well-formed response for a client's reader.
fn assert_readable(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let mut reader = responses_mcp_core::http::Reader::new(1 << 20);
    let mut rest = bytes;
    loop {
        let space = reader.space();
        let n = space.len().min(rest.len());
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match reader.filled(n) {
            Ok(Some(_)) => return,
            Ok(None) => assert!(n > 0, "a response cut short"),
            Err(e) => panic!("an unreadable response: {e:?}"),
        }
    }
}

/// The one named client of the target's access rules.
fn named_client() -> responses_mcp_core::clients::ClientId {
    let clients =
        responses_mcp_core::clients::Clients::new(vec![responses_mcp_core::clients::NamedClient {
            name: "fuzz".into(),
            limit: responses_mcp_core::clients::Limit::default(),
            identity: None,
            gateway: false,
        }]);
    clients
        .and_then(|c| c.id(0))
        .unwrap_or(responses_mcp_core::clients::ClientId::DEFAULT)
}

/// Whether `text` holds the named client's token as a word of its own. Only its digest is
/// known to the server, so a token glued to other token characters cannot be found (the
/// single token, which is known, is checked as a substring).
fn names_client_token(text: &str) -> bool {
    text.split(|c: char| {
        !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '='))
    })
    .any(|word| word == "fuzz-client-5678")
}
