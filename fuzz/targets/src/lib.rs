//! Fuzz targets as plain functions. The cargo-fuzz binaries in `fuzz/fuzz_targets/` call
//! them, and `tests/corpus.rs` replays every committed corpus file through them on the
//! stable toolchain, so ordinary `cargo test` exercises the corpora too.
//!
//! Each function panics only when a checked property fails.

use responses_mcp_config::proxy::ProxyRoute;
use responses_mcp_config::{resolve, show, Cli, Env, YamlInput};
use responses_mcp_core::framing::{FrameError, Framer, Framing};
use responses_mcp_core::http::{ReadError, Reader};
use responses_mcp_core::openai::{classify_reply, parse_answer, UpstreamVerdict};
use responses_mcp_core::testing::{decode, Harness};
use responses_mcp_core::{
    AttemptId, HttpMethod, HttpReply, Input, Output, ServerConfig, TransportError,
    TransportErrorKind,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// Arbitrary bytes never panic the framer, frames respect the cap, and the buffer holds at
/// most one partial message plus one push.
pub fn framer(data: &[u8]) {
    const MAX: usize = 256;
    const CHUNK: usize = 37;
    let mut framer = Framer::new(MAX);
    for chunk in data.chunks(CHUNK) {
        framer.push(chunk);
        while let Some(item) = framer.next_frame() {
            if let Ok(frame) = item {
                assert!(frame.bytes.len() <= MAX, "frame over the cap");
            }
        }
        assert!(
            framer.buffered() <= MAX + 2 + CHUNK + 1024,
            "buffer {}",
            framer.buffered()
        );
    }
    framer.finish();
    while framer.next_frame().is_some() {}
}

type Item = Result<(Framing, Vec<u8>), FrameError>;

fn frames_of(chunks: &[&[u8]]) -> Vec<Item> {
    let mut framer = Framer::new(64);
    let mut out = Vec::new();
    for chunk in chunks {
        framer.push(chunk);
        while let Some(item) = framer.next_frame() {
            out.push(item.map(|f| (f.framing, f.bytes.to_vec())));
        }
    }
    framer.finish();
    while let Some(item) = framer.next_frame() {
        out.push(item.map(|f| (f.framing, f.bytes.to_vec())));
    }
    out
}

/// Differential: any chunking gives exactly the frames and errors of a single push. The
/// first eight bytes choose the cut points; the rest is the stream.
pub fn framer_split(data: &[u8]) {
    let (cuts, stream) = data.split_at(data.len().min(8));
    let mut chunks = Vec::new();
    let mut rest = stream;
    for &c in cuts {
        let at = usize::from(c).min(rest.len());
        let (a, b) = rest.split_at(at);
        chunks.push(a);
        rest = b;
    }
    chunks.push(rest);
    assert_eq!(
        frames_of(&[stream]),
        frames_of(&chunks),
        "chunking changed the frames"
    );
}

/// Arbitrary bytes as an OpenAI reply body, with a status picked by the first byte.
pub fn responses_parser(data: &[u8]) {
    const STATUSES: [u16; 8] = [200, 200, 400, 401, 429, 500, 503, 302];
    let (status, body) = match data.split_first() {
        Some((s, rest)) => (STATUSES[usize::from(*s) % STATUSES.len()], rest),
        None => (200, data),
    };
    let headers = vec![(
        "retry-after".to_owned(),
        String::from_utf8_lossy(&body[..body.len().min(4)]).into_owned(),
    )];
    if let UpstreamVerdict::Success(value) = classify_reply(status, &headers, body) {
        if let Ok(answer) = parse_answer(&value, 3, "fallback", "2026-01-01") {
            assert!(answer.citations.len() <= 3);
            assert!(!answer.answer.trim().is_empty());
            assert!(answer.used_search || answer.citations.is_empty());
        }
    }
}

/// Arbitrary YAML text and environment values through the resolver. The input is split
/// at the first NUL: YAML before it, `NAME=value` lines after it.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (yaml, env_text) = text.split_once('\0').unwrap_or((&text, ""));
    let env: Env = env_text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let input = YamlInput {
        text: yaml,
        path: Path::new("/fuzz/config.yaml"),
    };
    if let Ok(resolved) = resolve(Some(input), &env, &Cli::default()) {
        let config = resolved.server_config(true, Some("policy"), 1);
        assert!((1..=10).contains(&config.max_citations));
        assert!(!config.timeout.is_zero());
        let secrets = show::SecretsSet {
            api_key: true,
            ..show::SecretsSet::default()
        };
        let shown = show::show_config(&resolved, secrets, &ProxyRoute::Direct);
        assert!(serde_json::from_str::<Value>(&shown).is_ok());
    }
}

