//! A raw HTTP/1.1 client for the `--http` tests: it writes exactly the bytes a test
//! gives (hostile ones included) and reads responses the way a strict client would,
//! checking framing, so that a response the server gets wrong fails the test.

use crate::{Mcp, Opts, PATIENCE};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The address the binary started with `--http` says it listens on.
pub fn listening(mcp: &Mcp) -> SocketAddr {
    announced(mcp, "listening on http://", "/mcp")
}

/// The address the binary started with `--metrics-listen` says serves `/metrics`.
pub fn metrics_listening(mcp: &Mcp) -> SocketAddr {
    announced(mcp, "metrics on http://", "/metrics")
}

/// The address of the one stderr line `prefix` ADDR `suffix` (plain, or the `message` of
/// a JSON log line), waiting for it.
fn announced(mcp: &Mcp, prefix: &str, suffix: &str) -> SocketAddr {
    let start = Instant::now();
    loop {
        let stderr = mcp.stderr();
        // Only whole lines: stderr is read as it is written, a line may be half in.
        let whole = stderr.rsplit_once('\n').map_or("", |(done, _)| done);
        // With JSON logs the line is an object whose `message` is the same text.
        let message = |l: &str| -> Option<String> {
            if l.starts_with('{') {
                let v: Value = serde_json::from_str(l).ok()?;
                (v["target"] == "listening").then(|| v["message"].as_str().map(str::to_owned))?
            } else {
                Some(l.to_owned())
            }
        };
        let lines: Vec<String> = whole
            .lines()
            .filter_map(message)
            .filter(|l| l.starts_with(prefix))
            .collect();
        if let Some(line) = lines.first() {
            assert_eq!(lines.len(), 1, "one {prefix} line: {stderr}");
            let addr = line
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .unwrap_or_else(|| panic!("the line is {line:?}"));
            return addr.parse().unwrap();
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no {prefix} line; stderr:\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Opts {
    /// Serves HTTP on a free loopback port.
    pub fn http(url: &str) -> Opts {
        Opts {
            args: vec!["--http".into(), "--listen".into(), "127.0.0.1:0".into()],
            ..Opts::upstream(url)
        }
    }
}

/// One response as read off the wire.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    /// Names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was chunked and ended with its last chunk.
    pub chunked: bool,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    /// The JSON-RPC messages of the response: its events when it is an event stream,
    /// else its JSON body (none when empty).
    pub fn messages(&self) -> Vec<Value> {
        if self.header("content-type") == Some("text/event-stream") {
            return events(&self.body);
        }
        if self.body.is_empty() {
            return Vec::new();
        }
        vec![self.json()]
    }
}

/// The `data:` payloads of an event stream, as JSON.
pub fn events(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let data: Vec<&str> = e
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            serde_json::from_str(&data.join("\n")).unwrap_or_else(|err| panic!("{err}: {e:?}"))
        })
        .collect()
}

/// A kept-alive connection.
pub struct HttpConn {
    pub stream: TcpStream,
    pub addr: SocketAddr,
    buf: Vec<u8>,
}

