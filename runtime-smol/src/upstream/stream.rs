//! A connection to the upstream: a non-blocking TCP socket, with rustls on top for
//! `https://`, and a second rustls session inside the first when the tunnel runs through
//! an `https://` proxy.
//!
//! rustls is sans-IO like our core: it takes and yields TLS bytes, and we move them
//! between it and whatever carries them ([`Carrier`]): the socket itself, waited on
//! through async-io, or the plaintext of an outer TLS session. Dropping a [`Stream`]
//! closes its socket at once, which is how an aborted attempt ends.

use responses_mcp_core::{TransportError, TransportErrorKind};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::Async;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

/// Why a stream operation failed.
#[derive(Debug)]
pub enum StreamError {
    Io(io::Error),
    /// The TLS layer failed: handshake, certificate, or a broken record.
    Tls(String),
}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

/// What the core is told of a failed stream operation.
pub(super) fn stream_error(e: StreamError) -> TransportError {
    match e {
        StreamError::Tls(detail) => TransportError {
            kind: TransportErrorKind::Tls,
            detail: format!("TLS: {detail}"),
        },
        StreamError::Io(e) => TransportError {
            kind: TransportErrorKind::Io,
            detail: e.to_string(),
        },
    }
}

/// Bytes read from an outer TLS session at a time, to feed an inner one.
const TUNNEL_READ: usize = 16 * 1024;

/// What a TLS session's records travel over.
#[allow(async_fn_in_trait)] // Used with concrete types only, on one thread.
pub trait Carrier {
    /// Reads some bytes; 0 means the connection closed.
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError>;
    /// Writes all of `data`.
    async fn write_all(&mut self, data: &[u8]) -> Result<(), StreamError>;
    /// Sends every TLS byte `session` has ready.
    async fn send_tls(&mut self, session: &mut ClientConnection) -> Result<(), StreamError>;
    /// Receives TLS bytes into `session` and processes them; 0 means closed.
    async fn recv_tls(&mut self, session: &mut ClientConnection) -> Result<usize, StreamError>;
    /// Whether an idle connection is still open with nothing unasked-for to read.
    fn is_quiet(&mut self) -> bool;
}

