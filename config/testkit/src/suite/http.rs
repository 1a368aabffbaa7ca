//! Streamable HTTP end to end, over real sockets: both eras without sessions, progress as
//! server-sent events, cancellation by disconnect and by a separate POST, the access
//! rules, hostile clients and every limit, and a graceful drain on SIGTERM.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, modern_headers, post_bytes, HttpConn, HttpResponse};
use crate::*;
use std::net::{SocketAddr, TcpStream};

const LEGACY: &str = "2025-11-25";

/// A server on a free port, with `yaml` as its configuration.
fn serve(fake: &FakeOpenAi, yaml: &str, env: &[(&str, &str)]) -> (Mcp, SocketAddr) {
    let dir = temp_dir("http");
    let mut opts = Opts::http(&fake.url).config(&dir, yaml).keeping(dir);
    for (k, v) in env {
        opts = opts.env(k, v);
    }
    let mcp = Mcp::spawn(opts);
    let addr = listening(&mcp);
    (mcp, addr)
}

fn call(id: u64, token: Option<&str>) -> Value {
    let mut m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"}}});
    if let Some(t) = token {
        m["params"]["_meta"] = json!({ "progressToken": t });
    }
    m
}

/// Checks every message of `response` against the schema of `version`, as the reply to
/// `request`, and that nothing carries a secret.
fn checked(version: &str, request: &Value, response: &HttpResponse) -> Vec<Value> {
    let messages = response.messages();
    for m in &messages {
        check_reply(version, request, m);
    }
    let text = String::from_utf8_lossy(&response.body);
    assert!(!text.contains(PLANTED_KEY), "the API key leaked: {text}");
    messages
}

/// POSTs `message` as 2025-11-25 with `Authorization: Bearer <token>`; the response.
pub(super) fn post_with_token(c: &mut HttpConn, message: &Value, token: &str) -> HttpResponse {
    let auth = format!("Bearer {token}");
    let h = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    c.post(message, &h)
}

/// `GET path` with `token`; the response.
pub(super) fn get_with_token(c: &mut HttpConn, path: &str, token: &str) -> HttpResponse {
    let bytes = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\r\n",
        c.addr
    );
    c.send_raw(bytes.as_bytes());
    c.response()
}

/// Calls `answer` (request `id`) with `token`; the response.
pub(super) fn answer_with_token(c: &mut HttpConn, id: u64, token: &str) -> HttpResponse {
    let m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}});
    post_with_token(c, &m, token)
}

pub(super) fn waits_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

pub fn both_eras_are_served_without_sessions() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let (_mcp, addr) = serve(&fake, "{}\n", &[]);
    let mut c = HttpConn::open(addr);
    // Legacy: initialize opens nothing; later requests name their version in a header.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion": LEGACY,"capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}});
    let r = c.post(&init, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(
        r.header("mcp-session-id").is_none(),
        "stateless: no session"
    );
    assert_eq!(
        checked(LEGACY, &init, &r)[0]["result"]["protocolVersion"],
        LEGACY
    );
    // A fresh connection (another instance, for all it knows) serves tools/list at once.
    let mut other = HttpConn::open(addr);
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let r = other.post(&list, &[("MCP-Protocol-Version", LEGACY)]);
    assert_eq!(
        checked(LEGACY, &list, &r)[0]["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let r = other.post(&call(3, None), &[("MCP-Protocol-Version", LEGACY)]);
    let reply = &checked(LEGACY, &call(3, None), &r)[0];
    assert_eq!(answer_of(reply)["used_search"], false);
    let ping = json!({"jsonrpc":"2.0","id":4,"method":"ping"});
    let r = other.post(&ping, &[("MCP-Protocol-Version", LEGACY)]);
    assert_eq!(checked(LEGACY, &ping, &r)[0]["result"], json!({}));
    // A version the server does not speak.
    let r = other.post(&ping, &[("MCP-Protocol-Version", "1999-01-01")]);
    assert_eq!(r.status, 400);

    // Modern: the mirrored headers are required and must agree with the body.
    let discover = modern(json!(5), "server/discover", json!({}));
    let headers = modern_headers(&discover);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&discover, &h);
    assert_eq!(r.status, 200);
    let got = checked("2026-07-28", &discover, &r);
    assert!(
        got[0]["result"]["supportedVersions"].is_array(),
        "{}",
        got[0]
    );
    let r = c.post(&discover, &[("MCP-Protocol-Version", "2026-07-28")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32020, "{}", r.json());
    let wrong: Vec<(&str, &str)> = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let r = c.post(&discover, &wrong);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    let unknown = modern(json!(6), "resources/list", json!({}));
    let headers = modern_headers(&unknown);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&unknown, &h);
    assert_eq!(r.status, 404, "an unknown modern method is 404");
    let modern_call = modern(
        json!(7),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    );
    let headers = modern_headers(&modern_call);
    let h: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&modern_call, &h);
    let reply = &checked("2026-07-28", &modern_call, &r)[0];
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");

    // Other methods and paths; /health says how the server is and nothing secret.
    for method in ["GET", "DELETE", "PUT"] {
        let bytes = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n");
        c.send_raw(bytes.as_bytes());
        let r = c.response();
        assert_eq!(
            (r.status, r.header("allow")),
            (405, Some("POST")),
            "{method}"
        );
    }
    assert_eq!(c.get("/elsewhere").status, 404);
    let health = c.get("/health");
    assert_eq!(health.status, 200);
    let body = health.json();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["calls"], json!({"running": 0, "queued": 0}));
    assert!(body["version"].is_string());
    assert!(!String::from_utf8_lossy(&health.body).contains(PLANTED_KEY));
}

