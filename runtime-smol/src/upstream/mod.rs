//! The smol runtime's HTTP client: HTTP/1.1 on non-blocking sockets (rustls for https),
//! each attempt a task on the runtime's executor, kept-alive connections pooled per origin.
//!
//! An attempt in flight costs its task, its socket and one read buffer; no thread. Aborting
//! is dropping the task, which drops the socket and so closes the connection.

mod connect;
mod pool;
mod stream;

use connect::Connector;
use pool::Pool;
use responses_mcp_config::Startup;
use responses_mcp_core::http::{is_event_stream, scrub, Reader, Response, MAX_BODY_BYTES};
use responses_mcp_core::Message;
use responses_mcp_core::{
    AttemptId, Destination, HttpHead, HttpMethod, HttpReply, TransportError, TransportErrorKind,
};
use responses_mcp_host::client::target::Target;
use responses_mcp_host::client::{invalid, message, read_error, startup_header_lines};
use smol::channel::Sender;
use stream::{stream_error, Stream};

/// Sends attempts with the credentials and headers of the configuration.
pub struct Upstream {
    /// The request header lines every request to the provider carries, or why they
    /// cannot be sent.
    headers: Result<Vec<u8>, &'static str>,
    /// The lines of a request to the identity provider: ours, no credentials.
    bare: Result<Vec<u8>, &'static str>,
    /// The key's bytes, to scrub from bodies that echo it back.
    key: Option<Vec<u8>>,
    connector: Connector,
    pool: Pool,
}

/// How an exchange on a connection failed.
struct Failed {
    error: TransportError,
    /// Some of the response arrived, so the request surely did.
    answered: bool,
}

impl Upstream {
    /// A client for `startup`'s configuration, through its proxy if it has one.
    pub fn new(startup: &Startup) -> Upstream {
        Upstream {
            headers: startup_header_lines(startup),
            bare: responses_mcp_host::client::header_lines(&[]),
            key: startup
                .api_key
                .as_ref()
                .map(|k| k.expose().as_bytes().to_vec()),
            connector: Connector::new(startup.proxy.proxy().cloned(), startup.ca_pem.as_deref()),
            pool: Pool::default(),
        }
    }

    /// Performs one attempt: POSTs `body` to `url` and reads the whole reply.
    #[cfg(test)]
    pub async fn send(&self, url: &str, body: Vec<u8>) -> Result<HttpReply, TransportError> {
        match self
            .deliver(HttpMethod::Post, Destination::Provider, url, body, None)
            .await?
        {
            Delivered::Whole(reply) => Ok(reply),
            Delivered::Streamed => Err(invalid("streamed without a destination")),
        }
    }

    /// A client for the trace collector: direct (no proxy: collectors sit beside the
    /// service), the built-in roots, no credentials of the provider.
    #[cfg(feature = "traces")]
    pub fn collector() -> Upstream {
        Upstream {
            headers: Err("the collector's client sends no provider requests"),
            bare: Err("the collector's client sends no identity provider requests"),
            key: None,
            connector: Connector::new(None, None),
            pool: Pool::default(),
        }
    }

