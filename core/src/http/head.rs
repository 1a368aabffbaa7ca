//! Reading a response head: the status line and the headers that decide how the body is
//! framed. Shared by the response reader and by the reply to a proxy's `CONNECT`.

use super::chunked::Chunk;
use super::error::ReadError;

/// How a response's body is delimited, and how far it was read.
pub(super) enum Framing {
    /// `Content-Length`: the body is the buffer once it holds this many bytes.
    Length(usize),
    /// Neither length nor chunks: the body ends when the connection does.
    UntilClose,
    /// `buf[..decoded]` is body; `buf[decoded..]` is not yet decoded.
    Chunked { decoded: usize, chunk: Chunk },
}

/// Largest response head (status line and headers) accepted.
const MAX_HEAD: usize = 64 * 1024;

/// Whether the core reads an upstream reply header named `name` (lower case): the
/// server's wait (`retry-after`, `retry-after-ms`), OpenAI's request id and the content
/// type. Hosts keep these and drop the rest.
pub fn is_kept_header(name: &str) -> bool {
    name.starts_with("retry-after") || name == "x-request-id" || name == "content-type"
}

/// What a head says about its response.
pub(super) struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub reusable: bool,
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
pub(super) fn complete_head(buf: &[u8]) -> Result<Option<usize>, ReadError> {
    match head_end(buf) {
        Some(end) if end <= MAX_HEAD => Ok(Some(end)),
        None if buf.len() <= MAX_HEAD => Ok(None),
        _ => Err(ReadError::Malformed("the response head is too large")),
    }
}

/// The length of the head including its blank line, once it is all in `buf`.
pub(crate) fn head_end(buf: &[u8]) -> Option<usize> {
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
pub(super) fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
}

/// The head, and how its body is framed (`None`: it has no body).
pub(super) fn parse_head(bytes: &[u8], limit: usize) -> Result<(Head, Option<Framing>), ReadError> {
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
        let (name, value) = split_header(line).map_err(ReadError::Malformed)?;
        match name.as_str() {
            "content-length" => {
                let n = content_length(value)
                    .ok_or(ReadError::Malformed("an invalid content length"))?;
                if length.is_some_and(|m| m != n) {
                    return Err(ReadError::Malformed("conflicting content lengths"));
                }
                length = Some(n);
            }
            "transfer-encoding" => {
                encoded = true;
                chunked = ends_chunked(value);
            }
            "connection" => close = closes(value, http11, close),
            _ if is_kept_header(&name) => {
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

/// A header line (not empty) as its lower-cased name and its trimmed value; the error
/// says what is wrong with it.
pub(super) fn split_header(line: &[u8]) -> Result<(String, &[u8]), &'static str> {
    if line[0] == b' ' || line[0] == b'\t' {
        return Err("a folded header line");
    }
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or("a header line without a colon")?;
    let name = &line[..colon];
    if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
        return Err("an invalid header name");
    }
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    Ok((name, line[colon + 1..].trim_ascii()))
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

/// A `Content-Length` value: digits only, and few enough to fit.
pub(super) fn content_length(value: &[u8]) -> Option<usize> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = value.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    usize::try_from(n).ok()
}

/// Whether a `Transfer-Encoding` value's last coding is `chunked` (the one that frames
/// the body).
pub(super) fn ends_chunked(value: &[u8]) -> bool {
    value
        .rsplit(|&b| b == b',')
        .next()
        .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"))
}

/// Whether the connection closes after this message, given a `Connection` value and
/// `close` as decided so far (HTTP/1.0 closes unless it says keep-alive).
pub(super) fn closes(value: &[u8], http11: bool, mut close: bool) -> bool {
    for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
        if token.eq_ignore_ascii_case(b"close") {
            close = true;
        } else if token.eq_ignore_ascii_case(b"keep-alive") && !http11 {
            close = false;
        }
    }
    close
}

/// RFC 9110 token characters.
pub(super) fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
