//! The `abi` fuzz target.

use responses_mcp_ffi::*;
use std::collections::BTreeSet;

/// What the fake upstream answers, by a script byte.
const BODIES: [&[u8]; 5] = [
    include_bytes!("../../../core/testdata/openai/response-web-search.json"),
    include_bytes!("../../../core/testdata/openai/error-429-rate-limit-exceeded.json"),
    include_bytes!("../../../core/testdata/openai/stream-web-search.sse"),
    b"{\"id\":",
    b"",
];
const STATUSES: [u32; 8] = [200, 200, 429, 500, 400, 404, 99, 1000];
const HEADERS: [&[u8]; 4] = [
    b"content-type: application/json\r\n",
    b"Retry-After: 1\nContent-Type: text/event-stream\n",
    b"no colon here\n",
    b"\xff\xfe: bad utf-8\n",
];
const LINES: [&[u8]; 5] = [
    br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    br#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#,
    br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
];

/// Drives the C ABI (`orm_engine_*`, through its `extern "C"` functions) with a byte-coded
/// script: arbitrary stdin bytes, tool calls, the host's answers to each action (written or
/// not, started or not, replies whole or in pieces with statuses, headers and bodies from
/// tables, transport failures), clock steps with timeouts, stdin's end, shutdown, and raw
/// inputs of any kind, status and attempt. Checks: no call panics (a caught panic is
/// `ORM_ERR_PANIC`); every refusal is `ORM_ERR_INVALID` with a message; every handle the host
/// gave comes back at most once, by `ABORT` or on release, and only one it gave; after a
/// timeout at or past the deadline, the next deadline lies later.
pub fn abi(data: &[u8]) {
    let config = format!(
        r#"{{"max_inflight":3,"max_queue":4,"progress_interval_ms":500,"shutdown_grace_ms":5000,"call_records":true,"stream":{}}}"#,
        data.len() % 2 == 0
    );
    let mut host = Host::new(config.as_bytes());
    host.input(ORM_INPUT_START, 0, 0, 0, b"", b"");
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        match op % 10 {
            0 => {
                let chunk: Vec<u8> = bytes.by_ref().take(usize::from(arg)).collect();
                host.input(ORM_INPUT_STDIN, 0, 0, 0, &chunk, b"");
            }
            1 => host.call(arg),
            2 => {
                let line = [LINES[usize::from(arg) % LINES.len()], b"\n"].concat();
                host.input(ORM_INPUT_STDIN, 0, 0, 0, &line, b"");
            }
            3 => host.drain(arg),
            4 | 9 => host.answer(arg, op % 10 == 4),
            5 => host.fail(arg),
            6 => {
                host.now_ms += u64::from(arg) * 97;
                host.timeout();
            }
            7 => host.any(arg, &mut bytes),
            _ => {
                let kind = if arg % 4 == 0 {
                    ORM_INPUT_SHUTDOWN
                } else {
                    ORM_INPUT_STDIN_CLOSED
                };
                host.input(kind, 0, 0, 0, b"", b"");
            }
        }
    }
    host.drain(0);
    // SAFETY: the engine came from orm_engine_new and is freed once.
    unsafe { orm_engine_free(host.engine) };
}

struct Host {
    engine: *mut OrmEngine,
    now_ms: u64,
    calls: u64,
    next_handle: u64,
    /// Attempts started and not yet answered by the script.
    attempts: Vec<u64>,
    /// Handles given to the engine and not yet handed back.
    live: BTreeSet<u64>,
    /// The deadline of the last `WAIT`, if any.
    deadline: Option<u64>,
}

impl Host {
    fn new(config: &[u8]) -> Host {
        let mut engine = std::ptr::null_mut();
        // SAFETY: the pointers are to live locals and slices of the given lengths.
        let status = unsafe {
            orm_engine_new(
                ORM_ABI_VERSION,
                config.as_ptr(),
                config.len(),
                &mut engine,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, ORM_OK);
        Host {
            engine,
            now_ms: 1_000_000,
            calls: 0,
            next_handle: 1 << 40,
            attempts: Vec::new(),
            live: BTreeSet::new(),
            deadline: None,
        }
    }

    fn pick(&mut self, arg: u8) -> Option<u64> {
        if self.attempts.is_empty() {
            return None;
        }
        let i = usize::from(arg) % self.attempts.len();
        Some(self.attempts.swap_remove(i))
    }

    /// A `tools/call` on stdin.
    fn call(&mut self, arg: u8) {
        self.calls += 1;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q{arg}"}}}}}}"#,
            self.calls
        );
        self.input(
            ORM_INPUT_STDIN,
            0,
            0,
            0,
            format!("{line}\n").as_bytes(),
            b"",
        );
    }

    /// A started attempt answered, `whole` or as a head, a body in two pieces and its end,
    /// with a status, headers and body from the tables.
    fn answer(&mut self, arg: u8, whole: bool) {
        let Some(attempt) = self.pick(arg) else {
            return;
        };
        let status = STATUSES[usize::from(arg / 8) % STATUSES.len()];
        let body = BODIES[usize::from(arg / 3) % BODIES.len()];
        let headers = HEADERS[usize::from(arg / 5) % HEADERS.len()];
        if whole {
            self.input(ORM_INPUT_HTTP_REPLY, attempt, 0, status, body, headers);
        } else {
            self.input(ORM_INPUT_HTTP_HEAD, attempt, 0, status, b"", headers);
            let cut = usize::from(arg) % (body.len() + 1);
            self.input(ORM_INPUT_HTTP_BODY, attempt, 0, 0, &body[..cut], b"");
            self.input(ORM_INPUT_HTTP_BODY, attempt, 0, 0, &body[cut..], b"");
            self.input(ORM_INPUT_HTTP_END, attempt, 0, 0, b"", b"");
        }
    }

