use super::*;
use responses_mcp_core::Destination;
use responses_mcp_host::client::header_lines;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

fn client() -> Upstream {
    with_proxy(None)
}

fn with_proxy(proxy: Option<responses_mcp_config::proxy::ProxyUrl>) -> Upstream {
    Upstream {
        headers: header_lines(&[("Authorization", Some("Bearer sk-test-secret"))]),
        bare: header_lines(&[]),
        key: Some(b"sk-test-secret".to_vec()),
        connector: Connector::new(proxy, None),
        pool: Pool::default(),
    }
}

/// Reads one request (head and Content-Length body); `None` at EOF.
fn read_request(reader: &mut BufReader<std::net::TcpStream>) -> Option<Vec<u8>> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

#[test]
fn a_kept_alive_connection_closed_before_answering_is_retried_on_a_new_one() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        // First connection: answer one request, then read the next and close unanswered.
        let (first, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(first);
        read_request(&mut reader).unwrap();
        reader.get_mut().write_all(OK).unwrap();
        read_request(&mut reader).unwrap();
        drop(reader);
        // Second connection: answer.
        let (second, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(second);
        let body = read_request(&mut reader).unwrap();
        reader.get_mut().write_all(OK).unwrap();
        body
    });
    let client = client();
    smol::block_on(async {
        for body in [&b"one"[..], b"two"] {
            let reply = client.send(&url, body.to_vec()).await.unwrap();
            assert_eq!((reply.status, reply.body.as_slice()), (200, &b"ok"[..]));
        }
    });
    assert_eq!(server.join().unwrap(), b"two");
}

#[test]
fn a_connection_that_broke_mid_answer_is_not_retried() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn);
        read_request(&mut reader).unwrap();
        reader
            .get_mut()
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
            .unwrap();
        drop(reader);
        listener.set_nonblocking(true).unwrap();
        thread::sleep(Duration::from_millis(100));
        listener.accept().is_ok()
    });
    let error = smol::block_on(client().send(&url, b"{}".to_vec())).unwrap_err();
    assert_eq!(error.kind, TransportErrorKind::Io);
    assert!(error.detail.contains("closed before"), "{}", error.detail);
    assert!(!server.join().unwrap(), "no second connection");
}

#[test]
fn bodies_echoing_the_key_are_scrubbed_and_headers_sent_in_one_write() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses?x=1", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 4096];
        let n = conn.read(&mut buf).unwrap();
        buf.truncate(n);
        let echo = b"{\"auth\":\"Bearer sk-test-secret\"}";
        let head = format!("HTTP/1.1 401 No\r\ncontent-length: {}\r\n\r\n", echo.len());
        conn.write_all(head.as_bytes()).unwrap();
        conn.write_all(echo).unwrap();
        buf
    });
    let reply = smol::block_on(client().send(&url, b"{\"q\":1}".to_vec())).unwrap();
    assert_eq!(reply.status, 401);
    assert_eq!(reply.body, b"{\"auth\":\"Bearer ***\"}");
    let request = String::from_utf8(server.join().unwrap()).unwrap();
    let addr = url.split('/').nth(2).unwrap();
    assert_eq!(
        request,
        format!(
            "POST /v1/responses?x=1 HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: openai-responses-mcp/{}\r\nContent-Type: application/json\r\nAccept: application/json\r\nAuthorization: Bearer sk-test-secret\r\nContent-Length: 7\r\n\r\n{{\"q\":1}}",
            responses_mcp_config::VERSION
        ),
        "the whole request arrives in the first read"
    );
}

#[test]
fn failures_before_any_request_name_their_kind() {
    let block = |url: &str| smol::block_on(client().send(url, b"{}".to_vec())).unwrap_err();
    let refused = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        block(&format!("http://{addr}/v1"))
    };
    assert_eq!(refused.kind, TransportErrorKind::Connect);
    assert_eq!(block("ftp://x/v1").kind, TransportErrorKind::Invalid);
    assert_eq!(
        header_lines(&[("OpenAI-Project", Some("p\r\nX-Injected: 1"))]),
        Err("the API key, organization or project has a character an HTTP header cannot carry")
    );
}

#[test]
fn a_plain_http_server_on_an_https_url_is_a_tls_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/v1/responses", listener.local_addr().unwrap());
    thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let _ = conn.read(&mut [0u8; 1024]);
        let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        thread::sleep(Duration::from_millis(200));
    });
    let error = smol::block_on(client().send(&url, b"{}".to_vec())).unwrap_err();
    assert_eq!(error.kind, TransportErrorKind::Tls, "{}", error.detail);
    assert!(error.detail.starts_with("TLS: "), "{}", error.detail);
}

