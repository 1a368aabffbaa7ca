use super::*;
use crate::http::Reader;
use crate::serve::access::{Token, LOOPBACK_NAMES};
use crate::Asked;
use serde_json::json;
use serde_json::Value;

const LIMITS: RequestLimits = RequestLimits {
    max_head: 1024,
    max_body: 4096,
};

const TIMEOUTS: Timeouts = Timeouts {
    idle: Duration::from_secs(60),
    request: Duration::from_secs(10),
};

/// The tests' one instant (a connection reads no clock; a fake time is an offset).
fn t0() -> Instant {
    crate::testing::start_instant()
}

fn access() -> Access {
    Access {
        allowed_hosts: Some(LOOPBACK_NAMES.iter().map(|s| (*s).to_owned()).collect()),
        allowed_origins: Vec::new(),
        loopback_origins: true,
        token: Token::new("secret-token-123"),
        clients: None,
        mcp: true,
        oauth: None,
        gateway: Default::default(),
    }
}

fn idle() -> Health {
    Health {
        running: 0,
        queued: 0,
        draining: false,
        ..Health::default()
    }
}

fn post(body: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer secret-token-123\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Status and body of one whole response.
fn read(bytes: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut reader = Reader::new(1 << 20);
    let space = reader.space();
    space[..bytes.len()].copy_from_slice(bytes);
    let r = reader.filled(bytes.len()).unwrap().unwrap();
    (r.status, r.headers, r.body)
}

/// Whether the head of `bytes` has this `name: value` line (case as written).
fn has_header(bytes: &[u8], line: &str) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    head.split("\r\n").any(|l| l.eq_ignore_ascii_case(line))
}

fn written(step: Step) -> Vec<u8> {
    match step {
        Step::Write(bytes) => bytes,
        other => panic!("not a write: {other:?}"),
    }
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[test]
fn requests_are_answered_one_at_a_time_in_order() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    assert!(matches!(c.step(t0(), &access(), idle), Step::Read));
    assert_eq!(c.wait(), Wait::Idle);
    // Two pipelined requests: the second waits for the first exchange's end.
    c.feed(format!("{}{}", post(PING, ""), post(PING, "")).as_bytes());
    let Step::Exchange {
        asked: Asked::Rpc { message, .. },
    } = c.step(t0(), &access(), idle)
    else {
        panic!()
    };
    assert_eq!(message["method"], "ping");
    assert!(c.in_exchange());
    assert!(matches!(c.step(t0(), &access(), idle), Step::Await));
    let bytes = c.reply(ExchangeOut::Reply {
        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        error: None,
        retry_after_secs: None,
    });
    assert_eq!(read(&bytes).0, 200);
    assert!(!c.in_exchange());
    assert!(matches!(
        c.step(t0(), &access(), idle),
        Step::Exchange { .. }
    ));
    // A late word from the server for an exchange that is over writes nothing.
    let _ = c.reply(ExchangeOut::Ended);
    assert!(c.reply(ExchangeOut::Ended).is_empty());
    assert!(matches!(c.step(t0(), &access(), idle), Step::Read));
}

#[test]
fn progress_turns_the_response_into_an_event_stream() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(post(PING, "").as_bytes());
    assert!(matches!(
        c.step(t0(), &access(), idle),
        Step::Exchange { .. }
    ));
    let mut bytes = c.reply(ExchangeOut::Notification(b"{\"n\":1}".to_vec()));
    assert!(c.in_exchange());
    bytes.extend(c.reply(ExchangeOut::Reply {
        json: b"{\"r\":1}".to_vec(),
        error: None,
        retry_after_secs: None,
    }));
    let (status, _, body) = read(&bytes);
    assert_eq!(status, 200);
    assert!(has_header(&bytes, "content-type: text/event-stream"));
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"r\":1}\n\n"
    );
}

