use super::media::accepts;
use super::*;
use crate::http::{Incoming, Reader, RequestLimits, RequestReader};
use crate::serve::access::{Token, LOOPBACK_NAMES};
use crate::ExchangeOut;
use serde_json::json;

fn access(token: Option<&str>) -> Access {
    Access {
        allowed_hosts: Some(LOOPBACK_NAMES.iter().map(|s| (*s).to_owned()).collect()),
        allowed_origins: Vec::new(),
        loopback_origins: true,
        token: token.and_then(Token::new),
        clients: None,
        mcp: true,
        oauth: None,
        gateway: Default::default(),
    }
}

/// A request parsed from `head` lines and `body`.
fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Request {
    let mut wire = format!("{method} {path} HTTP/1.1\r\nHost: localhost:8787\r\n");
    for (n, v) in headers {
        wire.push_str(&format!("{n}: {v}\r\n"));
    }
    wire.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut reader = RequestReader::new(RequestLimits {
        max_head: 8192,
        max_body: 1 << 20,
    });
    reader.feed(wire.as_bytes());
    match reader.next_incoming() {
        Ok(Some(Incoming::Request(r))) => r,
        other => panic!("{other:?}"),
    }
}

/// A response read back with the client's reader: status, headers, body.
fn parse(bytes: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut reader = Reader::new(1 << 20);
    let space = reader.space();
    assert!(space.len() >= bytes.len());
    space[..bytes.len()].copy_from_slice(bytes);
    let r = reader.filled(bytes.len()).unwrap().unwrap();
    (r.status, r.headers, r.body)
}

fn responded(routed: Routed) -> (u16, Value) {
    match routed {
        Routed::Respond(bytes) => {
            let (status, _, body) = parse(&bytes);
            let body = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&body).unwrap()
            };
            (status, body)
        }
        other => panic!("not answered at once: {other:?}"),
    }
}

const JSON: (&str, &str) = ("content-type", "application/json");
const BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

