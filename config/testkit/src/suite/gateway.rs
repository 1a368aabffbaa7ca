//! Behind a gateway (platform issue, items 4 to 6): a trusted proxy names the user in
//! `X-Forwarded-User` and the client's address in `X-Forwarded-For`, and the server
//! serves each user as an identity of its own (limits, task ownership, spend, the call
//! log, metrics); the same headers from any other peer name nobody and are counted; a
//! malformed identity is refused with 400. OpenAI is told which user by keyed hashes,
//! never who. The test client connects from 127.0.0.1: one server trusts it, the other
//! trusts a network it is not in.

use super::observability::answered;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, modern_headers, HttpConn, HttpResponse};
use crate::*;

const TOKEN: &str = "PLANTED-gateway-token-0123456789";

/// A server behind a gateway at `trusted`, the identity header `X-Forwarded-User`, each
/// identity held to 3 calls a minute, its wall clock frozen; `None` without libfaketime.
fn behind_gateway(fake: &FakeOpenAi, trusted: &str) -> Option<(Mcp, Clock, TempDir)> {
    let dir = temp_dir("gateway");
    let yaml = format!(
        "server: {{http: {{trusted_proxies: ['{trusted}'], identity_header: X-Forwarded-User, oauth: {{calls_per_minute: 3}}}}}}\n"
    );
    let opts = Opts::http(&fake.url)
        .config(&dir, &yaml)
        .env("MCP_HTTP_TOKEN", TOKEN)
        .arg("--log-format")
        .arg("json");
    let (opts, clock) = opts.frozen_clock("2026-11-26 12:00:10")?;
    Some((Mcp::spawn(opts), clock, dir))
}

fn call(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"what changed?"}}})
}

/// POSTs `message` with the token, the 2025-11-25 header and `extra` headers.
fn post(c: &mut HttpConn, message: &Value, extra: &[(&str, &str)]) -> HttpResponse {
    let auth = format!("Bearer {TOKEN}");
    let mut headers = vec![
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    headers.extend_from_slice(extra);
    c.post(message, &headers)
}

fn answered_ok(r: &HttpResponse) {
    assert_eq!(r.status, 200);
    let reply = r.json();
    assert!(
        reply["result"]["structuredContent"].is_object(),
        "not answered: {reply}"
    );
}

/// Stops `server` and returns its call log lines, checking no secret was logged.
fn call_lines(server: Mcp) -> Vec<Value> {
    call_lines_without(server, &[])
}

/// As [`call_lines`], checking that none of `tokens` was logged either.
fn call_lines_without(mut server: Mcp, tokens: &[&str]) -> Vec<Value> {
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(server.wait_exit(PATIENCE).code(), Some(0));
    let stderr = server.stderr_to_end();
    for secret in [PLANTED_KEY, TOKEN].iter().chain(tokens) {
        assert!(!stderr.contains(secret), "{secret} was logged:\n{stderr}");
    }
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "call")
        .collect()
}

fn metrics(addr: std::net::SocketAddr) -> String {
    let mut m = HttpConn::open(addr);
    m.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
            .as_bytes(),
    );
    String::from_utf8(m.response().body).unwrap()
}

