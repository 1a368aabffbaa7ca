//! OAuth mode against a real authorization server: oidc-provider (OpenID Certified, on
//! npm, pinned in `config/testkit/node` and installed by `.ci/test`), started on a
//! loopback port with client credentials, resource indicators and JWT access tokens
//! (`oidc_provider.mjs`). Tokens it issues are admitted as their subject; every forgery
//! and mismatch is refused with the status and challenge the specifications name, and
//! never reaches OpenAI; a provider that cannot be reached is a 503 and `/ready` says so,
//! while static tokens still work; keys rotated at the provider are fetched again.

use super::observability::answered as priced_answer;
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn, HttpResponse};
use crate::*;

pub(super) const STATIC: &str = "PLANTED-oauth-static-token-0123456789";

/// An oidc-provider on `port` issuing tokens for `resource`; killed on drop.
pub(super) struct Provider {
    child: std::process::Child,
    pub(super) issuer: String,
    port: u16,
}

impl Provider {
    /// `None` (after saying why) when the Node packages are missing outside CI.
    pub(super) fn start(port: u16, resource: &str) -> Option<Provider> {
        let Some(modules) = crate::sdk_node_modules() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must install oidc-provider (.ci/test does)"
            );
            eprintln!("skipping: oidc-provider is not installed (run .ci/test)");
            return None;
        };
        let mut child = Command::new("node")
            .arg(format!("{}/oidc_provider.mjs", env!("CARGO_MANIFEST_DIR")))
            .args([&port.to_string(), resource])
            .env("NODE_PATH", modules)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start node");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("provider's first line");
        let issuer = line
            .trim()
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("oidc-provider did not start: {line:?}"))
            .to_owned();
        Some(Provider {
            child,
            issuer,
            port,
        })
    }

    /// The text `GET /test/<path>` answers (a token, or the new kids).
    fn get(&self, path: &str) -> String {
        let mut c = HttpConn::open(([127, 0, 0, 1], self.port).into());
        let r = c.get(&format!("/test/{path}"));
        let text = String::from_utf8_lossy(&r.body).into_owned();
        assert_eq!(r.status, 200, "{path}: {text}");
        text
    }

    pub(super) fn token(&self, client: &str, resource: &str) -> String {
        let scope = if client == "noscope-client" {
            "other"
        } else {
            "mcp:answer"
        };
        self.get(&format!(
            "token?client={client}&resource={resource}&scope={scope}"
        ))
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls `answer` with `Authorization: Bearer <token>`.
pub(super) fn call(c: &mut HttpConn, id: u64, token: &str) -> HttpResponse {
    super::http::answer_with_token(c, id, token)
}

/// A server in OAuth mode for `issuer` on `port` (its public URL that address), with the
/// static token too, and `ed-client` named `edward` in its clients file.
fn server(fake: &FakeOpenAi, port: u16, issuer: &str, tag: &str) -> Mcp {
    server_with(fake, port, issuer, "[mcp:answer]", tag)
}

/// As [`server`], requiring `scopes` (a YAML list).
fn server_with(fake: &FakeOpenAi, port: u16, issuer: &str, scopes: &str, tag: &str) -> Mcp {
    Mcp::spawn(server_opts(fake, port, issuer, scopes, "", tag))
}

/// What [`server_with`] starts, with `more` added under `oauth:`.
pub(super) fn server_opts(
    fake: &FakeOpenAi,
    port: u16,
    issuer: &str,
    scopes: &str,
    more: &str,
    tag: &str,
) -> Opts {
    let dir = temp_dir(tag);
    std::fs::write(
        dir.join("clients.yaml"),
        "clients:\n  - name: edward\n    identity: ed-client\n    calls_per_minute: 100\n",
    )
    .unwrap();
    let wait = match more.contains("wait_ms") {
        true => "",
        false => "      wait_ms: 3000\n",
    };
    let config = format!(
        "server:\n  http:\n    clients_file: clients.yaml\n    public_url: http://127.0.0.1:{port}\n    oauth:\n      issuer: {issuer}\n      scopes: {scopes}\n      refetch_after_ms: 300\n{wait}{more}"
    );
    Opts::http(&fake.url)
        .config(&dir, &config)
        .arg("--listen")
        .arg(&format!("127.0.0.1:{port}"))
        .env("MCP_HTTP_TOKEN", STATIC)
        .arg("--debug")
        .keeping(dir)
}

/// POSTs `message` (2025-11-25) with `token`; the JSON reply.
fn post_as(c: &mut HttpConn, message: &Value, token: &str) -> Value {
    super::http::post_with_token(c, message, token).json()
}

fn challenge(r: &HttpResponse) -> String {
    r.header("www-authenticate").unwrap_or_default().to_owned()
}

pub fn tokens_of_a_real_identity_provider_are_checked_as_the_specifications_say() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let mut mcp = server(&fake, port, &idp.issuer, "oauth");
    let addr = listening(&mcp);
    assert_eq!(addr.port(), port);
    let mut c = HttpConn::open(addr);

    // The protected resource's metadata, at the path-suffixed well-known URL.
    let meta = c.get("/.well-known/oauth-protected-resource/mcp");
    assert_eq!(meta.status, 200);
    let doc = meta.json();
    assert_eq!(doc["resource"], resource.as_str());
    assert_eq!(doc["authorization_servers"], json!([idp.issuer]));
    assert_eq!(doc["scopes_supported"], json!(["mcp:answer"]));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));

    // No token: 401 pointing at the metadata.
    let m = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let r = c.post(&m, &[("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(r.status, 401);
    let expected = format!(
        "Bearer resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:answer\""
    );
    assert_eq!(challenge(&r), expected);

    // Tokens of every allowed algorithm are admitted as their subject.
    let mut tokens = Vec::new();
    for (i, client) in ["rs-client", "ps-client", "es-client", "ed-client"]
        .iter()
        .enumerate()
    {
        let token = idp.token(client, &resource);
        let r = call(&mut c, 10 + i as u64, &token).json();
        assert!(
            r["result"]["structuredContent"].is_object(),
            "{client}: {r}"
        );
        tokens.push(token);
    }
    assert_eq!(fake.requests().len(), 4);
    // The token never goes upstream.
    for request in fake.requests() {
        let auth = request.headers.iter().find(|(n, _)| n == "authorization");
        assert!(auth.is_some_and(|(_, v)| !tokens.iter().any(|t| v.contains(t.as_str()))));
    }

    // Refused, with no upstream request: each with 401 invalid_token, a missing scope 403.
    let other_audience = idp.token("rs-client", "https://elsewhere.example/mcp");
    let other_idp = Provider::start(free_port(), &resource).expect("a second provider");
    let other_issuer = other_idp.token("rs-client", &resource);
    let cases = [
        ("expired", idp.get("forge?kind=expired"), "expired"),
        ("another audience", other_audience, "not for this server"),
        // Its kids are named as this provider's: the signature fails before iss is read.
        ("another issuer", other_issuer, "signature does not verify"),
        (
            "an unknown kid",
            idp.get("forge?kind=unknown-kid"),
            "does not publish",
        ),
        (
            "alg none",
            idp.get("forge?kind=none"),
            "not a JWT signed with",
        ),
        (
            "HS256 keyed with the public key",
            idp.get("forge?kind=hs256"),
            "not accepted",
        ),
        (
            "a tampered payload",
            idp.get("forge?kind=tampered"),
            "signature does not verify",
        ),
    ];
    for (i, (what, token, why)) in cases.iter().enumerate() {
        let r = call(&mut c, 20 + i as u64, token);
        assert_eq!(
            r.status,
            401,
            "{what}: {}",
            String::from_utf8_lossy(&r.body)
        );
        let ch = challenge(&r);
        assert!(
            ch.contains("error=\"invalid_token\"") && ch.contains("resource_metadata="),
            "{what}: {ch}"
        );
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains(why), "{what}: {message}");
    }
    let r = call(&mut c, 30, &idp.token("noscope-client", &resource));
    assert_eq!(r.status, 403);
    assert!(
        challenge(&r).contains("error=\"insufficient_scope\""),
        "{}",
        challenge(&r)
    );
    assert!(r.json()["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("mcp:answer")));
    assert_eq!(fake.requests().len(), 4, "a refused token reached OpenAI");

    // Keys rotated at the provider: a new token is admitted after a refetch.
    let kids = idp.get("rotate");
    assert!(kids.contains("rs256-2"), "{kids}");
    let r = call(&mut c, 40, &idp.token("rs-client", &resource)).json();
    assert!(
        r["result"]["structuredContent"].is_object(),
        "after rotation: {r}"
    );

    // One identity never sees another's tasks.
    let (alice, eve) = (
        idp.token("rs-client", &resource),
        idp.token("es-client", &resource),
    );
    let task_call = json!({"jsonrpc":"2.0","id":50,"method":"tools/call",
        "params":{"name":"answer","arguments":{"query":"q"},"task":{}}});
    let created = post_as(&mut c, &task_call, &alice);
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let get =
        |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"tasks/get","params":{"taskId":task_id}});
    let seen = post_as(&mut c, &get(51), &eve);
    assert!(
        seen["error"].is_object() && seen["result"].is_null(),
        "{seen}"
    );
    let own = post_as(&mut c, &get(52), &alice);
    assert_eq!(own["result"]["taskId"], task_id.as_str(), "{own}");

    // The static token still works beside OAuth.
    let r = call(&mut c, 41, STATIC).json();
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    let ready = c.get("/ready");
    assert_eq!(
        ready.status,
        200,
        "{}",
        String::from_utf8_lossy(&ready.body)
    );

    // Who called: the subject, or the named client that claims it; no token in the log.
    drop(c);
    let kill = Command::new("kill")
        .args(["-TERM", &mcp.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(mcp.wait_exit(PATIENCE).code(), Some(0));
    let log = mcp.stderr_to_end();
    for who in [
        "sub:rs-client",
        "sub:ps-client",
        "sub:es-client",
        "\"edward\"",
    ] {
        assert!(
            log.contains(&format!(
                "\"client\":{}",
                if who.starts_with('"') {
                    who.to_owned()
                } else {
                    format!("\"{who}\"")
                }
            )),
            "{who} not in the call log"
        );
    }
    for token in &tokens {
        assert!(!log.contains(token.as_str()), "a token was logged");
    }
    assert!(!log.contains(STATIC), "the static token was logged");
}

pub fn a_provider_that_cannot_be_reached_is_a_503_and_static_tokens_still_work() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // A provider that issued a token, then went away.
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let token = idp.token("rs-client", &resource);
    let issuer = idp.issuer.clone();
    drop(idp);
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let mcp = server(&fake, port, &issuer, "oauth-down");
    let mut c = HttpConn::open(listening(&mcp));
    let r = call(&mut c, 1, &token);
    assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.header("www-authenticate").is_none());
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("cannot be checked now") && message.contains(&issuer),
        "{message}"
    );
    let ready = c.get("/ready");
    assert_eq!(ready.status, 503);
    assert!(String::from_utf8_lossy(&ready.body).contains("identity provider unreachable"));
    let r = call(&mut c, 2, STATIC).json();
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
    assert_eq!(fake.requests().len(), 1);

    // A provider that takes the connection and never answers: the request waits no
    // longer than wait_ms.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_issuer = format!("http://{}", silent.local_addr().unwrap());
    let held = thread::spawn(move || silent.incoming().take(4).flatten().collect::<Vec<_>>());
    let more = "      wait_ms: 500\n";
    let opts = server_opts(
        &fake,
        free_port(),
        &silent_issuer,
        "[]",
        more,
        "oauth-silent",
    );
    let mcp = Mcp::spawn(opts);
    let mut c = HttpConn::open(listening(&mcp));
    let started = Instant::now();
    let r = call(&mut c, 3, &token);
    assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
    assert!(started.elapsed() < PATIENCE);
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("did not answer within 0.5 s"), "{message}");
    assert_eq!(c.get("/ready").status, 503);
    drop(mcp);
    drop(held);
}

