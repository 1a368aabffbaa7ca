//! Reading one HTTP/1.1 response, sans IO: the caller reads bytes into [`Reader::space`]
//! and reports them with [`Reader::filled`] until a whole [`Response`] comes out.
//!
//! One buffer holds everything: the head while it arrives, then the body. Chunked bodies
//! are decoded in place (chunk data is moved down over the size lines), so a response
//! costs its body size plus one read's worth of slack. Space handed out for reading is
//! zeroed once and reused, so that a server sending a byte at a time costs no more than
//! one sending it all at once.

/// Largest response head (status line and headers) accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest chunk-size or trailer line accepted.
const MAX_CHUNK_LINE: usize = 4 * 1024;
/// Bytes asked for per read while the head arrives: a whole head, usually.
const HEAD_READ: usize = 4 * 1024;
/// Bytes asked for per read of a body.
const BODY_READ: usize = 32 * 1024;

/// A complete response.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers the core reads (`retry-after*`, `x-request-id`), names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The connection may carry another request.
    pub reusable: bool,
}

/// Why no response came out.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Not an HTTP/1.x response.
    Malformed(&'static str),
    /// The body is larger than the limit.
    TooLarge,
    /// The connection closed before the response was complete.
    Closed,
}

/// Reads one response.
pub struct Reader {
    /// `buf[..len]` holds what was read; the rest is space for the next read.
    buf: Vec<u8>,
    len: usize,
    state: State,
    limit: usize,
    started: bool,
}

enum State {
    Head,
    Body(Head, Framing),
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    reusable: bool,
}

enum Framing {
    /// `Content-Length`: the body is the buffer once it holds this many bytes.
    Length(usize),
    /// Neither length nor chunks: the body ends when the connection does.
    UntilClose,
    /// `buf[..decoded]` is body; `buf[decoded..]` is not yet decoded.
    Chunked { decoded: usize, chunk: Chunk },
}

#[derive(Clone, Copy)]
enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// This many data bytes of the current chunk are still to come.
    Data(usize),
    /// Expecting the line break after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
}

/// What one step of processing decided.
enum Step {
    /// Process again in this (new) state.
    Again(State),
    /// Wait for more bytes in this state.
    More(State),
    Done(Response),
}

impl Reader {
    /// A reader accepting bodies up to `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Reader {
            buf: Vec::new(),
            len: 0,
            state: State::Head,
            limit,
            started: false,
        }
    }

    /// Whether any byte of the response arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Space for the next read; report what was read with [`Reader::filled`].
    pub fn space(&mut self) -> &mut [u8] {
        let want = match &self.state {
            State::Head => HEAD_READ,
            State::Body(_, Framing::Length(total)) => {
                total.saturating_sub(self.len).clamp(1, BODY_READ)
            }
            State::Body(..) => BODY_READ,
        };
        if self.buf.len() < self.len + want {
            self.buf.resize(self.len + want, 0);
        }
        &mut self.buf[self.len..self.len + want]
    }

    /// `n` bytes were read into the last [`Reader::space`]; 0 means the connection closed.
    /// Returns the response once it is complete.
    pub fn filled(&mut self, n: usize) -> Result<Option<Response>, ReadError> {
        self.len = (self.len + n).min(self.buf.len());
        if n == 0 {
            return self.closed().map(Some);
        }
        self.started = true;
        loop {
            // The state is taken for the step and put back unless the response is done
            // (after an error the reader is not used again).
            let state = std::mem::replace(&mut self.state, State::Head);
            match self.step(state)? {
                Step::Again(state) => self.state = state,
                Step::More(state) => {
                    self.state = state;
                    return Ok(None);
                }
                Step::Done(response) => return Ok(Some(response)),
            }
        }
    }

    /// The connection closed: only a body framed by the close is complete.
    fn closed(&mut self) -> Result<Response, ReadError> {
        match std::mem::replace(&mut self.state, State::Head) {
            State::Body(head, Framing::UntilClose) => Ok(self.finish(head, self.len)),
            _ => Err(ReadError::Closed),
        }
    }

    fn step(&mut self, state: State) -> Result<Step, ReadError> {
        match state {
            State::Head => {
                let Some(end) = complete_head(&self.buf[..self.len])? else {
                    return Ok(Step::More(State::Head));
                };
                let (head, framing) = parse_head(&self.buf[..end], self.limit)?;
                self.buf.copy_within(end..self.len, 0);
                self.len -= end;
                Ok(match framing {
                    // An interim response (100 Continue and the like): the real one follows.
                    None if (100..200).contains(&head.status) => Step::Again(State::Head),
                    None => Step::Done(self.finish(head, 0)),
                    Some(framing) => Step::Again(State::Body(head, framing)),
                })
            }
            State::Body(head, Framing::Length(total)) => Ok(if self.len < total {
                Step::More(State::Body(head, Framing::Length(total)))
            } else {
                Step::Done(self.finish(head, total))
            }),
            State::Body(head, Framing::UntilClose) => {
                if self.len > self.limit {
                    return Err(ReadError::TooLarge);
                }
                Ok(Step::More(State::Body(head, Framing::UntilClose)))
            }
            State::Body(
                head,
                Framing::Chunked {
                    mut decoded,
                    mut chunk,
                },
            ) => {
                let buf = &mut self.buf[..self.len];
                let (len, end) = decode_chunks(buf, &mut decoded, &mut chunk, self.limit)?;
                self.len = len;
                Ok(match end {
                    Some(end) => Step::Done(self.finish(head, end)),
                    None => Step::More(State::Body(head, Framing::Chunked { decoded, chunk })),
                })
            }
        }
    }

    fn finish(&mut self, mut head: Head, end: usize) -> Response {
        // Bytes after the response were never asked for: the connection is out of step.
        if self.len > end {
            head.reusable = false;
        }
        self.buf.truncate(end);
        self.len = 0;
        Response {
            status: head.status,
            headers: head.headers,
            body: std::mem::take(&mut self.buf),
            reusable: head.reusable,
        }
    }
}