pub fn progress_streams_as_server_sent_events_then_the_reply() {
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &fixture("response-no-search.json")).after(Duration::from_millis(800))
    });
    let (_mcp, addr) = serve(&fake, "server: {progress_interval_ms: 100}\n", &[]);
    let mut c = HttpConn::open(addr);
    let request = call(1, Some("tok"));
    let r = c.post(&request, &[("MCP-Protocol-Version", LEGACY)]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert!(r.chunked, "the stream ends with its last chunk");
    let messages = checked(LEGACY, &request, &r);
    let (last, progress) = messages.split_last().unwrap();
    assert!(!progress.is_empty(), "progress before the reply");
    for p in progress {
        assert_eq!(p["method"], "notifications/progress");
        assert_eq!(p["params"]["progressToken"], "tok");
    }
    assert_eq!(last["id"], 1);
    assert_eq!(answer_of(last)["used_search"], false);
    // The same connection serves the next request; a client that takes no stream gets
    // plain JSON, without the progress.
    let r = c.post(
        &call(2, Some("tok2")),
        &[
            ("MCP-Protocol-Version", LEGACY),
            ("Accept", "application/json"),
        ],
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["id"], 2);
}

pub fn a_client_that_disconnects_cancels_its_call() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let (_mcp, addr) = serve(&fake, "{}\n", &[]);
    let mut c = HttpConn::open(addr);
    c.send_raw(&post_bytes(addr, &call(1, Some("t")), &[]));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    drop(c);
    waits_for("the upstream connection to close", || {
        !fake.closed().is_empty()
    });
    let mut probe = HttpConn::open(addr);
    waits_for("no call in flight", || {
        probe.get("/health").json()["calls"]["running"] == 0
    });
}

pub fn a_cancel_posted_on_another_connection_ends_the_stream_cleanly() {
    let fake = FakeOpenAi::start(|_, _| Action::Hang);
    let (_mcp, addr) = serve(&fake, "{}\n", &[]);
    let mut a = HttpConn::open(addr);
    a.send_raw(&post_bytes(addr, &call(42, Some("t")), &[]));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let mut b = HttpConn::open(addr);
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":42,"reason":"user"}});
    let r = b.post(&cancel, &[]);
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    // The cancelled call's response ends without a reply and without a reset, and the
    // connection stays usable.
    let r = a.response();
    assert_eq!(r.status, 200);
    assert!(
        r.messages().iter().all(|m| m.get("id").is_none()),
        "no reply after a cancel: {r:?}"
    );
    waits_for("the upstream connection to close", || {
        !fake.closed().is_empty()
    });
    assert_eq!(a.get("/health").status, 200);
}