impl Carrier for Async<TcpStream> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError> {
        Ok(AsyncReadExt::read(self, buf).await?)
    }

    async fn write_all(&mut self, data: &[u8]) -> Result<(), StreamError> {
        Ok(AsyncWriteExt::write_all(self, data).await?)
    }

    async fn send_tls(&mut self, session: &mut ClientConnection) -> Result<(), StreamError> {
        while session.wants_write() {
            self.write_with(|mut s: &TcpStream| session.write_tls(&mut s))
                .await?;
        }
        Ok(())
    }

    async fn recv_tls(&mut self, session: &mut ClientConnection) -> Result<usize, StreamError> {
        let n = self
            .read_with(|mut s: &TcpStream| session.read_tls(&mut s))
            .await?;
        process(self, session).await?;
        Ok(n)
    }

    fn is_quiet(&mut self) -> bool {
        // The socket is non-blocking: "would block" means open with nothing to read.
        matches!(self.get_ref().peek(&mut [0u8; 1]), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// Processes received records; on a TLS error, tells the peer why if it can.
async fn process<C: Carrier>(
    carrier: &mut C,
    session: &mut ClientConnection,
) -> Result<(), StreamError> {
    if let Err(e) = session.process_new_packets() {
        let _ = carrier.send_tls(session).await;
        return Err(StreamError::Tls(e.to_string()));
    }
    Ok(())
}

/// A TLS session over a carrier.
pub struct TlsStream<C> {
    carrier: C,
    session: ClientConnection,
    /// Plaintext read from this session to feed a session inside it (empty otherwise).
    tunnel: Vec<u8>,
}

impl<C: Carrier> TlsStream<C> {
    /// Wraps `carrier` in TLS for `name` and completes the handshake.
    pub async fn handshake(
        carrier: C,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> Result<Self, StreamError> {
        let session =
            ClientConnection::new(config, name).map_err(|e| StreamError::Tls(e.to_string()))?;
        let mut tls = TlsStream {
            carrier,
            session,
            tunnel: Vec::new(),
        };
        while tls.session.is_handshaking() {
            tls.carrier.send_tls(&mut tls.session).await?;
            if tls.session.wants_read() && tls.carrier.recv_tls(&mut tls.session).await? == 0 {
                return Err(StreamError::Tls(
                    "the server closed the connection during the TLS handshake".into(),
                ));
            }
        }
        tls.carrier.send_tls(&mut tls.session).await?;
        Ok(tls)
    }
}

impl<C: Carrier> Carrier for TlsStream<C> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError> {
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.carrier.send_tls(&mut self.session).await?;
                    if self.carrier.recv_tls(&mut self.session).await? == 0 {
                        // Closed without close_notify: the response framing decides
                        // whether that cut anything short.
                        return Ok(0);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn write_all(&mut self, mut data: &[u8]) -> Result<(), StreamError> {
        while !data.is_empty() {
            // rustls takes what fits in its send buffer; sending makes room for the rest.
            let n = self.session.writer().write(data)?;
            if n == 0 && !self.session.wants_write() {
                return Err(io::Error::from(io::ErrorKind::WriteZero).into());
            }
            data = &data[n..];
            self.carrier.send_tls(&mut self.session).await?;
        }
        Ok(())
    }

    /// The inner session's records go out as this session's plaintext.
    async fn send_tls(&mut self, inner: &mut ClientConnection) -> Result<(), StreamError> {
        let mut records = Vec::new();
        while inner.wants_write() {
            inner.write_tls(&mut records)?;
        }
        if records.is_empty() {
            return Ok(());
        }
        self.write_all(&records).await
    }

    /// This session's plaintext is the inner session's records.
    async fn recv_tls(&mut self, inner: &mut ClientConnection) -> Result<usize, StreamError> {
        self.tunnel.resize(TUNNEL_READ, 0);
        let mut tunnel = std::mem::take(&mut self.tunnel);
        let read = self.read(&mut tunnel).await;
        let result = match read {
            Ok(n) => feed(inner, &tunnel[..n]).map(|()| n),
            Err(e) => Err(e),
        };
        self.tunnel = tunnel;
        let n = result?;
        if let Err(e) = inner.process_new_packets() {
            let _ = self.send_tls(inner).await;
            return Err(StreamError::Tls(e.to_string()));
        }
        Ok(n)
    }

    fn is_quiet(&mut self) -> bool {
        let unread = self.session.reader().read(&mut [0u8; 1]);
        matches!(unread, Err(e) if e.kind() == io::ErrorKind::WouldBlock) && self.carrier.is_quiet()
    }
}

/// Hands all of `bytes` to `session`, processing records as its buffer fills.
fn feed(session: &mut ClientConnection, mut bytes: &[u8]) -> Result<(), StreamError> {
    while !bytes.is_empty() {
        let taken = session.read_tls(&mut bytes)?;
        if let Err(e) = session.process_new_packets() {
            return Err(StreamError::Tls(e.to_string()));
        }
        if taken == 0 {
            return Err(StreamError::Tls("the TLS session took no bytes".into()));
        }
    }
    Ok(())
}

/// An open connection.
pub enum Stream {
    Plain(Async<TcpStream>),
    /// TLS to the origin, or to an `https://` proxy tunnelling a plain-HTTP origin.
    Tls(Box<TlsStream<Async<TcpStream>>>),
    /// TLS to the origin inside TLS to an `https://` proxy.
    TlsInTls(Box<TlsStream<TlsStream<Async<TcpStream>>>>),
}

impl Stream {
    /// Writes all of `data`.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), StreamError> {
        match self {
            Stream::Plain(s) => Carrier::write_all(s, data).await,
            Stream::Tls(s) => s.write_all(data).await,
            Stream::TlsInTls(s) => s.write_all(data).await,
        }
    }

    /// Reads some bytes into `buf`; 0 means the connection closed.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError> {
        match self {
            Stream::Plain(s) => Carrier::read(s, buf).await,
            Stream::Tls(s) => s.read(buf).await,
            Stream::TlsInTls(s) => s.read(buf).await,
        }
    }

    /// Whether an idle connection can carry a request: still open, and nothing arrived
    /// that we did not ask for (a close, an alert, stray bytes).
    pub fn is_quiet(&mut self) -> bool {
        match self {
            Stream::Plain(s) => s.is_quiet(),
            Stream::Tls(s) => s.is_quiet(),
            Stream::TlsInTls(s) => s.is_quiet(),
        }
    }
}