#[test]
fn connection_close_is_honoured_after_the_response() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(post(PING, "Connection: close\r\n").as_bytes());
    assert!(matches!(
        c.step(t0(), &access(), idle),
        Step::Exchange { .. }
    ));
    let bytes = c.reply(ExchangeOut::Accepted);
    assert_eq!(read(&bytes).0, 202);
    assert!(matches!(c.step(t0(), &access(), idle), Step::Close));
}

#[test]
fn refusals_are_written_at_once_and_never_echo_the_token() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wrong = post(PING, "").replace("secret-token-123", "secret-token-999");
    c.feed(wrong.as_bytes());
    let bytes = written(c.step(t0(), &access(), idle));
    let (status, _, body) = read(&bytes);
    assert_eq!(status, 401);
    assert!(String::from_utf8_lossy(&bytes)
        .contains("www-authenticate: Bearer realm=\"mcp\", error=\"invalid_token\""));
    let text = String::from_utf8(body).unwrap();
    assert!(!text.contains("secret-token"), "{text}");
    // The connection is still good for the next request.
    assert!(matches!(c.step(t0(), &access(), idle), Step::Read));
}

#[test]
fn health_reports_the_load_it_is_given() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let bytes = written(c.step(t0(), &access(), || Health {
        running: 2,
        queued: 1,
        draining: false,
        ..Health::default()
    }));
    let (status, _, body) = read(&bytes);
    assert_eq!(status, 200);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["calls"], json!({"running": 2, "queued": 1}));
}

#[test]
fn bad_bytes_get_their_status_then_the_connection_closes() {
    for (wire, status) in [
        ("GARBAGE\r\n\r\n", 400),
        ("POST /mcp HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        (
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 999999\r\n\r\n",
            413,
        ),
    ] {
        let mut c = Connection::new(LIMITS, TIMEOUTS, None);
        c.feed(wire.as_bytes());
        let bytes = written(c.step(t0(), &access(), idle));
        assert_eq!(read(&bytes).0, status, "{wire}");
        assert!(has_header(&bytes, "connection: close"));
        assert!(matches!(c.step(t0(), &access(), idle), Step::Close));
    }
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(&[b'a'; 2000]);
    assert_eq!(read(&written(c.step(t0(), &access(), idle))).0, 431);
}

#[test]
fn a_request_cut_short_gets_408_and_an_idle_one_just_closes() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    assert!(c.timed_out().is_empty());
    assert!(matches!(c.step(t0(), &access(), idle), Step::Close));
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(b"POST /mcp HTTP/1.1\r\nHost: loc");
    assert!(matches!(c.step(t0(), &access(), idle), Step::Read));
    assert_eq!(c.wait(), Wait::Request);
    assert_eq!(read(&c.timed_out()).0, 408);
    assert!(matches!(c.step(t0(), &access(), idle), Step::Close));
}

#[test]
fn the_connection_keeps_its_deadlines_request_then_idle_then_per_request() {
    let t = t0();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    assert!(matches!(c.step(t, &access(), idle), Step::Read));
    // Fresh: the first request's time runs from the opening, byte or no byte.
    assert_eq!(c.poll_timeout(), Some(t + TIMEOUTS.request));
    let later = t + Duration::from_secs(3);
    c.feed(b"POST /mcp HTTP/1.1\r\n");
    assert!(matches!(c.step(later, &access(), idle), Step::Read));
    assert_eq!(c.poll_timeout(), Some(t + TIMEOUTS.request));
    assert_eq!(c.handle_timeout(t + Duration::from_secs(9)), None);
    let late = c.handle_timeout(t + TIMEOUTS.request).unwrap();
    assert_eq!(read(&late).0, 408);
    assert!(matches!(c.step(later, &access(), idle), Step::Close));
    // Once a request was served: the idle time between requests, then each request's
    // time from its own first byte, not from each read.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(read(&written(c.step(t, &access(), idle))).0, 200);
    assert!(matches!(c.step(t, &access(), idle), Step::Read));
    assert_eq!(c.poll_timeout(), Some(t + TIMEOUTS.idle));
    assert_eq!(c.handle_timeout(t + Duration::from_secs(59)), None);
    let later = t + Duration::from_secs(30);
    c.feed(b"POST /mcp HTTP/1.1\r\n");
    assert!(matches!(c.step(later, &access(), idle), Step::Read));
    assert_eq!(c.poll_timeout(), Some(later + TIMEOUTS.request));
    c.feed(b"Host: loc");
    let step = c.step(later + Duration::from_secs(5), &access(), idle);
    assert!(matches!(step, Step::Read));
    assert_eq!(c.poll_timeout(), Some(later + TIMEOUTS.request));
    let late = c.handle_timeout(later + TIMEOUTS.request).unwrap();
    assert_eq!(read(&late).0, 408);
    assert!(matches!(c.step(later, &access(), idle), Step::Close));
}