impl HttpConn {
    pub fn open(addr: SocketAddr) -> HttpConn {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        HttpConn {
            stream,
            addr,
            buf: Vec::new(),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// POSTs `body` to `/mcp` with the usual headers plus `extra`.
    pub fn post(&mut self, body: &Value, extra: &[(&str, &str)]) -> HttpResponse {
        self.send_raw(&post_bytes(self.addr, body, extra));
        self.response()
    }

    /// A GET of `path`.
    pub fn get(&mut self, path: &str) -> HttpResponse {
        let bytes = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.addr);
        self.send_raw(bytes.as_bytes());
        self.response()
    }

    /// Reads one whole response.
    pub fn response(&mut self) -> HttpResponse {
        self.try_response().unwrap_or_else(|| {
            panic!(
                "the connection closed before a whole response: {:?}",
                String::from_utf8_lossy(&self.buf)
            )
        })
    }

    /// Reads one whole response; `None` when the connection closes first.
    pub fn try_response(&mut self) -> Option<HttpResponse> {
        loop {
            if let Some((response, used)) = parse_response(&self.buf) {
                self.buf.drain(..used);
                return Some(response);
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Whether the server closed the connection (cleanly) within `wait`.
    pub fn closed_within(&mut self, wait: Duration) -> bool {
        self.stream.set_read_timeout(Some(wait)).unwrap();
        let mut chunk = [0u8; 1024];
        let closed = matches!(self.stream.read(&mut chunk), Ok(0));
        self.stream.set_read_timeout(Some(PATIENCE)).unwrap();
        closed
    }
}

/// The bytes of a POST to `/mcp`: JSON body, accepting both reply forms.
pub fn post_bytes(addr: SocketAddr, body: &Value, extra: &[(&str, &str)]) -> Vec<u8> {
    let body = body.to_string();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    let has = |name: &str| extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !has("content-type") {
        head.push_str("Content-Type: application/json\r\n");
    }
    if !has("accept") {
        head.push_str("Accept: application/json, text/event-stream\r\n");
    }
    for (n, v) in extra {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// One response from the front of `buf` and the bytes it took; `None` until whole.
/// Panics on framing a strict client would refuse.
fn parse_response(buf: &[u8]) -> Option<(HttpResponse, usize)> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&buf[..head_end]).expect("a UTF-8 head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    assert_eq!(
        parts.next(),
        Some("HTTP/1.1"),
        "status line {status_line:?}"
    );
    let status: u16 = parts.next().and_then(|s| s.parse().ok()).expect("a status");
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap_or_else(|| panic!("header {l:?}"));
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let rest = &buf[head_end..];
    if status == 100 {
        return Some((
            HttpResponse {
                status,
                headers,
                body: Vec::new(),
                chunked: false,
            },
            head_end,
        ));
    }
    if find("transfer-encoding").as_deref() == Some("chunked") {
        assert!(find("content-length").is_none(), "both framings");
        let (body, used) = parse_chunked(rest)?;
        let response = HttpResponse {
            status,
            headers,
            body,
            chunked: true,
        };
        return Some((response, head_end + used));
    }
    let len: usize = find("content-length")
        .map(|v| v.parse().expect("a numeric length"))
        .unwrap_or_else(|| panic!("no framing on a {status} response"));
    if rest.len() < len {
        return None;
    }
    let response = HttpResponse {
        status,
        headers,
        body: rest[..len].to_vec(),
        chunked: false,
    };
    Some((response, head_end + len))
}

/// A chunked body from the front of `rest` and the bytes it took; `None` until whole.
/// Panics on framing a strict client would refuse.
fn parse_chunked(rest: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let line_end = rest[at..].windows(2).position(|w| w == b"\r\n")? + at;
        let size_text = std::str::from_utf8(&rest[at..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.trim(), 16)
            .unwrap_or_else(|_| panic!("chunk size {size_text:?}"));
        let data = line_end + 2;
        if size == 0 {
            if rest.len() < data + 2 {
                return None;
            }
            assert_eq!(&rest[data..data + 2], b"\r\n", "the last chunk ends");
            return Some((body, data + 2));
        }
        if rest.len() < data + size + 2 {
            return None;
        }
        body.extend_from_slice(&rest[data..data + size]);
        assert_eq!(&rest[data + size..data + size + 2], b"\r\n", "a chunk ends");
        at = data + size + 2;
    }
}

/// The headers a 2026-07-28 request carries, from its body.
pub fn modern_headers(message: &Value) -> Vec<(&'static str, String)> {
    let mut headers = vec![("MCP-Protocol-Version", "2026-07-28".to_owned())];
    if let Some(method) = message["method"].as_str() {
        headers.push(("Mcp-Method", method.to_owned()));
    }
    let named = message["params"]["name"]
        .as_str()
        .or_else(|| message["params"]["taskId"].as_str());
    if let Some(name) = named {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    headers
}
