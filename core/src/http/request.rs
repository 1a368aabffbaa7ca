//! Reading HTTP/1.1 requests, sans IO: the host feeds what it read from a connection and
//! takes requests out one at a time, pipelined or not.
//!
//! Memory is bounded by the limits plus one read: the host reads more only after
//! [`RequestReader::next_incoming`] said it needs more (`Ok(None)`), so at most one request and
//! one read are buffered. Whatever cut of the bytes into reads, the same requests and the
//! same error come out (fuzz target `http_request`).
//!
//! What is refused, and why, follows RFC 9112 where it asks a server to reject: a
//! `Content-Length` next to `Transfer-Encoding` and conflicting lengths (request
//! smuggling), whitespace before a header's colon, folded header lines, a missing or
//! repeated `Host` in HTTP/1.1, and `Transfer-Encoding` in HTTP/1.0 (6.1). Lines must end
//! in CRLF: a bare LF, which 2.2 lets a server accept, is refused in heads and chunk
//! lines alike (a proxy that reads it otherwise would see other requests). An error ends the connection: the host answers it with
//! [`RequestError::status`] and closes.

use super::chunked::{decode_chunks, Chunk};
use super::head::{closes, content_length, ends_chunked, head_end, is_token, lines, split_header};
use super::response::ReadError;

/// How much one request may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// The request line and headers.
    pub max_head: usize,
    /// The body, after de-chunking.
    pub max_body: usize,
}

/// One request, head and whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method, as sent (methods are case-sensitive).
    pub method: String,
    /// The request target: a path with its query, an absolute URL, or `*`.
    pub target: String,
    /// Every header, names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The client may send another request on this connection.
    pub keep_alive: bool,
}

impl Request {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target's path, without its query.
    pub fn path(&self) -> &str {
        let target = self.target.as_str();
        // An absolute-form target (`http://host/path`, sent to proxies) names its path
        // after the authority.
        let path = match target.split_once("://") {
            Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
            None => target,
        };
        path.split(['?', '#']).next().unwrap_or_default()
    }
}

/// Why a connection's requests cannot be read. Each is answered with its status, then
/// the connection closes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The bytes are not an HTTP/1.x request.
    #[error("malformed request: {0}")]
    Malformed(&'static str),
    /// The request line and headers exceed the head limit.
    #[error("the request head is larger than {0} bytes")]
    HeadTooLarge(usize),
    /// The body exceeds the body limit.
    #[error("the request body is larger than {0} bytes")]
    BodyTooLarge(usize),
    /// A transfer coding other than `chunked`.
    #[error("only the chunked transfer coding is supported")]
    UnsupportedCoding,
    /// An `Expect` other than `100-continue`.
    #[error("only `Expect: 100-continue` is supported")]
    UnsupportedExpectation,
    /// HTTP/2 or later spoken without upgrading, or an unknown version.
    #[error("only HTTP/1.0 and HTTP/1.1 are served")]
    UnsupportedVersion,
}

impl RequestError {
    /// The status to answer with.
    pub fn status(&self) -> u16 {
        match self {
            RequestError::Malformed(_) => 400,
            RequestError::BodyTooLarge(_) => 413,
            RequestError::UnsupportedExpectation => 417,
            RequestError::HeadTooLarge(_) => 431,
            RequestError::UnsupportedCoding => 501,
            RequestError::UnsupportedVersion => 505,
        }
    }
}

/// What the reader has for the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// The client sent `Expect: 100-continue` and waits: write
    /// [`CONTINUE`](super::CONTINUE) before reading the body.
    Continue,
    /// A whole request (its body empty when it was skipped).
    Request(Request),
    /// A request's head is in ([`RequestReader::head`]), none of its body taken yet;
    /// said only by a reader [announcing heads](RequestReader::announcing_heads).
    Head,
    /// The next bytes of a body the host skips ([`RequestReader::skip_body`]), to look
    /// at and drop.
    Skipped(Vec<u8>),
}

/// Reads the requests of one connection.
pub struct RequestReader {
    buf: Vec<u8>,
    state: State,
    limits: RequestLimits,
    /// Say [`Incoming::Head`] once each head is in.
    announce_heads: bool,
}

