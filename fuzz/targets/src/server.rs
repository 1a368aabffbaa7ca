//! The `server` fuzz target.

use responses_mcp_core::testing::{decode, Harness};
use responses_mcp_core::{
    AttemptId, HttpMethod, HttpReply, Input, Output, ServerConfig, TransportError,
    TransportErrorKind,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

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
        // Limits the script's calls and clock steps can reach, so that refusals (and
        // their windows' resets) are driven too.
        instance_limit: responses_mcp_core::clients::Limit {
            calls_per_minute: Some(6),
            spend_per_day: responses_mcp_core::openai::pricing::Picodollars::from_usd(0.05),
        },
        // Streamed answers (an idle deadline) and whole reads (none) alike, without
        // spending a script byte on the choice.
        stream: data.len() % 2 == 0,
        ..ServerConfig::default()
    };
    let mut script = Script {
        server: Harness::new(config),
        checker: Checker::default(),
        attempts: Vec::new(),
        next_id: 0,
        stdin_closed: false,
    };
    let mut bytes = data.iter().copied();
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#;
    script.feed(Input::Stdin(&[init.as_slice(), b"\n"].concat()));
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        match op % 9 {
            0 => script.random_line(arg, &mut bytes),
            1 | 2 => script.call(arg),
            3 => script.reply(arg),
            4 => script.fail(arg),
            5 => script.tick(arg),
            6 if script.next_id > 0 => script.cancel(arg),
            7 => {
                script.stdin_closed = true;
                script.feed(Input::StdinClosed);
            }
            6 => {}
            _ => script.other(arg),
        }
    }
    // Run the clock out: everything ends, with a reply or a cancel.
    for _ in 0..64 {
        if script.server.server.poll_timeout().is_none() {
            break;
        }
        script.server.fire();
        script.feed(Input::Timeout);
    }
}

/// The server under the script, and what the script has sent it.
struct Script {
    server: Harness,
    checker: Checker,
    /// Upstream attempts started and not yet aborted.
    attempts: Vec<AttemptId>,
    /// The next script request id.
    next_id: u64,
    stdin_closed: bool,
}

impl Script {
    fn feed(&mut self, input: Input<'_>) {
        self.server.feed(input);
        for output in self.server.take_other() {
            self.checker.output(&output, &mut self.attempts);
        }
    }

    /// One script message as a line of stdin.
    fn feed_line(&mut self, line: &str) {
        self.feed(Input::Stdin(format!("{line}\n").as_bytes()));
    }

    /// A fresh script id; it is expected to be answered only while stdin is open (after
    /// EOF the server reads no more stdin, so its line never arrives).
    fn request(&mut self, modern: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if !self.stdin_closed {
            self.checker.requested.insert(id);
            if modern {
                self.checker.modern.insert(id);
            }
        }
        id
    }

    /// Random bytes, kept from swallowing or forging the script's own messages: each chunk
    /// is one line that starts like JSON (so it cannot open a Content-Length header block;
    /// the framer targets cover those) and cannot spell a script id (no \u{1}, no
    /// backslash escapes).
    fn random_line(&mut self, arg: u8, bytes: &mut (impl Iterator<Item = u8> + Clone)) {
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
        self.feed(Input::Stdin(&chunk));
    }

    /// A `tools/call`; every third a modern (2026-07-28) request.
    fn call(&mut self, arg: u8) {
        let modern = arg % 3 == 2;
        let id = self.request(modern);
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
        self.feed_line(&line);
    }

    /// An upstream reply to one of the attempts in flight.
    fn reply(&mut self, arg: u8) {
        let Some(&attempt) = pick(&self.attempts, arg) else {
            return;
        };
        let status = [200, 200, 429, 500, 503, 400, 401, 404][usize::from(arg >> 3) % 8];
        let body = BODIES[usize::from(arg >> 5) % BODIES.len()]
            .as_bytes()
            .to_vec();
        let headers = vec![("retry-after".to_owned(), (arg % 4).to_string())];
        let reply = HttpReply {
            status,
            headers,
            body,
        };
        self.feed(Input::HttpReply(attempt, reply));
    }

    /// A transport failure of one of the attempts in flight.
    fn fail(&mut self, arg: u8) {
        let Some(&attempt) = pick(&self.attempts, arg) else {
            return;
        };
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
        self.feed(Input::HttpFailed(attempt, error));
    }

    /// Time passes and the timer fires; a deadline that was due is then in the future.
    fn tick(&mut self, arg: u8) {
        self.server
            .advance(Duration::from_millis(u64::from(arg) * 97));
        let now = self.server.now;
        let due = self
            .server
            .server
            .poll_timeout()
            .is_some_and(|t| t <= now.instant);
        self.feed(Input::Timeout);
        if due {
            if let Some(next) = self.server.server.poll_timeout() {
                assert!(
                    next > now.instant,
                    "a deadline at or before now after a timeout"
                );
            }
        }
    }

    /// A cancel of a script request sent earlier.
    fn cancel(&mut self, arg: u8) {
        let id = u64::from(arg) % self.next_id;
        if !self.stdin_closed {
            self.checker.cancelled.insert(id);
        }
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
            script_id(id)
        );
        self.feed_line(&line);
    }

    /// A shutdown (0), or a modern subscriptions/listen (1), server/discover (2) or
    /// removed method (3): answered at most once, never with a legacy code.
    fn other(&mut self, arg: u8) {
        match arg {
            0 => self.feed(Input::Shutdown),
            1..=3 => {
                let id = self.request(true);
                let method =
                    ["subscriptions/listen", "server/discover", "ping"][usize::from(arg) - 1];
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{{"_meta":{{{MODERN_META}}}}}}}"#,
                    script_id(id)
                );
                self.feed_line(&line);
            }
            _ => {}
        }
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
                // Answers and creates carry JSON; reads and model lookups carry nothing.
                match request.method {
                    HttpMethod::Post => {
                        assert!(serde_json::from_slice::<Value>(&request.body).is_ok())
                    }
                    HttpMethod::Get => assert!(request.body.is_empty()),
                }
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
