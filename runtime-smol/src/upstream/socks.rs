//! The SOCKS5 handshake (RFC 1928, with RFC 1929 user/password), as byte messages built
//! and read by pure functions, driven over any [`Carrier`].

use super::stream::Carrier;
use super::target::Origin;
use std::net::IpAddr;

/// Where the proxy should connect: an address we resolved, or a name it resolves.
pub enum Destination<'a> {
    Ip(IpAddr),
    Name(&'a str),
}

/// Opens a SOCKS5 tunnel to `destination:port` on `carrier`; an error says why, naming
/// the proxy's reply when it refused.
pub async fn handshake<C: Carrier>(
    carrier: &mut C,
    destination: Destination<'_>,
    port: u16,
    credentials: Option<(&str, &str)>,
) -> Result<(), String> {
    let io = |e| format!("{e:?}");
    carrier
        .write_all(&greeting(credentials.is_some()))
        .await
        .map_err(io)?;
    let mut choice = [0u8; 2];
    read_exact(carrier, &mut choice).await?;
    match (choice, credentials) {
        ([5, 0], _) => {}
        ([5, 2], Some((user, password))) => {
            let auth = user_password(user, password)?;
            carrier.write_all(&auth).await.map_err(io)?;
            let mut status = [0u8; 2];
            read_exact(carrier, &mut status).await?;
            if status[1] != 0 {
                return Err("the proxy refused the user name and password".into());
            }
        }
        ([5, 0xFF], _) | ([5, 2], None) => {
            return Err("the proxy accepts none of our authentication methods (put credentials in the proxy URL)".into())
        }
        _ => return Err("the proxy does not speak SOCKS5".into()),
    }
    carrier
        .write_all(&connect(&destination, port)?)
        .await
        .map_err(io)?;
    let mut head = [0u8; 4];
    read_exact(carrier, &mut head).await?;
    if head[0] != 5 {
        return Err("the proxy sent a reply that is not SOCKS5".into());
    }
    if head[1] != 0 {
        return Err(format!(
            "the proxy refused the connection: {}",
            reply_text(head[1])
        ));
    }
    // The bound address that follows is of no use to us, but must be read past.
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => {
            let mut len = [0u8; 1];
            read_exact(carrier, &mut len).await?;
            usize::from(len[0]) + 2
        }
        _ => return Err("the proxy sent an unknown address type".into()),
    };
    let mut skip = vec![0u8; rest];
    read_exact(carrier, &mut skip).await
}

/// The destination to ask for: a literal IP as such, a name as a name.
pub fn destination(origin: &Origin) -> Destination<'_> {
    match origin.host.parse::<IpAddr>() {
        Ok(ip) => Destination::Ip(ip),
        Err(_) => Destination::Name(&origin.host),
    }
}

async fn read_exact<C: Carrier>(carrier: &mut C, buf: &mut [u8]) -> Result<(), String> {
    let mut filled = 0;
    while filled < buf.len() {
        match carrier.read(&mut buf[filled..]).await {
            Ok(0) => {
                return Err("the proxy closed the connection during the SOCKS5 handshake".into())
            }
            Ok(n) => filled += n,
            Err(e) => return Err(format!("{e:?}")),
        }
    }
    Ok(())
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

fn user_password(user: &str, password: &str) -> Result<Vec<u8>, String> {
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

fn connect(destination: &Destination<'_>, port: u16) -> Result<Vec<u8>, String> {
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
}