pub fn a_trusted_gateway_names_the_user_for_limits_tasks_spend_and_the_call_log() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &answered()));
    let Some((server, _clock, _dir)) = behind_gateway(&fake, "127.0.0.1") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let alice = [
        ("X-Forwarded-User", "alice@example.com"),
        ("X-Forwarded-For", "198.51.100.1, 203.0.113.7"),
    ];
    answered_ok(&post(&mut c, &call(1), &alice));
    answered_ok(&post(&mut c, &call(2), &alice));

    // Bob, a modern client naming its application, is another identity.
    let mut modern_call = modern(
        json!(3),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    );
    modern_call["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] =
        json!({"name": "gateway-test-app", "version": "1.2.3"});
    let auth = format!("Bearer {TOKEN}");
    let mut headers: Vec<(&str, String)> = modern_headers(&modern_call);
    headers.push(("Authorization", auth.clone()));
    headers.push(("X-Forwarded-User", "bob".into()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let r = c.post(&modern_call, &headers);
    assert_eq!(r.status, 200);
    assert!(
        r.json()["result"]["structuredContent"].is_object(),
        "{}",
        r.json()
    );

    // Alice's third call is a task: hers, not bob's.
    let task_call = json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}});
    let created = post(&mut c, &task_call, &alice).json();
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let get = json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":task_id}});
    let as_bob = post(&mut c, &get, &[("X-Forwarded-User", "bob")]).json();
    assert!(
        as_bob.get("error").is_some(),
        "bob sees alice's task: {as_bob}"
    );
    let as_alice = post(&mut c, &get, &alice).json();
    assert!(as_alice["result"]["status"].is_string(), "{as_alice}");

    // Her fourth call meets her own limit of 3 a minute; bob's count is his own.
    let refused = post(&mut c, &call(6), &alice).json();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let details = &refused["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(
        (details["scope"].as_str(), details["client"].as_str()),
        (Some("client"), Some("x-forwarded-user:alice@example.com")),
        "{refused}"
    );

    // A malformed identity from the trusted proxy: 400 naming the header.
    let long = "a".repeat(257);
    for bad in [long.as_str(), "", "al\u{1}ice"] {
        let r = post(&mut c, &call(7), &[("X-Forwarded-User", bad)]);
        assert_eq!(r.status, 400, "{bad:?}");
        let text = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(text.contains("x-forwarded-user"), "{text}");
    }
    // The header never stands in for the credential.
    let mut bare = HttpConn::open(addr);
    let r = bare.post(
        &call(8),
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("X-Forwarded-User", "alice@example.com"),
        ],
    );
    assert_eq!(r.status, 401);

    // OpenAI was told which user, by hash: the same for alice's three calls, another for
    // bob's, never a name.
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        4,
        "the refused and malformed calls never left"
    );
    let ids = |i: usize| {
        let body = &requests[i].body;
        (
            body["safety_identifier"].as_str().unwrap().to_owned(),
            body["prompt_cache_key"].as_str().unwrap().to_owned(),
        )
    };
    let (a, b, t, bob) = (ids(0), ids(1), ids(3), ids(2));
    assert_eq!((&a, &a), (&b, &t), "stable per identity");
    assert_ne!(a.0, bob.0);
    assert_ne!(a.1, bob.1);
    assert_ne!(a.0, a.1);
    for id in [&a.0, &a.1, &bob.0, &bob.1] {
        assert!(
            id.len() <= 64 && !id.contains("alice") && !id.contains("bob"),
            "{id}"
        );
    }

    let text = metrics(addr);
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 0"),
        "{text}"
    );
    assert!(
        text.contains("client=\"x-forwarded-user:alice@example.com\"")
            && text.contains("client=\"x-forwarded-user:bob\""),
        "{text}"
    );

    let lines = call_lines(server);
    let alices: Vec<&Value> = lines
        .iter()
        .filter(|l| l["client"] == "x-forwarded-user:alice@example.com")
        .collect();
    assert_eq!(alices.len(), 4, "{lines:?}");
    for line in &alices {
        assert_eq!(line["credential"], "gateway", "{line}");
        assert_eq!(
            line["remote"], "203.0.113.7",
            "the hop the gateway saw: {line}"
        );
    }
    let bobs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["client"] == "x-forwarded-user:bob")
        .collect();
    assert_eq!(bobs.len(), 1, "{lines:?}");
    assert_eq!(
        (bobs[0]["app"].as_str(), bobs[0]["app_version"].as_str()),
        (Some("gateway-test-app"), Some("1.2.3"))
    );
    assert_eq!(
        bobs[0]["remote"], "127.0.0.1",
        "no X-Forwarded-For: the peer"
    );
}

pub fn an_identity_header_from_an_untrusted_peer_names_nobody_and_is_counted() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &answered()));
    let Some((server, _clock, _dir)) = behind_gateway(&fake, "192.0.2.0/24") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let spoofed = [
        ("X-Forwarded-User", "alice@example.com"),
        ("X-Forwarded-For", "203.0.113.7"),
    ];
    answered_ok(&post(&mut c, &call(1), &spoofed));
    // Not the proxy's: not judged either, so not refused.
    answered_ok(&post(&mut c, &call(2), &[("X-Forwarded-User", "")]));
    answered_ok(&post(&mut c, &call(3), &[]));

    let text = metrics(addr);
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 2"),
        "{text}"
    );
    assert!(!text.contains("alice"), "{text}");
    // All three are the default client's: one user for OpenAI too.
    let requests = fake.requests();
    let first = &requests[0].body["safety_identifier"];
    assert!(first.is_string());
    assert!(requests
        .iter()
        .all(|r| &r.body["safety_identifier"] == first));

    let lines = call_lines(server);
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        assert_eq!(line["client"], "default", "{line}");
        assert_eq!(line["credential"], "token", "{line}");
        assert_eq!(line["remote"], "127.0.0.1", "{line}");
    }
}

const GW_TOKEN: &str = "PLANTED-gw-token-the-gateways-own";
const CI_TOKEN: &str = "PLANTED-ci-token-a-tenants-own";

