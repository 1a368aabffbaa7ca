use super::*;
use crate::serve::exchange::Caller;

fn request(headers: &[(&str, &str)]) -> Request {
    Request {
        method: "POST".into(),
        target: "/mcp".into(),
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: Vec::new(),
        keep_alive: true,
    }
}

fn local() -> Access {
    let mut hosts: Vec<String> = LOOPBACK_NAMES.iter().map(|s| (*s).to_owned()).collect();
    hosts.push("127.0.0.1:8787".into());
    Access {
        allowed_hosts: Some(hosts),
        allowed_origins: vec!["https://app.example.com".into()],
        loopback_origins: true,
        token: None,
        clients: None,
        mcp: true,
        oauth: None,
        gateway: Default::default(),
    }
}

#[test]
fn echoed_values_lose_control_characters_so_no_escape_spells_the_token() {
    let access = Access {
        allowed_hosts: Some(vec!["localhost".into()]),
        allowed_origins: Vec::new(),
        loopback_origins: false,
        token: Token::new("secret-token-1234"),
        clients: None,
        mcp: true,
        oauth: None,
        gateway: Default::default(),
    };
    let shown = access.shown("a\u{c}ecret-token-1234 and secret-token-1234\u{1f}");
    assert_eq!(shown, "'a?ecret-token-1234 and ***?'");
    let json = serde_json::json!({ "m": shown }).to_string();
    assert!(!json.contains("secret-token-1234"), "{json}");
}

#[test]
fn loopback_hosts_and_origins_pass() {
    for host in [
        "localhost:8787",
        "127.0.0.1:8787",
        "[::1]:8787",
        "LOCALHOST",
        "127.0.0.1",
    ] {
        assert_eq!(
            local().check(&request(&[("host", host)])),
            Ok(Caller::Client(ClientId::DEFAULT)),
            "{host}"
        );
    }
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1",
        "https://app.example.com/",
    ] {
        let r = request(&[("host", "localhost:8787"), ("origin", origin)]);
        assert_eq!(
            local().check(&r),
            Ok(Caller::Client(ClientId::DEFAULT)),
            "{origin}"
        );
    }
}

#[test]
fn rebinding_names_are_refused_with_403() {
    for host in [
        "evil.example",
        "evil.example:8787",
        "localhost.evil.example",
        "127.0.0.2:8787",
        "",
    ] {
        let e = local().check(&request(&[("host", host)])).unwrap_err();
        assert_eq!(e.status(), 403);
        assert!(e.to_string().contains("allowed_hosts"), "{e}");
    }
    for origin in [
        "http://evil.example",
        "null",
        "http://localhost.evil.example",
        "file://",
    ] {
        let r = request(&[("host", "localhost"), ("origin", origin)]);
        let e = local().check(&r).unwrap_err();
        assert_eq!(e, Denied::Origin(format!("'{origin}'")));
        assert_eq!(e.status(), 403);
    }
    let strict = Access {
        loopback_origins: false,
        ..local()
    };
    let r = request(&[("host", "localhost"), ("origin", "http://localhost:6274")]);
    assert!(strict.check(&r).is_err());
}