/// The reply to a CONNECT once its head is all in `buf`: the status and the head's
/// length (a tunnel's reply has no body).
pub fn tunnel_reply(buf: &[u8]) -> Result<Option<(u16, usize)>, ReadError> {
    let Some(end) = complete_head(buf)? else {
        return Ok(None);
    };
    let status_line = lines(&buf[..end]).next().unwrap_or_default();
    let (_, status) = parse_status_line(status_line)?;
    Ok(Some((status, end)))
}

/// The length of the head at the start of `buf`, once it is all there. The limit applies
/// the same whether or not the head's end has arrived, so that how the bytes were cut
/// into reads never changes the outcome.
fn complete_head(buf: &[u8]) -> Result<Option<usize>, ReadError> {
    match head_end(buf) {
        Some(end) if end <= MAX_HEAD => Ok(Some(end)),
        None if buf.len() <= MAX_HEAD => Ok(None),
        _ => Err(ReadError::Malformed("the response head is too large")),
    }
}

/// The length of the head including its blank line, once it is all in `buf`.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = buf[from..].iter().position(|&b| b == b'\n') {
        let nl = from + i;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => from = nl + 1,
        }
    }
    None
}

/// Lines of `bytes`, each without its `\n` or `\r\n`.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
}

/// The head, and how its body is framed (`None`: it has no body).
fn parse_head(bytes: &[u8], limit: usize) -> Result<(Head, Option<Framing>), ReadError> {
    let mut lines = lines(bytes);
    let status_line = lines.next().unwrap_or_default();
    let (http11, status) = parse_status_line(status_line)?;
    if status == 101 {
        return Err(ReadError::Malformed("the server switched protocols"));
    }
    let mut headers = Vec::new();
    let mut length: Option<usize> = None;
    let mut chunked = false;
    let mut encoded = false;
    let mut close = !http11;
    for line in lines.filter(|l| !l.is_empty()) {
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(ReadError::Malformed("a folded header line"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(ReadError::Malformed("a header line without a colon"))?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
            return Err(ReadError::Malformed("an invalid header name"));
        }
        let value = line[colon + 1..].trim_ascii();
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        match name.as_str() {
            "content-length" => {
                let n = parse_length(value)?;
                if length.is_some_and(|m| m != n) {
                    return Err(ReadError::Malformed("conflicting content lengths"));
                }
                length = Some(n);
            }
            "transfer-encoding" => {
                encoded = true;
                chunked = value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            }
            "connection" => {
                for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    if token.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && !http11 {
                        close = false;
                    }
                }
            }
            _ if name.starts_with("retry-after") || name == "x-request-id" => {
                if let Ok(value) = std::str::from_utf8(value) {
                    headers.push((name, value.to_owned()));
                }
            }
            _ => {}
        }
    }
    let mut head = Head {
        status,
        headers,
        reusable: !close,
    };
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        None
    } else if chunked {
        // A length next to chunking is a smuggling pattern: decode, but do not reuse.
        head.reusable &= length.is_none();
        Some(Framing::Chunked {
            decoded: 0,
            chunk: Chunk::Size,
        })
    } else if encoded {
        head.reusable = false;
        Some(Framing::UntilClose)
    } else {
        match length {
            Some(n) if n > limit => return Err(ReadError::TooLarge),
            Some(0) => None,
            Some(n) => Some(Framing::Length(n)),
            None => {
                head.reusable = false;
                Some(Framing::UntilClose)
            }
        }
    };
    Ok((head, framing))
}