enum State {
    Head,
    Body {
        head: Head,
        body: Body,
        /// The host will not use the body: it is handed out as it comes
        /// ([`Incoming::Skipped`]), never held.
        skip: bool,
    },
    /// An error was reported; nothing more is read.
    Failed(RequestError),
}

/// A parsed head waiting for its body: the request, its body still empty.
struct Head {
    request: Request,
    /// `Continue` is yet to be reported.
    wants_continue: bool,
}

enum Body {
    Length(usize),
    Chunked {
        decoded: usize,
        chunk: Chunk,
    },
    /// A skipped body that has all come.
    Skipped,
}

impl RequestReader {
    /// A reader for one connection.
    pub fn new(limits: RequestLimits) -> Self {
        RequestReader {
            buf: Vec::new(),
            state: State::Head,
            limits,
            announce_heads: false,
        }
    }

    /// A reader that says [`Incoming::Head`] as soon as each request's head is in, before
    /// any of its body is taken: for a host that judges a request by its head and
    /// [skips](RequestReader::skip_body) the body of one it refuses.
    pub fn announcing_heads(limits: RequestLimits) -> Self {
        RequestReader {
            announce_heads: true,
            ..RequestReader::new(limits)
        }
    }

    /// Adds bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        if !matches!(self.state, State::Failed(_)) {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Bytes held: the part of a request that arrived so far.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The head of the request whose body is being read, once it is all in (its `body`
    /// is empty): enough to decide whether the body is wanted at all.
    pub fn head(&self) -> Option<&Request> {
        match &self.state {
            State::Body { head, .. } => Some(&head.request),
            State::Head | State::Failed(_) => None,
        }
    }

    /// The body of the request whose head is in will not be used: from now on it is
    /// handed out as it comes, as [`Incoming::Skipped`] pieces of at most what one feed
    /// brought, and the request comes out with an empty body. Nothing of it is held.
    pub fn skip_body(&mut self) {
        if let State::Body { skip, .. } = &mut self.state {
            *skip = true;
        }
    }

    /// Whether bytes of a request arrived that no request came out of yet: a connection
    /// closing now cut a request short.
    pub fn in_request(&self) -> bool {
        !self.buf.is_empty() || matches!(self.state, State::Body { .. })
    }

    /// The next thing for the host: `Ok(None)` when it needs more bytes. After an error
    /// the same error comes back: the connection is done.
    pub fn next_incoming(&mut self) -> Result<Option<Incoming>, RequestError> {
        loop {
            match std::mem::replace(&mut self.state, State::Head) {
                State::Failed(e) => {
                    self.state = State::Failed(e.clone());
                    return Err(e);
                }
                State::Head => match self.read_head() {
                    Ok(Some(state)) if self.announce_heads => {
                        self.state = state;
                        return Ok(Some(Incoming::Head));
                    }
                    Ok(Some(state)) => self.state = state,
                    Ok(None) => return Ok(None),
                    Err(e) => return Err(self.fail(e)),
                },
                State::Body {
                    mut head,
                    body,
                    skip,
                } => {
                    let read = if skip {
                        self.skip(body)
                    } else {
                        self.read_body(body)
                    };
                    match read {
                        Ok(Read::Whole(bytes)) => {
                            let mut request = head.request;
                            request.body = bytes;
                            return Ok(Some(Incoming::Request(request)));
                        }
                        Ok(Read::Skipped(bytes, body)) => {
                            self.state = State::Body { head, body, skip };
                            return Ok(Some(Incoming::Skipped(bytes)));
                        }
                        Ok(Read::More(body)) => {
                            let ask = std::mem::take(&mut head.wants_continue);
                            self.state = State::Body { head, body, skip };
                            return Ok(ask.then_some(Incoming::Continue));
                        }
                        Err(e) => return Err(self.fail(e)),
                    };
                }
            }
        }
    }

    fn fail(&mut self, e: RequestError) -> RequestError {
        self.buf = Vec::new();
        self.state = State::Failed(e.clone());
        e
    }