#[test]
fn a_connection_that_never_sends_a_byte_closes_at_the_request_time_not_the_idle_time() {
    let t = t0();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    assert!(matches!(c.step(t, &access(), idle), Step::Read));
    assert_eq!(c.wait(), Wait::Idle);
    assert_eq!(
        c.handle_timeout(t + TIMEOUTS.request - Duration::from_millis(1)),
        None
    );
    // Nothing to answer: it never asked anything. It just closes.
    assert_eq!(c.handle_timeout(t + TIMEOUTS.request), Some(Vec::new()));
    assert!(matches!(
        c.step(t + TIMEOUTS.request, &access(), idle),
        Step::Close
    ));
    // A later step (another wake-up of the host) does not move the opening.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    assert!(matches!(c.step(t, &access(), idle), Step::Read));
    let woke = t + Duration::from_secs(4);
    assert!(matches!(c.step(woke, &access(), idle), Step::Read));
    assert_eq!(c.poll_timeout(), Some(t + TIMEOUTS.request));
    // After a served request the idle time applies: a kept-alive client is not hurried.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(read(&written(c.step(t, &access(), idle))).0, 200);
    let after = t + Duration::from_secs(1);
    assert!(matches!(c.step(after, &access(), idle), Step::Read));
    assert_eq!(c.handle_timeout(after + TIMEOUTS.request), None);
    assert_eq!(c.handle_timeout(after + TIMEOUTS.idle), Some(Vec::new()));
}

#[test]
fn the_mailbox_drops_progress_beyond_its_room_never_the_reply() {
    let mut m = Mailbox::default();
    let note = || ExchangeOut::Notification(b"{}".to_vec());
    let kept = (0..20).filter(|_| m.push(note())).count();
    assert_eq!(kept, MAILBOX - 1);
    assert!(m.push(ExchangeOut::Accepted), "the end always fits");
    assert!(m.push(ExchangeOut::Reply {
        json: b"{}".to_vec(),
        error: None,
        retry_after_secs: None,
    }));
    assert_eq!(m.take().len(), MAILBOX + 1);
    assert!(m.is_empty());
    assert!(keeps(0, &note()) && !keeps(MAILBOX - 1, &note()));
}

#[test]
fn reading_stops_while_a_whole_request_waits_behind_an_exchange() {
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(post(PING, "").as_bytes());
    assert!(matches!(
        c.step(t0(), &access(), idle),
        Step::Exchange { .. }
    ));
    assert!(c.wants_bytes());
    c.feed(&[b'x'; 6000]);
    assert!(!c.wants_bytes(), "more than one request's worth is held");
}

#[test]
fn too_many_connections_says_when_to_retry() {
    let bytes = too_many_connections(2);
    let (status, _, body) = read(&bytes);
    assert_eq!(status, 503);
    assert!(has_header(&bytes, "retry-after: 2"));
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], crate::jsonrpc::code::OVERLOADED);
}