/// The script's own request ids are strings `"\u{1}N"`, which the random stdin chunks
/// cannot spell; each is used once, so each may be answered at most once.
fn script_id(n: u64) -> String {
    format!("\"\\u0001{n}\"")
}

/// Drives the core server with a byte-coded script of stdin chunks, upstream replies and
/// failures, timeouts, cancels and clock steps. Checks: no panic; every written frame is a
/// valid JSON-RPC message; each script request id is answered at most once and never after
/// its cancel; after a timeout the next deadline lies in the future.
pub fn server(data: &[u8]) {
    let config = ServerConfig {
        credentials_ready: true,
        max_inflight: 3,
        max_queue: 4,
        max_message_bytes: 4096,
        shutdown_grace: Duration::from_secs(5),
        progress_interval: Duration::from_millis(500),
        ..ServerConfig::default()
    };
    let mut server = Harness::new(config);
    let mut checker = Checker::default();
    let mut attempts: Vec<AttemptId> = Vec::new();
    let mut next_id = 0;
    let mut stdin_closed = false;
    let mut bytes = data.iter().copied();
    let feed = |server: &mut Harness,
                input: Input<'_>,
                checker: &mut Checker,
                attempts: &mut Vec<AttemptId>| {
        server.feed(input);
        for output in server.take_other() {
            checker.output(&output, attempts);
        }
    };
    // One script message as a line of stdin.
    let feed_line =
        |server: &mut Harness, line: &str, checker: &mut Checker, attempts: &mut Vec<AttemptId>| {
            feed(
                server,
                Input::Stdin(format!("{line}\n").as_bytes()),
                checker,
                attempts,
            );
        };
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#;
    feed(
        &mut server,
        Input::Stdin(&[init.as_slice(), b"\n"].concat()),
        &mut checker,
        &mut attempts,
    );
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        match op % 9 {
            0 => {
                // Random bytes, kept from swallowing or forging the script's own
                // messages: each chunk is one line that starts like JSON (so it cannot
                // open a Content-Length header block; the framer targets cover those) and
                // cannot spell a script id (no \u{1}, no backslash escapes).
                let n = usize::from(arg);
                let mut chunk = Vec::with_capacity(n + 2);
                let first = bytes.clone().next();
                if first != Some(b'[') && first != Some(b'{') {
                    chunk.push(b'{');
                }
                chunk.extend(bytes.by_ref().take(n).map(|b| match b {
                    b'\n' | b'\r' | 0x01 => b' ',
                    b'\\' => b'/',
                    b => b,
                }));
                chunk.push(b'\n');
                feed(
                    &mut server,
                    Input::Stdin(&chunk),
                    &mut checker,
                    &mut attempts,
                );
            }
            1 | 2 => {
                let id = next_id;
                next_id += 1;
                // After EOF the server reads no more stdin, so the line never arrives.
                if !stdin_closed {
                    checker.requested.insert(id);
                }
                // Every third call is a modern (2026-07-28) request.
                let modern = arg % 3 == 2;
                if modern && !stdin_closed {
                    checker.modern.insert(id);
                }
                let meta = match (arg % 2 == 0, modern) {
                    (true, true) => format!(r#","_meta":{{"progressToken":7,{MODERN_META}}}"#),
                    (false, true) => format!(r#","_meta":{{{MODERN_META}}}"#),
                    (true, false) => r#","_meta":{"progressToken":7}"#.to_owned(),
                    (false, false) => String::new(),
                };
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{}","arguments":{{"query":"q{arg}"}}{meta}}}}}"#,
                    script_id(id),
                    ["answer", "answer_quick", "answer_detailed"][usize::from(arg) % 3]
                );
                feed_line(&mut server, &line, &mut checker, &mut attempts);
            }
            3 => {
                if let Some(&attempt) = pick(&attempts, arg) {
                    let status =
                        [200, 200, 429, 500, 503, 400, 401, 404][usize::from(arg >> 3) % 8];
                    let body = BODIES[usize::from(arg >> 5) % BODIES.len()]
                        .as_bytes()
                        .to_vec();
                    let headers = vec![("retry-after".to_owned(), (arg % 4).to_string())];
                    feed(
                        &mut server,
                        Input::HttpReply(
                            attempt,
                            HttpReply {
                                status,
                                headers,
                                body,
                            },
                        ),
                        &mut checker,
                        &mut attempts,
                    );
                }
            }
            4 => {
                if let Some(&attempt) = pick(&attempts, arg) {
                    let kind = [
                        TransportErrorKind::Connect,
                        TransportErrorKind::Io,
                        TransportErrorKind::Tls,
                        TransportErrorKind::BodyTooLarge,
                    ][usize::from(arg) % 4];
                    let error = TransportError {
                        kind,
                        detail: "fuzz".into(),
                    };
                    feed(
                        &mut server,
                        Input::HttpFailed(attempt, error),
                        &mut checker,
                        &mut attempts,
                    );
                }
            }
            5 => {
                server.advance(Duration::from_millis(u64::from(arg) * 97));
                let now = server.now;
                let due = server
                    .server
                    .poll_timeout()
                    .is_some_and(|t| t <= now.instant);
                feed(&mut server, Input::Timeout, &mut checker, &mut attempts);
                if due {
                    if let Some(next) = server.server.poll_timeout() {
                        assert!(
                            next > now.instant,
                            "a deadline at or before now after a timeout"
                        );
                    }
                }
            }
            6 if next_id > 0 => {
                let id = u64::from(arg) % next_id;
                if !stdin_closed {
                    checker.cancelled.insert(id);
                }
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
                    script_id(id)
                );
                feed_line(&mut server, &line, &mut checker, &mut attempts);
            }
            7 => {
                stdin_closed = true;
                feed(&mut server, Input::StdinClosed, &mut checker, &mut attempts);
            }
            6 => {}
            _ => match arg {
                0 => feed(&mut server, Input::Shutdown, &mut checker, &mut attempts),
                1..=3 => {
                    // A modern subscriptions/listen (1), server/discover (2) or removed
                    // method (3): answered at most once, never with a legacy code.
                    let id = next_id;
                    next_id += 1;
                    if !stdin_closed {
                        checker.requested.insert(id);
                        checker.modern.insert(id);
                    }
                    let method =
                        ["subscriptions/listen", "server/discover", "ping"][usize::from(arg) - 1];
                    let line = format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{{"_meta":{{{MODERN_META}}}}}}}"#,
                        script_id(id)
                    );
                    feed_line(&mut server, &line, &mut checker, &mut attempts);
                }
                _ => {}
            },
        }
    }
    // Run the clock out: everything ends, with a reply or a cancel.
    for _ in 0..64 {
        if server.server.poll_timeout().is_none() {
            break;
        }
        server.fire();
        feed(&mut server, Input::Timeout, &mut checker, &mut attempts);
    }
}

