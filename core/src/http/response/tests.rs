use super::{ReadError, Reader, Response};

const LIMIT: usize = 1 << 20;

/// Feeds `parts` as successive reads (each may need several), then a close if the
/// response is not complete by then.
fn read(parts: &[&[u8]], limit: usize) -> Result<Response, ReadError> {
    let mut reader = Reader::new(limit);
    for part in parts {
        let mut part = *part;
        while !part.is_empty() {
            let space = reader.space();
            let n = space.len().min(part.len());
            space[..n].copy_from_slice(&part[..n]);
            part = &part[n..];
            if let Some(response) = reader.filled(n)? {
                return Ok(response);
            }
        }
    }
    reader.space();
    reader.filled(0)?.ok_or(ReadError::Closed)
}

fn whole(bytes: &[u8]) -> Result<Response, ReadError> {
    read(&[bytes], LIMIT)
}

/// Every way of cutting `bytes` in two, and one byte at a time, gives the same result.
fn same_under_splits(bytes: &[u8]) -> Result<Response, ReadError> {
    let expected = whole(bytes);
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        assert_eq!(read(&[a, b], LIMIT), expected, "cut at {cut}");
    }
    let bytes: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(read(&bytes, LIMIT), expected, "byte at a time");
    expected
}

#[test]
fn content_length_body_with_the_headers_the_core_reads() {
    let r = same_under_splits(
        b"HTTP/1.1 429 Too Many\r\nContent-Type: application/json\r\nRetry-After: 2\r\nretry-after-ms: 1500\r\nX-Request-Id: req_1\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}",
    )
    .unwrap();
    assert_eq!(r.status, 429);
    assert_eq!(r.body, b"{\"a\":\"bcd\"}");
    assert!(r.reusable);
    assert_eq!(
        r.headers,
        [
            ("content-type".into(), "application/json".into()),
            ("retry-after".to_owned(), "2".to_owned()),
            ("retry-after-ms".to_owned(), "1500".to_owned()),
            ("x-request-id".to_owned(), "req_1".to_owned())
        ]
    );
}

#[test]
fn chunked_body_with_extensions_and_trailers() {
    let r = same_under_splits(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=v\r\nhello\r\n1\r\n \r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
    )
    .unwrap();
    assert_eq!(r.body, b"hello 0123456789");
    assert!(r.reusable);
}