/// Feeds `bytes` as a host would, a read at a time, stepping after each; what the steps
/// wrote, and the most the reader held at once.
fn feed_in_reads(c: &mut Connection, a: &Access, bytes: &[u8]) -> (Vec<u8>, usize) {
    let (mut out, mut held) = (Vec::new(), 0);
    for piece in bytes.chunks(READ_CHUNK) {
        c.feed(piece);
        held = held.max(c.reader.buffered());
        loop {
            match c.step(t0(), a, idle) {
                Step::Write(bytes) => out.extend(bytes),
                Step::Read => break,
                other => panic!("a refused request reached {other:?}"),
            }
        }
    }
    (out, held)
}

#[test]
fn a_refused_callers_body_is_never_held_and_its_reply_has_a_bounded_id() {
    let a = access();
    let limits = RequestLimits {
        max_head: 1024,
        max_body: 4 << 20,
    };
    let refused = |body: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    // A 3.8 MB id array: refused 401 without a token, nothing of it kept, no id.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/list","id":[{}0]}}"#,
        "0,".repeat(1_900_000)
    );
    let mut c = Connection::new(limits, TIMEOUTS, None);
    let (out, held) = feed_in_reads(&mut c, &a, refused(&huge).as_bytes());
    assert!(
        held <= READ_CHUNK + 1024,
        "held {held} bytes of a refused body"
    );
    let (status, _, body) = read(&out);
    assert_eq!(status, 401);
    let reply: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["id"], Value::Null, "{reply}");
    // The same connection goes on: a bounded id is echoed, after a large params.
    let params = format!(
        r#"{{"jsonrpc":"2.0","method":"ping","params":{{"x":"{}"}},"id":"req-7"}}"#,
        "y".repeat(100_000)
    );
    let (out, held) = feed_in_reads(&mut c, &a, refused(&params).as_bytes());
    assert!(held <= READ_CHUNK + 1024);
    let reply: Value = serde_json::from_slice(&read(&out).2).unwrap();
    assert_eq!(reply["id"], "req-7", "{reply}");
    // Chunked, the same.
    let chunked = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"id\"\r\n3\r\n:42\r\n1\r\n}\r\n0\r\n\r\n";
    let (out, _) = feed_in_reads(&mut c, &a, chunked.as_bytes());
    let reply: Value = serde_json::from_slice(&read(&out).2).unwrap();
    assert_eq!(reply["id"], 42, "{reply}");
}

fn oauth_access() -> Access {
    let settings = crate::oauth::OAuthSettings::new("https://idp.example", "http://localhost/mcp");
    Access {
        oauth: Some(crate::serve::access::OAuthDoor::of(&settings)),
        ..access()
    }
}

fn bearer_post(body: &str) -> String {
    post(body, "").replace("Bearer secret-token-123", "Bearer eyJ.for.the-gate")
}

#[test]
fn a_token_is_verified_before_any_of_its_body_is_taken() {
    let a = oauth_access();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wire = bearer_post(PING);
    let (head, body) = wire.split_at(wire.find("\r\n\r\n").unwrap() + 4);
    c.feed(head.as_bytes());
    let Step::Exchange {
        asked: Asked::Token(token),
    } = c.step(t0(), &a, idle)
    else {
        panic!("the token is not asked about first");
    };
    assert_eq!(token.expose(), "eyJ.for.the-gate");
    // While the gate decides, at most one read of the body is taken in.
    assert!(c.wants_bytes());
    c.feed(&vec![b' '; READ_CHUNK + 1]);
    assert!(!c.wants_bytes(), "the body is left in the client's socket");
    assert!(matches!(c.step(t0(), &a, idle), Step::Await));
    // Verified: the body is read, and served as the gate's client.
    let alice = ClientId::DEFAULT;
    assert!(c.reply(ExchangeOut::Verified(alice)).is_empty());
    assert!(!c.in_exchange());
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(head.as_bytes());
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    assert!(c.reply(ExchangeOut::Verified(alice)).is_empty());
    assert!(matches!(c.step(t0(), &a, idle), Step::Read));
    c.feed(body.as_bytes());
    let Step::Exchange {
        asked: Asked::Rpc {
            message, client, ..
        },
    } = c.step(t0(), &a, idle)
    else {
        panic!("the verified request is not served");
    };
    assert_eq!((message["method"].as_str(), client), (Some("ping"), alice));
}

