use super::*;

type Item = Result<(Framing, Vec<u8>), FrameError>;

fn drain(framer: &mut Framer, out: &mut Vec<Item>) {
    while let Some(item) = framer.next_frame() {
        out.push(item.map(|f| (f.framing, f.bytes.to_vec())));
    }
}

/// Pushes `stream` cut at `cuts` (sorted positions), then finishes.
fn run(stream: &[u8], cuts: &[usize], max: usize) -> Vec<Item> {
    let mut framer = Framer::new(max);
    let mut out = Vec::new();
    let mut last = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        framer.push(&stream[last..cut]);
        drain(&mut framer, &mut out);
        last = cut;
    }
    framer.finish();
    drain(&mut framer, &mut out);
    out
}

fn whole(stream: &[u8]) -> Vec<Item> {
    run(stream, &[], 64)
}

fn line(s: &str) -> Item {
    Ok((Framing::Line, s.as_bytes().to_vec()))
}

fn cl(s: &str) -> Item {
    Ok((Framing::ContentLength, s.as_bytes().to_vec()))
}

fn header_err(e: HeaderError) -> Item {
    Err(FrameError::Header(e))
}

#[test]
fn lines_with_crlf_and_blank_lines() {
    assert_eq!(
        whole(b"{\"a\":1}\n\r\n\n{\"b\":2}\r\n  \n[1]"),
        vec![line("{\"a\":1}"), line("{\"b\":2}"), line("[1]")]
    );
}

#[test]
fn content_length_messages_back_to_back_with_other_headers() {
    let stream = b"Content-Length: 7\r\n\r\n{\"a\":1}content-length: 7\r\nContent-Type: application/json\r\n\r\n{\"b\":2}CONTENT-LENGTH:7\n\n{\"c\":3}";
    assert_eq!(
        whole(stream),
        vec![cl("{\"a\":1}"), cl("{\"b\":2}"), cl("{\"c\":3}")]
    );
}

#[test]
fn bom_is_skipped_only_at_stream_start() {
    assert_eq!(whole(b"\xEF\xBB\xBF{\"a\":1}\n"), vec![line("{\"a\":1}")]);
    assert_eq!(
        whole(b"\xEF\xBB\xBFContent-Length: 2\r\n\r\n{}"),
        vec![cl("{}")]
    );
    // A BOM later in the stream is not skipped: it makes a garbage line.
    assert_eq!(
        whole(b"{}\n\xEF\xBB\xBF{}\n"),
        vec![line("{}"), Ok((Framing::Line, b"\xEF\xBB\xBF{}".to_vec()))]
    );
}

#[test]
fn final_line_without_newline_is_a_frame_at_eof() {
    assert_eq!(whole(b"{\"a\":1}"), vec![line("{\"a\":1}")]);
}

#[test]
fn too_long_line_is_discarded_and_serving_continues() {
    let mut stream = vec![b'{'; 100];
    stream.extend_from_slice(b"\n{\"ok\":1}\n");
    let too_large = Err(FrameError::TooLarge {
        framing: Framing::Line,
        limit: 64,
    });
    assert_eq!(whole(&stream), vec![too_large.clone(), line("{\"ok\":1}")]);
    // A line of exactly the limit passes, with or without `\r`.
    let exact = "x".repeat(64);
    assert_eq!(whole(format!("{exact}\r\n").as_bytes()), vec![line(&exact)]);
    let over = "x".repeat(65);
    assert_eq!(
        whole(format!("{over}\r\n{{}}\n").as_bytes()),
        vec![too_large, line("{}")]
    );
}

#[test]
fn endless_line_keeps_the_buffer_bounded() {
    let mut framer = Framer::new(1024);
    let mut out = Vec::new();
    framer.push(b"{");
    for _ in 0..1000 {
        framer.push(&[b'a'; 4096]);
        drain(&mut framer, &mut out);
        assert!(
            framer.buffered() <= 1024 + 4096 + 1,
            "buffered {}",
            framer.buffered()
        );
    }
    assert_eq!(out.len(), 1, "one TooLarge error, then silence: {out:?}");
    framer.push(b"\n{}\n");
    drain(&mut framer, &mut out);
    assert_eq!(out.last(), Some(&line("{}")));
}

#[test]
fn over_large_body_is_skipped_without_buffering() {
    let mut framer = Framer::new(64);
    let mut out = Vec::new();
    framer.push(b"Content-Length: 100000\r\n\r\n");
    drain(&mut framer, &mut out);
    for _ in 0..100 {
        framer.push(&[b'x'; 1000]);
        drain(&mut framer, &mut out);
        assert_eq!(framer.buffered(), 0);
    }
    framer.push(b"Content-Length: 2\r\n\r\n{}");
    drain(&mut framer, &mut out);
    assert_eq!(
        out,
        vec![
            Err(FrameError::TooLarge {
                framing: Framing::ContentLength,
                limit: 64
            }),
            cl("{}")
        ]
    );
}