/// A server whose clients file names the gateway (`gw`, `gateway: true`, which also
/// reads `/metrics`) and a tenant (`ci`, one call a minute), trusting the test's own
/// address (127.0.0.1) as the gateway's; the single token is set too. `None` without
/// libfaketime.
fn beside_a_tenant(fake: &FakeOpenAi) -> Option<(Mcp, Clock, TempDir)> {
    let dir = temp_dir("gateway-tenant");
    let clients = format!(
        "clients:\n  - name: gw\n    token_sha256: {}\n    gateway: true\n    metrics: true\n  - name: ci\n    token_sha256: {}\n    calls_per_minute: 1\n",
        sha256_hex(GW_TOKEN),
        sha256_hex(CI_TOKEN)
    );
    std::fs::write(dir.join("clients.yaml"), clients).unwrap();
    let yaml = "server: {http: {clients_file: clients.yaml, trusted_proxies: ['127.0.0.1'], identity_header: X-Forwarded-User, oauth: {calls_per_minute: 3}}}\n";
    let opts = Opts::http(&fake.url)
        .config(&dir, yaml)
        .env("MCP_HTTP_TOKEN", TOKEN)
        .arg("--log-format")
        .arg("json");
    let (opts, clock) = opts.frozen_clock("2026-11-26 12:00:10")?;
    Some((Mcp::spawn(opts), clock, dir))
}

/// POSTs `message` with `token`, the 2025-11-25 header and `extra` headers.
fn post_with(
    c: &mut HttpConn,
    token: &str,
    message: &Value,
    extra: &[(&str, &str)],
) -> HttpResponse {
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", auth.as_str()),
    ];
    headers.extend_from_slice(extra);
    c.post(message, &headers)
}

pub fn only_the_gateways_credential_names_the_user_another_tenants_header_is_ignored() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &answered()));
    let Some((server, _clock, _dir)) = beside_a_tenant(&fake) else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let alice = [("X-Forwarded-User", "alice")];

    // The gateway names alice: her task.
    let task_call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query":"q"},"task":{}}});
    let created = post_with(&mut c, GW_TOKEN, &task_call, &alice).json();
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let on_task = |id: u64, method: &str| json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task_id}});
    let hers = post_with(&mut c, GW_TOKEN, &on_task(2, "tasks/result"), &alice).json();
    assert!(
        hers["result"]["structuredContent"].is_object(),
        "the gateway reads alice's result for her: {hers}"
    );

    // ci, at the gateway's address with a valid token of its own, claims to be alice:
    // it stays ci, and alice's task is not ci's.
    for (id, method) in [(3, "tasks/get"), (4, "tasks/result")] {
        let theirs = post_with(&mut c, CI_TOKEN, &on_task(id, method), &alice).json();
        assert!(
            theirs.get("error").is_some() && !theirs.to_string().contains("structuredContent"),
            "ci read alice's task by naming her: {theirs}"
        );
    }
    // Nor does the single token speak for users once a clients file names the gateway.
    let shared = post_with(&mut c, TOKEN, &on_task(5, "tasks/get"), &alice).json();
    assert!(shared.get("error").is_some(), "{shared}");

    // ci rotates the header: r0 is its one call this minute, r1 and r2 meet ci's limit.
    answered_ok(&post_with(
        &mut c,
        CI_TOKEN,
        &call(6),
        &[("X-Forwarded-User", "r0")],
    ));
    for (id, user) in [(7, "r1"), (8, "r2")] {
        let refused = post_with(&mut c, CI_TOKEN, &call(id), &[("X-Forwarded-User", user)]).json();
        assert_eq!(refused["result"]["isError"], true, "{user}: {refused}");
        let details = &refused["result"]["_meta"]["com.github.openai-responses-mcp/error"];
        assert_eq!(
            (
                details["limit"].as_str(),
                details["scope"].as_str(),
                details["client"].as_str()
            ),
            (Some("calls_per_minute"), Some("client"), Some("ci")),
            "{user}: {refused}"
        );
    }
    // A malformed header beside ci's token is ignored like any other of its headers.
    let r = post_with(
        &mut c,
        CI_TOKEN,
        &json!({"jsonrpc":"2.0","id":9,"method":"ping"}),
        &[("X-Forwarded-User", "")],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());

    // The gateway's header still names users: bob is his own identity, under his limit.
    answered_ok(&post_with(
        &mut c,
        GW_TOKEN,
        &call(10),
        &[("X-Forwarded-User", "bob")],
    ));
    // Without the header, the gateway's request is its own client's.
    answered_ok(&post_with(&mut c, GW_TOKEN, &call(11), &[]));

    assert_eq!(fake.requests().len(), 4, "alice's task, r0, bob, gw");
    let mut m = HttpConn::open(addr);
    m.send_raw(
        format!(
            "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {GW_TOKEN}\r\n\r\n"
        )
        .as_bytes(),
    );
    let text = String::from_utf8(m.response().body).unwrap();
    // ci's six requests with the header, and the single token's one.
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 7"),
        "{text}"
    );
    for nobody in [
        "x-forwarded-user:r0",
        "x-forwarded-user:r1",
        "x-forwarded-user:r2",
    ] {
        assert!(!text.contains(nobody), "{nobody} became a client:\n{text}");
    }

    let lines = call_lines_without(server, &[GW_TOKEN, CI_TOKEN]);
    let by =
        |client: &str| -> Vec<&Value> { lines.iter().filter(|l| l["client"] == client).collect() };
    let cis = by("ci");
    assert_eq!(cis.len(), 3, "{lines:?}");
    for line in &cis {
        assert_eq!(line["credential"], "clients_file", "{line}");
    }
    for (client, credential) in [
        ("x-forwarded-user:alice", "gateway"),
        ("x-forwarded-user:bob", "gateway"),
        ("gw", "clients_file"),
    ] {
        let found = by(client);
        assert_eq!(found.len(), 1, "{client}: {lines:?}");
        assert_eq!(found[0]["credential"], credential, "{client}");
    }
    assert_eq!(lines.len(), 6, "{lines:?}");
}