pub fn host_origin_and_token_are_enforced_and_the_token_never_echoed() {
    const TOKEN: &str = "team-token-0123456789-SECRET";
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let (mcp, addr) = serve(
        &fake,
        "server: {debug: true, http: {allowed_origins: ['https://app.example']}}\n",
        &[("MCP_HTTP_TOKEN", TOKEN)],
    );
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let auth = format!("Bearer {TOKEN}");
    let mut c = HttpConn::open(addr);
    let r = c.post(&ping, &[]);
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some(r#"Bearer realm="mcp""#));
    let r = c.post(
        &ping,
        &[("Authorization", "Bearer team-token-0123456789-WRONG")],
    );
    assert_eq!(r.status, 401);
    assert!(r
        .header("www-authenticate")
        .is_some_and(|h| h.contains(r#"error="invalid_token""#)));
    let r = c.post(&ping, &[("Authorization", &auth)]);
    assert_eq!(r.status, 200);
    // DNS rebinding: a foreign Host or Origin is refused even with the token.
    let bytes = post_bytes(addr, &ping, &[("Authorization", &auth)])
        .into_iter()
        .collect::<Vec<u8>>();
    let rebound = String::from_utf8(bytes)
        .unwrap()
        .replace(&format!("Host: {addr}"), "Host: evil.example");
    c.send_raw(rebound.as_bytes());
    assert_eq!(c.response().status, 403);
    let r = c.post(
        &ping,
        &[("Authorization", &auth), ("Origin", "https://evil.example")],
    );
    assert_eq!(r.status, 403);
    for origin in ["https://app.example", "http://localhost:3000"] {
        let r = c.post(&ping, &[("Authorization", &auth), ("Origin", origin)]);
        assert_eq!(r.status, 200, "{origin}");
    }
    // /health needs no token and says nothing secret.
    assert_eq!(c.get("/health").status, 200);
    thread::sleep(Duration::from_millis(100));
    let log = mcp.stderr();
    assert!(log.contains("DEBUG"), "debug logging is on: {log}");
    assert!(!log.contains(TOKEN), "the token is never logged");
}

pub fn a_reachable_address_without_a_token_refuses_to_start() {
    let fake = FakeOpenAi::fixed(200, Vec::new());
    let mut opts = Opts::http(&fake.url);
    opts.args = vec!["--http".into(), "--listen".into(), "0.0.0.0:0".into()];
    let mut mcp = Mcp::spawn(opts);
    let status = mcp.wait_exit(PATIENCE);
    assert_eq!(status.code(), Some(1));
    let stderr = mcp.stderr_to_end();
    assert!(stderr.contains("allow_unauthenticated"), "{stderr}");
    assert!(stderr.contains("MCP_HTTP_TOKEN"), "{stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");
}

pub fn hostile_requests_get_their_status_and_the_server_keeps_serving() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {max_message_bytes: 4096, http: {max_head_bytes: 2048, request_timeout_ms: 400, idle_timeout_ms: 600}}\n";
    let (_mcp, addr) = serve(&fake, yaml, &[]);
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let hostile: Vec<(&str, Vec<u8>, u16)> = vec![
        ("an endless head", vec![b'a'; 4000], 431),
        (
            "a huge Content-Length",
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n").into_bytes(),
            413,
        ),
        (
            "two different Content-Lengths",
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{{}}").into_bytes(),
            400,
        ),
        (
            "a broken chunked body",
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n").into_bytes(),
            400,
        ),
        (
            "a chunked body over the limit",
            {
                let mut b = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes();
                for _ in 0..10 {
                    b.extend_from_slice(b"400\r\n");
                    b.extend_from_slice(&[b' '; 0x400]);
                    b.extend_from_slice(b"\r\n");
                }
                b
            },
            413,
        ),
        ("HTTP/2 without upgrade", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(), 505),
        ("not HTTP", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec(), 400),
    ];
    for (what, bytes, status) in hostile {
        let mut c = HttpConn::open(addr);
        c.send_raw(&bytes);
        let r = c.response();
        assert_eq!(r.status, status, "{what}");
        assert_eq!(r.header("connection"), Some("close"), "{what}");
        assert!(c.closed_within(PATIENCE), "{what}: the connection closes");
    }
    // A slow head: 408 once the request time is over.
    let mut slow = HttpConn::open(addr);
    slow.send_raw(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes());
    let started = Instant::now();
    assert_eq!(slow.response().status, 408);
    assert!(started.elapsed() >= Duration::from_millis(300));
    // An idle kept-alive connection closes after the idle time.
    let mut idle = HttpConn::open(addr);
    assert_eq!(idle.get("/health").status, 200);
    assert!(idle.closed_within(PATIENCE), "an idle connection closes");
    // Pipelined requests are answered in order on one connection.
    let mut p = HttpConn::open(addr);
    let mut bytes = Vec::new();
    for id in 1..=5 {
        let m = json!({"jsonrpc":"2.0","id":id,"method":"ping"});
        bytes.extend(post_bytes(addr, &m, &[]));
    }
    p.send_raw(&bytes);
    for id in 1..=5 {
        assert_eq!(p.response().json()["id"], id);
    }
    // Expect: 100-continue gets its interim response.
    let mut e = HttpConn::open(addr);
    let body = ping.to_string();
    e.send_raw(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes());
    assert_eq!(e.response().status, 100);
    e.send_raw(body.as_bytes());
    assert_eq!(e.response().json()["result"], json!({}));
    // Bad JSON and bad media types are JSON-RPC errors with their status.
    let mut c = HttpConn::open(addr);
    c.send_raw(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{{nope").as_bytes());
    let r = c.response();
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32700))
    );
    let r = c.post(&ping, &[("Content-Type", "text/plain")]);
    assert_eq!(r.status, 415);
    let r = c.post(&ping, &[("Accept", "text/html")]);
    assert_eq!(r.status, 406);
    let r = c.post(&json!([ping, ping]), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["error"]["code"], -32600, "one message per POST");
    // Still serving.
    assert_eq!(c.post(&ping, &[]).json()["result"], json!({}));
}

pub fn a_silent_connection_closes_at_the_request_timeout_not_the_idle_one() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {http: {request_timeout_ms: 300, idle_timeout_ms: 60000}}\n";
    let (_mcp, addr) = serve(&fake, yaml, &[]);
    // A socket that never sends a byte: closed at the request time, with nothing written.
    let mut silent = HttpConn::open(addr);
    let opened = Instant::now();
    assert!(silent.closed_within(PATIENCE), "a silent socket is closed");
    let held = opened.elapsed();
    assert!(held >= Duration::from_millis(250), "closed after {held:?}");
    assert!(
        held < Duration::from_secs(30),
        "held {held:?}: the idle time"
    );
    // A served client keeps its connection for the idle time, past the request time.
    let mut kept = HttpConn::open(addr);
    assert_eq!(kept.get("/health").status, 200);
    assert!(
        !kept.closed_within(Duration::from_millis(600)),
        "a kept-alive connection was closed at the request time"
    );
    assert_eq!(kept.get("/health").status, 200);
}

pub fn smuggling_ingredients_are_refused_and_every_close_says_so() {
    const TOKEN: &str = "team-token-0123456789-SECRET";
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let (_mcp, addr) = serve(&fake, "", &[("MCP_HTTP_TOKEN", TOKEN)]);
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = |version: &str, framing: &str, body: &str| {
        format!("POST /mcp HTTP/{version}\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: keep-alive\r\n{framing}\r\n{body}")
    };
    let chunked = format!("{:x}\r\n{ping}\r\n0\r\n\r\n", ping.len());
    let cases: Vec<(&str, String, u16)> = vec![
        (
            "a head with bare LF line ends",
            post("1.1", &format!("Content-Length: {}\r\n", ping.len()), ping).replace("\r\n", "\n"),
            400,
        ),
        (
            "one bare LF among CRLFs",
            post(
                "1.1",
                &format!("X-Pad: a\nContent-Length: {}\r\n", ping.len()),
                ping,
            ),
            400,
        ),
        (
            "a chunk line ending in LF alone",
            post(
                "1.1",
                "Transfer-Encoding: chunked\r\n",
                &chunked.replacen("\r\n", "\n", 1),
            ),
            400,
        ),
        (
            "HTTP/1.0 with a chunked body, kept alive and pipelined",
            format!(
                "{}{}",
                post("1.0", "Transfer-Encoding: chunked\r\n", &chunked),
                post("1.1", &format!("Content-Length: {}\r\n", ping.len()), ping)
            ),
            400,
        ),
        (
            "a refused token waiting for 100 Continue",
            post(
                "1.1",
                &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", ping.len()),
                "",
            )
            .replace(TOKEN, "team-token-0123456789-WRONG"),
            401,
        ),
        (
            "no token, waiting for 100 Continue",
            post(
                "1.1",
                &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", ping.len()),
                "",
            )
            .replace(&auth, ""),
            401,
        ),
    ];
    for (what, bytes, status) in cases {
        let mut c = HttpConn::open(addr);
        c.send_raw(bytes.as_bytes());
        let r = c.response();
        assert_eq!(r.status, status, "{what}");
        assert_eq!(r.header("connection"), Some("close"), "{what}");
        assert!(
            c.try_response().is_none(),
            "{what}: one response, then the close"
        );
    }
    // The well-formed versions are served, kept alive.
    let mut c = HttpConn::open(addr);
    c.send_raw(post("1.1", "Transfer-Encoding: chunked\r\n", &chunked).as_bytes());
    let r = c.response();
    assert_eq!((r.status, r.header("connection")), (200, None));
    c.send_raw(post("1.0", &format!("Content-Length: {}\r\n", ping.len()), ping).as_bytes());
    assert_eq!(c.response().json()["result"], json!({}));
}

pub fn connections_beyond_the_limit_get_503_and_a_thousand_idle_ones_block_nobody() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let (_mcp, addr) = serve(&fake, "server: {http: {max_connections: 1000}}\n", &[]);
    let idle: Vec<TcpStream> = (0..1000)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let mut refused = HttpConn::open(addr);
    let r = refused.try_response().expect("a 503 before the close");
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.json()["error"]["code"], -32051);
    // Freeing connections lets new clients in.
    drop(idle);
    waits_for("a connection slot", || {
        let mut c = HttpConn::open(addr);
        c.get("/health").status == 200
    });
}