const BODIES: [&str; 8] = [
    r#"{"model":"gpt-5","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[{"type":"url_citation","url":"https://a.example/?utm_source=openai","start_index":99,"end_index":1}]}]}]}"#,
    r#"{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}"#,
    r#"{"error":{"message":"Unsupported value","type":"invalid_request_error","param":"reasoning.effort","code":"unsupported_value"}}"#,
    r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}"#,
    "<html>502</html>",
    "",
    r#"{"output":[{"type":"web_search_call","action":{"sources":[{"type":"api","name":"oai-weather"}]}},{"type":"message","content":[{"type":"output_text","text":"晴れ"}]}]}"#,
    r#"{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
];

fn pick<T>(items: &[T], arg: u8) -> Option<&T> {
    (!items.is_empty()).then(|| &items[usize::from(arg) % items.len()])
}

/// The `_meta` members of a modern request.
const MODERN_META: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;

#[derive(Default)]
struct Checker {
    requested: BTreeSet<u64>,
    /// Script ids sent as modern requests: their errors never use legacy codes.
    modern: BTreeSet<u64>,
    cancelled: BTreeSet<u64>,
    answered: BTreeMap<u64, usize>,
}

impl Checker {
    fn output(&mut self, output: &Output, attempts: &mut Vec<AttemptId>) {
        match output {
            Output::Write(bytes) => {
                // One whole frame of JSON per write, read back with the core's framer.
                let value = decode(bytes);
                match &value {
                    Value::Array(items) => items.iter().for_each(|m| self.message(m)),
                    m => self.message(m),
                }
            }
            Output::Http(request) => {
                attempts.push(request.attempt);
                assert!(serde_json::from_slice::<Value>(&request.body).is_ok());
            }
            Output::Abort(attempt) => attempts.retain(|a| a != attempt),
            _ => {}
        }
    }