#[test]
fn a_legacy_post_becomes_an_exchange() {
    let r = request(
        "POST",
        "/mcp",
        &[JSON, BOTH, ("mcp-protocol-version", "2025-06-18")],
        PING,
    );
    match route(&r, &access(None)) {
        Routed::Exchange {
            asked: Asked::Rpc {
                message, version, ..
            },
            ..
        } => {
            assert_eq!(message["method"], "ping");
            assert_eq!(version, Some(ProtocolVersion::V2025_06_18));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn refusals_carry_their_status_and_a_json_rpc_error() {
    let a = access(Some("t0ken-for-tests"));
    let auth = ("authorization", "Bearer t0ken-for-tests");
    let cases: Vec<(Request, u16, &str)> = vec![
        (request("POST", "/other", &[JSON, auth], PING), 404, "/mcp"),
        (request("POST", "/mcp", &[JSON], PING), 401, "bearer token"),
        (
            request(
                "POST",
                "/mcp",
                &[JSON, ("authorization", "Bearer nope")],
                PING,
            ),
            401,
            "not valid",
        ),
        (
            request(
                "POST",
                "/mcp",
                &[JSON, auth, ("origin", "http://evil.example")],
                PING,
            ),
            403,
            "allowed_origins",
        ),
        (request("GET", "/mcp", &[auth], ""), 405, "POST"),
        (request("DELETE", "/mcp", &[auth], ""), 405, "POST"),
        (
            request(
                "POST",
                "/mcp",
                &[auth, ("content-type", "text/plain")],
                PING,
            ),
            415,
            "application/json",
        ),
        (
            request("POST", "/mcp", &[JSON, auth, ("accept", "text/html")], PING),
            406,
            "accept",
        ),
        (
            request("POST", "/mcp", &[JSON, auth], "{nope"),
            400,
            "parse error",
        ),
        (
            request(
                "POST",
                "/mcp",
                &[JSON, auth, ("mcp-protocol-version", "1999-01-01")],
                PING,
            ),
            400,
            "1999-01-01",
        ),
        (
            request(
                "POST",
                "/mcp",
                &[JSON, auth, ("mcp-protocol-version", "2026-07-28")],
                DISCOVER,
            ),
            400,
            "Mcp-Method header is missing",
        ),
        (
            request(
                "POST",
                "/mcp",
                &[JSON, auth, ("mcp-method", "server/discover")],
                DISCOVER,
            ),
            400,
            "MCP-Protocol-Version header is missing",
        ),
    ];
    for (r, status, says) in cases {
        let (got, body) = responded(route(&r, &a));
        assert_eq!(got, status, "{} {}: {body}", r.method, r.target);
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{message} should say {says}");
        assert!(!body.to_string().contains("t0ken-for-tests"));
    }
    // The header errors are the modern ones, with the id when it could be read.
    let r = request(
        "POST",
        "/mcp",
        &[JSON, auth, ("mcp-protocol-version", "2026-07-28")],
        DISCOVER,
    );
    let (_, body) = responded(route(&r, &a));
    assert_eq!(body["error"]["code"], -32020);
    assert_eq!(body["id"], 7);
    let r = request(
        "POST",
        "/mcp",
        &[JSON, auth, ("mcp-protocol-version", "1999-01-01")],
        PING,
    );
    let (_, body) = responded(route(&r, &a));
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(body["error"]["data"]["requested"], "1999-01-01");
    // 401 says how to authenticate, as the error of the request it refuses.
    let r = request("POST", "/mcp", &[JSON], PING);
    let Routed::Respond(bytes) = route(&r, &a) else {
        panic!()
    };
    assert_eq!(parse(&bytes).0, 401);
    let body: Value = serde_json::from_slice(&parse(&bytes).2).unwrap();
    assert_eq!(body["id"], 1, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("bearer token"));
    assert!(String::from_utf8_lossy(&bytes).contains("www-authenticate: Bearer realm=\"mcp\"\r\n"));
    // A wrong token: RFC 6750's invalid_token, and the token is not echoed.
    let r = request(
        "POST",
        "/mcp",
        &[JSON, ("authorization", "Bearer guess-1234")],
        PING,
    );
    let Routed::Respond(bytes) = route(&r, &a) else {
        panic!()
    };
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(parse(&bytes).0, 401);
    assert!(text.contains(r#"error="invalid_token""#), "{text}");
    assert!(!text.contains("guess-1234"));
}

#[test]
fn oauth_discovery_and_registration_are_told_that_a_bearer_token_is_needed() {
    let a = access(Some("secret-token-1234"));
    for (method, path) in [
        ("GET", "/.well-known/oauth-protected-resource"),
        ("GET", "/.well-known/oauth-protected-resource/mcp"),
        ("GET", "/.well-known/oauth-authorization-server"),
        ("GET", "/.well-known/openid-configuration"),
        ("POST", "/register"),
        ("GET", "/authorize"),
        ("POST", "/token"),
    ] {
        let (status, body) = responded(route(&request(method, path, &[JSON], "{}"), &a));
        assert_eq!(status, 404, "{method} {path}");
        assert_eq!(body["error"], "invalid_request");
        let description = body["error_description"].as_str().unwrap();
        assert!(
            description.contains("Authorization: Bearer <token>"),
            "{description}"
        );
        assert!(!description.contains("secret-token-1234"));
    }
    // Other unknown paths keep their JSON-RPC 404.
    let (status, body) = responded(route(&request("GET", "/registers", &[], ""), &a));
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (404, json!(-32600))
    );
}

#[test]
fn a_token_in_the_path_or_method_is_not_echoed() {
    let a = access(Some("t0ken-for-tests"));
    for r in [
        request("POST", "/mcp/t0ken-for-tests", &[JSON], PING),
        request(
            "t0ken-for-tests",
            "/mcp",
            &[("authorization", "Bearer t0ken-for-tests")],
            "",
        ),
    ] {
        let (status, body) = responded(route(&r, &a));
        assert!(status == 404 || status == 405, "{status}");
        assert!(!body.to_string().contains("t0ken-for-tests"), "{body}");
        assert!(body.to_string().contains("***"), "{body}");
    }
}

#[test]
fn health_needs_no_token_and_tells_no_secrets() {
    let r = request("GET", "/health", &[], "");
    assert!(matches!(
        route(&r, &access(Some("t0ken-for-tests"))),
        Routed::Health
    ));
    let bytes = health(
        &r,
        Health {
            running: 2,
            queued: 1,
            draining: false,
            ..Health::default()
        },
    );
    let (status, _, body) = parse(&bytes);
    assert_eq!(status, 200);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["calls"], json!({"running": 2, "queued": 1}));
    assert_eq!(body["version"], shape::SERVER_VERSION);
    let head = health(
        &request("HEAD", "/health", &[], ""),
        Health {
            running: 2,
            queued: 1,
            draining: false,
            ..Health::default()
        },
    );
    assert!(
        bytes.starts_with(&head) && bytes.len() > head.len(),
        "HEAD sends GET's head alone"
    );
    let draining = health(
        &r,
        Health {
            running: 0,
            queued: 0,
            draining: true,
            ..Health::default()
        },
    );
    assert_eq!(parse(&draining).0, 503);
    let (status, _) = responded(route(&request("POST", "/health", &[], ""), &access(None)));
    assert_eq!(status, 405);
}

fn exchange(accept: &str, modern: bool) -> ExchangeResponse {
    let (body, version) = if modern {
        (DISCOVER, "2026-07-28")
    } else {
        (PING, "2025-11-25")
    };
    let mut headers = vec![JSON, ("accept", accept), ("mcp-protocol-version", version)];
    if modern {
        headers.push(("mcp-method", "server/discover"));
    }
    match route(&request("POST", "/mcp", &headers, body), &access(None)) {
        Routed::Exchange { response, .. } => response,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_reply_first_is_plain_json_with_the_status_its_error_wants() {
    let reply = |code: Option<i32>| ExchangeOut::Reply {
        json: match code {
            Some(c) => {
                format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{c},"message":"m"}}}}"#)
            }
            None => r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
        }
        .into_bytes(),
        error: code,
        retry_after_secs: None,
    };
    for (modern, code, status) in [
        (true, None, 200),
        (true, Some(-32601), 404),
        (false, Some(-32601), 200),
        (true, Some(-32602), 200),
        (true, Some(-32022), 400),
    ] {
        let (bytes, done) = exchange(BOTH.1, modern).write(reply(code));
        assert!(done);
        let (got, headers, _) = parse(&bytes);
        assert_eq!(got, status, "{modern} {code:?}");
        assert!(headers.contains(&("content-type".into(), "application/json".into())));
    }
}

#[test]
fn progress_turns_the_response_into_an_event_stream() {
    let mut x = exchange(BOTH.1, false);
    let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
    let (mut wire, done) = x.write(ExchangeOut::Notification(note.to_vec()));
    assert!(!done);
    let (more, done) = x.write(ExchangeOut::Notification(note.to_vec()));
    assert!(!done);
    wire.extend(more);
    let (end, done) = x.write(ExchangeOut::Reply {
        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        error: None,
        retry_after_secs: None,
    });
    assert!(done);
    wire.extend(end);
    assert_eq!(
        String::from_utf8_lossy(&wire)
            .matches("HTTP/1.1 200")
            .count(),
        1
    );
    let (status, headers, body) = parse(&wire);
    assert_eq!(status, 200);
    assert!(headers.contains(&("content-type".into(), "text/event-stream".into())));
    let mut events = crate::sse::SseReader::new(1 << 16, 1 << 20);
    events.push(&body);
    events.finish();
    let data: Vec<String> = std::iter::from_fn(|| events.next_event())
        .map(|e| e.unwrap().data)
        .collect();
    assert_eq!(data.len(), 3);
    assert!(data[2].contains("\"result\""));
}

#[test]
fn without_stream_support_progress_is_left_out_and_a_cancel_still_answers() {
    let mut x = exchange("application/json", false);
    let (bytes, done) = x.write(ExchangeOut::Notification(b"{}".to_vec()));
    assert!(bytes.is_empty() && !done);
    let (bytes, done) = x.write(ExchangeOut::Ended);
    assert!(done);
    assert_eq!(parse(&bytes).0, 202);
    // With a stream, a cancelled call's response is an empty stream that ends cleanly.
    let (bytes, done) = exchange(BOTH.1, false).write(ExchangeOut::Ended);
    assert!(done);
    let (status, _, body) = parse(&bytes);
    assert_eq!((status, body.len()), (200, 0));
    let (bytes, _) = exchange(BOTH.1, false).write(ExchangeOut::Accepted);
    assert_eq!(parse(&bytes).0, 202);
}

#[test]
fn accept_ranges_are_read_with_their_weights() {
    assert_eq!(accepts(None), (true, false));
    assert_eq!(accepts(Some("*/*")), (true, true));
    assert_eq!(
        accepts(Some("application/json, text/event-stream")),
        (true, true)
    );
    assert_eq!(
        accepts(Some("text/event-stream;q=0, application/json")),
        (true, false)
    );
    assert_eq!(accepts(Some("TEXT/*")), (false, true));
    assert_eq!(accepts(Some("image/png")), (false, false));
}

#[test]
fn ready_is_200_only_when_a_call_can_work_and_says_why_not() {
    let r = request("GET", "/ready", &[], "");
    assert!(matches!(
        route(&r, &access(Some("t0ken-for-tests"))),
        Routed::Ready
    ));
    let answer = |h: Health| {
        let (status, headers, body) = parse(&ready(&r, h));
        let body: Value = serde_json::from_slice(&body).unwrap();
        let retry = headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("retry-after"));
        (
            status,
            body["reason"].as_str().unwrap_or("").to_owned(),
            retry,
        )
    };
    let busy = Health {
        running: 4,
        queued: 9,
        ..Health::default()
    };
    assert_eq!(
        answer(busy),
        (200, String::new(), false),
        "busy but below the limit"
    );
    let full = Health { full: true, ..busy };
    let (status, reason, retry) = answer(full);
    assert_eq!((status, retry), (503, true));
    assert!(reason.starts_with("at capacity"), "{reason}");
    let keyless = Health {
        key_missing: true,
        ..full
    };
    assert!(
        answer(keyless).1.starts_with("no API key"),
        "the key goes first"
    );
    let draining = Health {
        draining: true,
        ..keyless
    };
    let (status, reason, retry) = answer(draining);
    assert_eq!((status, retry), (503, false));
    assert!(reason.starts_with("draining"));
    let head = ready(&request("HEAD", "/ready", &[], ""), Health::default());
    assert!(head.starts_with(b"HTTP/1.1 200") && head.ends_with(b"\r\n\r\n"));
    let (status, _) = responded(route(&request("POST", "/ready", &[], ""), &access(None)));
    assert_eq!(status, 405);
}

