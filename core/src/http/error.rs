//! Why reading a response failed, shared by the reader and the chunk decoder.

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
