//! Tables a caller can fill (issue 56, item 4): a trusted gateway naming tens of thousands
//! of users leaves the roster bounded, room for a new user, the users with something
//! under way as they were, and the process small. The test client connects from
//! 127.0.0.1, which the server trusts as the gateway; the gateway's credential is the
//! static token.

use super::observability::answered;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn, HttpResponse};
use crate::*;

const TOKEN: &str = "PLANTED-gateway-token-0123456789";

/// The issue's flood: more identities than a `u16` numbers.
const FLOOD: usize = 66_000;

/// Connections the flood comes on, and pings each sends before reading their answers.
const CONNECTIONS: usize = 4;
const WINDOW: usize = 8;

/// Peak memory the flood may leave the server at (the issue's bound).
const PEAK_KIB: u64 = 64 * 1024;

fn post(c: &mut HttpConn, message: &Value, user: &str) -> HttpResponse {
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
        ("X-Forwarded-User", user),
    ];
    c.post(message, &headers)
}

fn call(id: u64, task: bool) -> Value {
    let mut call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}});
    if task {
        call["params"]["task"] = json!({});
    }
    call
}

/// The `n`-th identity of the flood: 250 characters, distinct for each `n`.
fn flooder(n: usize) -> String {
    format!("u{n:0>249}")
}

/// One pipelined ping as the flood's `n`-th identity.
fn ping(addr: std::net::SocketAddr, n: usize) -> Vec<u8> {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#);
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nAuthorization: Bearer {TOKEN}\r\nX-Forwarded-User: {}\r\nContent-Length: {}\r\n\r\n{body}",
        flooder(n),
        body.len()
    )
    .into_bytes()
}

pub fn a_flood_of_identities_from_the_gateway_leaves_room_memory_and_holders_as_they_were() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &answered()));
    // Each identity may spend a hundred-millionth of a dollar a day: one call's worth.
    let yaml = "server: {http: {trusted_proxies: ['127.0.0.1'], identity_header: X-Forwarded-User, oauth: {spend_per_day_usd: 0.00000001}}}\n";
    let opts = Opts::http(&fake.url)
        .temp_config("identities", yaml)
        .env("MCP_HTTP_TOKEN", TOKEN);
    // Frozen mid-day, so that no day's end passes during the test.
    let Some((opts, _clock)) = opts.frozen_clock("2026-11-26 12:00:10") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let server = Mcp::spawn(opts);
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);

    // Bob spends his day's worth: his next call is refused, his spend held through the
    // flood.
    let answered_ok = |r: &HttpResponse| {
        assert_eq!(r.status, 200);
        let reply = r.json();
        assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    };
    answered_ok(&post(&mut c, &call(10, false), "bob"));
    let spent_of = |r: &HttpResponse| {
        let reply = r.json();
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let details = &reply["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(details["limit"], "spend_per_day_usd", "{reply}");
        details["spent_usd"].clone()
    };
    let spent = spent_of(&post(&mut c, &call(11, false), "bob"));

    // Alice holds a task through the flood.
    let created = post(&mut c, &call(1, true), "alice").json();
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let get = json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":task_id}});

    // The flood, on a few connections, each pipelining a window of pings at a time (as
    // many as a connection buffers while it answers the first).
    let floods: Vec<_> = (0..CONNECTIONS)
        .map(|k| {
            std::thread::spawn(move || {
                let mut flood = HttpConn::open(addr);
                let mine: Vec<usize> = (k..FLOOD).step_by(CONNECTIONS).collect();
                for window in mine.chunks(WINDOW) {
                    let bytes: Vec<u8> = window.iter().flat_map(|n| ping(addr, *n)).collect();
                    flood.send_raw(&bytes);
                    for n in window {
                        let r = flood.response();
                        let body = String::from_utf8_lossy(&r.body).into_owned();
                        assert_eq!(r.status, 200, "ping {n} refused: {body}");
                    }
                }
            })
        })
        .collect();
    for flood in floods {
        flood.join().unwrap();
    }

    // A new identity is served; bob is still refused on his day's spend; alice is still herself, and her task still hers; the
    // flood's last identity, which may well have her old number, sees nothing of it.
    answered_ok(&post(&mut c, &call(3, false), "carol"));
    assert_eq!(
        spent_of(&post(&mut c, &call(12, false), "bob")),
        spent,
        "bob's day's spend was kept"
    );
    let as_alice = post(&mut c, &get, "alice").json();
    assert!(as_alice["result"]["status"].is_string(), "{as_alice}");
    let as_flooder = post(&mut c, &get, &flooder(FLOOD - 1)).json();
    assert!(as_flooder.get("error").is_some(), "{as_flooder}");
    assert_eq!(c.get("/ready").status, 200);
    let mut m = HttpConn::open(addr);
    m.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
            .as_bytes(),
    );
    let text = String::from_utf8(m.response().body).unwrap();
    let told: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("openai_responses_mcp_identities "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no identities gauge: {text}"));
    assert!(
        (1..=responses_mcp_core::clients::MAX_IDENTITIES).contains(&told),
        "{told} identities told apart"
    );

    let peak = super::lifecycle::peak_rss_kib(server.pid()).expect("the process's VmHWM");
    eprintln!("peak memory after {FLOOD} identities: {peak} KiB");
    assert!(peak < PEAK_KIB, "peak {peak} KiB after the flood");
}