#[test]
fn metrics_take_the_token_and_answer_as_prometheus_text() {
    let token = "t0ken-for-tests";
    let bearer = format!("Bearer {token}");
    let r = request("GET", "/metrics", &[("authorization", &bearer)], "");
    let Routed::Exchange {
        asked: Asked::Metrics,
        mut response,
    } = route(&r, &access(Some(token)))
    else {
        panic!("not a scrape")
    };
    let (bytes, done) = response.write(ExchangeOut::Metrics(b"up 1\n".to_vec()));
    let (status, headers, body) = parse(&bytes);
    assert!(done);
    assert_eq!((status, body.as_slice()), (200, &b"up 1\n"[..]));
    assert!(headers
        .iter()
        .any(|(n, v)| n == "content-type" && v == METRICS_CONTENT_TYPE));
    // No token, a wrong one, a foreign origin: refused before the server is asked.
    for headers in [
        vec![],
        vec![("authorization", "Bearer nope")],
        vec![
            ("authorization", bearer.as_str()),
            ("origin", "https://evil.example"),
        ],
    ] {
        let r = request("GET", "/metrics", &headers, "");
        let Routed::Respond(bytes) = route(&r, &access(Some(token))) else {
            panic!("{headers:?} was let through")
        };
        let (status, _, body) = parse(&bytes);
        assert!(matches!(status, 401 | 403), "{status}");
        assert!(!String::from_utf8_lossy(&body).contains(token));
    }
    let r = request("POST", "/metrics", &[("authorization", &bearer)], "{}");
    let Routed::Respond(bytes) = route(&r, &access(Some(token))) else {
        panic!()
    };
    assert_eq!(parse(&bytes).0, 405);
}

