use super::*;

const LIMITS: RequestLimits = RequestLimits {
    max_head: 1024,
    max_body: 64,
};

/// Everything that comes out of `wire` fed in pieces of `step` bytes, until an error.
fn read(wire: &[u8], step: usize) -> Vec<Result<Incoming, RequestError>> {
    let mut reader = RequestReader::new(LIMITS);
    let mut out = Vec::new();
    for piece in wire.chunks(step.max(1)) {
        reader.feed(piece);
        loop {
            match reader.next_incoming() {
                Ok(Some(incoming)) => out.push(Ok(incoming)),
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
    }
    out
}

/// The requests out of `wire`, the same for every read size.
fn requests(wire: &[u8]) -> Vec<Result<Incoming, RequestError>> {
    let whole = read(wire, wire.len());
    for step in 1..wire.len().min(40) {
        let cut = read(wire, step);
        // `Continue` can only be reported between reads of the head and the body.
        let strip = |v: &[Result<Incoming, RequestError>]| -> Vec<_> {
            v.iter()
                .filter(|r| !matches!(r, Ok(Incoming::Continue)))
                .cloned()
                .collect()
        };
        assert_eq!(strip(&whole), strip(&cut), "step {step}");
    }
    whole
}

fn only(wire: &[u8]) -> Request {
    match requests(wire).as_slice() {
        [Ok(Incoming::Request(r))] => r.clone(),
        other => panic!("{other:?}"),
    }
}

fn error(wire: &[u8]) -> RequestError {
    match requests(wire).pop() {
        Some(Err(e)) => e,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_post_with_a_length() {
    let r = only(b"POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
    assert_eq!(r.method, "POST");
    assert_eq!(r.path(), "/mcp");
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, b"{\"a\":1}");
    assert!(r.keep_alive);
}

#[test]
fn chunked_bodies_are_decoded() {
    let r = only(b"POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n");
    assert_eq!(r.body, b"abcde");
}

#[test]
fn pipelined_requests_come_out_in_order() {
    let wire = b"GET /health HTTP/1.1\r\nHost: a\r\n\r\nPOST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}\r\nGET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    let got = requests(wire);
    let paths: Vec<_> = got
        .iter()
        .map(|r| match r {
            Ok(Incoming::Request(r)) => (r.path().to_owned(), r.keep_alive),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("/health".to_owned(), true),
            ("/mcp".to_owned(), true),
            ("/x".to_owned(), false)
        ]
    );
}

#[test]
fn http_1_0_closes_unless_kept_alive() {
    assert!(!only(b"GET / HTTP/1.0\r\n\r\n").keep_alive);
    assert!(only(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
}

#[test]
fn absolute_targets_name_their_path() {
    let r = only(b"GET http://example.com:8080/mcp?q HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(r.path(), "/mcp");
    let r = only(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.path(), "*");
}

#[test]
fn expect_continue_is_reported_once_before_the_body() {
    let mut reader = RequestReader::new(LIMITS);
    reader.feed(
        b"POST /mcp HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
    );
    assert_eq!(reader.next_incoming(), Ok(Some(Incoming::Continue)));
    assert_eq!(reader.next_incoming(), Ok(None));
    reader.feed(b"{}");
    assert!(matches!(reader.next_incoming(), Ok(Some(Incoming::Request(r))) if r.body == b"{}"));
    assert!(!reader.in_request());
    // A client that did not wait gets no interim response.
    reader.feed(
        b"POST /mcp HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert!(matches!(
        reader.next_incoming(),
        Ok(Some(Incoming::Request(_)))
    ));
}

#[test]
fn refusals_name_the_problem_and_their_status() {
    let cases: &[(&[u8], u16, &str)] = &[
        (b"GET /\r\n\r\n", 400, "request line"),
        (b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request line"),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP/1.0"),
        (b"GET / HTTP/1.1\r\n\r\n", 400, "Host"),
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host"),
        (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, "header name"),
        (b"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400, "folded"),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400, "control"),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: \xff\r\n\r\n", 400, "UTF-8"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "content length"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "content length"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "chunked"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\n", 413, "64 bytes"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n41\r\n", 413, "64 bytes"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "chunk size"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n", 400, "chunk data"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n", 417, "100-continue"),
        (b"GET / HTTP/1.1\nHost: a\r\n\r\n", 400, "LF alone"),
        (b"GET / HTTP/1.1\r\nHost: a\n\r\n", 400, "LF alone"),
        (b"GET / HTTP/1.1\r\nHost: a\r\n\n", 400, "LF alone"),
        (b"GET / HTTP/1.1\nHost: a\n\n", 400, "LF alone"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\n{}\r\n0\r\n\r\n", 400, "LF alone"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\n0\r\n\r\n", 400, "LF alone"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\n", 400, "LF alone"),
        (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\n\r\n", 400, "LF alone"),
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, "HTTP/1.0"),
        (b"POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "HTTP/1.0"),
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "HTTP/1.0"),
    ];
    for (wire, status, says) in cases {
        let e = error(wire);
        assert_eq!(
            e.status(),
            *status,
            "{}: {e}",
            String::from_utf8_lossy(wire)
        );
        assert!(e.to_string().contains(says), "{e} should say {says}");
    }
}

#[test]
fn an_endless_head_fails_at_the_limit_whatever_the_reads() {
    let mut wire = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    while wire.len() <= LIMITS.max_head {
        wire.extend_from_slice(b"X-Pad: 0123456789\r\n");
    }
    assert_eq!(error(&wire), RequestError::HeadTooLarge(1024));
    // Without any line break too, and memory stays at the limit plus one read.
    let mut reader = RequestReader::new(LIMITS);
    let mut failed = false;
    for _ in 0..100 {
        reader.feed(&[b'a'; 100]);
        if reader.next_incoming().is_err() {
            failed = true;
            break;
        }
        assert!(reader.buffered() <= LIMITS.max_head + 100);
    }
    assert!(failed);
    // Once failed, it stays failed and holds nothing.
    reader.feed(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(reader.buffered(), 0);
    assert_eq!(
        reader.next_incoming(),
        Err(RequestError::HeadTooLarge(1024))
    );
}

#[test]
fn blank_lines_before_a_request_are_ignored() {
    let got = requests(
        b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(got.len(), 2);
}

#[test]
fn a_request_cut_short_is_visible_to_the_host() {
    let mut reader = RequestReader::new(LIMITS);
    assert!(!reader.in_request());
    reader.feed(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab");
    assert_eq!(reader.next_incoming(), Ok(None));
    assert!(reader.in_request());
}

#[test]
fn replies_are_framed_for_keep_alive() {
    use crate::http::{event, ReplyHead, STREAM_END};
    let head = ReplyHead::new(200, true).header("content-type", "application/json");
    assert_eq!(
        head.with_body(b"{}"),
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
    );
    let closing = ReplyHead::new(405, false).header("allow", "POST");
    assert!(closing
        .with_body(b"")
        .ends_with(b"content-length: 0\r\nconnection: close\r\n\r\n"));
    // A value with a line break is dropped, never split into a second header.
    let injected = ReplyHead::new(200, true).header("x", "a\r\nset-cookie: b");
    assert!(!String::from_utf8_lossy(&injected.with_body(b"")).contains("set-cookie"));
    // An event stream read back by the client's reader gives the events.
    let mut wire = ReplyHead::new(200, true)
        .header("content-type", "text/event-stream")
        .stream();
    wire.extend(event(br#"{"a":1}"#));
    wire.extend(event(b"two\nlines"));
    wire.extend_from_slice(STREAM_END);
    let mut reader = crate::http::Reader::new(1 << 20);
    let space = reader.space();
    space[..wire.len()].copy_from_slice(&wire);
    let response = reader.filled(wire.len()).unwrap().unwrap();
    assert!(response.reusable);
    assert_eq!(
        response.body,
        b"event: message\ndata: {\"a\":1}\n\nevent: message\ndata: two\ndata: lines\n\n"
    );
}

#[test]
fn a_bare_lf_is_refused_where_it_is_whatever_the_reads_and_the_limit() {
    // Inside the head limit, before the head ends: refused as a bare LF, even when the
    // head then runs past the limit.
    let mut wire = b"GET / HTTP/1.1\r\nHost: a\nX: y\r\n".to_vec();
    while wire.len() <= LIMITS.max_head {
        wire.extend_from_slice(b"X-Pad: 0123456789\r\n");
    }
    assert_eq!(error(&wire), RequestError::Malformed(BARE_LF));
    // Past the limit: the head is too large, as it was.
    let mut wire = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    while wire.len() <= LIMITS.max_head {
        wire.extend_from_slice(b"X-Pad: 0123456789\r\n");
    }
    wire.extend_from_slice(b"X: y\n\r\n");
    assert_eq!(error(&wire), RequestError::HeadTooLarge(1024));
    // A bare LF in the next request does not touch the one before it.
    let got = requests(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\nHost: a\n\n");
    assert!(matches!(&got[0], Ok(Incoming::Request(r)) if r.target == "/a"));
    assert_eq!(got[1], Err(RequestError::Malformed(BARE_LF)));
}

#[test]
fn http_1_0_with_a_transfer_coding_is_refused_and_never_kept_alive() {
    for wire in [
        &b"POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nGET / HTTP/1.0\r\n\r\n"[..],
        b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}",
    ] {
        let got = requests(wire);
        assert!(matches!(got.as_slice(), [Err(e)] if e.status() == 400), "{got:?}");
    }
}
