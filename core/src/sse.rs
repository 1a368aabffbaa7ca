//! Reading a `text/event-stream`, sans IO: [`SseReader::push`] buffers bytes as they
//! arrive, [`SseReader::next_event`] hands out one event at a time (`None`: not enough
//! bytes yet). The rules are the WHATWG "event stream interpretation": lines end with
//! CRLF, LF or CR; a blank line dispatches the event; `data:` lines join with `\n`; lines
//! starting with `:` are comments; one leading space after the colon is dropped; a byte-
//! order mark is skipped at the very start only; an event not ended by a blank line
//! before the stream ends is dropped.
//!
//! Every decision waits for the bytes that make it, so the same stream cut into reads at
//! any points gives the same events. Memory is bounded: a line longer than `max_line` or
//! an event whose data exceeds `max_event` is an error, and errors are final (the attempt
//! that read the stream fails).

use std::fmt;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `message` when there was none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Why the stream cannot be read further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseError {
    /// A line longer than the limit.
    LineTooLong {
        /// The limit in bytes.
        max: usize,
    },
    /// An event whose data is larger than the limit.
    EventTooLarge {
        /// The limit in bytes.
        max: usize,
    },
    /// An event's data is not UTF-8.
    InvalidUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::LineTooLong { max } => {
                write!(f, "the event stream has a line longer than {max} bytes")
            }
            SseError::EventTooLarge { max } => {
                write!(f, "the event stream has an event larger than {max} bytes")
            }
            SseError::InvalidUtf8 => f.write_str("the event stream has data that is not UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// Reads events from pushed bytes. See the module docs.
pub struct SseReader {
    /// Unread bytes; `buf[pos..]` is what is left. Invariant: `pos <= buf.len()`.
    buf: Vec<u8>,
    pos: usize,
    max_line: usize,
    max_event: usize,
    /// The `event:` field of the event being read.
    event: Option<String>,
    /// The `data:` lines of the event being read, each followed by `\n`.
    data: Vec<u8>,
    /// Whether any `data:` line was seen (an event with none is not dispatched).
    has_data: bool,
    /// Whether the stream's start (and a byte-order mark there) has been dealt with.
    started: bool,
    eof: bool,
    /// A final error: nothing more is read.
    failed: bool,
}

impl SseReader {
    /// A reader with these limits, in bytes.
    pub fn new(max_line: usize, max_event: usize) -> Self {
        SseReader {
            buf: Vec::new(),
            pos: 0,
            max_line,
            max_event,
            event: None,
            data: Vec::new(),
            has_data: false,
            started: false,
            eof: false,
            failed: false,
        }
    }

    /// Buffers `bytes`; call [`SseReader::next_event`] until it returns `None` afterwards.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 4096 && self.pos * 2 > self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of the stream: a last line without its line break still counts, but
    /// an event not ended by a blank line is dropped.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// Bytes buffered and not yet read.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos + self.data.len()
    }

    /// The next event, an error (final), or `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        if self.failed {
            return None;
        }
        if !self.started {
            let rest = &self.buf[self.pos..];
            let n = rest.len().min(BOM.len());
            if rest[..n] != BOM[..n] {
                self.started = true;
            } else if n == BOM.len() {
                self.pos += n;
                self.started = true;
            } else if self.eof {
                self.started = true;
            } else {
                return None;
            }
        }
        loop {
            let line = match self.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => return Some(self.fail(e)),
            };
            let (start, end) = line;
            if start == end {
                if let Some(event) = self.dispatch() {
                    return Some(event);
                }
                continue;
            }
            if let Err(e) = self.field(start, end) {
                return Some(self.fail(e));
            }
        }
    }

    fn fail(&mut self, e: SseError) -> Result<SseEvent, SseError> {
        self.failed = true;
        self.buf = Vec::new();
        self.data = Vec::new();
        self.pos = 0;
        Err(e)
    }

    /// The next whole line as `buf[start..end]` (without its break), or `None` when it has
    /// not all arrived. A CR at the end of the bytes so far waits: an LF may follow.
    fn next_line(&mut self) -> Result<Option<(usize, usize)>, SseError> {
        let rest = &self.buf[self.pos..];
        let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
            if rest.len() > self.max_line {
                return Err(SseError::LineTooLong { max: self.max_line });
            }
            if self.eof && !rest.is_empty() {
                let start = self.pos;
                self.pos = self.buf.len();
                return Ok(Some((start, self.buf.len())));
            }
            return Ok(None);
        };
        if i > self.max_line {
            return Err(SseError::LineTooLong { max: self.max_line });
        }
        let break_len = match (rest[i], rest.get(i + 1)) {
            (b'\r', Some(b'\n')) => 2,
            (b'\r', None) if !self.eof => return Ok(None),
            _ => 1,
        };
        let start = self.pos;
        self.pos += i + break_len;
        Ok(Some((start, start + i)))
    }

    /// Applies one non-empty line.
    fn field(&mut self, start: usize, end: usize) -> Result<(), SseError> {
        let line = &self.buf[start..end];
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(SseError::EventTooLarge {
                        max: self.max_event,
                    });
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => {
                self.event =
                    Some(String::from_utf8(value.to_vec()).map_err(|_| SseError::InvalidUtf8)?);
            }
            // `id` and `retry` steer reconnection, which an attempt never does.
            _ => {}
        }
        Ok(())
    }

    /// Ends the event being read at a blank line: the event, or `None` when it had no data.
    fn dispatch(&mut self) -> Option<Result<SseEvent, SseError>> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the `\n` after the last data line
        Some(match String::from_utf8(data) {
            Ok(data) => Ok(SseEvent {
                event: event.unwrap_or_else(|| "message".to_owned()),
                data,
            }),
            Err(_) => self.fail(SseError::InvalidUtf8),
        })
    }
}

#[cfg(test)]
mod tests;