#[test]
fn a_refused_tokens_body_is_dropped_and_the_connection_goes_on() {
    let a = oauth_access();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let big = format!(r#"{{"id":[{}0]}}"#, "0,".repeat(1500));
    c.feed(bearer_post(&big).as_bytes());
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    let denial = crate::oauth::Denial {
        status: 401,
        challenge: Some("Bearer error=\"invalid_token\"".into()),
        message: "the bearer token is not valid: expired".into(),
    };
    let bytes = c.reply(ExchangeOut::Refused(denial));
    assert_eq!(read(&bytes).0, 401);
    assert!(!c.in_exchange());
    // The next request on the connection is read after the dropped body.
    c.feed(post(PING, "").as_bytes());
    let Step::Exchange {
        asked: Asked::Rpc { message, .. },
    } = c.step(t0(), &a, idle)
    else {
        panic!("the next request is lost");
    };
    assert_eq!(message["method"], "ping");
}

#[test]
fn a_pipelined_request_gets_its_own_time_after_a_long_exchange() {
    let a = access();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let first = post(PING, "");
    let (head, body) = first.split_at(20);
    c.feed(head.as_bytes());
    assert!(matches!(c.step(t0(), &a, idle), Step::Read));
    c.feed(body.as_bytes());
    let second = t0() + Duration::from_secs(1);
    assert!(matches!(c.step(second, &a, idle), Step::Exchange { .. }));
    c.feed(&post(PING, "").as_bytes()[..30]);
    let later = t0() + Duration::from_secs(60);
    let _ = c.reply(ExchangeOut::Reply {
        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        error: None,
        retry_after_secs: None,
    });
    assert!(matches!(c.step(later, &a, idle), Step::Read));
    assert!(
        c.handle_timeout(later + Duration::from_millis(1)).is_none(),
        "request 2 timed out on request 1's clock"
    );
}

/// The gate refuses the token being verified: the 401 written.
fn refuse_token(c: &mut Connection) -> Vec<u8> {
    let denial = crate::oauth::Denial {
        status: 401,
        challenge: Some("Bearer error=\"invalid_token\"".into()),
        message: "the bearer token is not valid: expired".into(),
    };
    let bytes = c.reply(ExchangeOut::Refused(denial));
    assert_eq!(read(&bytes).0, 401);
    bytes
}

#[test]
fn a_refused_token_gets_one_response_whatever_its_body_does() {
    let a = oauth_access();
    // Its expectation is not met after the refusal: the 401 says the connection
    // closes, and it does, whether or not the body comes.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wire =
        bearer_post(PING).replace("Content-Length", "Expect: 100-continue\r\nContent-Length");
    c.feed(&wire.as_bytes()[..wire.find("\r\n\r\n").unwrap() + 4]);
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    let bytes = refuse_token(&mut c);
    assert!(has_header(&bytes, "connection: close"));
    assert!(matches!(c.step(t0(), &a, idle), Step::Close));
    // Without the expectation the connection is kept: the body that comes is dropped.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wire = bearer_post(PING);
    c.feed(&wire.as_bytes()[..wire.find("\r\n\r\n").unwrap() + 4]);
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    let bytes = refuse_token(&mut c);
    assert!(!has_header(&bytes, "connection: close"));
    assert!(matches!(c.step(t0(), &a, idle), Step::Read));
    // A body that never comes: closed, no 408.
    assert!(c
        .handle_timeout(t0() + Duration::from_secs(3600))
        .unwrap()
        .is_empty());
    // A chunked body that passes the limit: closed, no 413.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wire = bearer_post(PING).replace(
        &format!("Content-Length: {}", PING.len()),
        "Transfer-Encoding: chunked",
    );
    c.feed(&wire.as_bytes()[..wire.find("\r\n\r\n").unwrap() + 4]);
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    refuse_token(&mut c);
    for _ in 0..4 {
        c.feed(format!("800\r\n{}\r\n", "a".repeat(0x800)).as_bytes());
    }
    for _ in 0..8 {
        match c.step(t0(), &a, idle) {
            Step::Write(b) => panic!("a second response: {:?}", String::from_utf8_lossy(&b)),
            Step::Close => return,
            _ => {}
        }
    }
    panic!("the connection did not close");
}

