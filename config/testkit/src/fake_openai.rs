//! A loopback HTTP/1.1 server that plays the OpenAI Responses API: it records every
//! request and answers from a script. Connections are kept alive like the real API.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub raw_body: Vec<u8>,
    /// Which accepted connection carried it (0-based).
    pub connection: usize,
    /// When the whole request had arrived.
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to do with a request.
pub enum Action {
    /// Answer after `delay`.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        delay: Duration,
    },
    /// Never answer; wait until the client closes the connection.
    Hang,
    /// Send the status line and headers promising `len` bytes, then `sent`, then reset.
    Truncate { len: usize, sent: Vec<u8> },
    /// Answer one byte at a time, `interval` apart.
    Trickle { body: Vec<u8>, interval: Duration },
    /// Answer 200 with a chunked body, one write per chunk of `size` bytes.
    Chunked { body: Vec<u8>, size: usize },
    /// Answer 200 with `body`, then close the connection without saying so beforehand.
    RespondAndClose { body: Vec<u8> },
    /// Answer 200 `text/event-stream`, chunked: `body` in pieces of `size` bytes,
    /// `interval` apart, then end as `then` says.
    Stream {
        body: Vec<u8>,
        size: usize,
        interval: Duration,
        then: StreamThen,
    },
}

/// How a streamed answer ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamThen {
    /// The last chunk: the body ends and the connection can be reused.
    End,
    /// The connection is dropped (a cut stream).
    Cut,
    /// Nothing more is sent; the connection stays until the client closes it, which is
    /// recorded in [`FakeOpenAi::closed`].
    Hang,
}

impl Action {
    /// A whole event stream, in pieces of `size` bytes, `interval` apart.
    pub fn stream(body: &[u8], size: usize, interval: Duration) -> Action {
        Action::Stream {
            body: body.to_vec(),
            size,
            interval,
            then: StreamThen::End,
        }
    }
}