    /// The head, once it is all in: the state that reads its body.
    fn read_head(&mut self) -> Result<Option<State>, RequestError> {
        // RFC 9112 2.2: ignore empty lines before the request line.
        let blank = self
            .buf
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .unwrap_or(self.buf.len());
        self.buf.drain(..blank);
        let max = self.limits.max_head;
        let found = head_end(&self.buf);
        // Only as far as the head, and the limit: the same verdict whatever the reads.
        let scanned = &self.buf[..found.unwrap_or(self.buf.len()).min(max)];
        if bare_lf(scanned) {
            return Err(RequestError::Malformed(BARE_LF));
        }
        let end = match found {
            Some(end) if end <= max => end,
            None if self.buf.len() <= max => return Ok(None),
            _ => return Err(RequestError::HeadTooLarge(max)),
        };
        let (head, body) = parse_head(&self.buf[..end], self.limits.max_body)?;
        self.buf.drain(..end);
        Ok(Some(State::Body {
            head,
            body,
            skip: false,
        }))
    }

    /// The body once it is all in, or the state to wait in.
    fn read_body(&mut self, body: Body) -> Result<Read, RequestError> {
        match body {
            Body::Length(n) if self.buf.len() >= n => {
                let rest = self.buf.split_off(n);
                Ok(Read::Whole(std::mem::replace(&mut self.buf, rest)))
            }
            Body::Length(n) => Ok(Read::More(Body::Length(n))),
            Body::Chunked {
                mut decoded,
                mut chunk,
            } => {
                let max = self.limits.max_body;
                let (used, end) = self.decode(&mut decoded, &mut chunk, max)?;
                self.buf.truncate(used);
                match end {
                    Some(end) => {
                        let rest = self.buf.split_off(end);
                        Ok(Read::Whole(std::mem::replace(&mut self.buf, rest)))
                    }
                    None => Ok(Read::More(Body::Chunked { decoded, chunk })),
                }
            }
            Body::Skipped => Ok(Read::Whole(Vec::new())),
        }
    }

    /// What arrived of a skipped body, handed out (the limit still applies to its
    /// de-chunked size), or its end.
    fn skip(&mut self, body: Body) -> Result<Read, RequestError> {
        match body {
            Body::Length(0) | Body::Skipped => Ok(Read::Whole(Vec::new())),
            Body::Length(n) if self.buf.is_empty() => Ok(Read::More(Body::Length(n))),
            Body::Length(n) => {
                let take = n.min(self.buf.len());
                let bytes = self.buf.drain(..take).collect();
                Ok(Read::Skipped(bytes, Body::Length(n - take)))
            }
            Body::Chunked { decoded, mut chunk } => {
                // `decode` writes what it decodes at the front of the buffer: counted
                // from zero on each call, handed out, and added to what came before.
                let mut fresh = 0;
                let max = self.limits.max_body.saturating_sub(decoded);
                let (used, end) = self.decode(&mut fresh, &mut chunk, max)?;
                self.buf.truncate(used);
                let taken = end.unwrap_or(fresh);
                let bytes: Vec<u8> = self.buf.drain(..taken).collect();
                let next = match end {
                    Some(_) => Body::Skipped,
                    None => Body::Chunked {
                        decoded: decoded + taken,
                        chunk,
                    },
                };
                if bytes.is_empty() && end.is_none() {
                    return Ok(Read::More(next));
                }
                Ok(Read::Skipped(bytes, next))
            }
        }
    }

    fn decode(
        &mut self,
        decoded: &mut usize,
        chunk: &mut Chunk,
        max: usize,
    ) -> Result<(usize, Option<usize>), RequestError> {
        let limit = self.limits.max_body;
        decode_chunks(&mut self.buf, decoded, chunk, max, true).map_err(|e| match e {
            ReadError::TooLarge => RequestError::BodyTooLarge(limit),
            ReadError::Malformed(m) => RequestError::Malformed(m),
            ReadError::Closed => RequestError::Malformed("the body was cut short"),
        })
    }
}

/// What reading a body gave.
enum Read {
    /// The whole body (empty when skipped).
    Whole(Vec<u8>),
    /// A piece of a skipped body, and the state after it.
    Skipped(Vec<u8>, Body),
    /// Nothing yet: the state to wait in.
    More(Body),
}

