//! Splitting the stdin byte stream into messages, and framing replies.
//!
//! Two framings arrive on stdin, and both are detected per message from the bytes
//! themselves:
//!
//! - newline-delimited JSON (the MCP stdio transport): a message starts with `{` or `[`
//!   and ends at `\n` (a `\r` before it is dropped); blank lines are skipped;
//! - `Content-Length: N\r\n\r\n<N bytes>` (the original product's framing): any line that
//!   starts with `Name:` opens a header block; header names are case-insensitive and
//!   headers other than `Content-Length` are ignored.
//!
//! The framer is a push parser in the style of h11 and httparse: [`Framer::push`] only
//! buffers, [`Framer::next_frame`] hands out one frame (or one error) at a time, and
//! "not enough bytes yet" is `None`, never an error. Every decision waits until the bytes
//! that make it are present, so the same stream split at any positions yields the same
//! sequence of frames and errors. Memory stays bounded by the message limit: an over-long
//! line or an over-large body is discarded as it streams past, never buffered.

use std::fmt;

/// The default maximum size of one message body, in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Longest header line accepted in a `Content-Length` header block.
const MAX_HEADER_LINE: usize = 1024;
/// Most header lines accepted in one header block.
const MAX_HEADER_LINES: usize = 32;
/// A `Content-Length` above this is treated as garbage rather than a body to skip: skipping
/// it would swallow the rest of the session.
const MAX_PLAUSIBLE_LENGTH: u64 = 1 << 40;
const BOM: &[u8] = b"\xEF\xBB\xBF";
const CONTENT_LENGTH: &[u8] = b"content-length";

/// How a message was framed on the wire; replies use the same framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One compact JSON document per line.
    Line,
    /// `Content-Length: N` header block, blank line, then N bytes.
    ContentLength,
}

/// One complete message body, borrowed from the framer's buffer until the next call.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// How this message was framed.
    pub framing: Framing,
    /// The message bytes, without framing.
    pub bytes: &'a [u8],
}

/// A framing problem. The framer has already resynchronised when it reports one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The message was larger than the limit and has been discarded.
    #[error("message larger than the {limit}-byte limit was discarded")]
    TooLarge {
        /// The framing of the discarded message.
        framing: Framing,
        /// The configured limit in bytes.
        limit: usize,
    },
    /// A `Content-Length` header block was broken; the frame has been skipped.
    #[error("broken Content-Length frame: {0}")]
    Header(#[from] HeaderError),
    /// The input ended in the middle of a message.
    #[error("input ended inside a {0} message")]
    Truncated(Framing),
}

impl FrameError {
    /// The framing of the message the error is about.
    pub fn framing(&self) -> Framing {
        match self {
            FrameError::TooLarge { framing, .. } => *framing,
            FrameError::Header(_) => Framing::ContentLength,
            FrameError::Truncated(framing) => *framing,
        }
    }
}

/// What was wrong with a header block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The block ended without a `Content-Length` header.
    #[error("missing Content-Length header")]
    MissingContentLength,
    /// The value was not a decimal number.
    #[error("Content-Length {0:?} is not a number")]
    NotANumber(String),
    /// The value was negative.
    #[error("Content-Length {0:?} is negative")]
    Negative(String),
    /// The value was too large to be a real message.
    #[error("Content-Length {0:?} is out of range")]
    OutOfRange(String),
    /// Two `Content-Length` headers disagreed.
    #[error("conflicting Content-Length headers {0} and {1}")]
    Conflicting(u64, u64),
    /// A JSON body started where the blank line after the headers was expected.
    #[error("missing blank line after the headers")]
    MissingBlankLine,
    /// A line in the header block had no `:`.
    #[error("malformed header line {0:?}")]
    Malformed(String),
    /// A header line was longer than allowed.
    #[error("header line longer than {MAX_HEADER_LINE} bytes")]
    LineTooLong,
    /// The block had too many lines.
    #[error("more than {MAX_HEADER_LINES} header lines")]
    TooManyLines,
}

/// Splits pushed bytes into frames. See the module docs.
pub struct Framer {
    /// Buffered input; bytes before `pos` are consumed. Invariant: `pos <= buf.len()`.
    buf: Vec<u8>,
    pos: usize,
    state: State,
    max: usize,
    /// True until the stream's first bytes have decided whether it opens with a byte-order
    /// mark. Only one mark, at the very start, is skipped; a mark anywhere else is data,
    /// however the bytes were split into reads.
    at_stream_start: bool,
    eof: bool,
}

