//! An open connection: a blocking TCP socket, with rustls on top for `https://`, and a
//! second rustls session inside the first when the tunnel runs through an `https://`
//! proxy. rustls' own blocking adapter ([`StreamOwned`]) moves the TLS bytes.

use rustls::{ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::TcpStream;

/// TLS over a socket.
pub type Tls = StreamOwned<ClientConnection, TcpStream>;

/// An open connection.
pub enum Conn {
    Plain(TcpStream),
    /// TLS to the origin, or to an `https://` proxy tunnelling a plain-HTTP origin.
    Tls(Box<Tls>),
    /// TLS to the origin inside TLS to an `https://` proxy.
    TlsInTls(Box<StreamOwned<ClientConnection, Tls>>),
}

impl Conn {
    /// The socket underneath, to shut it down from another thread (an abort).
    pub fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(s) => &s.sock,
            Conn::TlsInTls(s) => &s.sock.sock,
        }
    }

    /// Whether an idle connection can carry a request: still open, and nothing arrived
    /// that we did not ask for (a close, an alert, stray bytes).
    pub fn is_quiet(&self) -> bool {
        let socket = self.socket();
        if socket.set_nonblocking(true).is_err() {
            return false;
        }
        let quiet =
            matches!(socket.peek(&mut [0u8; 1]), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        socket.set_nonblocking(false).is_ok() && quiet
    }
}

/// A TLS peer that closes without `close_notify` ends the stream: the response framing
/// decides whether that cut anything short.
fn eof_is_end(read: io::Result<usize>) -> io::Result<usize> {
    match read {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
        other => other,
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(s) => eof_is_end(s.read(buf)),
            Conn::TlsInTls(s) => eof_is_end(s.read(buf)),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
            Conn::TlsInTls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
            Conn::TlsInTls(s) => s.flush(),
        }
    }
}
