//! The SOCKS5 handshake (RFC 1928, with RFC 1929 user/password), sans IO: [`Socks5`]
//! says what to write and how many bytes to read next, and judges what was read. Each
//! runtime drives it over its own socket.

use super::target::Origin;
use std::net::IpAddr;

/// Why a SOCKS5 handshake cannot go on, in words for the call's error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SocksError(pub String);

impl From<String> for SocksError {
    fn from(message: String) -> Self {
        SocksError(message)
    }
}

impl From<&str> for SocksError {
    fn from(message: &str) -> Self {
        SocksError(message.to_owned())
    }
}

/// Where the proxy should connect: an address we resolved, or a name it resolves.
pub enum Destination<'a> {
    /// An address we resolved.
    Ip(IpAddr),
    /// A name the proxy resolves (`socks5h://`).
    Name(&'a str),
}

/// One handshake in progress.
pub struct Socks5 {
    state: State,
    /// The CONNECT request, sent once a method is agreed.
    connect: Vec<u8>,
    /// The user/password message, when we have credentials.
    auth: Option<Vec<u8>>,
}

enum State {
    /// The proxy's method choice (2 bytes) is awaited.
    Choice,
    /// The user/password status (2 bytes).
    Auth,
    /// The reply's first 4 bytes.
    Reply,
    /// The length of the bound host name (1 byte).
    NameLength,
    /// The rest of the bound address, of no use to us but to be read past.
    Bound,
}

/// What to do next.
pub struct Next {
    /// Bytes to write first.
    pub write: Option<Vec<u8>>,
    /// Bytes to read, exactly, and hand to [`Socks5::received`]; 0: the tunnel is open.
    pub read: usize,
}

impl Socks5 {
    /// A handshake for a tunnel to `destination:port`, and its first step (the greeting);
    /// an error says why no handshake can be tried.
    pub fn start(
        destination: Destination<'_>,
        port: u16,
        credentials: Option<(&str, &str)>,
    ) -> Result<(Socks5, Next), SocksError> {
        let auth = credentials
            .map(|(user, password)| user_password(user, password))
            .transpose()?;
        let first = Next {
            write: Some(greeting(auth.is_some())),
            read: 2,
        };
        let connect = connect(&destination, port)?;
        Ok((
            Socks5 {
                state: State::Choice,
                connect,
                auth,
            },
            first,
        ))
    }

    /// Judges `bytes` (exactly what the last step asked to read); the error says what
    /// the proxy did, naming its reply when it refused.
    pub fn received(&mut self, bytes: &[u8]) -> Result<Next, SocksError> {
        let connect = || Next {
            write: Some(self.connect.clone()),
            read: 4,
        };
        let (state, next) = match (&self.state, bytes) {
            (State::Choice, [5, 0]) => (State::Reply, connect()),
            (State::Choice, [5, 2]) => match self.auth.take() {
                Some(auth) => (
                    State::Auth,
                    Next {
                        write: Some(auth),
                        read: 2,
                    },
                ),
                None => return Err(NO_METHOD.into()),
            },
            (State::Choice, [5, 0xFF]) => return Err(NO_METHOD.into()),
            (State::Choice, _) => return Err("the proxy does not speak SOCKS5".into()),
            (State::Auth, [_, 0]) => (State::Reply, connect()),
            (State::Auth, _) => return Err("the proxy refused the user name and password".into()),
            (State::Reply, [5, 0, _, kind]) => match kind {
                1 => (State::Bound, read(4 + 2)),
                4 => (State::Bound, read(16 + 2)),
                3 => (State::NameLength, read(1)),
                _ => return Err("the proxy sent an unknown address type".into()),
            },
            (State::Reply, [5, code, ..]) => {
                return Err(
                    format!("the proxy refused the connection: {}", reply_text(*code)).into(),
                )
            }
            (State::Reply, _) => return Err("the proxy sent a reply that is not SOCKS5".into()),
            (State::NameLength, [len]) => (State::Bound, read(usize::from(*len) + 2)),
            (State::NameLength, _) => return Err("the proxy sent a broken reply".into()),
            (State::Bound, _) => (State::Bound, read(0)),
        };
        self.state = state;
        Ok(next)
    }
}

const NO_METHOD: &str =
    "the proxy accepts none of our authentication methods (put credentials in the proxy URL)";

fn read(n: usize) -> Next {
    Next {
        write: None,
        read: n,
    }
}

/// What to say when the proxy closes the connection mid-handshake.
pub const CLOSED: &str = "the proxy closed the connection during the SOCKS5 handshake";

/// The destination to ask for: a literal IP as such, a name as a name.
pub fn destination(origin: &Origin) -> Destination<'_> {
    match origin.host.parse::<IpAddr>() {
        Ok(ip) => Destination::Ip(ip),
        Err(_) => Destination::Name(&origin.host),
    }
}

/// Version 5, and the methods offered: no authentication, plus user/password when we
/// have credentials.
fn greeting(with_credentials: bool) -> Vec<u8> {
    if with_credentials {
        vec![5, 2, 0, 2]
    } else {
        vec![5, 1, 0]
    }
}