#[test]
fn a_refused_caller_waiting_to_send_its_body_is_answered_at_once() {
    let a = access();
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    let wire = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 40\r\n\r\n";
    c.feed(wire.as_bytes());
    let bytes = written(c.step(t0(), &a, idle));
    let (status, _, body) = read(&bytes);
    assert_eq!(status, 401, "{}", String::from_utf8_lossy(&bytes));
    assert!(has_header(&bytes, "connection: close"), "it says it closes");
    let reply: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["id"], Value::Null);
    assert!(
        matches!(c.step(t0(), &a, idle), Step::Close),
        "no 100, and closed"
    );
}

#[test]
fn a_verified_tokens_request_keeps_the_way_it_came_in() {
    let mut a = oauth_access();
    a.gateway = crate::serve::gateway::Gateway {
        trusted: vec![crate::serve::gateway::Cidr::parse("10.0.0.0/8").unwrap()],
        identity_header: Some("x-forwarded-user".into()),
    };
    let peer = "10.1.2.3".parse().unwrap();
    let mut c = Connection::new(LIMITS, TIMEOUTS, Some(peer));
    let wire = bearer_post(PING).replacen(
        "\r\n\r\n",
        "\r\nX-Forwarded-User: bob\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n",
        1,
    );
    c.feed(wire.as_bytes());
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    assert!(c.reply(ExchangeOut::Verified(ClientId::DEFAULT)).is_empty());
    let Step::Exchange {
        asked: Asked::Rpc { way, .. },
    } = c.step(t0(), &a, idle)
    else {
        panic!("the verified request is not served");
    };
    assert_eq!(way.identity, Some(Ok("bob".to_owned())));
    assert_eq!(way.remote, Some("203.0.113.9".parse().unwrap()));
    // The token's own: the server decides whether it is the gateway's.
    assert_eq!(way.credential, crate::serve::exchange::Credential::OAuth);
}

#[test]
fn a_draining_listeners_last_responses_say_the_connection_closes() {
    let a = access();
    // An exchange in flight when the drain begins: its reply says so, then the close.
    let mut c = Connection::new(LIMITS, TIMEOUTS, None);
    c.feed(format!("{}{}", post(PING, ""), post(PING, "")).as_bytes());
    assert!(matches!(c.step(t0(), &a, idle), Step::Exchange { .. }));
    c.drain();
    c.drain();
    let bytes = c.reply(ExchangeOut::Reply {
        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        error: None,
        retry_after_secs: None,
    });
    assert_eq!(read(&bytes).0, 200);
    assert!(has_header(&bytes, "connection: close"));
    assert!(
        matches!(c.step(t0(), &a, idle), Step::Close),
        "the pipelined request is left to the client's retry"
    );
    // A request read after the drain began, answered at once, and a refusal.
    for (extra, status) in [("", 200), ("Authorization: Bearer wrong\r\n", 401)] {
        let mut c = Connection::new(LIMITS, TIMEOUTS, None);
        c.drain();
        let wire = if status == 200 {
            "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n".to_owned()
        } else {
            post(PING, "").replace("Authorization: Bearer secret-token-123\r\n", extra)
        };
        c.feed(wire.as_bytes());
        let bytes = written(c.step(t0(), &a, idle));
        assert_eq!(read(&bytes).0, status);
        assert!(has_header(&bytes, "connection: close"), "{status}");
        assert!(matches!(c.step(t0(), &a, idle), Step::Close));
    }
}