#[test]
fn tokens_are_required_and_never_shown() {
    let access = Access {
        token: Token::new("s3cret-token-value"),
        clients: None,
        allowed_hosts: None,
        ..local()
    };
    assert_eq!(format!("{:?}", access.token), "Some(Token(***))");
    type Case<'a> = (&'a [(&'a str, &'a str)], Result<ClientId, Denied>);
    let cases: &[Case] = &[
        (&[], Err(Denied::Token(true))),
        (
            &[("authorization", "Basic s3cret-token-value")],
            Err(Denied::Token(true)),
        ),
        (
            &[("authorization", "Bearer s3cret-token-valu")],
            Err(Denied::Token(false)),
        ),
        (
            &[("authorization", "Bearer s3cret-token-valuee")],
            Err(Denied::Token(false)),
        ),
        (
            &[("authorization", "Bearer S3cret-token-value")],
            Err(Denied::Token(false)),
        ),
        (
            &[("authorization", "bearer  s3cret-token-value")],
            Ok(ClientId::DEFAULT),
        ),
    ];
    for (headers, expected) in cases {
        let got = access.check(&request(headers)).map(|c| match c {
            Caller::Client(id) => id,
            Caller::Bearer(_) => unreachable!("no OAuth here"),
        });
        assert_eq!(&got, expected, "{headers:?}");
        if let Err(e) = got {
            assert_eq!(e.status(), 401);
            assert!(!e.to_string().contains("s3cret"));
        }
    }
    assert!(Token::new("  ").is_none());
    // A token sent where a name belongs is masked in the refusal.
    let strict = Access {
        allowed_hosts: Some(vec!["localhost".into()]),
        ..access
    };
    let e = strict
        .check(&request(&[("host", "s3cret-token-value")]))
        .unwrap_err();
    assert_eq!(e, Denied::Host("'***'".into()));
}

/// A stand-in digest for the tests (the runtime passes SHA-256): distinct tokens of
/// up to 32 bytes give distinct digests.
fn pad(token: &[u8]) -> [u8; 32] {
    let mut digest = [0xA5; 32];
    for (d, b) in digest.iter_mut().zip(token) {
        *d ^= b;
    }
    digest[31] ^= u8::try_from(token.len()).unwrap_or(u8::MAX);
    digest
}

#[test]
fn named_clients_are_told_apart_by_their_tokens() {
    let clients = crate::clients::Clients::new(vec![
        crate::clients::NamedClient {
            name: "ci".into(),
            limit: crate::clients::Limit::default(),
            identity: None,
            gateway: false,
        },
        crate::clients::NamedClient {
            name: "alice".into(),
            limit: crate::clients::Limit::default(),
            identity: None,
            gateway: false,
        },
    ])
    .unwrap();
    let (ci, alice) = (clients.id(0).unwrap(), clients.id(1).unwrap());
    let access = Access {
        token: Token::new("shared-token"),
        clients: Some(ClientTokens {
            sha256: pad,
            digests: vec![(ci, pad(b"ci-token")), (alice, pad(b"alice-token"))],
            metrics: vec![],
        }),
        allowed_hosts: None,
        ..local()
    };
    let bearer = |t: &str| request(&[("authorization", &format!("Bearer {t}"))]);
    assert_eq!(access.check(&bearer("ci-token")), Ok(Caller::Client(ci)));
    assert_eq!(
        access.check(&bearer("alice-token")),
        Ok(Caller::Client(alice))
    );
    assert_eq!(
        access.check(&bearer("shared-token")),
        Ok(Caller::Client(ClientId::DEFAULT))
    );
    assert_eq!(access.check(&bearer("ci-tokem")), Err(Denied::Token(false)));
    assert_eq!(access.check(&request(&[])), Err(Denied::Token(true)));
    // A clients file alone requires a token too.
    let only_named = Access {
        token: None,
        ..access.clone()
    };
    assert_eq!(only_named.check(&request(&[])), Err(Denied::Token(true)));
    assert_eq!(
        only_named.check(&bearer("alice-token")),
        Ok(Caller::Client(alice))
    );
    assert!(!format!("{only_named:?}").contains("alice"));
    // A named client's token in a refused Host is not repeated.
    let restricted = Access {
        allowed_hosts: Some(vec!["localhost".into()]),
        ..only_named
    };
    let e = restricted
        .check(&request(&[("host", "evil:alice-token")]))
        .unwrap_err();
    assert_eq!(e, Denied::Host("'evil:***'".into()));
    // Nor one that the cut at 100 characters would free from what it was glued to.
    let host = format!("{}:alice-tokenX", "a:".repeat(44));
    let e = restricted.check(&request(&[("host", &host)])).unwrap_err();
    let Denied::Host(shown) = e else {
        panic!("{e:?}")
    };
    assert_eq!(shown, format!("'{}:'", "a:".repeat(44)));
}