impl Action {
    pub fn json(status: u16, body: &[u8]) -> Action {
        Action::Respond {
            status,
            headers: Vec::new(),
            body: body.to_vec(),
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Action {
        if let Action::Respond { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    pub fn after(mut self, d: Duration) -> Action {
        if let Action::Respond { delay, .. } = &mut self {
            *delay = d;
        }
        self
    }
}

type Handler = dyn Fn(&Recorded, usize) -> Action + Send + Sync;
type LookupHandler = dyn Fn(&Recorded) -> Action + Send + Sync;

/// The servers' own model lookups (`GET …/models/{id}`, after startup and daily), kept
/// apart from the requests a test causes: recorded in `lookups`, answered by their own
/// handler (404 unless a test sets one), never counted in the handler's index.
#[derive(Clone, Default)]
struct Lookups {
    seen: Arc<Mutex<Vec<Recorded>>>,
    answer: Arc<Mutex<Option<Arc<LookupHandler>>>>,
    /// The handler gets them like any request (a fake playing a provider for `doctor`).
    passed: Arc<AtomicBool>,
}

impl Lookups {
    fn is_lookup(&self, r: &Recorded) -> bool {
        r.method == "GET" && r.path.contains("/models/") && !self.passed.load(Ordering::SeqCst)
    }

    fn answer(&self, r: &Recorded) -> Action {
        self.seen.lock().unwrap().push(r.clone());
        let answer = self.answer.lock().unwrap().clone();
        match answer {
            Some(f) => f(r),
            None => Action::json(
                404,
                br#"{"error":{"message":"this fake knows no models","type":"invalid_request_error","code":"model_not_found"}}"#,
            ),
        }
    }
}

pub struct FakeOpenAi {
    pub url: String,
    lookups: Lookups,
    requests: Arc<Mutex<Vec<Recorded>>>,
    connections: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    /// When each hung request saw its connection closed.
    closed: Arc<Mutex<Vec<(usize, Instant)>>>,
}

impl FakeOpenAi {
    /// Starts a server whose `handler` gets each request and its index.
    pub fn start(
        handler: impl Fn(&Recorded, usize) -> Action + Send + Sync + 'static,
    ) -> FakeOpenAi {
        FakeOpenAi::start_with(handler, None)
    }

    /// Starts an HTTPS server with a certificate for 127.0.0.1 issued by a fresh test CA;
    /// returns the server and the CA certificate (PEM) a client must trust.
    pub fn start_tls(
        handler: impl Fn(&Recorded, usize) -> Action + Send + Sync + 'static,
    ) -> (FakeOpenAi, String) {
        let ca = crate::tls::TestCa::new();
        let server = FakeOpenAi::start_tls_with(&ca, handler);
        (server, ca.pem().to_owned())
    }

    /// Starts an HTTPS server with a certificate issued by `ca`.
    pub fn start_tls_with(
        ca: &crate::tls::TestCa,
        handler: impl Fn(&Recorded, usize) -> Action + Send + Sync + 'static,
    ) -> FakeOpenAi {
        FakeOpenAi::start_with(handler, Some(ca.server_config()))
    }

    fn start_with(
        handler: impl Fn(&Recorded, usize) -> Action + Send + Sync + 'static,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> FakeOpenAi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{}/v1", listener.local_addr().unwrap());
        let handler: Arc<Handler> = Arc::new(handler);
        let server = FakeOpenAi {
            url,
            lookups: Lookups::default(),
            requests: Arc::default(),
            connections: Arc::default(),
            in_flight: Arc::default(),
            max_in_flight: Arc::default(),
            closed: Arc::default(),
        };
        let lookups = server.lookups.clone();
        let (requests, connections, in_flight, max_in_flight, closed) = (
            server.requests.clone(),
            server.connections.clone(),
            server.in_flight.clone(),
            server.max_in_flight.clone(),
            server.closed.clone(),
        );
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_nodelay(true);
                let n = connections.fetch_add(1, Ordering::SeqCst);
                let conn = Conn {
                    lookups: lookups.clone(),
                    handler: handler.clone(),
                    requests: requests.clone(),
                    in_flight: in_flight.clone(),
                    max_in_flight: max_in_flight.clone(),
                    closed: closed.clone(),
                    index: n,
                };
                let tls = tls.clone();
                thread::spawn(move || match tls {
                    Some(config) => {
                        let Ok(session) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        conn.serve_on(rustls::StreamOwned::new(session, stream));
                    }
                    None => conn.serve(stream),
                });
            }
        });
        server
    }

    /// Model lookups go to the handler like any request (for a fake that plays a provider's
    /// `/models` to `doctor`).
    pub fn passing_lookups(self) -> FakeOpenAi {
        self.lookups.passed.store(true, Ordering::SeqCst);
        self
    }

    /// Answers the servers' model lookups with `answer`.
    pub fn answer_lookups(&self, answer: impl Fn(&Recorded) -> Action + Send + Sync + 'static) {
        *self.lookups.answer.lock().unwrap() = Some(Arc::new(answer));
    }

    /// The model lookups received so far.
    pub fn lookups(&self) -> Vec<Recorded> {
        self.lookups.seen.lock().unwrap().clone()
    }

    /// Always answers with `body`.
    pub fn fixed(status: u16, body: Vec<u8>) -> FakeOpenAi {
        FakeOpenAi::start(move |_, _| Action::json(status, &body))
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Connections that carried a request of the test's (a connection that carried only
    /// the server's model lookups does not count).
    pub fn connections(&self) -> usize {
        let used: std::collections::BTreeSet<usize> =
            self.requests().iter().map(|r| r.connection).collect();
        used.len()
    }

    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn closed(&self) -> Vec<(usize, Instant)> {
        self.closed.lock().unwrap().clone()
    }

    /// Waits until `n` requests have arrived.
    pub fn wait_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let start = Instant::now();
        loop {
            let r = self.requests();
            if r.len() >= n || start.elapsed() > timeout {
                return r;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

struct Conn {
    lookups: Lookups,
    handler: Arc<Handler>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    closed: Arc<Mutex<Vec<(usize, Instant)>>>,
    index: usize,
}

impl Conn {
    fn serve(self, mut stream: TcpStream) {
        let mut first = [0u8; 1];
        if stream.peek(&mut first).is_ok() && first[0] == 0x16 {
            // A TLS ClientHello: answer in plain text, as a plain HTTP server does.
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            thread::sleep(Duration::from_millis(200));
            return;
        }
        self.serve_on(stream);
    }

    /// Serves requests on one connection, plain or TLS.
    fn serve_on<S: Read + Write>(self, stream: S) {
        let mut reader = BufReader::new(stream);
        loop {
            let Some(request) = read_request(&mut reader, self.index) else {
                return;
            };
            if request.method == "CONNECT" {
                // Play an HTTP proxy: open the tunnel, then serve what comes through it.
                self.requests.lock().unwrap().push(request);
                if reader
                    .get_mut()
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .is_err()
                {
                    return;
                }
                continue;
            }
            if self.lookups.is_lookup(&request) {
                let action = self.lookups.answer(&request);
                if !self.act(action, &mut reader, usize::MAX) {
                    return;
                }
                continue;
            }
            let index = {
                let mut all = self.requests.lock().unwrap();
                all.push(request.clone());
                all.len() - 1
            };
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            let action = (self.handler)(&request, index);
            let keep = self.act(action, &mut reader, index);
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            if !keep {
                return;
            }
        }
    }

    /// Performs `action`; false when the connection is finished.
    fn act<S: Read + Write>(
        &self,
        action: Action,
        reader: &mut BufReader<S>,
        index: usize,
    ) -> bool {
        match action {
            Action::Respond {
                status,
                headers,
                body,
                delay,
            } => respond(reader.get_mut(), status, headers, &body, delay),
            Action::Hang => {
                self.wait_for_close(reader, index);
                false
            }
            Action::Truncate { len, sent } => {
                truncate(reader.get_mut(), len, &sent);
                // Returning drops the connection, which closes it mid-body.
                false
            }
            Action::Chunked { body, size } => chunked(reader.get_mut(), &body, size),
            Action::Stream {
                body,
                size,
                interval,
                then,
            } => self.stream(reader, index, &body, size, interval, then),
            Action::RespondAndClose { body } => {
                respond_and_close(reader.get_mut(), &body);
                false
            }
            Action::Trickle { body, interval } => {
                self.trickle(reader.get_mut(), index, &body, interval)
            }
        }
    }

    /// Reads until the client closes the connection, then records when it did.
    fn wait_for_close<S: Read + Write>(&self, reader: &mut BufReader<S>, index: usize) {
        let mut buf = [0u8; 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        self.record_closed(index);
    }

    fn record_closed(&self, index: usize) {
        self.closed.lock().unwrap().push((index, Instant::now()));
    }

    /// `Action::Stream`: false when the connection is finished.
    fn stream<S: Read + Write>(
        &self,
        reader: &mut BufReader<S>,
        index: usize,
        body: &[u8],
        size: usize,
        interval: Duration,
        then: StreamThen,
    ) -> bool {
        let writer = reader.get_mut();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n";
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            return false;
        }
        for chunk in body.chunks(size.max(1)) {
            thread::sleep(interval);
            if write_chunk(writer, chunk, "").is_err() {
                self.record_closed(index);
                return false;
            }
        }
        match then {
            StreamThen::End => writer.write_all(b"0\r\n\r\n").is_ok() && writer.flush().is_ok(),
            StreamThen::Cut => false,
            StreamThen::Hang => {
                self.wait_for_close(reader, index);
                false
            }
        }
    }

    /// `Action::Trickle`: false when the client went away mid-body.
    fn trickle(
        &self,
        writer: &mut impl Write,
        index: usize,
        body: &[u8],
        interval: Duration,
    ) -> bool {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            return false;
        }
        for &b in body {
            thread::sleep(interval);
            if writer
                .write_all(&[b])
                .and_then(|()| writer.flush())
                .is_err()
            {
                self.record_closed(index);
                return false;
            }
        }
        true
    }
}

/// `Action::Respond`: false when the write failed.
fn respond(
    writer: &mut impl Write,
    status: u16,
    headers: Vec<(String, String)>,
    body: &[u8],
    delay: Duration,
) -> bool {
    if !delay.is_zero() {
        thread::sleep(delay);
    }
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    // One write: a separate small write for the body would wait for a delayed ACK.
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    writer.write_all(&out).is_ok() && writer.flush().is_ok()
}

/// `Action::Truncate`: promises `len` bytes and sends only `sent`.
fn truncate(writer: &mut impl Write, len: usize, sent: &[u8]) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n"
    );
    let _ = writer.write_all(head.as_bytes());
    let _ = writer.write_all(sent);
    let _ = writer.flush();
}

/// `Action::Chunked`: false when a write failed.
fn chunked(writer: &mut impl Write, body: &[u8], size: usize) -> bool {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return false;
    }
    for chunk in body.chunks(size.max(1)) {
        if write_chunk(writer, chunk, ";ext=1").is_err() {
            return false;
        }
    }
    writer.write_all(b"0\r\nx-trailer: done\r\n\r\n").is_ok() && writer.flush().is_ok()
}

/// `Action::RespondAndClose`: the whole answer; the caller then drops the connection.
fn respond_and_close(writer: &mut impl Write, body: &[u8]) {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    let _ = writer.write_all(&out).and_then(|()| writer.flush());
}

fn read_request<S: Read + Write>(reader: &mut BufReader<S>, connection: usize) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path), Some("HTTP/1.1")) = (parts.next(), parts.next(), parts.next())
    else {
        // Not HTTP (a TLS ClientHello, say): answer in plain text as real servers do.
        let _ = reader.get_mut().write_all(
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        return None;
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_owned());
        if k == "content-length" {
            length = v.parse().ok()?;
        }
        headers.push((k, v));
    }
    let mut raw_body = vec![0u8; length];
    reader.read_exact(&mut raw_body).ok()?;
    let body = serde_json::from_slice(&raw_body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
        raw_body,
        connection,
        at: Instant::now(),
    })
}