/// The request line and headers, and how the body is framed.
fn parse_head(bytes: &[u8], max_body: usize) -> Result<(Head, Body), RequestError> {
    let mut lines = lines(bytes);
    let (method, target, http11) = parse_request_line(lines.next().unwrap_or_default())?;
    let mut headers = Vec::new();
    let mut length: Option<usize> = None;
    let mut coded = None;
    let mut close = !http11;
    let mut hosts = 0;
    let mut wants_continue = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = parse_header(line)?;
        match name.as_str() {
            "content-length" => {
                let n = content_length(value.as_bytes())
                    .ok_or(RequestError::Malformed("an invalid content length"))?;
                if length.is_some_and(|m| m != n) {
                    return Err(RequestError::Malformed("conflicting content lengths"));
                }
                length = Some(n);
            }
            "transfer-encoding" => coded = Some(ends_chunked(value.as_bytes())),
            "connection" => close = closes(value.as_bytes(), http11, close),
            "host" => hosts += 1,
            "expect" if http11 => {
                if !value.eq_ignore_ascii_case("100-continue") {
                    return Err(RequestError::UnsupportedExpectation);
                }
                wants_continue = true;
            }
            _ => {}
        }
        headers.push((name, value.to_owned()));
    }
    if coded.is_some() && !http11 {
        // RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing
        // (1.0 has no chunking; a proxy in front may read the body otherwise).
        return Err(RequestError::Malformed(
            "Transfer-Encoding in an HTTP/1.0 request: send Content-Length, or HTTP/1.1",
        ));
    }
    if hosts > 1 || (http11 && hosts == 0) {
        return Err(RequestError::Malformed(
            "an HTTP/1.1 request needs exactly one Host header",
        ));
    }
    let body = match (coded, length) {
        (Some(_), Some(_)) => {
            return Err(RequestError::Malformed(
                "both Content-Length and Transfer-Encoding",
            ))
        }
        (Some(false), None) => return Err(RequestError::UnsupportedCoding),
        (Some(true), None) => Body::Chunked {
            decoded: 0,
            chunk: Chunk::Size,
        },
        (None, Some(n)) if n > max_body => return Err(RequestError::BodyTooLarge(max_body)),
        (None, n) => Body::Length(n.unwrap_or(0)),
    };
    let empty = matches!(body, Body::Length(0));
    Ok((
        Head {
            request: Request {
                method,
                target,
                headers,
                body: Vec::new(),
                keep_alive: !close,
            },
            wants_continue: wants_continue && !empty,
        },
        body,
    ))
}

/// What a head or chunk line ending in LF alone is refused as.
pub(super) const BARE_LF: &str = "a line ending in LF alone: end each line with CRLF";

/// Whether `bytes` hold a LF not right after a CR. RFC 9112 2.2 lets a server take a bare
/// LF as a line end; this one refuses it, since a proxy in front that does not may read
/// the lines (and so the requests) otherwise.
fn bare_lf(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\n' && (i == 0 || bytes[i - 1] != b'\r'))
}

/// `METHOD SP target SP HTTP/1.x`.
fn parse_request_line(line: &[u8]) -> Result<(String, String, bool), RequestError> {
    const BAD: RequestError = RequestError::Malformed("not an HTTP/1.x request line");
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BAD);
    };
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        return Err(BAD);
    }
    if target.is_empty() || !target.iter().all(|&b| b.is_ascii_graphic()) {
        return Err(BAD);
    }
    let http11 = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            return Err(RequestError::UnsupportedVersion)
        }
        _ => return Err(BAD),
    };
    // Both were checked to be ASCII.
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok((text(method), text(target), http11))
}

/// `name: value`, the name lower-cased and the value trimmed.
fn parse_header(line: &[u8]) -> Result<(String, &str), RequestError> {
    let (name, value) = split_header(line).map_err(RequestError::Malformed)?;
    if value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n') {
        return Err(RequestError::Malformed(
            "a control character in a header value",
        ));
    }
    let value = std::str::from_utf8(value)
        .map_err(|_| RequestError::Malformed("a header value that is not UTF-8"))?;
    Ok((name, value))
}

#[cfg(test)]
#[path = "request/tests.rs"]
mod tests;