#[derive(Debug)]
enum State {
    /// Between messages: skipping blank space and deciding the next message's framing.
    Idle,
    /// In a newline-terminated message starting at `pos`; `scanned` bytes after `pos` hold
    /// no `\n`.
    Line { scanned: usize },
    /// In a header block starting at `pos`.
    Headers(HeaderBlock),
    /// Waiting for a body of `len` bytes starting at `pos` (`len <= max`).
    Body { len: usize },
    /// Discarding `remaining` bytes of an over-large body.
    SkipBody { remaining: u64 },
    /// Discarding the rest of an over-long line.
    SkipLine,
    /// After a broken header block: discarding up to a newline or a `Content-Length` header.
    Resync,
}

#[derive(Debug, Default)]
struct HeaderBlock {
    length: Option<u64>,
    problem: Option<HeaderError>,
    lines: usize,
    /// An over-long line (already counted and reported) is being skipped up to its `\n`;
    /// its bytes are dropped as they come, so memory stays bounded.
    skipping: bool,
}

/// What one step of the state machine produced.
enum Step {
    /// Need more input.
    Wait,
    /// State changed; keep going.
    Continue,
    /// A frame at `buf[start..end]`.
    Frame(Framing, usize, usize),
    Error(FrameError),
}

impl Framer {
    /// A framer that discards messages longer than `max_message_bytes`.
    pub fn new(max_message_bytes: usize) -> Self {
        Framer {
            buf: Vec::new(),
            pos: 0,
            state: State::Idle,
            max: max_message_bytes,
            at_stream_start: true,
            eof: false,
        }
    }