pub fn a_client_that_never_reads_is_dropped_and_blocks_nobody() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let (_mcp, addr) = serve(&fake, "server: {http: {idle_timeout_ms: 500}}\n", &[]);
    // Thousands of pipelined tools/list requests whose 5 KB answers are never read.
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let one = post_bytes(addr, &list, &[]);
    let mut stuck = TcpStream::connect(addr).unwrap();
    let writer = {
        let mut stuck = stuck.try_clone().unwrap();
        thread::spawn(move || {
            for _ in 0..3000 {
                if std::io::Write::write_all(&mut stuck, &one).is_err() {
                    break;
                }
            }
        })
    };
    thread::sleep(Duration::from_millis(200));
    // Others are served meanwhile.
    let mut other = HttpConn::open(addr);
    assert_eq!(other.get("/health").status, 200);
    // The stuck reader is let go: reading now gives what was written, then the end.
    let _ = writer.join();
    stuck.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut sink = vec![0u8; 1 << 16];
    let started = Instant::now();
    let mut total = 0usize;
    loop {
        match std::io::Read::read(&mut stuck, &mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the connection was never dropped"
        );
    }
    assert!(
        total < 3000 * 5000,
        "the server gave up on the stuck reader ({total} bytes)"
    );
    assert_eq!(HttpConn::open(addr).get("/health").status, 200);
}