/// OAuth mode: a verified token names its own identity. The gateway may prove itself
/// with one, as the identity a clients-file client marked `gateway: true` claims
/// (`rs-client` here); beside any other identity's token (a named client's, `ed-client`,
/// or one of its own, `ps-client`) or the single token, the header is ignored and
/// counted.
pub fn an_oauth_token_names_its_own_identity_unless_its_client_is_the_gateway() {
    use super::oauth::{Provider, STATIC};
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &answered()));
    let dir = temp_dir("gateway-oauth");
    std::fs::write(
        dir.join("clients.yaml"),
        "clients:\n  - name: edward\n    identity: ed-client\n  - name: gw\n    identity: rs-client\n    gateway: true\n",
    )
    .unwrap();
    let issuer = &idp.issuer;
    let config = format!(
        "server:\n  http:\n    clients_file: clients.yaml\n    public_url: http://127.0.0.1:{port}\n    trusted_proxies: ['127.0.0.1']\n    identity_header: X-Forwarded-User\n    oauth:\n      issuer: {issuer}\n      scopes: [mcp:answer]\n      wait_ms: 3000\n"
    );
    let server = Mcp::spawn(
        Opts::http(&fake.url)
            .config(&dir, &config)
            .arg("--listen")
            .arg(&format!("127.0.0.1:{port}"))
            .env("MCP_HTTP_TOKEN", STATIC)
            .arg("--log-format")
            .arg("json"),
    );
    let addr = listening(&server);
    let mut c = HttpConn::open(addr);
    let gateway = idp.token("rs-client", &resource);
    let named = idp.token("ed-client", &resource);
    let own = idp.token("ps-client", &resource);
    for (id, token, user) in [
        (1, gateway.as_str(), "alice"),
        (2, named.as_str(), "bob"),
        (3, own.as_str(), "carol"),
        (4, STATIC, "dave"),
    ] {
        answered_ok(&post_with(
            &mut c,
            token,
            &call(id),
            &[("X-Forwarded-User", user)],
        ));
    }
    let mut m = HttpConn::open(addr);
    m.send_raw(
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {STATIC}\r\n\r\n")
            .as_bytes(),
    );
    let text = String::from_utf8(m.response().body).unwrap();
    assert!(
        text.contains("openai_responses_mcp_identity_header_ignored_total 3"),
        "{text}"
    );
    for client in [
        "x-forwarded-user:alice",
        "edward",
        "sub:ps-client",
        "default",
    ] {
        assert!(
            text.contains(&format!("client=\"{client}\"")),
            "{client} not in:\n{text}"
        );
    }
    for nobody in ["bob", "carol", "dave"] {
        assert!(!text.contains(nobody), "{nobody} became a client:\n{text}");
    }
    let lines = call_lines_without(server, &[&gateway, &named, &own]);
    let credential = |client: &str| {
        lines
            .iter()
            .find(|l| l["client"] == client)
            .map(|l| l["credential"].clone())
    };
    assert_eq!(
        credential("x-forwarded-user:alice"),
        Some(json!("gateway")),
        "{lines:?}"
    );
    assert_eq!(credential("edward"), Some(json!("oauth")), "{lines:?}");
    assert_eq!(
        credential("sub:ps-client"),
        Some(json!("oauth")),
        "{lines:?}"
    );
    assert_eq!(credential("default"), Some(json!("token")), "{lines:?}");
}
