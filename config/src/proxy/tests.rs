use super::*;

fn route(vars: &[(&str, &str)], base_url: &str) -> Result<ProxyRoute, ConfigError> {
    let env: Env = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    resolve_proxy(&env, base_url)
}

fn via(vars: &[(&str, &str)]) -> ProxyUrl {
    match route(vars, "https://api.openai.com/v1") {
        Ok(ProxyRoute::Via { proxy, .. }) => proxy,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_first_variable_that_parses_wins_in_ureqs_order() {
    assert_eq!(route(&[], "https://x/v1").unwrap(), ProxyRoute::Direct);
    let p = via(&[("HTTP_PROXY", "http://p:3128"), ("https_proxy", "q:8080")]);
    assert_eq!(
        (p.kind, p.host.as_str(), p.port),
        (ProxyKind::Http, "q", 8080)
    );
    let p = via(&[
        ("ALL_PROXY", "ftp://x"),
        ("HTTP_PROXY", "http://P.example/"),
    ]);
    assert_eq!(
        (p.host.as_str(), p.port),
        ("p.example", 80),
        "unusable values are skipped"
    );
    let p = via(&[("HTTPS_PROXY", "socks5h://s")]);
    assert_eq!(
        (p.kind, p.port),
        (ProxyKind::Socks5 { remote_dns: true }, 1080)
    );
    let p = via(&[("HTTPS_PROXY", "https://[::1]")]);
    assert_eq!(
        (p.kind, p.host.as_str(), p.port),
        (ProxyKind::Https, "::1", 443)
    );
}

#[test]
fn socks4_is_refused_rather_than_bypassed() {
    let e = route(&[("ALL_PROXY", "socks4://p:1080")], "https://x/v1").unwrap_err();
    assert!(e.to_string().contains("ALL_PROXY"), "{e}");
    assert!(e.to_string().contains("socks5://"), "{e}");
}

#[test]
fn no_proxy_bypasses_and_says_so() {
    let r = route(
        &[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "127.0.0.1")],
        "http://127.0.0.1:9/v1",
    );
    assert_eq!(
        r.unwrap(),
        ProxyRoute::Bypassed {
            variable: "HTTPS_PROXY",
            by: Bypass::NoProxy,
        }
    );
}

/// Issue 47's review (F3): a plain http base URL on this machine went through the proxy,
/// which read the key; `NO_PROXY=127.0.0.0/8` did not exempt it.
#[test]
fn plain_http_to_this_machine_never_goes_through_a_proxy() {
    let proxy = [("HTTPS_PROXY", "http://127.0.0.1:18401")];
    for url in [
        "http://127.0.0.1:18101/v1",
        "http://127.8.9.10/v1",
        "http://localhost:11434/v1",
        "http://[::1]:4010/v1",
    ] {
        assert_eq!(
            route(&proxy, url).unwrap(),
            ProxyRoute::Bypassed {
                variable: "HTTPS_PROXY",
                by: Bypass::Loopback,
            },
            "{url}"
        );
        assert_eq!(warning(&route(&proxy, url).unwrap(), url), None);
    }
    // TLS to this machine: the proxy sees only the CONNECT, as asked.
    let tls = route(&proxy, "https://127.0.0.1:18101/v1").unwrap();
    assert!(tls.proxy().is_some(), "{tls:?}");
    assert_eq!(warning(&tls, "https://127.0.0.1:18101/v1"), None);
    // Plain http to another machine through a proxy is allowed, and warned about.
    let url = "http://user:pw@gw.example:8080/v1/tok";
    let via = route(&proxy, url).unwrap();
    assert!(via.proxy().is_some(), "{via:?}");
    let said = warning(&via, url).unwrap();
    assert!(
        said.starts_with("openai.base_url (http://gw.example:8080) is plain http and goes through the proxy in HTTPS_PROXY (http://127.0.0.1:18401)")
            && said.contains("the API key included")
            && said.contains("use an https:// URL"),
        "{said}"
    );
    assert!(!said.contains("pw") && !said.contains("tok"), "{said}");
}

#[test]
fn credentials_are_decoded_kept_and_masked() {
    let p = via(&[("HTTP_PROXY", "http://Aladdin:open%20sesame@p:3128")]);
    assert_eq!(p.credentials(), Some(("Aladdin", "open sesame")));
    assert_eq!(p.to_string(), "http://***@p:3128");
    assert!(!format!("{p:?}").contains("sesame"));
    assert_eq!(p.expose_url(), "http://Aladdin:open%20sesame@p:3128");
    assert_eq!(
        route(&[("HTTP_PROXY", "http://u:%0d%0aX@p:1")], "https://x/v1").unwrap(),
        ProxyRoute::Direct,
        "credentials that would break a header are refused"
    );
}

#[test]
fn no_proxy_matching() {
    let b = bypasses_proxy;
    assert!(b("http://127.0.0.1:8080/v1", "localhost,127.0.0.1"));
    assert!(b("https://api.openai.com/v1", ".openai.com"));
    assert!(b("https://api.openai.com/v1", "*.openai.com"));
    assert!(b("https://api.openai.com/v1", "api.openai.com:443"));
    assert!(b("https://x.example/v1", "*"));
    assert!(!b("https://api.openai.com/v1", "openai.co,example.com"));
    assert!(!b("https://api.openai.com/v1", ""));
    assert!(!b("https://notopenai.com/v1", ".openai.com"));
    assert!(b("http://[::1]:9/v1", "::1"));
    assert!(
        b("http://[::1]:9/v1", "0:0::1"),
        "one address, two spellings"
    );
}

#[test]
fn no_proxy_takes_cidr_ranges() {
    let b = bypasses_proxy;
    assert!(b("http://127.0.0.1:8080/v1", "127.0.0.0/8"));
    assert!(b("https://10.1.2.3/v1", "example.com, 10.0.0.0/8"));
    assert!(b("https://192.168.7.9/v1", "192.168.0.0/16"));
    assert!(b("https://[fd00::7]:443/v1", "fd00::/8"));
    assert!(b("https://10.9.9.9/v1", "0.0.0.0/0"));
    assert!(b("https://10.0.0.1/v1", "10.0.0.1/32"));
    assert!(!b("https://11.1.2.3/v1", "10.0.0.0/8"));
    assert!(!b("https://10.0.0.2/v1", "10.0.0.1/32"));
    assert!(!b("https://[::1]/v1", "127.0.0.0/8"), "families differ");
    assert!(!b("https://10.1.2.3/v1", "10.0.0.0/33"), "no such range");
    assert!(!b("https://10.1.2.3/v1", "10.0.0.0/x"));
    assert!(
        !b("https://ten.example/v1", "10.0.0.0/8"),
        "a range matches addresses, not names"
    );
}