#[test]
fn bare_line_feeds_are_accepted() {
    let r =
        same_under_splits(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n").unwrap();
    assert_eq!(r.body, b"abc");
}

#[test]
fn large_chunked_body_decodes_across_many_reads() {
    let mut wire = b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n".to_vec();
    let mut expected = Vec::new();
    for i in 0..300u32 {
        let data: Vec<u8> = (0..(i * 37 % 1000 + 1)).map(|j| (i + j) as u8).collect();
        wire.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        wire.extend_from_slice(&data);
        wire.extend_from_slice(b"\r\n");
        expected.extend_from_slice(&data);
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    for size in [1usize, 7, 4096, 100_000] {
        let parts: Vec<&[u8]> = wire.chunks(size).collect();
        let r = read(&parts, 1 << 24).unwrap();
        assert_eq!(r.body, expected, "reads of {size}");
    }
}

#[test]
fn body_until_close_when_no_length_is_given() {
    let r = same_under_splits(b"HTTP/1.1 200 OK\r\n\r\nthe whole rest").unwrap();
    assert_eq!(r.body, b"the whole rest");
    assert!(!r.reusable, "the close ended it");
    let r = whole(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nzz").unwrap();
    assert_eq!((r.body.as_slice(), r.reusable), (&b"zz"[..], false));
}

#[test]
fn interim_responses_are_skipped_and_empty_bodies_need_no_bytes() {
    let r = same_under_splits(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    )
    .unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
    for wire in [
        &b"HTTP/1.1 204 No Content\r\n\r\n"[..],
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
        b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n",
    ] {
        let mut reader = Reader::new(LIMIT);
        let space = reader.space();
        space[..wire.len()].copy_from_slice(wire);
        let r = reader.filled(wire.len()).unwrap().unwrap();
        assert!(r.body.is_empty() && r.reusable, "{r:?}");
    }
}

#[test]
fn connection_reuse_follows_version_and_connection_header() {
    let reusable = |wire: &[u8]| whole(wire).unwrap().reusable;
    assert!(reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(!reusable(
        b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"
    ));
    assert!(!reusable(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(reusable(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
    ));
    assert!(!reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab"));
    assert!(!reusable(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nHTTP/1.1"
    ));
    assert!(!reusable(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ));
}

#[test]
fn oversized_bodies_fail_under_every_framing() {
    let small = |wire: &[u8]| read(&[wire], 10);
    assert_eq!(
        small(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n"),
        Err(ReadError::TooLarge)
    );
    assert_eq!(
        small(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n"),
        Err(ReadError::TooLarge)
    );
    assert_eq!(
        small(b"HTTP/1.1 200 OK\r\n\r\n0123456789A"),
        Err(ReadError::TooLarge)
    );
    assert_eq!(
        small(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n"),
        Err(ReadError::Malformed("an invalid chunk size"))
    );
    assert_eq!(
        small(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        Err(ReadError::Malformed("an invalid content length"))
    );
}

#[test]
fn malformed_responses_are_named() {
    for (wire, why) in [
        (
            &b"SSH-2.0-OpenSSH\r\n\r\n"[..],
            "not an HTTP/1.x status line",
        ),
        (b"HTTP/2 200\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 20 OK\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200OK\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 099 Low\r\n\r\n", "not an HTTP/1.x status line"),
        (
            b"HTTP/1.1 101 Switching\r\n\r\n",
            "the server switched protocols",
        ),
        (
            b"HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
            "a folded header line",
        ),
        (
            b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            "a header line without a colon",
        ),
        (
            b"HTTP/1.1 200 OK\r\nbad name: v\r\n\r\n",
            "an invalid header name",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "an invalid content length",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "conflicting content lengths",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
            "an invalid chunk size",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
            "chunk data longer than its size",
        ),
    ] {
        assert_eq!(
            whole(wire),
            Err(ReadError::Malformed(why)),
            "{}",
            String::from_utf8_lossy(wire)
        );
    }
    let endless_head = [b'a'; 70_000];
    assert_eq!(
        read(&[b"HTTP/1.1 200 OK\r\nX: ", &endless_head], LIMIT),
        Err(ReadError::Malformed("the response head is too large"))
    );
    let endless_size = [b'0'; 5_000];
    assert_eq!(
        read(
            &[
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                &endless_size
            ],
            LIMIT
        ),
        Err(ReadError::Malformed("a chunk size line is too long"))
    );
}

#[test]
fn a_close_before_the_end_is_reported_with_whether_anything_came() {
    let mut reader = Reader::new(LIMIT);
    reader.space();
    assert_eq!(reader.filled(0), Err(ReadError::Closed));
    assert!(
        !reader.started(),
        "a kept-alive connection closed while idle"
    );
    for wire in [
        &b"HTTP/1.1 200 OK\r\nContent-Le"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
    ] {
        let mut reader = Reader::new(LIMIT);
        let space = reader.space();
        let n = wire.len().min(space.len());
        space[..n].copy_from_slice(&wire[..n]);
        assert_eq!(reader.filled(n), Ok(None));
        assert!(reader.started());
        reader.space();
        assert_eq!(reader.filled(0), Err(ReadError::Closed));
    }
}

#[test]
fn reads_ask_only_for_what_a_length_still_needs() {
    let mut reader = Reader::new(LIMIT);
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na";
    reader.space()[..head.len()].copy_from_slice(head);
    assert_eq!(reader.filled(head.len()), Ok(None));
    assert_eq!(reader.space().len(), 2);
}

/// Reads `wire` in `size`-byte reads, taking the body as it arrives; returns the head and
/// every body byte, in order.
fn stream_read(wire: &[u8], size: usize) -> (u16, Vec<u8>) {
    let mut reader = Reader::new(1 << 20);
    let mut rest = wire;
    let mut body = Vec::new();
    let mut status = 0;
    loop {
        let space = reader.space();
        let n = space.len().min(rest.len()).min(size);
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match reader.filled(n).unwrap() {
            Some(response) => {
                body.extend_from_slice(&response.body);
                return (response.status, body);
            }
            None => {
                if let Some((s, _)) = reader.head() {
                    status = s;
                }
                body.extend(reader.take_body());
                assert!(n > 0 || status != 0);
            }
        }
    }
}

#[test]
fn bodies_can_be_taken_as_they_arrive_under_every_framing() {
    let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
    let length = b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\nhello, world";
    for wire in [chunked.as_slice(), length.as_slice()] {
        for size in [1, 2, 7, 64, 4096] {
            assert_eq!(
                stream_read(wire, size),
                (200, b"hello, world".to_vec()),
                "{size}"
            );
        }
    }
}
