//! The response of one exchange, written as the server's answer comes in.

use crate::http::{event, ReplyHead, STREAM_END};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::serve::exchange::ExchangeOut;

/// The content type of the Prometheus text exposition format, version 0.0.4.
pub const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A response carrying a JSON-RPC error (without `id` when none could be read).
pub(super) fn rpc_error(head: ReplyHead, id: Option<RequestId>, error: RpcError) -> Vec<u8> {
    head.header("content-type", "application/json")
        .with_body(&error.envelope(id.as_ref()))
}

/// The response of one exchange as the server's answer comes in: a JSON body when the
/// reply comes first, an event stream once a notification comes before it.
#[derive(Debug)]
pub struct ExchangeResponse {
    pub(super) keep_alive: bool,
    /// The client accepts `text/event-stream`.
    pub(super) takes_stream: bool,
    /// A 2026-07-28 request: some errors have their own HTTP status.
    pub(super) modern: bool,
    /// The event stream's head has been written.
    pub(super) streaming: bool,
    /// A `HEAD` request: the head alone.
    pub(super) head_only: bool,
}

impl ExchangeResponse {
    /// The response of an exchange on a connection kept alive or not, whose client does or
    /// does not take an event stream.
    pub(super) fn new(keep_alive: bool, takes_stream: bool) -> Self {
        ExchangeResponse {
            keep_alive,
            takes_stream,
            modern: false,
            streaming: false,
            head_only: false,
        }
    }

    /// The connection closes after this response: its head says so, when it is still to
    /// be written.
    pub(crate) fn close(&mut self) {
        self.keep_alive = false;
    }

    /// The bytes to write for `out`, and whether the response is then complete.
    pub fn write(&mut self, out: ExchangeOut) -> (Vec<u8>, bool) {
        match out {
            // A client that takes no stream gets its reply without the progress.
            ExchangeOut::Notification(_) if !self.takes_stream => (Vec::new(), false),
            ExchangeOut::Notification(json) => {
                let mut bytes = self.start_stream();
                bytes.extend(event(&json));
                (bytes, false)
            }
            ExchangeOut::Reply { json, .. } if self.streaming => {
                let mut bytes = event(&json);
                bytes.extend_from_slice(STREAM_END);
                (bytes, true)
            }
            ExchangeOut::Reply {
                json,
                error,
                retry_after_secs,
            } => {
                let status = match error {
                    Some(code::METHOD_NOT_FOUND) if self.modern => 404,
                    Some(
                        code::UNSUPPORTED_PROTOCOL_VERSION
                        | code::HEADER_MISMATCH
                        | code::MISSING_CLIENT_CAPABILITY,
                    ) => 400,
                    _ => 200,
                };
                let mut head = ReplyHead::new(status, self.keep_alive)
                    .header("content-type", "application/json");
                if let Some(secs) = retry_after_secs {
                    head = head.header("retry-after", secs.to_string());
                }
                (head.with_body(&json), true)
            }
            ExchangeOut::Accepted => (ReplyHead::new(202, self.keep_alive).with_body(b""), true),
            ExchangeOut::Metrics(text) => {
                let head = ReplyHead::new(200, self.keep_alive)
                    .header("content-type", METRICS_CONTENT_TYPE);
                if self.head_only {
                    return (head.without_body(text.len()), true);
                }
                (head.with_body(&text), true)
            }
            ExchangeOut::Refused(denial) => {
                let error =
                    RpcError::new(crate::jsonrpc::ErrorKind::InvalidRequest, denial.message);
                let body = error.envelope(None);
                let mut head = ReplyHead::new(denial.status, self.keep_alive)
                    .header("content-type", "application/json");
                if let Some(challenge) = denial.challenge {
                    head = head.header("www-authenticate", challenge);
                }
                if denial.status == 503 {
                    head = head.header("retry-after", "5");
                }
                (head.with_body(&body), true)
            }
            // The connection reads the body now; the request's own exchange follows.
            ExchangeOut::Verified(_) => (Vec::new(), true),
            // Cancelled: the response ends without a reply, never with a reset.
            ExchangeOut::Ended => {
                if self.takes_stream {
                    let mut bytes = self.start_stream();
                    bytes.extend_from_slice(STREAM_END);
                    (bytes, true)
                } else {
                    (ReplyHead::new(202, self.keep_alive).with_body(b""), true)
                }
            }
        }
    }

    /// The stream's head, the first time.
    fn start_stream(&mut self) -> Vec<u8> {
        if std::mem::replace(&mut self.streaming, true) {
            return Vec::new();
        }
        ReplyHead::new(200, self.keep_alive)
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
            // Proxies such as nginx otherwise hold events back.
            .header("x-accel-buffering", "no")
            .stream()
    }
}