/// The head of `bytes` and what follows it.
fn split_head(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = crate::http::head_end(bytes).expect("a whole head");
    bytes.split_at(end)
}

#[test]
fn head_requests_get_a_head_and_never_a_body() {
    // Refusals (wrong path, no token, wrong method) and a scrape: each has a body for GET
    // and none for HEAD, whose head still announces the length GET's body would have.
    let token = "t0ken-for-tests";
    let bearer = format!("Bearer {token}");
    for (path, headers) in [
        ("/nowhere", vec![]),
        ("/mcp", vec![]),
        ("/mcp", vec![("authorization", bearer.as_str())]),
        ("/metrics", vec![]),
    ] {
        let get = route(&request("GET", path, &headers, ""), &access(Some(token)));
        let head = route(&request("HEAD", path, &headers, ""), &access(Some(token)));
        let (Routed::Respond(get), Routed::Respond(head)) = (get, head) else {
            panic!("{path} was not answered at once")
        };
        let (get_head, get_body) = split_head(&get);
        assert!(!get_body.is_empty(), "GET {path} has a body");
        let (head_head, after) = split_head(&head);
        assert_eq!(after, b"", "HEAD {path} sent a body");
        let length = |head: &[u8]| {
            String::from_utf8_lossy(head)
                .lines()
                .find_map(|l| l.strip_prefix("content-length: ").map(str::to_owned))
        };
        assert_eq!(head_head[..12], get_head[..12], "HEAD {path}'s status");
        assert!(length(head_head).is_some(), "HEAD {path} names a length");
    }
    let r = request("HEAD", "/metrics", &[("authorization", &bearer)], "");
    let Routed::Exchange { mut response, .. } = route(&r, &access(Some(token))) else {
        panic!("not a scrape")
    };
    let (bytes, done) = response.write(ExchangeOut::Metrics(b"up 1\n".to_vec()));
    assert!(done);
    let (head, after) = split_head(&bytes);
    assert_eq!(after, b"");
    assert!(String::from_utf8_lossy(head).contains("content-length: 5\r\n"));
}