fn user_password(user: &str, password: &str) -> Result<Vec<u8>, SocksError> {
    let (u, p) = (user.as_bytes(), password.as_bytes());
    let (Ok(ul), Ok(pl)) = (u8::try_from(u.len()), u8::try_from(p.len())) else {
        return Err("the proxy user name or password is longer than 255 bytes".into());
    };
    let mut out = vec![1, ul];
    out.extend_from_slice(u);
    out.push(pl);
    out.extend_from_slice(p);
    Ok(out)
}

fn connect(destination: &Destination<'_>, port: u16) -> Result<Vec<u8>, SocksError> {
    let mut out = vec![5, 1, 0];
    match destination {
        Destination::Ip(IpAddr::V4(ip)) => {
            out.push(1);
            out.extend_from_slice(&ip.octets());
        }
        Destination::Ip(IpAddr::V6(ip)) => {
            out.push(4);
            out.extend_from_slice(&ip.octets());
        }
        Destination::Name(name) => {
            let len = u8::try_from(name.len())
                .map_err(|_| "the host name is longer than 255 bytes".to_owned())?;
            out.push(3);
            out.push(len);
            out.extend_from_slice(name.as_bytes());
        }
    }
    out.extend_from_slice(&port.to_be_bytes());
    Ok(out)
}

fn reply_text(code: u8) -> &'static str {
    match code {
        1 => "general failure",
        2 => "not allowed by its rules",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unknown reply code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_rfc_1928_and_1929() {
        assert_eq!(greeting(false), [5, 1, 0]);
        assert_eq!(greeting(true), [5, 2, 0, 2]);
        assert_eq!(
            user_password("u", "pw").unwrap(),
            [1, 1, b'u', 2, b'p', b'w']
        );
        assert!(user_password(&"x".repeat(256), "").is_err());
        let ip = Destination::Ip("127.0.0.1".parse().unwrap());
        assert_eq!(
            connect(&ip, 443).unwrap(),
            [5, 1, 0, 1, 127, 0, 0, 1, 1, 187]
        );
        let name = Destination::Name("a.io");
        assert_eq!(
            connect(&name, 80).unwrap(),
            [5, 1, 0, 3, 4, b'a', b'.', b'i', b'o', 0, 80]
        );
        let v6 = Destination::Ip("::1".parse().unwrap());
        assert_eq!(connect(&v6, 1).unwrap().len(), 3 + 1 + 16 + 2);
        assert_eq!(reply_text(5), "connection refused");
    }

    /// Runs a handshake against the proxy's `replies`, returning what we wrote.
    fn run(
        credentials: Option<(&str, &str)>,
        replies: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, SocksError> {
        let (mut socks, mut next) = Socks5::start(Destination::Name("a.io"), 443, credentials)?;
        let mut written = Vec::new();
        for reply in replies {
            written.extend(next.write.take());
            assert_eq!(next.read, reply.len(), "read size after {written:?}");
            next = socks.received(reply)?;
        }
        written.extend(next.write.take());
        assert_eq!(next.read, 0, "the handshake is not over");
        Ok(written)
    }

    #[test]
    fn the_handshake_follows_the_proxy_through_each_path() {
        let connect_to = connect(&Destination::Name("a.io"), 443).unwrap();
        let written = run(None, &[&[5, 0], &[5, 0, 0, 1], &[1, 2, 3, 4, 0, 80]]).unwrap();
        assert_eq!(written, [greeting(false), connect_to.clone()]);
        let written = run(
            Some(("u", "pw")),
            &[&[5, 2], &[1, 0], &[5, 0, 0, 3], &[2], &[b'h', b'n', 0, 80]],
        )
        .unwrap();
        assert_eq!(
            written,
            [
                greeting(true),
                user_password("u", "pw").unwrap(),
                connect_to
            ]
        );
        let v6_bound: &[u8] = &[0; 18];
        assert!(run(None, &[&[5, 0], &[5, 0, 0, 4], v6_bound]).is_ok());
        for (credentials, replies, why) in [
            (None, &[&[5u8, 2][..]][..], NO_METHOD),
            (None, &[&[5, 0xFF]], NO_METHOD),
            (None, &[&[4, 0]], "the proxy does not speak SOCKS5"),
            (
                Some(("u", "p")),
                &[&[5, 2], &[1, 1]],
                "the proxy refused the user name and password",
            ),
            (
                None,
                &[&[5, 0], &[5, 5, 0, 1]],
                "the proxy refused the connection: connection refused",
            ),
            (
                None,
                &[&[5, 0], &[4, 0, 0, 1]],
                "the proxy sent a reply that is not SOCKS5",
            ),
            (
                None,
                &[&[5, 0], &[5, 0, 0, 9]],
                "the proxy sent an unknown address type",
            ),
        ] {
            assert_eq!(run(credentials, replies).unwrap_err().0, why, "{replies:?}");
        }
    }
}