    /// Buffers `bytes`. Call [`Framer::next_frame`] until it returns `None` afterwards.
    pub fn push(&mut self, mut bytes: &[u8]) {
        // An over-large body streams past without touching the buffer.
        if let State::SkipBody { remaining } = &mut self.state {
            if self.pos == self.buf.len() {
                let n = usize::try_from(*remaining)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                *remaining -= n as u64;
                bytes = &bytes[n..];
                if *remaining == 0 {
                    self.state = State::Idle;
                }
            }
        }
        self.compact();
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of input: a final line without `\n` becomes a frame, and a partial
    /// `Content-Length` frame becomes [`FrameError::Truncated`].
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// Bytes currently buffered (for tests of the memory bound).
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next frame or framing error, or `None` when more input is needed.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, FrameError>> {
        loop {
            match self.step() {
                Step::Wait => return None,
                Step::Continue => {}
                Step::Frame(framing, start, end) => {
                    return Some(Ok(Frame {
                        framing,
                        bytes: &self.buf[start..end],
                    }))
                }
                Step::Error(e) => return Some(Err(e)),
            }
        }
    }

    fn compact(&mut self) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 4096 && self.pos * 2 > self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    fn rest(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn step(&mut self) -> Step {
        match &mut self.state {
            State::Idle => self.step_idle(),
            State::Line { scanned } => {
                let scanned = *scanned;
                self.step_line(scanned)
            }
            State::Headers(_) => self.step_header_line(),
            State::Body { len } => {
                let len = *len;
                if self.rest().len() >= len {
                    let start = self.pos;
                    self.pos += len;
                    self.state = State::Idle;
                    Step::Frame(Framing::ContentLength, start, start + len)
                } else if self.eof {
                    self.discard_all();
                    self.state = State::Idle;
                    Step::Error(FrameError::Truncated(Framing::ContentLength))
                } else {
                    Step::Wait
                }
            }
            State::SkipBody { remaining } => {
                let n = usize::try_from(*remaining)
                    .unwrap_or(usize::MAX)
                    .min(self.buf.len() - self.pos);
                *remaining -= n as u64;
                self.pos += n;
                if *remaining == 0 {
                    self.state = State::Idle;
                    Step::Continue
                } else {
                    Step::Wait
                }
            }
            State::SkipLine => match memchr(b'\n', self.rest()) {
                Some(i) => {
                    self.pos += i + 1;
                    self.state = State::Idle;
                    Step::Continue
                }
                None => {
                    self.discard_all();
                    Step::Wait
                }
            },
            State::Resync => self.step_resync(),
        }
    }

    fn step_idle(&mut self) -> Step {
        if self.at_stream_start {
            let rest = self.rest();
            let n = rest.len().min(BOM.len());
            if rest[..n] == BOM[..n] {
                if n < BOM.len() && !self.eof {
                    return Step::Wait;
                }
                if n == BOM.len() {
                    self.pos += n;
                }
            } else if rest.is_empty() && !self.eof {
                return Step::Wait;
            }
            self.at_stream_start = false;
        }
        let skip = self
            .rest()
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .count();
        self.pos += skip;
        let Some(&first) = self.rest().first() else {
            return Step::Wait;
        };
        if first == b'{' || first == b'[' {
            self.state = State::Line { scanned: 0 };
            return Step::Continue;
        }
        match header_name_end(self.rest()) {
            NameScan::Header => self.state = State::Headers(HeaderBlock::default()),
            NameScan::NotHeader => self.state = State::Line { scanned: 0 },
            NameScan::Undecided if self.eof => self.state = State::Line { scanned: 0 },
            NameScan::Undecided => return Step::Wait,
        }
        Step::Continue
    }

    fn step_line(&mut self, scanned: usize) -> Step {
        let rest = self.rest();
        match memchr(b'\n', &rest[scanned..]) {
            Some(i) => {
                let nl = self.pos + scanned + i;
                self.finish_line(nl, nl + 1)
            }
            // A line one byte over the limit may still end in `\r\n`; anything longer is
            // too long whatever follows, so it is reported now and skipped as it arrives.
            None if rest.len() > self.max + 1 => {
                self.discard_all();
                self.state = State::SkipLine;
                Step::Error(FrameError::TooLarge {
                    framing: Framing::Line,
                    limit: self.max,
                })
            }
            None if self.eof => {
                let len = self.buf.len();
                self.finish_line(len, len)
            }
            None => {
                self.state = State::Line {
                    scanned: rest.len(),
                };
                Step::Wait
            }
        }
    }

    /// Ends the line that starts at `pos` and runs to `end` (exclusive, a `\r` before it
    /// dropped); input resumes at `next`. Over-long lines become [`FrameError::TooLarge`].
    fn finish_line(&mut self, end: usize, next: usize) -> Step {
        let start = self.pos;
        let end = if end > start && self.buf[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        self.pos = next;
        self.state = State::Idle;
        if end - start > self.max {
            return Step::Error(FrameError::TooLarge {
                framing: Framing::Line,
                limit: self.max,
            });
        }
        Step::Frame(Framing::Line, start, end)
    }

    fn step_header_line(&mut self) -> Step {
        let rest = &self.buf[self.pos..];
        let State::Headers(block) = &mut self.state else {
            return Step::Continue;
        };
        let nl = memchr(b'\n', rest);
        if block.skipping {
            // The rest of an over-long line: dropped up to its end, wherever the reads cut.
            match nl {
                Some(i) => {
                    block.skipping = false;
                    self.pos += i + 1;
                    return Step::Continue;
                }
                None if self.eof => {}
                None => {
                    self.discard_all();
                    return Step::Wait;
                }
            }
        }
        let Some(nl) = nl else {
            let opens_body = rest.first().is_some_and(|b| *b == b'{' || *b == b'[');
            // A line one byte over the limit may still end in `\r\n`, which is not counted.
            if rest.len() > MAX_HEADER_LINE + 1 && !opens_body && !block.skipping {
                // The same as when the whole line is here: counted, its problem recorded
                // for the end of the block, and skipped, however the bytes were cut.
                block.lines += 1;
                block.problem.get_or_insert(HeaderError::LineTooLong);
                block.skipping = true;
                self.discard_all();
                return if self.eof { Step::Continue } else { Step::Wait };
            }
            if self.eof {
                self.discard_all();
                self.state = State::Idle;
                return Step::Error(FrameError::Truncated(Framing::ContentLength));
            }
            if !opens_body {
                return Step::Wait;
            }
            // A body line begins: handled below as when its `\n` is here.
            return self.body_without_blank_line();
        };
        let line = trim_cr(&rest[..nl]);
        if line.first().is_some_and(|b| *b == b'{' || *b == b'[') {
            return self.body_without_blank_line();
        }
        if line.is_empty() {
            self.pos += nl + 1;
            return self.end_headers();
        }
        // Problems are recorded and reported once, at the end of the block, so that the
        // rest of a bad block does not read as further messages.
        block.lines += 1;
        if block.problem.is_none() {
            let checked = if line.len() > MAX_HEADER_LINE {
                Err(HeaderError::LineTooLong)
            } else if block.lines > MAX_HEADER_LINES {
                Err(HeaderError::TooManyLines)
            } else {
                block.add(line)
            };
            if let Err(e) = checked {
                block.problem = Some(e);
            }
        }
        self.pos += nl + 1;
        Step::Continue
    }

    /// The body began without the blank line: report it (or the block's own problem) and
    /// serve the body as a line-delimited message.
    fn body_without_blank_line(&mut self) -> Step {
        let State::Headers(block) = std::mem::replace(&mut self.state, State::Idle) else {
            return Step::Continue;
        };
        let e = block.problem.unwrap_or(HeaderError::MissingBlankLine);
        Step::Error(e.into())
    }

    fn end_headers(&mut self) -> Step {
        let State::Headers(block) = std::mem::replace(&mut self.state, State::Resync) else {
            return Step::Continue;
        };
        let length = match (block.problem, block.length) {
            (Some(e), _) => return Step::Error(e.into()),
            (None, None) => return Step::Error(HeaderError::MissingContentLength.into()),
            (None, Some(length)) => length,
        };
        match usize::try_from(length) {
            Ok(len) if len <= self.max => {
                self.state = State::Body { len };
                Step::Continue
            }
            _ => {
                self.state = State::SkipBody { remaining: length };
                Step::Error(FrameError::TooLarge {
                    framing: Framing::ContentLength,
                    limit: self.max,
                })
            }
        }
    }

    /// Skips to just after the next `\n`, or to the next `Content-Length` header name,
    /// whichever comes first. A partial header name at the end of the buffer is kept.
    fn step_resync(&mut self) -> Step {
        let rest = self.rest();
        for (i, &b) in rest.iter().enumerate() {
            if b == b'\n' {
                self.pos += i + 1;
                self.state = State::Idle;
                return Step::Continue;
            }
            if b.eq_ignore_ascii_case(&b'c') {
                let tail = &rest[i..];
                let n = tail.len().min(CONTENT_LENGTH.len());
                if tail[..n].eq_ignore_ascii_case(&CONTENT_LENGTH[..n]) {
                    self.pos += i;
                    if n == CONTENT_LENGTH.len() {
                        self.state = State::Idle;
                        return Step::Continue;
                    }
                    if self.eof {
                        self.discard_all();
                    }
                    return Step::Wait;
                }
            }
        }
        self.discard_all();
        Step::Wait
    }

    fn discard_all(&mut self) {
        self.pos = self.buf.len();
    }
}

impl HeaderBlock {
    fn add(&mut self, line: &[u8]) -> Result<(), HeaderError> {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            return Err(HeaderError::Malformed(lossy(line)));
        };
        let (name, value) = (&line[..colon], trim_ascii(&line[colon + 1..]));
        if !name.eq_ignore_ascii_case(CONTENT_LENGTH) {
            return Ok(());
        }
        let text = lossy(value);
        let length = if value.first() == Some(&b'-') && value.len() > 1 {
            return Err(HeaderError::Negative(text));
        } else if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err(HeaderError::NotANumber(text));
        } else {
            match text.parse::<u64>() {
                Ok(n) if n <= MAX_PLAUSIBLE_LENGTH => n,
                _ => return Err(HeaderError::OutOfRange(text)),
            }
        };
        match self.length {
            Some(previous) if previous != length => Err(HeaderError::Conflicting(previous, length)),
            _ => {
                self.length = Some(length);
                Ok(())
            }
        }
    }
}

enum NameScan {
    Header,
    NotHeader,
    Undecided,
}

/// Decides whether `rest` starts with `Token:`, i.e. a header line.
fn header_name_end(rest: &[u8]) -> NameScan {
    for (i, &b) in rest.iter().enumerate() {
        if b == b':' {
            return if i > 0 {
                NameScan::Header
            } else {
                NameScan::NotHeader
            };
        }
        let token = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if !token || i >= MAX_HEADER_LINE {
            return NameScan::NotHeader;
        }
    }
    NameScan::Undecided
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|b| *b == needle)
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let end = bytes.len()
        - bytes[start..]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
    &bytes[start..end]
}

/// Quotes at most 40 bytes of untrusted input for an error message.
fn lossy(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(40)];
    String::from_utf8_lossy(cut).into_owned()
}

/// Appends `json` to `out`, framed as `framing`. `json` must hold no newline in line mode,
/// which compact `serde_json` output guarantees.
pub fn encode(framing: Framing, json: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Line => {
            out.reserve(json.len() + 1);
            out.extend_from_slice(json);
            out.push(b'\n');
        }
        Framing::ContentLength => {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(json.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n\r\n");
            out.extend_from_slice(json);
        }
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Framing::Line => "newline-delimited",
            Framing::ContentLength => "Content-Length",
        })
    }
}

#[cfg(test)]
mod tests;