    fn message(&mut self, m: &Value) {
        assert_eq!(m["jsonrpc"], "2.0", "{m}");
        if m.get("method").is_some() {
            assert!(m.get("id").is_none(), "we send no requests");
            return;
        }
        assert!(
            m.get("result").is_some() ^ m.get("error").is_some(),
            "result xor error: {m}"
        );
        if let Some(e) = m.get("error") {
            assert!(e["code"].is_i64() && e["message"].is_string(), "{m}");
        }
        let id = m
            .get("id")
            .and_then(Value::as_str)
            .and_then(|s| s.strip_prefix('\u{1}'))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(id) = id {
            if self.modern.contains(&id) {
                let code = m["error"]["code"].as_i64().unwrap_or(0);
                assert!(
                    !(-32099..=-32000).contains(&code) || [-32020, -32021, -32022].contains(&code),
                    "a legacy code answered a modern request: {m}"
                );
                if let Some(result) = m.get("result") {
                    assert_eq!(result["resultType"], "complete", "{m}");
                }
            }
            if self.requested.contains(&id) {
                assert!(
                    !self.cancelled.contains(&id),
                    "a reply after a cancel for {id}"
                );
                let n = self.answered.entry(id).or_default();
                *n += 1;
                assert_eq!(*n, 1, "id {id} answered twice");
            }
        }
    }
}

type ReadOutcome = Result<(u16, Vec<(String, String)>, Vec<u8>), ReadError>;

/// Feeds `wire` to a response reader in reads no longer than `sizes` (cycled), then a
/// close if it is still waiting.
fn read_response(wire: &[u8], limit: usize, sizes: &[usize]) -> ReadOutcome {
    let mut reader = Reader::new(limit);
    let mut rest = wire;
    for size in sizes.iter().cycle() {
        let space = reader.space();
        let n = space.len().min(rest.len()).min(*size);
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match reader.filled(n) {
            Ok(Some(r)) => return Ok((r.status, r.headers, r.body)),
            Ok(None) if n > 0 => {}
            Ok(None) => return Err(ReadError::Closed),
            Err(e) => return Err(e),
        }
    }
    Err(ReadError::Closed)
}

/// Differential: an upstream's bytes give the same response or error however the reads
/// cut them, and an accepted body never exceeds the limit. The first byte picks the limit
/// and the read sizes; the rest is what the server sent before closing.
pub fn http_response(data: &[u8]) {
    let Some((&mode, wire)) = data.split_first() else {
        return;
    };
    let limit = [16, 300, 1 << 20][usize::from(mode % 3)];
    let whole = read_response(wire, limit, &[usize::MAX]);
    let cut = read_response(wire, limit, &[1 + usize::from(mode / 3) % 13, 1, 7, 64]);
    assert_eq!(whole, cut, "the cut changed the outcome");
    if let Ok((_, _, body)) = &whole {
        assert!(body.len() <= limit, "a body over the limit");
    }
}

