use super::*;
use responses_mcp_host::client::checked;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

fn client() -> Upstream {
    Upstream::with(
        checked(&[("Authorization", Some("Bearer sk-test-secret"))]),
        Some(b"sk-test-secret".to_vec()),
        None,
        None,
        Duration::from_secs(10),
    )
}

fn request(method: HttpMethod, url: &str) -> HttpRequest {
    HttpRequest {
        attempt: AttemptId(1),
        method,
        url: url.to_owned(),
        body: if method == HttpMethod::Post {
            b"{}".to_vec()
        } else {
            Vec::new()
        },
        to: responses_mcp_core::Destination::Provider,
    }
}

/// Reads one request head (and a `Content-Length` body) from `reader`; `None` when the
/// client closed the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let length = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                .map(|(_, value)| value)
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(head)
}

fn whole(upstream: &Upstream, request: &HttpRequest) -> HttpReply {
    match upstream.send(&upstream.begin(), request, |_| true) {
        Ok(Delivered::Whole(reply)) => reply,
        Ok(Delivered::Streamed) => panic!("streamed"),
        Err(e) => panic!("{e:?}"),
    }
}

#[test]
fn a_get_carries_no_body_and_reads_the_stored_response() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/v1/responses/resp_1",
        listener.local_addr().unwrap()
    );
    let server = thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let head = read_request(&mut reader).unwrap();
        let body = b"{\"id\":\"resp_1\",\"status\":\"queued\"}";
        let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
        (&conn).write_all(reply.as_bytes()).unwrap();
        (&conn).write_all(body).unwrap();
        head
    });
    let reply = whole(&client(), &request(HttpMethod::Get, &url));
    assert_eq!(reply.body, b"{\"id\":\"resp_1\",\"status\":\"queued\"}");
    let head = server.join().unwrap();
    assert!(
        head.starts_with("GET /v1/responses/resp_1 HTTP/1.1\r\n"),
        "{head}"
    );
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("authorization: bearer sk-test-secret\r\n"),
        "{head}"
    );
    assert!(lower.contains("accept: application/json\r\n"), "{head}");
    // A GET sends no body, so it says nothing of one.
    assert!(!lower.contains("content-type"), "{head}");
}

#[test]
fn a_kept_alive_connection_serves_the_next_attempt_and_a_closed_one_is_replaced() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let mut connections = 0;
        // The first connection answers twice then closes; the next one answers once.
        for answers in [2, 1] {
            let (conn, _) = listener.accept().unwrap();
            connections += 1;
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            for _ in 0..answers {
                read_request(&mut reader).unwrap();
                let body = br#"{"echo":"sk-test-secret"}"#;
                let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                (&conn).write_all(reply.as_bytes()).unwrap();
                (&conn).write_all(body).unwrap();
            }
        }
        connections
    });
    let upstream = client();
    let post = request(HttpMethod::Post, &url);
    for _ in 0..3 {
        let reply = whole(&upstream, &post);
        assert_eq!(reply.status, 200);
        // The key a body echoes is scrubbed.
        assert!(!String::from_utf8_lossy(&reply.body).contains("sk-test-secret"));
    }
    assert_eq!(server.join().unwrap(), 2);
}

#[test]
fn an_event_stream_is_handed_over_as_it_arrives() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let (next, wait) = std::sync::mpsc::channel::<()>();
    thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        read_request(&mut reader).unwrap();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        (&conn).write_all(head.as_bytes()).unwrap();
        (&conn).write_all(b"6\r\ndata: \r\n").unwrap();
        // The second piece goes out only once the first was handed over.
        wait.recv().unwrap();
        (&conn).write_all(b"3\r\n{}\n\r\n0\r\n\r\n").unwrap();
    });
    let mut seen = Vec::new();
    let delivered = client().send(
        &Attempt::default(),
        &request(HttpMethod::Post, &url),
        |message| {
            if let Message::Body(_, piece) = &message {
                seen.push(piece.clone());
                let _ = next.send(());
            } else {
                assert!(matches!(
                    message,
                    Message::Head(AttemptId(1), HttpHead { status: 200, .. })
                ));
            }
            true
        },
    );
    assert!(matches!(delivered, Ok(Delivered::Streamed)));
    assert_eq!(seen.concat(), b"data: {}\n");
    assert!(seen.len() >= 2, "{seen:?}");
}

#[test]
fn an_abort_ends_a_blocked_read_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let (read, was_read) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        read_request(&mut reader).unwrap();
        read.send(()).unwrap();
        // Never answers; the client closing the connection ends this read.
        read_request(&mut reader)
    });
    let upstream = client();
    let attempt = upstream.begin();
    let handle = attempt.clone();
    let post = request(HttpMethod::Post, &url);
    let sending = thread::spawn(move || upstream.send(&attempt, &post, |_| true).err());
    was_read.recv().unwrap();
    handle.abort();
    assert!(
        sending.join().unwrap().is_some(),
        "the attempt did not fail"
    );
    assert_eq!(server.join().unwrap(), None, "the connection stayed open");
    // An attempt aborted before it connects never connects.
    let upstream = client();
    let attempt = upstream.begin();
    attempt.clone().abort();
    assert!(upstream
        .send(&attempt, &request(HttpMethod::Get, &url), |_| true)
        .is_err());
}

#[test]
fn credentials_that_would_break_the_head_are_refused_without_repeating_them() {
    let upstream = Upstream::with(
        checked(&[("OpenAI-Project", Some("p\r\nX-Injected: 1"))]),
        None,
        None,
        None,
        Duration::from_secs(1),
    );
    let Err(e) = upstream.send(
        &upstream.begin(),
        &request(HttpMethod::Post, "http://127.0.0.1:9/v1/responses"),
        |_| true,
    ) else {
        panic!("sent")
    };
    assert_eq!(e.kind, TransportErrorKind::Invalid);
    assert!(!e.detail.contains("Injected"), "{}", e.detail);
}

#[test]
fn an_abort_closes_a_connection_taken_from_the_pool() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/responses", listener.local_addr().unwrap());
    let (read, was_read) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        read_request(&mut reader).unwrap();
        (&conn)
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .unwrap();
        // The second attempt comes on the same connection and is never answered.
        read_request(&mut reader).unwrap();
        read.send(()).unwrap();
        read_request(&mut reader)
    });
    let upstream = client();
    assert_eq!(
        whole(&upstream, &request(HttpMethod::Post, &url)).body,
        b"{}"
    );
    let attempt = upstream.begin();
    let handle = attempt.clone();
    let post = request(HttpMethod::Post, &url);
    let sending = thread::spawn(move || upstream.send(&attempt, &post, |_| true).err());
    was_read.recv().unwrap();
    handle.abort();
    assert!(
        sending.join().unwrap().is_some(),
        "the attempt did not fail"
    );
    assert_eq!(server.join().unwrap(), None, "the connection stayed open");
}
