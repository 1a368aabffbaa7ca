//! A connection to the upstream: a non-blocking TCP socket, plain or with rustls on top.
//!
//! rustls is sans-IO like our core: it takes and yields TLS bytes, and we move them
//! between it and the socket, waiting on the socket through async-io. Dropping a
//! [`Stream`] closes its socket at once, which is how an aborted attempt ends.

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

/// An open connection.
pub enum Stream {
    Plain(Async<TcpStream>),
    Tls(Box<TlsStream>),
}

/// A socket with a TLS session over it.
pub struct TlsStream {
    socket: Async<TcpStream>,
    session: ClientConnection,
}

impl Stream {
    /// Wraps `socket` in TLS for `name` and completes the handshake.
    pub async fn tls(
        socket: Async<TcpStream>,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> Result<Stream, StreamError> {
        let session =
            ClientConnection::new(config, name).map_err(|e| StreamError::Tls(e.to_string()))?;
        let mut tls = TlsStream { socket, session };
        while tls.session.is_handshaking() {
            tls.flush().await?;
            if tls.session.wants_read() && tls.receive().await? == 0 {
                return Err(StreamError::Tls(
                    "the server closed the connection during the TLS handshake".into(),
                ));
            }
        }
        tls.flush().await?;
        Ok(Stream::Tls(Box::new(tls)))
    }

    /// Writes all of `data`.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), StreamError> {
        match self {
            Stream::Plain(socket) => Ok(socket.write_all(data).await?),
            Stream::Tls(tls) => tls.write_all(data).await,
        }
    }

    /// Reads some bytes into `buf`; 0 means the connection closed.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError> {
        match self {
            Stream::Plain(socket) => Ok(socket.read(buf).await?),
            Stream::Tls(tls) => tls.read(buf).await,
        }
    }

    /// Whether an idle connection can carry a request: still open, and nothing arrived
    /// that we did not ask for (a close, an alert, stray bytes).
    pub fn is_quiet(&mut self) -> bool {
        let socket = match self {
            Stream::Plain(socket) => socket,
            Stream::Tls(tls) => {
                let unread = tls.session.reader().read(&mut [0u8; 1]);
                if !matches!(unread, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                    return false;
                }
                &tls.socket
            }
        };
        // The socket is non-blocking: "would block" means open with nothing to read.
        matches!(socket.get_ref().peek(&mut [0u8; 1]), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

impl TlsStream {
    async fn write_all(&mut self, mut data: &[u8]) -> Result<(), StreamError> {
        while !data.is_empty() {
            // rustls takes what fits in its send buffer; sending makes room for the rest.
            let n = self.session.writer().write(data)?;
            if n == 0 && !self.session.wants_write() {
                return Err(io::Error::from(io::ErrorKind::WriteZero).into());
            }
            data = &data[n..];
            self.flush().await?;
        }
        Ok(())
    }

    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, StreamError> {
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.flush().await?;
                    if self.receive().await? == 0 {
                        // Closed without close_notify: the response framing decides whether
                        // that cut anything short.
                        return Ok(0);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Sends every TLS byte rustls has ready.
    async fn flush(&mut self) -> Result<(), StreamError> {
        let TlsStream { socket, session } = self;
        while session.wants_write() {
            socket
                .write_with(|mut s: &TcpStream| session.write_tls(&mut s))
                .await?;
        }
        Ok(())
    }

    /// Receives TLS bytes from the socket and processes them; 0 means the socket closed.
    async fn receive(&mut self) -> Result<usize, StreamError> {
        let TlsStream { socket, session } = self;
        let n = socket
            .read_with(|mut s: &TcpStream| session.read_tls(&mut s))
            .await?;
        if let Err(e) = session.process_new_packets() {
            // Tell the server why, if we can; the error is what matters.
            let _ = self.flush().await;
            return Err(StreamError::Tls(e.to_string()));
        }
        Ok(n)
    }
}