/// Everything a request reader makes of `wire` fed in pieces cut at `cuts`, until its
/// first error; `Continue` is left out (it depends on where a read ended).
fn read_requests(
    wire: &[u8],
    cuts: &[usize],
    limits: responses_mcp_core::http::RequestLimits,
) -> Vec<Result<responses_mcp_core::http::Request, responses_mcp_core::http::RequestError>> {
    use responses_mcp_core::http::{Incoming, RequestReader};
    let mut reader = RequestReader::new(limits);
    let mut out = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&wire.len())) {
        let cut = cut.clamp(from, wire.len());
        reader.feed(&wire[from..cut]);
        let read = cut - from;
        from = cut;
        loop {
            match reader.next_incoming() {
                Ok(Some(Incoming::Request(r))) => out.push(Ok(r)),
                Ok(Some(Incoming::Continue)) => {}
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
        // One request at most (head, and a chunked body with its framing) and this read.
        let bound = limits.max_head + 2 * limits.max_body + 8 * 1024 + read;
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
    let whole = read_requests(wire, &[], limits);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    let cut = read_requests(wire, &cuts, limits);
    assert_eq!(whole, cut, "the cut changed the requests");
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
        read_requests(wire, &bytewise, limits),
        "small reads changed the requests"
    );
    // The decisions taken on a parsed request never panic, and refusals never echo the
    // token.
    let access = responses_mcp_core::serve::access::Access {
        allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1:8787".into()]),
        allowed_origins: vec!["https://app.example".into()],
        loopback_origins: true,
        token: responses_mcp_core::serve::access::Token::new("fuzz-token-1234"),
    };
    for r in whole.iter().flatten() {
        assert!(r.body.len() <= limits.max_body, "a body over the limit");
        let _ = r.path();
        if let Err(e) = access.check(r) {
            assert!(
                !e.to_string().contains("fuzz-token-1234"),
                "the token leaked"
            );
        }
        if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&r.body) {
            let _ = responses_mcp_core::serve::headers::check(&r.headers, &message);
        }
        // Whatever the endpoint decides is a well-formed response for the client's reader.
        use responses_mcp_core::serve::endpoint::{route, Routed};
        let bytes = match route(r, &access) {
            Routed::Respond(bytes) => bytes,
            Routed::Health => Vec::new(),
            Routed::Exchange { mut response, .. } => {
                let note = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#.to_vec();
                let (mut bytes, _) =
                    response.write(responses_mcp_core::ExchangeOut::Notification(note));
                let (end, done) = response.write(responses_mcp_core::ExchangeOut::Ended);
                assert!(done);
                bytes.extend(end);
                bytes
            }
        };
        if !bytes.is_empty() {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("fuzz-token-1234"),
                "the token leaked into a response: {}",
                String::from_utf8_lossy(&bytes)
            );
            let mut reader = responses_mcp_core::http::Reader::new(1 << 20);
            let mut rest = bytes.as_slice();
            let mut response = None;
            while response.is_none() {
                let space = reader.space();
                let n = space.len().min(rest.len());
                space[..n].copy_from_slice(&rest[..n]);
                rest = &rest[n..];
                match reader.filled(n) {
                    Ok(Some(r)) => response = Some(r),
                    Ok(None) => assert!(n > 0, "a response cut short"),
                    Err(e) => panic!("an unreadable response: {e:?}"),
                }
            }
        }
    }
}