/// The official TypeScript SDK client with `ClientCredentialsProvider` (`v1`: 1.x's
/// `client/auth-extensions`; `v2`: the v2 client's), given `url`, the id and the secret
/// (and `scope`); its report.
fn sdk_client(sdk: &str, url: &str, client: &str, scope: Option<&str>) -> Value {
    let modules = crate::sdk_node_modules().expect("the TypeScript SDKs");
    let secret = format!("secret-{client}");
    let mut command = Command::new("node");
    command
        .arg(format!(
            "{}/sdk_oauth_client.cjs",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args([sdk, url, client, &secret])
        .args(scope)
        .env("NODE_PATH", modules)
        .stderr(std::process::Stdio::null());
    let out = command.output().expect("run node");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|_| panic!("{sdk}: {text}"))
}

pub fn the_typescript_sdks_sign_in_with_client_credentials_alone() {
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    for (scopes, runs) in [
        // v2 follows the challenge's scope; 1.x asks only for the scope it is given.
        (
            "[mcp:answer]",
            vec![("v2", None), ("v1", Some("mcp:answer"))],
        ),
        ("[]", vec![("v1", None)]),
    ] {
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let Some(idp) = Provider::start(free_port(), &resource) else {
            return;
        };
        let mcp = server_with(&fake, port, &idp.issuer, scopes, "oauth-sdk");
        let url = format!("http://{}/mcp", listening(&mcp));
        for (sdk, scope) in runs {
            let report = sdk_client(sdk, &url, "rs-client", scope);
            assert_eq!(
                report["tools"],
                json!(["answer", "answer_detailed", "answer_quick"]),
                "{sdk} {scopes}: {report}"
            );
            assert!(report["structured"].is_object(), "{sdk} {scopes}: {report}");
            assert_eq!(report["isError"], false, "{report}");
        }
    }
}

pub fn claude_code_needs_a_client_id_for_a_provider_without_registration() {
    use super::clients::{client, run};
    let Some(bin) = clients_bin() else { return };
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    let mcp = server(&fake, port, &idp.issuer, "oauth-claude");
    let url = format!("http://{}/mcp", listening(&mcp));
    let home = temp_dir("claude-code-oauth");
    for (name, id) in [("with-id", Some("rs-client")), ("no-id", None)] {
        let mut add = client(&bin, "claude", &home);
        add.args(["mcp", "add", "--transport", "http"]);
        if let Some(id) = id {
            add.args(["--client-id", id]);
        }
        add.args([name, url.as_str()]);
        run(add);
    }
    let listed = run({
        let mut list = client(&bin, "claude", &home);
        list.args(["mcp", "list"]);
        list
    });
    let line = |name: &str| super::clients::listed_line(&listed, name);
    // It read the resource's metadata, found the provider, read its metadata: with a
    // pre-registered id it only waits for the user to sign in; without one it says the
    // provider cannot register it.
    assert!(line("with-id").contains("Needs authentication"), "{listed}");
    let no_id = line("no-id");
    assert!(
        no_id.contains("does not support dynamic client registration"),
        "{no_id}"
    );
    assert_eq!(fake.requests().len(), 0);
    let _ = std::fs::remove_dir_all(home);
}

pub fn each_identity_has_its_own_limits_and_metric_label() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(idp) = Provider::start(free_port(), &resource) else {
        return;
    };
    let fake = FakeOpenAi::start(|_, _| Action::json(200, &priced_answer()));
    // The server's wall clock frozen inside one minute (before the tokens were issued:
    // they carry no nbf), so the minute's count is not cut by its end.
    let opts = server_opts(
        &fake,
        port,
        &idp.issuer,
        "[mcp:answer]",
        "      calls_per_minute: 1\n",
        "oauth-limits",
    );
    let Some((opts, _clock)) = opts.frozen_clock("2026-11-26 23:58:10") else {
        eprintln!("skipping: libfaketime is not installed (run .ci/test)");
        return;
    };
    let mcp = Mcp::spawn(opts);
    let mut c = HttpConn::open(listening(&mcp));
    let (rs, ps, ed) = (
        idp.token("rs-client", &resource),
        idp.token("ps-client", &resource),
        idp.token("ed-client", &resource),
    );
    let ok = |r: &Value| r["result"]["structuredContent"].is_object();
    assert!(ok(&call(&mut c, 1, &rs).json()));
    let refused = call(&mut c, 2, &rs).json();
    let details = &refused["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(details["refusal"], "limit_calls_per_minute", "{refused}");
    assert_eq!(details["scope"], "client", "{refused}");
    // Another identity has a minute of its own; edward (the clients file's name for
    // ed-client) has his own limit of 100.
    assert!(ok(&call(&mut c, 3, &ps).json()));
    for id in 4..7 {
        assert!(ok(&call(&mut c, id, &ed).json()));
    }
    assert_eq!(fake.requests().len(), 5);
    let mut m = HttpConn::open(listening(&mcp));
    m.send_raw(format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {STATIC}\r\n\r\n").as_bytes());
    let text = String::from_utf8_lossy(&m.response().body).into_owned();
    for label in [
        "client=\"sub:rs-client\"",
        "client=\"sub:ps-client\"",
        "client=\"edward\"",
    ] {
        assert!(text.contains(label), "{label} not in /metrics:\n{text}");
    }
}