#[test]
fn oauth_mode_serves_its_metadata_challenges_and_hands_tokens_to_the_gate() {
    let mut settings =
        crate::oauth::OAuthSettings::new("https://idp.example", "https://mcp.example/mcp");
    settings.scopes = vec!["mcp:answer".into()];
    let mut a = access(Some("secret-token-1234"));
    a.oauth = Some(crate::serve::access::OAuthDoor::of(&settings));
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/prefix/mcp",
    ] {
        let Routed::Respond(bytes) = route(&request("GET", path, &[], ""), &a) else {
            panic!("{path}: not answered at once");
        };
        let (status, _, body) = parse(&bytes);
        assert_eq!(status, 200, "{path}");
        let doc: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(doc["resource"], "https://mcp.example/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://idp.example"]));
        let head = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        assert!(
            head.contains("\r\naccess-control-allow-origin: *\r\n"),
            "{head}"
        );
    }
    // An authorization server's paths are not ours: 404 naming the issuer.
    let (status, body) = responded(route(
        &request("GET", "/.well-known/oauth-authorization-server", &[], ""),
        &a,
    ));
    assert_eq!(status, 404);
    assert!(body["error_description"]
        .as_str()
        .is_some_and(|d| d.contains("https://idp.example")));
    // No token: the challenge points at the metadata and names the scope.
    let post = |headers: &[(&str, &str)]| {
        let mut all = vec![JSON, ("accept", "application/json")];
        all.extend_from_slice(headers);
        route(
            &request(
                "POST",
                "/mcp",
                &all,
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            &a,
        )
    };
    let Routed::Respond(bytes) = post(&[]) else {
        panic!("not refused");
    };
    let (status, _, _) = parse(&bytes);
    assert_eq!(status, 401);
    let head = String::from_utf8_lossy(&bytes);
    let expected = r#"www-authenticate: Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="mcp:answer""#;
    assert!(head.contains(expected), "{head}");
    // The static token is a client at once; any other token goes to the gate.
    let Routed::Exchange { asked, .. } = post(&[("authorization", "Bearer secret-token-1234")])
    else {
        panic!("the static token refused");
    };
    assert!(
        matches!(asked, Asked::Rpc { client, .. } if client == crate::clients::ClientId::DEFAULT),
        "{asked:?}"
    );
    let Routed::Exchange { asked, .. } = post(&[("authorization", "Bearer eyJ.a.b")]) else {
        panic!("a token for the gate refused");
    };
    // Only the token is asked about: the body is read once the gate says whose it is
    // (the connection's part, pinned in its tests).
    let Asked::Token(token) = asked else {
        panic!("not asked of the gate: {asked:?}");
    };
    assert_eq!(token.expose(), "eyJ.a.b");
}