fn via_proxy(proxy_url: &str) -> Upstream {
    use responses_mcp_config::proxy::{resolve_proxy, ProxyRoute};
    let env = [("HTTP_PROXY".to_owned(), proxy_url.to_owned())].into();
    match resolve_proxy(&env, "https://api.openai.invalid/v1") {
        Ok(ProxyRoute::Via { proxy, .. }) => with_proxy(Some(proxy)),
        other => panic!("{other:?}"),
    }
}

/// Reads a head (up to the blank line) byte by byte, so nothing after it is consumed.
fn read_head(conn: &mut std::net::TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap() == 1 {
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

#[test]
fn requests_tunnel_through_an_http_proxy_with_its_own_credentials() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://user:p%40ss@{}", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let connect = read_head(&mut conn);
        conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .unwrap();
        let request = read_head(&mut conn);
        let mut body = [0u8; 2];
        conn.read_exact(&mut body).unwrap();
        conn.write_all(OK).unwrap();
        (connect, request)
    });
    let reply = smol::block_on(
        via_proxy(&proxy_url).send("http://api.example.invalid/v1/responses", b"{}".to_vec()),
    )
    .unwrap();
    assert_eq!(reply.body, b"ok");
    let (connect, request) = server.join().unwrap();
    assert_eq!(
        connect,
        format!(
            "CONNECT api.example.invalid:80 HTTP/1.1\r\nHost: api.example.invalid:80\r\nUser-Agent: {}\r\nProxy-Authorization: Basic dXNlcjpwQHNz\r\n\r\n",
            responses_mcp_config::USER_AGENT
        ),
        "the proxy sees its own credentials, never the API key"
    );
    assert!(request.starts_with("POST /v1/responses HTTP/1.1\r\nHost: api.example.invalid\r\n"));
    assert!(request.contains("Authorization: Bearer sk-test-secret"));
}

#[test]
fn a_proxy_refusing_the_tunnel_is_a_connect_failure_that_names_the_status() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        read_head(&mut conn);
        let _ = conn.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\ncontent-length: 0\r\n\r\n",
        );
    });
    let error = smol::block_on(
        via_proxy(&proxy_url).send("https://api.example.invalid/v1/responses", b"{}".to_vec()),
    )
    .unwrap_err();
    assert_eq!(error.kind, TransportErrorKind::Connect);
    assert!(
        error.detail.contains("HTTP 407") && error.detail.contains("credentials"),
        "{}",
        error.detail
    );
}

#[test]
fn host_names_are_resolved_and_unknown_ones_fail_to_connect() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    thread::spawn(move || {
        for conn in listener.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            thread::spawn(move || {
                let mut reader = BufReader::new(conn.unwrap());
                while read_request(&mut reader).is_some() {
                    reader.get_mut().write_all(OK).unwrap();
                }
            });
        }
    });
    let client = client();
    smol::block_on(async {
        for _ in 0..2 {
            let url = format!("http://localhost:{port}/v1/responses");
            let reply = client.send(&url, b"{}".to_vec()).await.unwrap();
            assert_eq!(reply.body, b"ok");
        }
        let error = client
            .send("http://no-such-host.invalid/v1", b"{}".to_vec())
            .await
            .unwrap_err();
        assert_eq!(error.kind, TransportErrorKind::Connect, "{}", error.detail);
        assert!(
            error.detail.contains("no-such-host.invalid"),
            "{}",
            error.detail
        );
    });
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second call reused the connection"
    );
}

#[test]
fn a_get_carries_no_body_and_reads_the_stored_response() {
    for to in [Destination::Provider, Destination::IdentityProvider] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/v1/responses/resp_1",
            listener.local_addr().unwrap()
        );
        let server = thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 4096];
            let n = conn.read(&mut buf).unwrap();
            buf.truncate(n);
            let body = b"{\"id\":\"resp_1\",\"status\":\"queued\"}";
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
            conn.write_all(head.as_bytes()).unwrap();
            conn.write_all(body).unwrap();
            buf
        });
        let delivered =
            smol::block_on(client().deliver(HttpMethod::Get, to, &url, Vec::new(), None));
        let Ok(Delivered::Whole(reply)) = delivered else {
            panic!("not a whole reply")
        };
        assert_eq!(reply.body, b"{\"id\":\"resp_1\",\"status\":\"queued\"}");
        let request = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(
            request.starts_with("GET /v1/responses/resp_1 HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(request.ends_with("Content-Length: 0\r\n\r\n"), "{request}");
        // The identity provider never sees the model provider's key.
        assert_eq!(
            request.contains("Bearer sk-test-secret"),
            to == Destination::Provider,
            "{request}"
        );
    }
}