/// Writes `chunk` as one chunk of a chunked body (with extension `ext`, as `;name=value`
/// or empty) and flushes it.
fn write_chunk(writer: &mut impl Write, chunk: &[u8], ext: &str) -> std::io::Result<()> {
    let mut out = format!("{:x}{ext}\r\n", chunk.len()).into_bytes();
    out.extend_from_slice(chunk);
    out.extend_from_slice(b"\r\n");
    writer.write_all(&out)?;
    writer.flush()
}

/// The `response` object the stream's own `response.completed` event carries.
pub fn completed_response(stream: &[u8]) -> Vec<u8> {
    let line = stream
        .split(|&b| b == b'\n')
        .filter_map(|l| l.strip_prefix(b"data: "))
        .find(|d| d.starts_with(br#"{"type":"response.completed""#))
        .unwrap();
    let event: serde_json::Value = serde_json::from_slice(line).unwrap();
    event["response"].to_string().into_bytes()
}

/// OpenAI background mode, played: `POST /responses` with `"background": true` answers
/// `queued` at once with a new id; `GET /responses/{id}` says `queued`, then
/// `in_progress`, then (once `ready_after` has passed since creation) gives `finished`
/// with that id; `POST /responses/{id}/cancel` cancels a response not yet finished. An
/// unknown id is a 404 like the API's. Ids are shared by every clone, so two servers (or
/// a restarted one) pointed at the same fake see the same responses.
#[derive(Clone)]
pub struct Background {
    responses: Arc<Mutex<Vec<(String, Instant, bool)>>>,
    finished: Arc<Value>,
    ready_after: Duration,
}

impl Background {
    /// Responses that finish as `finished` (a Responses API body) after `ready_after`.
    pub fn new(finished: &[u8], ready_after: Duration) -> Background {
        Background {
            responses: Arc::default(),
            finished: Arc::new(serde_json::from_slice(finished).expect("a JSON response")),
            ready_after,
        }
    }

    /// Starts a fake that serves these responses.
    pub fn serve(&self) -> FakeOpenAi {
        let me = self.clone();
        FakeOpenAi::start(move |r, _| me.answer(r))
    }

    /// What this fake answers to `r` (for handlers that add to it).
    pub fn answer_for(&self, r: &Recorded) -> Action {
        self.answer(r)
    }

    fn answer(&self, r: &Recorded) -> Action {
        let path = r.path.split('?').next().unwrap_or_default();
        let tail = path.rsplit_once("/responses").map(|(_, t)| t).unwrap_or("");
        let mut responses = self.responses.lock().unwrap();
        if r.method == "POST" && tail.is_empty() {
            if r.body["background"] != true {
                return Action::json(400, br#"{"error":{"message":"this fake serves background requests only","type":"invalid_request_error"}}"#);
            }
            let id = format!("resp_bg_{}", responses.len() + 1);
            responses.push((id.clone(), Instant::now(), false));
            return Action::json(200, &self.state(&id, "queued"));
        }
        let (id, cancel) = match tail.strip_prefix('/') {
            Some(rest) => match rest.strip_suffix("/cancel") {
                Some(id) => (id.to_owned(), true),
                None => (rest.to_owned(), false),
            },
            None => return Action::json(404, b"{}"),
        };
        let Some(entry) = responses.iter_mut().find(|(known, _, _)| *known == id) else {
            let body = format!(
                r#"{{"error":{{"message":"No response found with id '{id}'.","type":"invalid_request_error","param":null,"code":null}}}}"#
            );
            return Action::json(404, body.as_bytes());
        };
        let ready = entry.1.elapsed() >= self.ready_after;
        if cancel && !ready {
            entry.2 = true;
        }
        if entry.2 {
            return Action::json(200, &self.state(&id, "cancelled"));
        }
        if ready {
            let mut body = (*self.finished).clone();
            body["id"] = id.into();
            body["background"] = true.into();
            return Action::json(200, body.to_string().as_bytes());
        }
        let status = if entry.1.elapsed() < self.ready_after / 2 {
            "queued"
        } else {
            "in_progress"
        };
        Action::json(200, &self.state(&id, status))
    }

    fn state(&self, id: &str, status: &str) -> Vec<u8> {
        serde_json::json!({"id": id, "object": "response", "status": status, "background": true,
            "model": self.finished["model"], "output": [], "usage": null})
        .to_string()
        .into_bytes()
    }
}