#[test]
fn metrics_are_not_served_to_an_identity_of_the_provider() {
    let mut a = access(Some("secret-token-1234"));
    let settings =
        crate::oauth::OAuthSettings::new("https://idp.example", "https://mcp.example/mcp");
    a.oauth = Some(crate::serve::access::OAuthDoor::of(&settings));
    let get = |auth: &str| {
        route(
            &request("GET", "/metrics", &[("authorization", auth)], ""),
            &a,
        )
    };
    let Routed::Respond(bytes) = get("Bearer eyJ.a.b") else {
        panic!("served to an identity");
    };
    assert_eq!(parse(&bytes).0, 403);
    assert!(String::from_utf8_lossy(&bytes).contains("metrics listener"));
    assert!(matches!(
        get("Bearer secret-token-1234"),
        Routed::Exchange {
            asked: Asked::Metrics,
            ..
        }
    ));
}

#[test]
fn metrics_are_served_to_a_named_client_only_when_the_file_marks_it() {
    let clients = crate::clients::Clients::new(
        ["ci", "ops"]
            .map(|name| crate::clients::NamedClient {
                name: name.into(),
                limit: crate::clients::Limit::default(),
                identity: None,
                gateway: false,
            })
            .to_vec(),
    )
    .unwrap();
    let (ci, ops) = (clients.id(0).unwrap(), clients.id(1).unwrap());
    let pad = |t: &[u8]| {
        let mut d = [0u8; 32];
        d[..t.len()].copy_from_slice(t);
        d
    };
    let mut a = access(Some("secret-token-1234"));
    a.clients = Some(crate::serve::access::ClientTokens {
        sha256: |t| {
            let mut d = [0u8; 32];
            d[..t.len().min(32)].copy_from_slice(&t[..t.len().min(32)]);
            d
        },
        digests: vec![(ci, pad(b"ci-token")), (ops, pad(b"ops-token"))],
        metrics: vec![ops],
    });
    let get = |token: &str| {
        let auth = format!("Bearer {token}");
        route(
            &request("GET", "/metrics", &[("authorization", &auth)], ""),
            &a,
        )
    };
    // A client's token calls tools; the figures name every client's spend.
    let Routed::Respond(bytes) = get("ci-token") else {
        panic!("served to a client the file does not mark");
    };
    let (status, _, body) = parse(&bytes);
    assert_eq!(status, 403);
    let body = String::from_utf8_lossy(&body);
    assert!(
        body.contains("metrics: true") && !body.contains("ci-token"),
        "{body}"
    );
    for token in ["ops-token", "secret-token-1234"] {
        assert!(
            matches!(
                get(token),
                Routed::Exchange {
                    asked: Asked::Metrics,
                    ..
                }
            ),
            "{token}"
        );
    }
}

