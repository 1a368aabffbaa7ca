//! Upstream requests through every kind of proxy the configuration accepts, against
//! loopback proxies: `https://` (TLS to the proxy, TLS to the origin inside it), SOCKS5
//! with and without credentials, with local and remote name resolution. A plain http
//! origin is named [`ORIGIN_NAME`] (which only the proxies resolve): by a loopback name
//! or address it would never be proxied.

use crate::fake_openai::FakeOpenAi;
use crate::proxies::{TestProxy, ORIGIN_NAME};
use crate::tls::TestCa;
use crate::*;

/// Two calls through `opts`; both must be answered.
fn two_answers(opts: Opts) -> Mcp {
    let fixture: Value = serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    for id in 1..=2 {
        let reply = mcp.call(id, "answer", json!({"query":"q"}));
        assert_eq!(answer_of(&reply)["model"], fixture["model"], "{reply}");
    }
    mcp
}

fn port_of(url: &str) -> &str {
    url.rsplit(':').next().unwrap().trim_end_matches("/v1")
}

/// `ca`'s certificate in a file, and the folder that holds it (kept while it is read).
fn ca_file(ca: &TestCa) -> (TempDir, PathBuf) {
    let dir = temp_dir("proxy-ca");
    let path = dir.join("ca.pem");
    std::fs::write(&path, ca.pem()).unwrap();
    (dir, path)
}

pub fn https_proxy_carries_tls_to_the_origin_inside_tls_to_the_proxy() {
    let ca = TestCa::new();
    let origin = FakeOpenAi::start_tls_with(&ca, |_, _| {
        crate::fake_openai::Action::json(200, &fixture("response-no-search.json"))
    });
    let proxy = TestProxy::https(&ca);
    let (_ca_dir, ca_path) = ca_file(&ca);
    // Only the calls' connections, to compare with the tunnels (model lookups would add one).
    let opts = Opts::upstream(&origin.url)
        .env("HTTPS_PROXY", &proxy.url)
        .env("SSL_CERT_FILE", ca_path.to_str().unwrap())
        .env("OPENAI_MODEL_LOOKUPS", "false");
    two_answers(opts);
    let tunnels = proxy.tunnels();
    assert!(!tunnels.is_empty());
    for t in &tunnels {
        assert_eq!(t.target, format!("127.0.0.1:{}", port_of(&origin.url)));
        assert!(t.opened);
    }
    assert_eq!(origin.requests().len(), 2);
    assert_eq!(
        origin.connections(),
        tunnels.len(),
        "every connection to the origin went through a tunnel"
    );
}

/// The origin's URL by [`ORIGIN_NAME`], which only the test proxies resolve.
fn by_name(origin: &FakeOpenAi) -> String {
    format!("http://{ORIGIN_NAME}:{}/v1", port_of(&origin.url))
}

pub fn https_proxy_tunnels_a_plain_http_origin() {
    let ca = TestCa::new();
    let origin = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let proxy = TestProxy::https(&ca);
    let (_ca_dir, ca_path) = ca_file(&ca);
    let opts = Opts::upstream(&by_name(&origin))
        .env("HTTP_PROXY", &proxy.url)
        .env("SSL_CERT_FILE", ca_path.to_str().unwrap());
    let mut mcp = two_answers(opts);
    let tunnels = proxy.tunnels();
    assert!(!tunnels.is_empty() && tunnels.iter().all(|t| t.opened));
    assert_eq!(
        tunnels[0].target,
        format!("{ORIGIN_NAME}:{}", port_of(&origin.url))
    );
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    let log = mcp.stderr_to_end();
    assert!(
        log.contains("is plain http and goes through the proxy in HTTP_PROXY"),
        "the operator is told the proxy reads the key: {log}"
    );
    assert_eq!(origin.requests().len(), 2);
    assert_eq!(origin.requests()[0].path, "/v1/responses");
}

pub fn socks5h_with_credentials_lets_the_proxy_resolve_the_name() {
    let origin = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let proxy = TestProxy::socks5("socks5h", Some(("alice", "s3cret pw")));
    let proxy_url = proxy.url.replace("s3cret pw", "s3cret%20pw");
    let opts = Opts::upstream(&by_name(&origin)).env("ALL_PROXY", &proxy_url);
    let mcp = two_answers(opts);
    let tunnels = proxy.tunnels();
    assert!(!tunnels.is_empty());
    for t in &tunnels {
        assert_eq!(t.target, format!("{ORIGIN_NAME}:{}", port_of(&origin.url)));
        assert_eq!(
            t.credentials,
            Some(("alice".to_owned(), "s3cret pw".to_owned()))
        );
    }
    assert!(!mcp.stderr().contains("s3cret"));
}

