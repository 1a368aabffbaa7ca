//! Writing HTTP/1.1 responses, sans IO: whole responses with a length, and event streams
//! sent as chunks so that the connection can carry another request after the stream.

/// The interim response to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// The end of an event stream (the last, empty chunk).
pub const STREAM_END: &[u8] = b"0\r\n\r\n";

/// A response head. Header values are the host's; names and values must not carry line
/// breaks (they are checked, and a header that does is dropped rather than split).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyHead {
    /// The status code.
    pub status: u16,
    /// Headers besides the framing ones, which the writer adds.
    pub headers: Vec<(&'static str, String)>,
    /// Whether the connection stays open after this response.
    pub keep_alive: bool,
}

impl ReplyHead {
    /// A head with no headers yet.
    pub fn new(status: u16, keep_alive: bool) -> Self {
        ReplyHead {
            status,
            headers: Vec::new(),
            keep_alive,
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The whole response: this head, `Content-Length` and `body`.
    pub fn with_body(&self, body: &[u8]) -> Vec<u8> {
        let mut out = self.head_bytes(&format!("content-length: {}", body.len()));
        out.extend_from_slice(body);
        out
    }

    /// The head [`with_body`](Self::with_body) would send with a body of `length` bytes,
    /// alone: the answer to `HEAD`.
    pub fn without_body(&self, length: usize) -> Vec<u8> {
        self.head_bytes(&format!("content-length: {length}"))
    }

    /// The head of an event stream; events follow as [`event`]s, then [`STREAM_END`].
    pub fn stream(&self) -> Vec<u8> {
        self.head_bytes("transfer-encoding: chunked")
    }

    fn head_bytes(&self, framing: &str) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        let fits = |s: &str| !s.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0);
        for (name, value) in &self.headers {
            if fits(name) && fits(value) {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        out.push_str(framing);
        out.push_str("\r\n");
        if !self.keep_alive {
            out.push_str("connection: close\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

/// One server-sent event carrying `data` (one JSON-RPC message: no line breaks in
/// serialised JSON, but any are split into `data:` lines so the event stays whole), as
/// a chunk of the stream.
pub fn event(data: &[u8]) -> Vec<u8> {
    let mut event = b"event: message\n".to_vec();
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(line);
        event.push(b'\n');
    }
    event.push(b'\n');
    chunk(&event)
}

/// `bytes` as one chunk of a chunked body.
fn chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

/// The reason phrase for the statuses this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}
