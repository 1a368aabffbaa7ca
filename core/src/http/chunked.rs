//! Decoding a chunked body in place, shared by the response and request readers.

use super::error::ReadError;

/// Largest chunk-size or trailer line accepted.
const MAX_CHUNK_LINE: usize = 4 * 1024;

#[derive(Clone, Copy)]
pub(super) enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// This many data bytes of the current chunk are still to come.
    Data(usize),
    /// Expecting the line break after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
}

/// Decodes what `buf[*decoded..]` holds, keeping undecoded bytes right after the decoded
/// ones. Returns how much of `buf` is then in use, and the body's end once the last chunk
/// and its trailers are in. With `crlf` (a request's body) every line must end in CRLF;
/// a response's may end in LF alone.
pub(super) fn decode_chunks(
    buf: &mut [u8],
    decoded: &mut usize,
    chunk: &mut Chunk,
    limit: usize,
    crlf: bool,
) -> Result<(usize, Option<usize>), ReadError> {
    const BARE_LF: ReadError = ReadError::Malformed(super::request::BARE_LF);
    let bare = |line: &[u8]| crlf && line.last() != Some(&b'\r');
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
                if bare(&rest[..nl]) {
                    break Err(BARE_LF);
                }
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
                [b'\n', ..] if crlf => break Err(BARE_LF),
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
                if bare(&rest[..nl]) {
                    break Err(BARE_LF);
                }
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
