//! Loopback proxies for the proxy tests: SOCKS5 (RFC 1928, with RFC 1929 user/password)
//! and HTTP `CONNECT` over TLS (an `https://` proxy). Each records the tunnels it opened
//! and splices bytes; it only ever connects to loopback addresses.

use crate::tls::TestCa;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One tunnel a proxy opened (or refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunnel {
    /// What the client asked for: `host:port`, the host as sent (a name or an address).
    pub target: String,
    /// The credentials the client sent.
    pub credentials: Option<(String, String)>,
    /// Whether the proxy opened it.
    pub opened: bool,
}

/// A running proxy.
pub struct TestProxy {
    /// Its URL, credentials included when it requires them.
    pub url: String,
    tunnels: Arc<Mutex<Vec<Tunnel>>>,
}

type Credentials = Option<(String, String)>;

impl TestProxy {
    /// A SOCKS5 proxy; with `credentials`, it requires them (user/password method).
    /// `scheme` is `socks5` or `socks5h`, for the URL only.
    pub fn socks5(scheme: &str, credentials: Option<(&str, &str)>) -> TestProxy {
        let required: Credentials = credentials.map(|(u, p)| (u.to_owned(), p.to_owned()));
        TestProxy::start(scheme, credentials, move |stream, tunnels| {
            socks5_session(stream, required.as_ref(), tunnels)
        })
    }

    /// An `https://` proxy: TLS with a certificate from `ca`, then HTTP `CONNECT`.
    pub fn https(ca: &TestCa) -> TestProxy {
        let config = ca.server_config();
        TestProxy::start("https", None, move |stream, tunnels| {
            let Ok(session) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            connect_session(rustls::StreamOwned::new(session, stream), tunnels);
        })
    }

    fn start(
        scheme: &str,
        credentials: Option<(&str, &str)>,
        session: impl Fn(TcpStream, &Mutex<Vec<Tunnel>>) + Send + Sync + 'static,
    ) -> TestProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let auth = credentials
            .map(|(u, p)| format!("{u}:{p}@"))
            .unwrap_or_default();
        let url = format!("{scheme}://{auth}{}", listener.local_addr().unwrap());
        let tunnels: Arc<Mutex<Vec<Tunnel>>> = Arc::default();
        let recorded = tunnels.clone();
        let session = Arc::new(session);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (session, recorded) = (session.clone(), recorded.clone());
                thread::spawn(move || session(stream, &recorded));
            }
        });
        TestProxy { url, tunnels }
    }

    /// The tunnels asked for so far.
    pub fn tunnels(&self) -> Vec<Tunnel> {
        self.tunnels.lock().unwrap().clone()
    }
}

fn socks5_session(
    mut client: TcpStream,
    required: Option<&(String, String)>,
    tunnels: &Mutex<Vec<Tunnel>>,
) {
    let mut head = [0u8; 2];
    if client.read_exact(&mut head).is_err() || head[0] != 5 {
        return;
    }
    let mut methods = vec![0u8; usize::from(head[1])];
    if client.read_exact(&mut methods).is_err() {
        return;
    }
    let mut credentials = None;
    if required.is_some() {
        if !methods.contains(&2) {
            let _ = client.write_all(&[5, 0xFF]);
            return;
        }
        let _ = client.write_all(&[5, 2]);
        let Some(sent) = read_user_password(&mut client) else {
            return;
        };
        let ok = Some(&sent) == required;
        credentials = Some(sent);
        let _ = client.write_all(&[1, if ok { 0 } else { 1 }]);
        if !ok {
            tunnels.lock().unwrap().push(Tunnel {
                target: String::new(),
                credentials,
                opened: false,
            });
            return;
        }
    } else if methods.contains(&0) {
        let _ = client.write_all(&[5, 0]);
    } else {
        let _ = client.write_all(&[5, 0xFF]);
        return;
    }
    let Some((host, port)) = read_connect_request(&mut client) else {
        return;
    };
    let upstream = loopback(&host, port).and_then(|addr| TcpStream::connect(addr).ok());
    tunnels.lock().unwrap().push(Tunnel {
        target: format!("{host}:{port}"),
        credentials,
        opened: upstream.is_some(),
    });
    let Some(upstream) = upstream else {
        let _ = client.write_all(&[5, 4, 0, 1, 0, 0, 0, 0, 0, 0]);
        return;
    };
    let _ = client.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]);
    splice(client, upstream);
}

