//! HTTP/1.1 pieces, sans IO. For the host's client: reading a response from bytes as they
//! arrive, and a proxy's answer to `CONNECT`. For a host that serves HTTP: reading
//! requests (pipelined or not) and writing responses and event streams.

mod chunked;
mod error;
mod head;
mod reply;
mod request;
mod response;
mod url;

pub(crate) use head::head_end;
pub use head::is_kept_header;
pub use reply::{event, ReplyHead, CONTINUE, STREAM_END};
pub use request::{Incoming, Request, RequestError, RequestLimits, RequestReader};
pub use response::{tunnel_reply, ReadError, Reader, Response};
pub(crate) use url::host_and_port;

/// Largest upstream response body a host should read; larger ones fail the attempt.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Whether a reply of `status` with `headers` is an event stream, which a host hands over
/// as it arrives (`Message::Head`, `Body`, `End`) instead of whole.
pub fn is_event_stream(status: u16, headers: &[(String, String)]) -> bool {
    (200..300).contains(&status)
        && headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("text/event-stream"))
}

/// Replaces every occurrence of `key` in `body` with `***`: an error body that echoes the
/// request's credentials must not carry them into error messages or logs. Keys shorter
/// than 8 bytes are left alone: no real key is, and masking every occurrence of a few
/// common bytes would mangle bodies (an empty key would match everywhere).
pub fn scrub(body: Vec<u8>, key: &[u8]) -> Vec<u8> {
    const MIN_SCRUBBED_KEY: usize = 8;
    if key.len() < MIN_SCRUBBED_KEY || !body.windows(key.len()).any(|w| w == key) {
        return body;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(key) {
            out.extend_from_slice(b"***");
            i += key.len();
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::scrub;

    #[test]
    fn scrub_replaces_every_occurrence() {
        assert_eq!(
            scrub(b"a sk-KEY1234 b sk-KEY1234".to_vec(), b"sk-KEY1234"),
            b"a *** b ***"
        );
        assert_eq!(scrub(b"clean".to_vec(), b"sk-KEY1234"), b"clean");
    }

    #[test]
    fn keys_too_short_to_be_real_are_left_alone() {
        assert_eq!(scrub(b"a b c".to_vec(), b""), b"a b c");
        assert_eq!(scrub(b"a b c".to_vec(), b"b"), b"a b c");
    }
}