#[test]
fn broken_headers_are_reported_and_the_next_frame_is_served() {
    let next = b"Content-Length: 2\r\n\r\n{}";
    let cases: Vec<(&[u8], HeaderError)> = vec![
        (
            b"Content-Type: x\r\n\r\n",
            HeaderError::MissingContentLength,
        ),
        (
            b"Content-Length: abc\r\n\r\n",
            HeaderError::NotANumber("abc".into()),
        ),
        (
            b"Content-Length: -5\r\n\r\n",
            HeaderError::Negative("-5".into()),
        ),
        (
            b"Content-Length: \r\n\r\n",
            HeaderError::NotANumber(String::new()),
        ),
        (
            b"Content-Length: 99999999999999999999999\r\n\r\n",
            HeaderError::OutOfRange("99999999999999999999999".into()),
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n",
            HeaderError::Conflicting(2, 3),
        ),
        (
            b"Content-Length: 2\r\nbogus\r\n\r\n",
            HeaderError::Malformed("bogus".into()),
        ),
    ];
    for (broken, error) in cases {
        let mut stream = broken.to_vec();
        stream.extend_from_slice(b"{\"lost\":1}");
        stream.extend_from_slice(next);
        assert_eq!(
            whole(&stream),
            vec![header_err(error.clone()), cl("{}")],
            "{error}"
        );
        // A broken frame whose body is a full line, followed by a line message.
        let mut stream = broken.to_vec();
        stream.extend_from_slice(b"{\"lost\":1}\n{\"next\":1}\n");
        assert_eq!(
            whole(&stream),
            vec![header_err(error.clone()), line("{\"next\":1}")],
            "{error}"
        );
    }
}

#[test]
fn duplicate_equal_content_length_is_accepted() {
    assert_eq!(
        whole(b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}"),
        vec![cl("{}")]
    );
}

#[test]
fn missing_blank_line_reports_and_serves_the_body_as_a_line() {
    assert_eq!(
        whole(b"Content-Length: 7\r\n{\"a\":1}\n"),
        vec![header_err(HeaderError::MissingBlankLine), line("{\"a\":1}")]
    );
}

#[test]
fn header_flood_is_bounded() {
    let mut stream = Vec::new();
    for _ in 0..40 {
        stream.extend_from_slice(b"X-A: b\r\n");
    }
    stream.extend_from_slice(b"\r\n{}\n{\"next\":1}\n");
    assert_eq!(
        whole(&stream),
        vec![header_err(HeaderError::TooManyLines), line("{\"next\":1}")]
    );
    let mut long = b"X-Long: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 5000));
    long.extend_from_slice(b"\r\n\r\n{}\n{\"next\":1}\n");
    assert_eq!(
        whole(&long),
        vec![header_err(HeaderError::LineTooLong), line("{\"next\":1}")]
    );
}

#[test]
fn truncated_content_length_frame_at_eof() {
    assert_eq!(
        whole(b"Content-Length: 10\r\n\r\n{}"),
        vec![Err(FrameError::Truncated(Framing::ContentLength))]
    );
    assert_eq!(
        whole(b"Content-Length: 10\r\n"),
        vec![Err(FrameError::Truncated(Framing::ContentLength))]
    );
}

#[test]
fn garbage_and_nul_bytes_become_lines() {
    assert_eq!(
        whole(b"hello world\n\0\0{}\n{}\n"),
        vec![
            line("hello world"),
            Ok((Framing::Line, b"\0\0{}".to_vec())),
            line("{}")
        ]
    );
}