/// The CONNECT request after the greeting: its host (an address or a name) and port.
fn read_connect_request(client: &mut TcpStream) -> Option<(String, u16)> {
    let mut request = [0u8; 4];
    if client.read_exact(&mut request).is_err() || request[..3] != [5, 1, 0] {
        return None;
    }
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            if client.read_exact(&mut ip).is_err() {
                return None;
            }
            Ipv4Addr::from(ip).to_string()
        }
        4 => {
            let mut ip = [0u8; 16];
            if client.read_exact(&mut ip).is_err() {
                return None;
            }
            Ipv6Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            let mut name = Vec::new();
            if client.read_exact(&mut len).is_err() {
                return None;
            }
            name.resize(usize::from(len[0]), 0);
            if client.read_exact(&mut name).is_err() {
                return None;
            }
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => return None,
    };
    let mut port = [0u8; 2];
    if client.read_exact(&mut port).is_err() {
        return None;
    }
    Some((host, u16::from_be_bytes(port)))
}

fn read_user_password(client: &mut TcpStream) -> Option<(String, String)> {
    let mut version = [0u8; 2];
    client.read_exact(&mut version).ok()?;
    let mut user = vec![0u8; usize::from(version[1])];
    client.read_exact(&mut user).ok()?;
    let mut len = [0u8; 1];
    client.read_exact(&mut len).ok()?;
    let mut password = vec![0u8; usize::from(len[0])];
    client.read_exact(&mut password).ok()?;
    Some((
        String::from_utf8_lossy(&user).into_owned(),
        String::from_utf8_lossy(&password).into_owned(),
    ))
}

/// A name only these proxies resolve (to loopback; `.test` is reserved by RFC 6761): a
/// plain http origin by this name goes through a proxy, where one by a loopback name or
/// address never does.
pub const ORIGIN_NAME: &str = "origin.test";

/// Only loopback destinations: the proxies never reach anywhere else.
fn loopback(host: &str, port: u16) -> Option<SocketAddr> {
    let ip: IpAddr = match host {
        "localhost" | ORIGIN_NAME => IpAddr::V4(Ipv4Addr::LOCALHOST),
        other => other.trim_matches(['[', ']']).parse().ok()?,
    };
    ip.is_loopback().then_some(SocketAddr::new(ip, port))
}

/// Copies bytes both ways until either side closes.
fn splice(a: TcpStream, b: TcpStream) {
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    let copy = |mut from: TcpStream, mut to: TcpStream| {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    };
    let one = thread::spawn(move || copy(a, b2));
    copy(b, a2);
    let _ = one.join();
}

/// HTTP `CONNECT` on an already-wrapped (TLS) client stream, then a splice that polls
/// both sides, since the TLS stream cannot be split between two threads.
fn connect_session(
    mut client: rustls::StreamOwned<rustls::ServerConnection, TcpStream>,
    tunnels: &Mutex<Vec<Tunnel>>,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
        if head.len() > 16 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let target = text
        .strip_prefix("CONNECT ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_owned();
    let upstream = target
        .rsplit_once(':')
        .and_then(|(host, port)| loopback(host, port.parse().ok()?))
        .and_then(|addr| TcpStream::connect(addr).ok());
    tunnels.lock().unwrap().push(Tunnel {
        target,
        credentials: None,
        opened: upstream.is_some(),
    });
    let Some(mut upstream) = upstream else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .and_then(|()| client.flush())
        .is_err()
    {
        return;
    }
    let tick = Some(Duration::from_millis(2));
    let _ = client.sock.set_read_timeout(tick);
    let _ = upstream.set_read_timeout(tick);
    let mut buf = [0u8; 16 * 1024];
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    loop {
        match client.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if upstream.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => break,
        }
        match upstream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if client
                    .write_all(&buf[..n])
                    .and_then(|()| client.flush())
                    .is_err()
                {
                    break;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => break,
        }
    }
    let _ = upstream.shutdown(Shutdown::Both);
    let _ = client.sock.shutdown(Shutdown::Both);
}
