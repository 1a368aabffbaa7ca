//! Reading one HTTP/1.1 response, sans IO: the caller reads bytes into [`Reader::space`]
//! and reports them with [`Reader::filled`] until a whole [`Response`] comes out.
//!
//! One buffer holds everything: the head while it arrives, then the body. Chunked bodies
//! are decoded in place (chunk data is moved down over the size lines), so a response
//! costs its body size plus one read's worth of slack. Space handed out for reading is
//! zeroed once and reused, so that a server sending a byte at a time costs no more than
//! one sending it all at once.

/// Bytes asked for per read while the head arrives: a whole head, usually.
const HEAD_READ: usize = 4 * 1024;
/// Bytes asked for per read of a body.
const BODY_READ: usize = 32 * 1024;
/// Bytes asked for per read of a body taken as it arrives: an event stream comes in small
/// writes, and a call in flight should hold no more buffer than it needs.
const STREAM_READ: usize = 4 * 1024;

use super::chunked::decode_chunks;
pub use super::error::ReadError;
pub use super::head::tunnel_reply;
use super::head::{complete_head, parse_head, Framing, Head};

/// A complete response.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers the core reads (`retry-after*`, `x-request-id`, `content-type`), names
    /// lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The connection may carry another request.
    pub reusable: bool,
}

/// Reads one response.
pub struct Reader {
    /// `buf[..len]` holds what was read; the rest is space for the next read.
    buf: Vec<u8>,
    len: usize,
    state: State,
    limit: usize,
    started: bool,
    /// Bytes asked for per body read.
    body_read: usize,
}

enum State {
    Head,
    Body(Head, Framing),
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
            body_read: BODY_READ,
        }
    }

    /// Whether any byte of the response arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The status and headers, once the head is in and the body is arriving.
    pub fn head(&self) -> Option<(u16, &[(String, String)])> {
        match &self.state {
            State::Body(head, _) => Some((head.status, &head.headers)),
            State::Head => None,
        }
    }

    /// Takes the body bytes decoded so far, for a caller that handles the body as it
    /// arrives (an event stream); the response that [`Reader::filled`] returns at the end
    /// then holds only the rest. The body limit applies to what is held at once.
    pub fn take_body(&mut self) -> Vec<u8> {
        let taken = match &mut self.state {
            State::Head => 0,
            State::Body(_, Framing::Length(total)) => {
                let n = self.len.min(*total);
                *total -= n;
                n
            }
            State::Body(_, Framing::UntilClose) => self.len,
            State::Body(_, Framing::Chunked { decoded, .. }) => std::mem::take(decoded),
        };
        if taken == 0 {
            return Vec::new();
        }
        let body = self.buf[..taken].to_vec();
        self.buf.copy_within(taken..self.len, 0);
        self.len -= taken;
        // Taken bodies are read in small pieces from now on, in a small buffer.
        self.body_read = STREAM_READ;
        if self.buf.capacity() > 4 * (self.len + STREAM_READ) {
            self.buf.truncate(self.len);
            self.buf.shrink_to(self.len + STREAM_READ);
        }
        body
    }

    /// Space for the next read; report what was read with [`Reader::filled`].
    pub fn space(&mut self) -> &mut [u8] {
        let want = match &self.state {
            State::Head => HEAD_READ,
            State::Body(_, Framing::Length(total)) => {
                total.saturating_sub(self.len).clamp(1, self.body_read)
            }
            State::Body(..) => self.body_read,
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
                let (len, end) = decode_chunks(buf, &mut decoded, &mut chunk, self.limit, false)?;
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

// An explicit path, so that the fuzz crate can include this file as a module too.
#[cfg(test)]
mod tests;