#[test]
fn ready_is_not_said_before_the_server_told_its_state() {
    let get = request("GET", "/ready", &[], "");
    let (status, _, body) = parse(&ready(&get, Health::starting()));
    assert_eq!(status, 503);
    assert!(String::from_utf8_lossy(&body).contains("starting"));
    let listener: crate::serve::listener::Listener<()> =
        crate::serve::listener::Listener::new(true, 8, 1);
    assert_eq!(listener.health(), Health::starting());
    let told = Health {
        key_missing: true,
        ..Health::default()
    };
    let (status, _, body) = parse(&ready(&get, told));
    assert_eq!(status, 503);
    assert!(String::from_utf8_lossy(&body).contains("no API key"));
    let degraded = Health {
        identity_degraded: true,
        ..Health::default()
    };
    let (status, _, body) = parse(&ready(&get, degraded));
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("degraded"));
}

#[test]
fn a_trusted_gateway_claims_the_user_once_a_credential_passed() {
    use crate::serve::exchange::Credential;
    let mut a = access(Some("t0ken-for-tests"));
    a.gateway = crate::serve::gateway::Gateway {
        trusted: vec![crate::serve::gateway::Cidr::parse("10.0.0.0/8").unwrap()],
        identity_header: Some("x-forwarded-user".into()),
    };
    let gateway: std::net::IpAddr = "10.0.0.2".parse().unwrap();
    let stranger: std::net::IpAddr = "192.0.2.1".parse().unwrap();
    let user = ("x-forwarded-user", "alice");
    let auth = ("authorization", "Bearer t0ken-for-tests");
    let way = |verdict: Verdict| match verdict {
        Verdict::Read { way, .. } => way,
        other => panic!("{other:?}"),
    };
    // The claim travels with the token's own credential: whether that credential is the
    // gateway's, and so whether the claim counts, is the server's to say.
    let r = request("POST", "/mcp", &[JSON, auth, user], PING);
    let seen = way(judge(&r, &a, Some(gateway)));
    assert_eq!(
        (seen.identity, seen.credential),
        (Some(Ok("alice".to_owned())), Credential::StaticToken)
    );
    assert_eq!(seen.remote, Some(gateway));
    // Another peer: nobody, the token's own credential, flagged for the metric.
    let seen = way(judge(&r, &a, Some(stranger)));
    assert_eq!(
        (seen.identity, seen.credential, seen.header_ignored),
        (None, Credential::StaticToken, true)
    );
    // The header is no credential: without the token, 401 as ever.
    let r = request("POST", "/mcp", &[JSON, user], PING);
    let Verdict::Answer(Early::Refused { head, .. }) = judge(&r, &a, Some(gateway)) else {
        panic!("not refused");
    };
    assert_eq!(head.status, 401);
    // A malformed one from the gateway's address: a claim of what is wrong, naming the
    // header, never echoing it (the server refuses it beside the gateway's credential).
    let r = request(
        "POST",
        "/mcp",
        &[JSON, auth, ("x-forwarded-user", "t0ken-for-tests\u{7}")],
        PING,
    );
    let Some(Err(bad)) = way(judge(&r, &a, Some(gateway))).identity else {
        panic!("not a malformed claim");
    };
    let message = bad.to_string();
    assert!(message.contains("x-forwarded-user"), "{message}");
    assert!(!message.contains("t0ken"), "{message}");
}