#[test]
fn encode_both_framings() {
    let mut out = Vec::new();
    encode(Framing::Line, r#"{"a":"é"}"#.as_bytes(), &mut out);
    encode(Framing::ContentLength, r#"{"a":"é"}"#.as_bytes(), &mut out);
    assert_eq!(
        out,
        "{\"a\":\"é\"}\nContent-Length: 10\r\n\r\n{\"a\":\"é\"}".as_bytes()
    );
}

/// A stream exercising every state: BOM, both framings, blank lines, broken headers,
/// over-long lines and bodies, resync, and a final unterminated line.
fn mixed_stream() -> Vec<u8> {
    let mut s = b"\xEF\xBB\xBF\r\n{\"id\":1}\r\n".to_vec();
    s.extend_from_slice(b"Content-Length: 8\r\nContent-Type: x\r\n\r\n{\"id\":2}");
    s.extend_from_slice(b"content-length: x\r\n\r\n{\"bad\":1}Content-Length: 2\r\n\r\n{}");
    s.extend_from_slice(format!("\n{{{}}}\n", "a".repeat(40)).as_bytes());
    s.extend_from_slice(b"Content-Length: 70\r\n\r\n");
    s.extend(std::iter::repeat_n(b'z', 70));
    s.extend_from_slice(b"Content-Length: 3\r\n[1]\n\nnot json\n{\"last\":true}");
    s
}

#[test]
fn every_split_of_a_small_stream_gives_the_same_frames() {
    let stream = mixed_stream();
    let expected = run(&stream, &[], 32);
    assert!(expected.len() >= 8, "{expected:?}");
    for a in 0..=stream.len() {
        assert_eq!(run(&stream, &[a], 32), expected, "split at {a}");
        for b in a..=stream.len() {
            assert_eq!(run(&stream, &[a, b], 32), expected, "split at {a},{b}");
        }
    }
    // Byte by byte.
    let cuts: Vec<usize> = (1..stream.len()).collect();
    assert_eq!(run(&stream, &cuts, 32), expected);
}

/// Regression: a second mark right after the first was skipped too when the first came in
/// a read of its own, and was data when both came at once. Only the first mark, at the
/// very start of the stream, is skipped, however the bytes are cut.
#[test]
fn only_the_first_byte_order_mark_is_skipped_under_every_split() {
    let stream =
        b"\xEF\xBB\xBF\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{}\n";
    let expected = run(stream, &[], 4096);
    assert_eq!(
        expected,
        vec![
            Ok((Framing::Line, stream[3..stream.len() - 4].to_vec())),
            line("{}"),
        ]
    );
    for a in 0..=stream.len() {
        for b in a..=stream.len() {
            assert_eq!(run(stream, &[a, b], 4096), expected, "split at {a},{b}");
        }
    }
}

#[test]
fn random_splits_of_a_large_stream_give_the_same_frames() {
    let mut stream = Vec::new();
    for i in 0..300 {
        let body = format!("{{\"id\":{i},\"pad\":\"{}\"}}", "p".repeat(i * 7 % 500));
        if i % 3 == 0 {
            stream.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            stream.extend_from_slice(body.as_bytes());
        } else {
            stream.extend_from_slice(body.as_bytes());
            stream.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
        }
        if i % 50 == 0 {
            stream.extend_from_slice(b"Content-Length: -1\r\n\r\n");
        }
    }
    let expected = run(&stream, &[], 400);
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..200 {
        let mut cuts = Vec::new();
        let mut at = 0;
        loop {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            at += (seed % 700) as usize + 1;
            if at >= stream.len() {
                break;
            }
            cuts.push(at);
        }
        assert_eq!(run(&stream, &cuts, 400), expected);
    }
}

#[test]
fn an_over_long_header_line_reads_the_same_however_it_is_cut() {
    // The reproducer of shared/fuzz-findings/framer_split-long-header-line, and the same
    // shape spelled out: a `Content-Length`-style header line over the limit whose `\n`
    // comes in a later read, followed by a valid block, a body, or nothing.
    let reproducer = include_bytes!("../../../fuzz/corpus/framer_split/long-header-line");
    let (cut_bytes, stream) = reproducer.split_at(8);
    let mut cuts = Vec::new();
    let mut at = 0;
    for &c in cut_bytes {
        at = (at + usize::from(c)).min(stream.len());
        cuts.push(at);
    }
    assert_eq!(run(stream, &cuts, 64), run(stream, &[], 64));
    let mut long = b"Content-Length: 2".to_vec();
    long.extend(std::iter::repeat_n(b'0', 1500));
    for tail in [
        &b"\r\nX-A: b\r\n\r\n{}\n{\"next\":1}\n"[..],
        b"\r\n{\"body\":1}\n",
        b"",
        b"\r\nX-A: b",
    ] {
        let mut stream = long.clone();
        stream.extend_from_slice(tail);
        let expected = run(&stream, &[], 64);
        for cut in [1, 500, 1024, 1025, 1100, 1516, 1517, 1518] {
            let cut = cut.min(stream.len());
            assert_eq!(run(&stream, &[cut], 64), expected, "cut at {cut}: {tail:?}");
            assert_eq!(
                run(&stream, &[cut / 2, cut], 64),
                expected,
                "cuts at {}, {cut}",
                cut / 2
            );
        }
        let every: Vec<usize> = (1..stream.len()).collect();
        assert_eq!(run(&stream, &every, 64), expected, "byte by byte: {tail:?}");
    }
    // A line of exactly the limit plus its `\r`, cut before the `\n`, is not too long.
    let mut exact = b"X-Pad: ".to_vec();
    exact.extend(std::iter::repeat_n(b'a', MAX_HEADER_LINE - exact.len()));
    exact.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\n{}");
    let expected = run(&exact, &[], 64);
    assert_eq!(expected, vec![cl("{}")]);
    for cut in [MAX_HEADER_LINE, MAX_HEADER_LINE + 1, MAX_HEADER_LINE + 2] {
        assert_eq!(run(&exact, &[cut], 64), expected, "cut at {cut}");
    }
    // Whole or cut, the line is reported once, and the block after it still frames.
    let mut stream = long.clone();
    stream.extend_from_slice(b"\r\n\r\n{}\n{\"next\":1}\n");
    assert_eq!(
        run(&stream, &[700], 64),
        vec![header_err(HeaderError::LineTooLong), line("{\"next\":1}")]
    );
}