pub fn socks5_resolves_locally_and_carries_tls() {
    let ca = TestCa::new();
    let origin = FakeOpenAi::start_tls_with(&ca, |_, _| {
        crate::fake_openai::Action::json(200, &fixture("response-no-search.json"))
    });
    let proxy = TestProxy::socks5("socks5", None);
    let (_ca_dir, ca_path) = ca_file(&ca);
    let opts = Opts::upstream(&origin.url)
        .env("HTTPS_PROXY", &proxy.url)
        .env("SSL_CERT_FILE", ca_path.to_str().unwrap());
    two_answers(opts);
    let tunnels = proxy.tunnels();
    assert!(!tunnels.is_empty());
    for t in tunnels {
        assert_eq!(t.target, format!("127.0.0.1:{}", port_of(&origin.url)));
        assert_eq!(t.credentials, None);
    }
}

pub fn socks5_with_a_wrong_password_fails_clearly_and_keeps_serving() {
    let origin = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let proxy = TestProxy::socks5("socks5h", Some(("alice", "right")));
    let wrong = proxy.url.replace("right", "wrong");
    let opts = Opts::upstream(&by_name(&origin))
        .env("ALL_PROXY", &wrong)
        .env("OPENAI_MAX_RETRIES", "0");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.to_ascii_lowercase().contains("proxy"), "{message}");
    assert!(!message.contains("wrong") && !mcp.stderr().contains("wrong"));
    assert!(origin.requests().is_empty());
    // The proxy records the refused tunnel on its own thread, maybe after we saw the error.
    let start = Instant::now();
    while proxy.tunnels().is_empty() {
        assert!(start.elapsed() < PATIENCE, "the proxy saw no attempt");
        thread::sleep(Duration::from_millis(5));
    }
    assert!(!proxy.tunnels()[0].opened);
    let pong = mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    assert_eq!(pong["result"], json!({}));
}

/// Issue 47's review (F3): a plain http base URL on this machine went through the proxy,
/// which read the key in the tunnel. It never does now, whatever `NO_PROXY` says.
pub fn a_plain_http_origin_on_this_machine_never_goes_through_a_proxy() {
    let origin = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let proxy = TestProxy::socks5("socks5h", None);
    for url in [
        origin.url.clone(),
        format!("http://localhost:{}/v1", port_of(&origin.url)),
    ] {
        two_answers(Opts::upstream(&url).env("HTTPS_PROXY", &proxy.url));
    }
    assert!(proxy.tunnels().is_empty(), "{:?}", proxy.tunnels());
    let calls = origin.requests();
    let calls = calls.iter().filter(|r| r.path == "/v1/responses");
    assert_eq!(calls.count(), 4, "every call went straight to the origin");
    let home = temp_dir("show-loopback");
    let out = Command::new(crate::binary())
        .arg("--show-config")
        .env_clear()
        .env("HOME", &home)
        .env("OPENAI_BASE_URL", &origin.url)
        .env("HTTPS_PROXY", &proxy.url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let shown: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        shown["proxy"],
        json!({"url": null, "source": "env:HTTPS_PROXY", "bypassed_by": "loopback"})
    );
}

pub fn show_config_names_the_proxy_without_its_credentials() {
    let home = temp_dir("show-proxy");
    let show_config = |var: &str, proxy: &str| {
        Command::new(crate::binary())
            .arg("--show-config")
            .env_clear()
            .env("HOME", &home)
            .env(var, proxy)
            .output()
            .unwrap()
    };
    let out = show_config("HTTPS_PROXY", "socks5h://bob:hunter2@127.0.0.1:1080");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let shown: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        shown["proxy"],
        json!({"url": "socks5h://***@127.0.0.1:1080", "source": "env:HTTPS_PROXY"})
    );
    assert!(!text.contains("hunter2") && !text.contains("bob"));
    let out = show_config("ALL_PROXY", "socks4://127.0.0.1:1080");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("ALL_PROXY") && text.contains("socks5://"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(home);
}