/// `HTTP/1.x NNN reason`: whether it is HTTP/1.1, and the status.
fn parse_status_line(line: &[u8]) -> Result<(bool, u16), ReadError> {
    const BAD: ReadError = ReadError::Malformed("not an HTTP/1.x status line");
    let rest = line.strip_prefix(b"HTTP/1.").ok_or(BAD)?;
    let (minor, rest) = rest.split_first().ok_or(BAD)?;
    let rest = rest.strip_prefix(b" ").ok_or(BAD)?;
    let (code, reason) = rest.split_at_checked(3).ok_or(BAD)?;
    if !minor.is_ascii_digit()
        || !code.iter().all(u8::is_ascii_digit)
        || !(reason.is_empty() || reason[0] == b' ')
    {
        return Err(BAD);
    }
    let status = code.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    if status < 100 {
        return Err(BAD);
    }
    Ok((*minor >= b'1', status))
}

fn parse_length(value: &[u8]) -> Result<usize, ReadError> {
    const BAD: ReadError = ReadError::Malformed("an invalid content length");
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return Err(BAD);
    }
    let n = value.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    usize::try_from(n).map_err(|_| BAD)
}

/// RFC 9110 token characters.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Decodes what `buf[*decoded..]` holds, keeping undecoded bytes right after the decoded
/// ones. Returns how much of `buf` is then in use, and the body's end once the last chunk
/// and its trailers are in.
fn decode_chunks(
    buf: &mut [u8],
    decoded: &mut usize,
    chunk: &mut Chunk,
    limit: usize,
) -> Result<(usize, Option<usize>), ReadError> {
    let mut pos = *decoded;
    let result = loop {
        let rest = &buf[pos..];
        match *chunk {
            Chunk::Size => {
                let Some(nl) = line_end(rest) else {
                    break Err(ReadError::Malformed("a chunk size line is too long"));
                };
                let Some(nl) = nl else {
                    break Ok(None);
                };
                let size = match parse_chunk_size(&rest[..nl]) {
                    Ok(size) => size,
                    Err(e) => break Err(e),
                };
                pos += nl + 1;
                if size == 0 {
                    *chunk = Chunk::Trailers;
                } else if size > limit.saturating_sub(*decoded) {
                    break Err(ReadError::TooLarge);
                } else {
                    *chunk = Chunk::Data(size);
                }
            }
            Chunk::Data(left) => {
                let take = left.min(rest.len());
                buf.copy_within(pos..pos + take, *decoded);
                *decoded += take;
                pos += take;
                if take < left {
                    *chunk = Chunk::Data(left - take);
                    break Ok(None);
                }
                *chunk = Chunk::DataEnd;
            }
            Chunk::DataEnd => match rest {
                [b'\n', ..] => {
                    pos += 1;
                    *chunk = Chunk::Size;
                }
                [b'\r', b'\n', ..] => {
                    pos += 2;
                    *chunk = Chunk::Size;
                }
                [] | [b'\r'] => break Ok(None),
                _ => break Err(ReadError::Malformed("chunk data longer than its size")),
            },
            Chunk::Trailers => {
                let Some(nl) = line_end(rest) else {
                    break Err(ReadError::Malformed("a trailer line is too long"));
                };
                let Some(nl) = nl else {
                    break Ok(None);
                };
                pos += nl + 1;
                if matches!(rest[..nl], [] | [b'\r']) {
                    break Ok(Some(pos));
                }
            }
        }
    };
    let done = result?;
    // Keep what follows (undecoded bytes, or anything after the response, so that
    // `finish` sees it) right after the body.
    let from = done.unwrap_or(pos);
    let left = buf.len() - from;
    buf.copy_within(from.., *decoded);
    Ok((*decoded + left, done.map(|_| *decoded)))
}

/// Where the line at the start of `rest` ends (`Some(None)`: not yet in); `None` when it
/// is longer than a chunk-size or trailer line may be, whether or not its end arrived.
fn line_end(rest: &[u8]) -> Option<Option<usize>> {
    match rest
        .iter()
        .take(MAX_CHUNK_LINE + 1)
        .position(|&b| b == b'\n')
    {
        Some(nl) => Some(Some(nl)),
        None if rest.len() > MAX_CHUNK_LINE => None,
        None => Some(None),
    }
}

/// A chunk-size line: hex digits, then optional whitespace and `;extensions`.
fn parse_chunk_size(line: &[u8]) -> Result<usize, ReadError> {
    const BAD: ReadError = ReadError::Malformed("an invalid chunk size");
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits = line
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if digits.is_empty() || digits.len() > 15 {
        return Err(BAD);
    }
    digits.iter().try_fold(0usize, |n, &d| {
        let v = (d as char).to_digit(16).ok_or(BAD)?;
        n.checked_mul(16)
            .and_then(|n| n.checked_add(v as usize))
            .ok_or(BAD)
    })
}

// An explicit path, so that the fuzz crate can include this file as a module too.
#[cfg(test)]
mod tests;