/// Drives a [`Connection`](responses_mcp_core::serve::connection::Connection) over `wire`
/// cut at `cuts`, answering each exchange at once (progress, then a reply); returns what
/// it wrote. Every step terminates; the connection never holds more than one request
/// and one read beyond the exchange in progress.
fn serve_connection(wire: &[u8], cuts: &[usize]) -> Vec<u8> {
    use responses_mcp_core::serve::connection::{Connection, Step};
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
    };
    let load = || Health {
        running: 1,
        queued: 0,
        draining: false,
    };
    let mut conn = Connection::new(limits);
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
            match conn.step(&access, load) {
                // `100 Continue` depends on whether the body came with the head.
                Step::Write(bytes) if bytes == responses_mcp_core::http::CONTINUE => {}
                Step::Write(bytes) => written.extend(bytes),
                Step::Exchange { .. } => {
                    let note = br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
                    written.extend(
                        conn.reply(responses_mcp_core::ExchangeOut::Notification(note.to_vec())),
                    );
                    written.extend(conn.reply(responses_mcp_core::ExchangeOut::Reply {
                        json: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
                        error: None,
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
    let whole = serve_connection(wire, &[]);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    assert_eq!(
        whole,
        serve_connection(wire, &cuts),
        "the cut changed the responses"
    );
}

type SseOutcome = Vec<Result<responses_mcp_core::sse::SseEvent, responses_mcp_core::sse::SseError>>;

/// Feeds `stream` to an SSE reader cut at `cuts`, then ends it.
fn read_sse(stream: &[u8], cuts: &[usize], max_line: usize, max_event: usize) -> SseOutcome {
    let mut reader = responses_mcp_core::sse::SseReader::new(max_line, max_event);
    let mut out = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        let cut = cut.clamp(from, stream.len());
        reader.push(&stream[from..cut]);
        from = cut;
        while let Some(e) = reader.next_event() {
            out.push(e);
        }
        assert!(
            reader.buffered() <= max_line + max_event + 2 * stream.len().min(1 << 16) + 8,
            "the reader holds more than a line, an event and the last push"
        );
    }
    reader.finish();
    while let Some(e) = reader.next_event() {
        out.push(e);
    }
    out
}

/// Differential: an event stream read in one push and cut into reads anywhere gives the
/// same events and errors; no event's data exceeds the limit. The first 4 bytes choose
/// cut points, the rest is the stream.
pub fn sse(data: &[u8]) {
    let Some((head, stream)) = data.split_first_chunk::<4>() else {
        return;
    };
    let (max_line, max_event) = (64, 256);
    let whole = read_sse(stream, &[], max_line, max_event);
    let cuts: Vec<usize> = head
        .iter()
        .scan(0usize, |at, b| {
            *at += usize::from(*b);
            Some(*at)
        })
        .collect();
    let cut = read_sse(stream, &cuts, max_line, max_event);
    assert_eq!(whole, cut, "the cut changed the events");
    for e in whole.iter().flatten() {
        assert!(e.data.len() < max_event, "an event over the limit");
    }
    // Whatever the events, folding them ends in an answer within the caps or a failure.
    let mut fold = responses_mcp_core::openai::stream::StreamFold::new();
    for e in whole.iter().flatten() {
        if fold.feed(e) == responses_mcp_core::openai::stream::Folded::End {
            break;
        }
    }
    if let responses_mcp_core::openai::stream::StreamEnd::Answer(answer, _) =
        fold.finish(3, "m", "2025-01-01")
    {
        assert!(answer.citations.len() <= 3);
        assert!(!answer.answer.trim().is_empty());
    }
}

/// Tasks under a random script in a 2025-11-25 session, with either backing: create
/// tasks (ttl from the input), poll, fetch, list and cancel them by issued, mutated or
/// random ids, answer their attempts (answers, background states queued and failed, 404,
/// 429, 5xx) or fail them, let time pass. Every write is one valid JSON-RPC message; no
/// request id is answered twice; the store never holds more than its limit; answers and
/// background creates never exceed `max_inflight`; ids that were not issued never reach a
/// task.
pub fn tasks(data: &[u8]) {
    use responses_mcp_core::tasks::TaskSettings;
    let mut config = ServerConfig {
        credentials_ready: true,
        max_inflight: 2,
        max_queue: 2,
        ..ServerConfig::default()
    };
    // The first byte picks the backing: the local store, or OpenAI background mode
    // (ids sealed over response ids, reads and cancels upstream).
    let background = data.first().is_some_and(|b| b % 2 == 1);
    config.tasks = TaskSettings {
        max_tasks: 3,
        max_bytes: 4096,
        max_ttl: Duration::from_secs(20),
        background,
        ..TaskSettings::default()
    };
    let mut h = Harness::new(config);
    h.init("2025-11-25");
    let answer = br#"{"id":"resp_1","model":"gpt-5","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[]}]}]}"#;
    let queued = br#"{"id":"resp_1","status":"queued","output":[]}"#;
    let failed =
        br#"{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"x"}}"#;
    // Upstream requests sent and not yet answered or aborted.
    let mut open: Vec<responses_mcp_core::HttpRequest> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut answered: BTreeSet<u64> = BTreeSet::new();
    let mut next = 1u64;
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let id = next;
        next += 1;
        let task_id = match ids.get(usize::from(arg) % ids.len().max(1)) {
            Some(t) if arg % 5 != 0 => t.clone(),
            Some(t) => {
                // One character changed: the seal must refuse it.
                let mut forged = t.clone().into_bytes();
                let at = usize::from(arg) % forged.len();
                forged[at] = forged[at].wrapping_add(1);
                String::from_utf8_lossy(&forged).into_owned()
            }
            None => format!("task-{arg:x}"),
        };
        match op % 8 {
            0 | 1 => {
                let ttl = u64::from(arg) * 200;
                h.send(
                    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                    "params":{"name":"answer","arguments":{"query":"q"},"task":{"ttl":ttl}}}),
                );
            }
            2..=5 => {
                let method = ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"]
                    [usize::from(op % 8 - 2)];
                h.send(serde_json::json!({"jsonrpc":"2.0","id":id,"method":method,
                    "params":{"taskId":task_id,"cursor":task_id}}));
            }
            6 => {
                for attempt in std::mem::take(&mut open) {
                    let a = attempt.attempt;
                    match arg % 7 {
                        0 => h.reply(a, 200, answer, &[]),
                        1 => h.reply(a, 500, b"{}", &[]),
                        2 => h.reply(a, 200, queued, &[]),
                        3 => h.reply(a, 200, failed, &[]),
                        4 => h.reply(a, 404, b"{}", &[]),
                        5 => h.reply(a, 429, b"{}", &[("retry-after", "1")]),
                        _ => h.fail(a, responses_mcp_core::TransportErrorKind::Io, "reset"),
                    }
                }
            }
            _ => {
                // Time passes; the timer fires late, as a busy host's would.
                h.advance(Duration::from_millis(u64::from(arg) * 100));
                h.feed(Input::Timeout);
            }
        }
        for frame in h.frames() {
            assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
            if let Some(task) = frame.pointer("/result/task/taskId").and_then(Value::as_str) {
                ids.push(task.to_owned());
            }
            if let Some(n) = frame.get("id").and_then(Value::as_u64) {
                assert!(answered.insert(n), "request {n} answered twice: {frame}");
            }
            if let Some(message) = frame.pointer("/error/message").and_then(Value::as_str) {
                assert!(!message.contains("panicked"), "{message}");
            }
        }
        open.extend(h.take_http());
        for output in h.take_other() {
            if let Output::Abort(attempt) = output {
                open.retain(|r| r.attempt != attempt);
            }
        }
        // Answers and background creates share the slots (max_inflight 2).
        let creates = open
            .iter()
            .filter(|r| r.method == HttpMethod::Post && r.url.ends_with("/responses"))
            .count();
        assert!(creates <= 2, "{creates} answers or creates in flight");
        assert!(h.server.task_count() <= 3, "the store outgrew its limit");
    }
}