    /// POSTs an OTLP/HTTP protobuf `body` to `url` with `headers`: the reply's status.
    #[cfg(feature = "traces")]
    pub async fn export(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<u16, TransportError> {
        let mut lines = format!(
            "User-Agent: {}\r\nContent-Type: application/x-protobuf\r\n",
            responses_mcp_config::USER_AGENT
        );
        for (name, value) in headers {
            lines.push_str(&format!("{name}: {value}\r\n"));
        }
        match self
            .send_lines(HttpMethod::Post, lines.as_bytes(), url, body, None)
            .await?
        {
            Delivered::Whole(reply) => Ok(reply.status),
            Delivered::Streamed => Err(invalid("the collector answered with an event stream")),
        }
    }

    /// Performs one attempt: POSTs `body` to `url`. A 2xx event stream goes to `stream_to`
    /// as it arrives (its head, then body pieces; the caller sends the end); any other
    /// reply is read whole.
    pub async fn deliver(
        &self,
        method: HttpMethod,
        to: Destination,
        url: &str,
        body: Vec<u8>,
        stream_to: Option<StreamTo<'_>>,
    ) -> Result<Delivered, TransportError> {
        let headers = match to {
            Destination::Provider => &self.headers,
            Destination::IdentityProvider => &self.bare,
        };
        let headers = headers.as_deref().map_err(|why| invalid(why))?;
        self.send_lines(method, headers, url, body, stream_to).await
    }

    /// One request with these header lines; see [`Upstream::deliver`].
    async fn send_lines(
        &self,
        method: HttpMethod,
        headers: &[u8],
        url: &str,
        body: Vec<u8>,
        stream_to: Option<StreamTo<'_>>,
    ) -> Result<Delivered, TransportError> {
        let target = Target::parse(url).map_err(invalid)?;
        // The body is only needed inside the message, which lives until the reply.
        let message = message(method, &target, headers, &body);
        drop(body);
        let (response, stream) = loop {
            let (mut stream, reused) = match self.pool.take(&target.origin) {
                Some(stream) => (stream, true),
                // Boxed: a task's future is as large as its largest state, and connecting
                // (TLS inside TLS through an https:// proxy holds two sessions) is by far
                // the largest, while an attempt spends its life in `exchange`.
                None => (
                    Box::pin(self.connector.connect(&target.origin)).await?,
                    false,
                ),
            };
            match exchange(&mut stream, &message, stream_to).await {
                Ok(response) => break (response, stream),
                // The server closed the kept-alive connection before reading the request;
                // it is not a failure of this call.
                Err(Failed {
                    answered: false, ..
                }) if reused => log::debug!("a kept-alive connection was closed; reconnecting"),
                Err(failed) => return Err(failed.error),
            }
        };
        let (response, streamed) = match response {
            Exchanged::Whole(response) => (response, false),
            Exchanged::Streamed(response) => (response, true),
        };
        if response.reusable {
            self.pool.keep(target.origin, stream);
        }
        if streamed {
            return Ok(Delivered::Streamed);
        }
        Ok(Delivered::Whole(HttpReply {
            status: response.status,
            headers: response.headers,
            body: match &self.key {
                Some(key) => scrub(response.body, key),
                None => response.body,
            },
        }))
    }
}

/// Where a streamed reply goes: the main loop's channel, tagged with the attempt.
#[derive(Clone, Copy)]
pub struct StreamTo<'a> {
    pub attempt: AttemptId,
    pub events: &'a Sender<Message>,
}

/// How a reply was handed over.
pub enum Delivered {
    /// Read whole (not a 2xx event stream, or nowhere to stream to).
    Whole(HttpReply),
    /// Sent as it arrived; the caller sends its end.
    Streamed,
}

/// What an exchange read.
enum Exchanged {
    Whole(Response),
    /// Streamed; the response holds nothing but whether the connection can be kept.
    Streamed(Response),
}

/// Writes the request and reads its response, streaming a 2xx event stream to
/// `stream_to` as it arrives.
async fn exchange(
    stream: &mut Stream,
    message: &[u8],
    stream_to: Option<StreamTo<'_>>,
) -> Result<Exchanged, Failed> {
    if let Err(e) = stream.write_all(message).await {
        return Err(Failed {
            error: stream_error(e),
            answered: false,
        });
    }
    let mut reader = Reader::new(MAX_BODY_BYTES);
    let mut streaming = None;
    loop {
        let read = stream.read(reader.space()).await;
        let outcome = match read {
            Ok(n) => reader.filled(n).map_err(read_error),
            Err(e) => Err(stream_error(e)),
        };
        let done = match outcome {
            Ok(done) => done,
            Err(error) => {
                return Err(Failed {
                    error,
                    answered: reader.started(),
                })
            }
        };
        if streaming.is_none() {
            streaming = stream_head(stream_to, &reader, done.as_ref()).await?;
        }
        if let Some(to) = streaming {
            let piece = match &done {
                Some(response) => response.body.clone(),
                None => reader.take_body(),
            };
            if !piece.is_empty() {
                send(to, Message::Body(to.attempt, piece)).await?;
            }
        }
        if let Some(response) = done {
            return Ok(match streaming {
                Some(_) => Exchanged::Streamed(response),
                None => Exchanged::Whole(response),
            });
        }
    }
}

/// Once the head is in: a 2xx event stream's head goes to `stream_to`, which then takes
/// the body as it arrives. The head is in the reader while the body arrives, or in the
/// response when it all came in one read.
async fn stream_head<'a>(
    stream_to: Option<StreamTo<'a>>,
    reader: &Reader,
    done: Option<&Response>,
) -> Result<Option<StreamTo<'a>>, Failed> {
    let head = match done {
        Some(response) => Some((response.status, response.headers.as_slice())),
        None => reader.head(),
    };
    match (stream_to, head) {
        (Some(to), Some((status, headers))) if is_event_stream(status, headers) => {
            let head = HttpHead {
                status,
                headers: headers.to_vec(),
            };
            send(to, Message::Head(to.attempt, head)).await?;
            Ok(Some(to))
        }
        _ => Ok(None),
    }
}

/// Hands a piece of a streamed reply to the main loop; it waits when the loop is behind.
async fn send(to: StreamTo<'_>, message: Message) -> Result<(), Failed> {
    to.events.send(message).await.map_err(|_| Failed {
        error: TransportError {
            kind: TransportErrorKind::Io,
            detail: "the server is shutting down".into(),
        },
        answered: true,
    })
}

#[cfg(test)]
mod tests;
