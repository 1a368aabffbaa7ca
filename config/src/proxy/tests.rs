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
            variable: "HTTPS_PROXY"
        }
    );
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
}