    /// A started attempt failed, of a transport error kind (or an unknown one) `arg` picks.
    fn fail(&mut self, arg: u8) {
        let Some(attempt) = self.pick(arg) else {
            return;
        };
        let kind = u32::from(arg % 7);
        self.input(ORM_INPUT_HTTP_FAILED, attempt, 0, kind, b"x", b"");
    }

    /// Any input at all: kind, status and attempt from the script.
    fn any(&mut self, arg: u8, bytes: &mut impl Iterator<Item = u8>) {
        let kind = u32::from(bytes.next().unwrap_or(0) % 16);
        let status = u32::from(bytes.next().unwrap_or(0)) * 4;
        let chunk: Vec<u8> = bytes.by_ref().take(usize::from(arg % 32)).collect();
        let (attempt, handle) = (u64::from(arg % 8), u64::from(arg));
        self.input(kind, attempt, handle, status, &chunk, &chunk);
    }

    fn input(
        &mut self,
        kind: u32,
        attempt: u64,
        handle: u64,
        status: u32,
        data: &[u8],
        headers: &[u8],
    ) -> i32 {
        let input = OrmInput {
            attempt,
            handle,
            kind,
            status,
            data: data.as_ptr(),
            data_len: data.len(),
            headers: headers.as_ptr(),
            headers_len: headers.len(),
        };
        let mut released = u64::MAX;
        // SAFETY: the input points at live slices of the given lengths.
        let rc = unsafe {
            orm_engine_input(
                self.engine,
                self.now_ms,
                1_754_708_400,
                &input,
                &mut released,
            )
        };
        match rc {
            ORM_OK => {}
            ORM_RELEASED => assert!(
                self.live.remove(&released),
                "released {released}, never given or given back"
            ),
            ORM_ERR_INVALID => assert!(!self.error().is_empty(), "a refusal without a message"),
            other => panic!("orm_engine_input returned {other}: {}", self.error()),
        }
        rc
    }

    fn timeout(&mut self) {
        let due = self.deadline.is_some_and(|d| d <= self.now_ms);
        self.input(ORM_INPUT_TIMEOUT, 0, 0, 0, b"", b"");
        if due {
            let action = self.poll_until_wait(0);
            if let Some(next) = action {
                assert!(
                    next > self.now_ms,
                    "a deadline {next} not after the timeout at {}",
                    self.now_ms
                );
            }
        }
    }

    /// Performs actions until the engine waits; `arg` decides failures.
    fn drain(&mut self, arg: u8) {
        self.poll_until_wait(arg);
    }

    /// Returns the deadline of the `WAIT` it stopped at.
    fn poll_until_wait(&mut self, arg: u8) -> Option<u64> {
        for round in 0..10_000u32 {
            let mut action = OrmAction {
                attempt: 0,
                handle: 0,
                deadline_ms: 0,
                kind: 0,
                flags: 0,
                method: 0,
                destination: 0,
                data: std::ptr::null(),
                data_len: 0,
                url: std::ptr::null(),
                url_len: 0,
            };
            // SAFETY: the engine is live and the action a local.
            let rc = unsafe { orm_engine_poll(self.engine, &mut action) };
            assert_eq!(rc, ORM_OK, "{}", self.error());
            match action.kind {
                ORM_ACTION_WRITE => {
                    assert!(action.data_len > 0);
                    let ok = !(arg == 255 && round == 0);
                    self.input(ORM_INPUT_WRITTEN, 0, 0, u32::from(ok), b"", b"");
                }
                ORM_ACTION_START => {
                    assert!(action.url_len > 0);
                    let handle = self.next_handle;
                    self.next_handle += 1;
                    if arg % 11 == 10 {
                        self.input(
                            ORM_INPUT_STARTED,
                            action.attempt,
                            handle,
                            ORM_TRANSPORT_CONNECT,
                            b"refused",
                            b"",
                        );
                    } else {
                        assert_eq!(
                            self.input(ORM_INPUT_STARTED, action.attempt, handle, 0, b"", b""),
                            ORM_OK
                        );
                        self.live.insert(handle);
                        self.attempts.push(action.attempt);
                    }
                }
                ORM_ACTION_ABORT => {
                    assert!(
                        self.live.remove(&action.handle),
                        "aborted {}, never given or given back",
                        action.handle
                    );
                }
                ORM_ACTION_RECORD => assert!(action.data_len > 0),
                ORM_ACTION_WAIT => {
                    self.deadline =
                        (action.flags & ORM_WAIT_HAS_DEADLINE != 0).then_some(action.deadline_ms);
                    return self.deadline;
                }
                ORM_ACTION_EXIT => return None,
                other => panic!("unknown action {other}"),
            }
        }
        panic!("the engine never waited");
    }

    fn error(&self) -> String {
        let mut message = std::ptr::null();
        let mut len = 0;
        // SAFETY: the engine is live; the message is copied before the next call.
        unsafe {
            orm_engine_error(self.engine, &mut message, &mut len);
            String::from_utf8_lossy(std::slice::from_raw_parts(message, len)).into_owned()
        }
    }
}