/// Arbitrary 400 bodies read as a model's limits: reading never panics, fitting a full
/// plan inside a limit changes it at most once (so a call's retries to fit always end),
/// and the body still classifies. The first byte picks the status.
pub fn drift(data: &[u8]) {
    use responses_mcp_core::openai::drift::{fit, Rejection};
    use responses_mcp_core::openai::RequestPlan;
    use responses_mcp_core::vocab::{Effort, SearchContextSize, ServiceTier, Verbosity};
    use responses_mcp_core::{SearchOptions, UserLocation};
    let body = data.get(1..).unwrap_or_default();
    let _ = classify_reply(400, &[], body);
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let error = value.get("error").unwrap_or(&value);
    let Some(rejection) = Rejection::from_error(error) else {
        return;
    };
    let effort = Effort::ALL[usize::from(data[0]) % Effort::ALL.len()];
    let mut plan = RequestPlan {
        model: "m".into(),
        effort: Some(effort),
        verbosity: Some(Verbosity::Low),
        search: SearchOptions {
            context_size: Some(SearchContextSize::High),
            user_location: Some(UserLocation {
                country: Some("JP".into()),
                ..UserLocation::default()
            }),
            external_web_access: Some(false),
        },
        service_tier: Some(ServiceTier::Priority),
        max_output_tokens: Some(100_000),
        ..RequestPlan::default()
    };
    if let Some(adjustment) = fit(&mut plan, rejection.param, &rejection.limit) {
        assert_eq!(adjustment.param, rejection.param);
        assert_ne!(adjustment.to.as_deref(), Some(adjustment.from.as_str()));
        assert!(
            fit(&mut plan, rejection.param, &rejection.limit).is_none(),
            "a second fit inside the same limit changes nothing"
        );
    }
}