pub fn a_listen_whose_client_left_behind_a_full_pipeline_is_forgotten() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {max_message_bytes: 1024, http: {max_head_bytes: 1024}}\n";
    let (_mcp, addr) = serve(&fake, yaml, &[]);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}});
    let listen = |id: usize| {
        json!({"jsonrpc":"2.0","id":format!("l{id}"),"method":"subscriptions/listen",
            "params":{"_meta":meta}})
    };
    let headers = |m: &Value| modern_headers(m);
    let sent = |m: &Value| {
        let h = headers(m);
        let extra: Vec<(&str, &str)> = h.iter().map(|(n, v)| (*n, v.as_str())).collect();
        post_bytes(addr, m, &extra)
    };
    // As many listens as the server holds, each followed by more than one whole request
    // (which the connection stops reading), then their clients leave.
    for id in 0..64 {
        let mut c = HttpConn::open(addr);
        c.send_raw(&sent(&listen(id)));
        let mut head = [0u8; 64];
        let _ = std::io::Read::read(&mut c.stream, &mut head);
        let more = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 4096\r\n\r\n");
        c.send_raw(&[more.as_bytes(), &[b' '; 4096]].concat());
    }
    // A new listen is acknowledged once the server has seen them go.
    waits_for("a listen to be taken again", || {
        let mut c = HttpConn::open(addr);
        c.send_raw(&sent(&listen(64)));
        let mut got = vec![0u8; 4096];
        let n = std::io::Read::read(&mut c.stream, &mut got).unwrap_or(0);
        String::from_utf8_lossy(&got[..n]).contains("acknowledged")
    });
}

pub fn sigterm_stops_accepting_finishes_calls_in_flight_and_exits_zero() {
    let fake = FakeOpenAi::start(|_, _| {
        Action::json(200, &fixture("response-no-search.json")).after(Duration::from_millis(700))
    });
    let (mut mcp, addr) = serve(&fake, "{}\n", &[]);
    let mut a = HttpConn::open(addr);
    a.send_raw(&post_bytes(
        addr,
        &call(1, None),
        &[("MCP-Protocol-Version", LEGACY)],
    ));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let kill = Command::new("kill")
        .args(["-TERM", &mcp.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // The call in flight still gets its answer, which says the connection closes.
    let r = a.response();
    assert_eq!(answer_of(&r.json())["used_search"], false);
    assert_eq!(r.header("connection"), Some("close"));
    assert_eq!(mcp.wait_exit(PATIENCE).code(), Some(0));
    assert!(TcpStream::connect(addr).is_err(), "no longer accepting");
}

pub fn ready_says_whether_a_call_can_work_now() {
    let fake = FakeOpenAi::start(|r, _| {
        if r.body.to_string().contains("please-hang-forever") {
            Action::Hang
        } else {
            Action::json(200, &fixture("response-no-search.json"))
        }
    });
    let (_mcp, addr) = serve(&fake, "server: {max_inflight: 1, max_queue: 0}\n", &[]);
    let mut c = HttpConn::open(addr);
    let r = c.get("/ready");
    assert_eq!(
        (r.status, r.json()["status"].clone()),
        (200, json!("ready"))
    );
    // A call takes the only slot and nothing may queue: a new call would be refused.
    let mut busy = HttpConn::open(addr);
    let mut hang = call(1, None);
    hang["params"]["arguments"]["query"] = json!("please-hang-forever");
    busy.send_raw(&post_bytes(
        addr,
        &hang,
        &[("MCP-Protocol-Version", LEGACY)],
    ));
    assert_eq!(fake.wait_requests(1, PATIENCE).len(), 1);
    let r = c.get("/ready");
    assert_eq!(r.status, 503);
    assert!(
        r.json()["reason"]
            .as_str()
            .unwrap()
            .starts_with("at capacity"),
        "{:?}",
        r.json()
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(c.get("/health").status, 200, "/health stays liveness");
    // Its client leaves: the call is cancelled and the instance is ready again.
    drop(busy);
    let start = Instant::now();
    while c.get("/ready").status != 200 {
        assert!(
            start.elapsed() < PATIENCE,
            "not ready again after the call ended"
        );
        thread::sleep(Duration::from_millis(10));
    }
    // Without an API key no call can work: not ready, and says why without a secret.
    let mut opts = Opts::http(&fake.url);
    opts.key = false;
    let keyless = Mcp::spawn(opts);
    let r = HttpConn::open(listening(&keyless)).get("/ready");
    assert_eq!(r.status, 503);
    assert!(r.json()["reason"]
        .as_str()
        .unwrap()
        .starts_with("no API key"));
    assert!(r.header("retry-after").is_none());
}
