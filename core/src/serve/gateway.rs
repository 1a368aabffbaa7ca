//! Identity from a trusted gateway: which peers are proxies the operator trusts
//! (`server.http.trusted_proxies`), the identity header they set
//! (`server.http.identity_header`), and the client address they pass in
//! `X-Forwarded-For`. A request from any other peer names nobody by those headers, so a
//! client reaching the port directly cannot claim someone else's identity or address.
//! From a trusted peer the identity is still only a claim: the server honours it only
//! beside the gateway's own credential (`client_of` in `server/oauth.rs`), so another
//! tenant sharing the gateway's network cannot speak for users either.
//!
//! Identities are compared as the gateway sends them, byte for byte: folding case or
//! Unicode forms is the gateway's to do, once, where it knows its users.
//!
//! Everything here reads untrusted text: the configuration's list once, and two headers
//! per request (fuzz target `gateway`).

use crate::http::Request;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Most characters of an identity a gateway may pass.
pub const MAX_IDENTITY: usize = 256;

/// Addresses of `X-Forwarded-For` looked at, from the right: a longer chain is an
/// attacker's padding, never a real path through proxies.
const MAX_HOPS: usize = 32;

/// An address or a network (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

/// Why an entry of `server.http.trusted_proxies` is not an address or a network.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{entry:?} is not an IP address or a network such as 10.0.0.0/8 or fd00::/8 ({why})")]
pub struct BadCidr {
    /// The entry, as written.
    pub entry: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl Cidr {
    /// Parses `a.b.c.d`, `a.b.c.d/n` (n ≤ 32), an IPv6 address, or one with `/n` (n ≤ 128).
    /// Bits of the address past the prefix must be zero, so a typo such as `10.1.0.0/8`
    /// (meant `/16`?) is refused rather than silently widened.
    ///
    /// # Errors
    /// [`BadCidr`], naming the entry and what is wrong.
    pub fn parse(text: &str) -> Result<Cidr, BadCidr> {
        let (cidr, exact) = Cidr::read(text)?;
        if !exact {
            return Err(bad(text, "the address has bits set past the prefix length"));
        }
        Ok(cidr)
    }

    /// As [`Cidr::parse`], but an address with bits past its prefix stands for its
    /// network, as `NO_PROXY` readers take it (`10.1.2.3/8` is `10.0.0.0/8`).
    ///
    /// # Errors
    /// [`BadCidr`], naming the entry and what is wrong.
    pub fn parse_widened(text: &str) -> Result<Cidr, BadCidr> {
        Cidr::read(text).map(|(cidr, _)| cidr)
    }

    /// The network `text` names, and whether the address had no bits past the prefix.
    fn read(text: &str) -> Result<(Cidr, bool), BadCidr> {
        let entry = text.trim();
        let (address, prefix) = match entry.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (entry, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| bad(entry, "not an IPv4 or IPv6 address"))?;
        let bits = max_prefix(address);
        let prefix = match prefix {
            None => bits,
            Some(p) => {
                if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(entry, "the prefix length is not a number"));
                }
                p.parse::<u8>()
                    .ok()
                    .filter(|p| *p <= bits)
                    .ok_or_else(|| bad(entry, "the prefix length is longer than the address"))?
            }
        };
        let network = masked(address, prefix);
        Ok((Cidr { network, prefix }.as_ipv4(), network == address))
    }

    /// A network inside the IPv4-mapped block (`::ffff:10.0.0.0/104`) as the IPv4 network
    /// it is (`10.0.0.0/8`): [`Cidr::contains`] sees a mapped peer as IPv4, so a network
    /// kept as IPv6 would never hold the peers its entry names.
    fn as_ipv4(self) -> Cidr {
        match self.network {
            IpAddr::V6(a) if self.prefix >= 96 => match a.to_ipv4_mapped() {
                Some(v4) => Cidr {
                    network: IpAddr::V4(v4),
                    prefix: self.prefix - 96,
                },
                None => self,
            },
            _ => self,
        }
    }

    /// Whether `address` is in this network. An IPv4 address written as IPv6
    /// (`::ffff:10.0.0.1`, as dual-stack sockets report IPv4 peers) is its IPv4 self.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        match (self.network, address) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                masked(address, self.prefix) == self.network
            }
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

fn bad(entry: &str, why: &'static str) -> BadCidr {
    BadCidr {
        entry: entry.trim().chars().take(64).collect(),
        why,
    }
}

fn max_prefix(address: IpAddr) -> u8 {
    match address {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// `address` with every bit past `prefix` cleared.
fn masked(address: IpAddr, prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(a) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
        }
        IpAddr::V6(a) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
        }
    }
}

/// An IPv4-mapped IPv6 address as IPv4; any other as it is.
pub fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(a) => a.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

/// Why a list of trusted proxies is refused: one entry, or the entries together, hold
/// every address of a family, so any peer at all would be believed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} every {family} address: any peer could then set X-Forwarded-For and pass the checks meant for the gateway alone")]
pub struct TrustsEveryone {
    /// The entry that holds them all, or the entries that do together.
    pub what: String,
    /// `IPv4` or `IPv6`.
    pub family: &'static str,
}

/// The IPv4-mapped block, `::ffff:0:0/96`: an IPv6 network that holds it holds every
/// IPv4 peer as a dual-stack socket reports it.
const MAPPED: Ipv6Addr = Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0);

/// Whether `trusted` (as [`Cidr::parse`] read it) trusts every peer of a family:
/// `0.0.0.0/0`, `::/0`, `::ffff:0:0/96` (read as `0.0.0.0/0`), an IPv6 network wide
/// enough to hold the IPv4-mapped block (`::/80`), or entries that together leave no
/// IPv4 address out (`0.0.0.0/1` and `128.0.0.0/1`). A list of the gateway's own
/// addresses, or of the network it runs in, is never any of these.
///
/// # Errors
/// [`TrustsEveryone`], naming the entry or entries.
pub fn check_trusted(trusted: &[Cidr]) -> Result<(), TrustsEveryone> {
    for cidr in trusted {
        match cidr.network {
            IpAddr::V4(_) if cidr.prefix == 0 => {
                return Err(everyone(format!("{cidr} holds"), "IPv4"));
            }
            IpAddr::V6(_) if cidr.prefix == 0 => {
                return Err(everyone(format!("{cidr} holds"), "IPv6"));
            }
            IpAddr::V6(_) if masked(IpAddr::V6(MAPPED), cidr.prefix) == cidr.network => {
                return Err(everyone(
                    format!("{cidr} holds ::ffff:0:0/96, the IPv4-mapped form of"),
                    "IPv4",
                ));
            }
            _ => {}
        }
    }
    // Together: the IPv4 networks' ranges, merged from the lowest.
    let mut ranges: Vec<(u64, u64)> = trusted
        .iter()
        .filter_map(|c| match c.network {
            IpAddr::V4(a) => {
                let start = u64::from(u32::from(a));
                Some((start, start + (1u64 << (32 - u32::from(c.prefix)))))
            }
            IpAddr::V6(_) => None,
        })
        .collect();
    ranges.sort_unstable();
    let mut covered = 0u64;
    for (start, end) in ranges {
        if start > covered {
            return Ok(());
        }
        covered = covered.max(end);
    }
    if covered >= 1u64 << 32 {
        return Err(everyone("the entries together hold".into(), "IPv4"));
    }
    Ok(())
}

fn everyone(what: String, family: &'static str) -> TrustsEveryone {
    TrustsEveryone { what, family }
}

/// Why a header cannot be `server.http.identity_header`: it already carries something
/// else, which clients send or proxies pass on as they are (a gateway would have to
/// strip it from every request, and a client could otherwise name itself anyone), or
/// which HTTP or this server reads for another purpose. `None`: the header is free.
/// `name` is lower-case.
pub fn carries_something_else(name: &str) -> Option<&'static str> {
    const CREDENTIALS: &[&str] = &[
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "www-authenticate",
        "proxy-authenticate",
    ];
    const FORWARDING: &[&str] = &[
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-host",
        "x-forwarded-proto",
        "x-forwarded-port",
        "x-forwarded-prefix",
        "x-forwarded-server",
        "x-real-ip",
        "via",
        "max-forwards",
    ];
    const FRAMING: &[&str] = &[
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "expect",
    ];
    const CLIENT: &[&str] = &[
        "user-agent",
        "referer",
        "origin",
        "from",
        "accept",
        "cache-control",
        "pragma",
        "range",
        "date",
        "dnt",
        "prefer",
        "priority",
        "last-event-id",
        "traceparent",
        "tracestate",
        "baggage",
        "x-request-id",
        "x-correlation-id",
        "x-http-method-override",
    ];
    if CREDENTIALS.contains(&name) {
        return Some("a credential");
    }
    if FORWARDING.contains(&name) {
        return Some("what proxies say about the connection");
    }
    if FRAMING.contains(&name) {
        return Some("how HTTP frames and routes the request");
    }
    if name.starts_with("mcp-") {
        return Some("MCP's own fields (protocol version, session, method, name)");
    }
    if ["content-", "accept-", "if-", "sec-"]
        .iter()
        .any(|p| name.starts_with(p))
        || CLIENT.contains(&name)
    {
        return Some("what the client says about itself or its request");
    }
    None
}

/// The rules of one endpoint for requests that come through a gateway.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gateway {
    /// The peers whose `X-Forwarded-For` and identity header are believed.
    pub trusted: Vec<Cidr>,
    /// The header (lower-cased) a trusted proxy names the user in, if any.
    pub identity_header: Option<String>,
}

/// What a request's gateway headers say, once its peer is known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forwarded {
    /// The identity a trusted proxy passed: the request's user only if its credential
    /// is the gateway's, which the server decides.
    pub identity: Option<Claim>,
    /// The client's address: the nearest untrusted hop of `X-Forwarded-For` through a
    /// trusted proxy, else the peer's own.
    pub remote: Option<IpAddr>,
    /// The identity header came from a peer that is not trusted, and was ignored.
    pub ignored: bool,
}

/// A trusted proxy's identity header: the user it names, or why it names nobody.
pub type Claim = Result<String, BadIdentity>;

/// An identity header that names nobody a gateway could mean.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {header} header must name the user in 1 to {MAX_IDENTITY} printable ASCII characters (space to ~) and be sent once: {why}. Fix the gateway that sets it")]
pub struct BadIdentity {
    /// The header's name.
    pub header: String,
    /// What is wrong.
    pub why: &'static str,
}

impl Gateway {
    /// Whether `peer` is a trusted proxy.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.trusted.iter().any(|c| c.contains(peer))
    }

    /// What `request`'s gateway headers say, as sent by `peer` (`None`: not a socket
    /// peer, such as a test's). The identity header counts only from a trusted peer;
    /// from another it is ignored (and said so). A trusted peer's header is a [`Claim`]:
    /// the user, or what is wrong with it (empty, too long, repeated, or holding a
    /// character that is not printable ASCII); the server judges it only beside the
    /// gateway's credential.
    pub fn read(&self, request: &Request, peer: Option<IpAddr>) -> Forwarded {
        let trusted = peer.is_some_and(|p| self.trusts(p));
        let mut forwarded = Forwarded {
            remote: peer.map(canonical),
            ..Forwarded::default()
        };
        if trusted {
            if let Some(hop) = self.client_hop(request) {
                forwarded.remote = Some(hop);
            }
        }
        let Some(header) = &self.identity_header else {
            return forwarded;
        };
        let mut values = request
            .headers
            .iter()
            .filter(|(n, _)| n == header)
            .map(|(_, v)| v.as_str());
        let Some(value) = values.next() else {
            return forwarded;
        };
        if !trusted {
            forwarded.ignored = true;
            return forwarded;
        }
        let bad = |why| BadIdentity {
            header: header.clone(),
            why,
        };
        forwarded.identity = Some(match values.next() {
            Some(_) => Err(bad("it came more than once")),
            None => identity(value).map(str::to_owned).map_err(bad),
        });
        forwarded
    }

    /// The client's address in `X-Forwarded-For` (every such header, in order): from the
    /// right, the first hop that is not a trusted proxy; the leftmost when all are. A hop
    /// that is no address ends the walk: what lies left of it is not to be believed.
    fn client_hop(&self, request: &Request) -> Option<IpAddr> {
        let hops: Vec<&str> = request
            .headers
            .iter()
            .filter(|(n, _)| n == "x-forwarded-for")
            .flat_map(|(_, v)| v.split(','))
            .collect();
        let mut found = None;
        for hop in hops.iter().rev().take(MAX_HOPS) {
            let Some(address) = hop_address(hop) else {
                break;
            };
            found = Some(address);
            if !self.trusts(address) {
                break;
            }
        }
        found
    }
}

/// One `X-Forwarded-For` hop as an address: `192.0.2.1`, `2001:db8::1`, or either with
/// a port (`192.0.2.1:443`, `[2001:db8::1]:443`), as some proxies write them.
fn hop_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(address) = hop.parse::<IpAddr>() {
        return Some(canonical(address));
    }
    if let Ok(socket) = hop.parse::<std::net::SocketAddr>() {
        return Some(canonical(socket.ip()));
    }
    hop.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .and_then(|h| h.parse::<IpAddr>().ok())
        .map(canonical)
}

/// An identity header's value (spaces around it dropped, as HTTP does), when it is one:
/// 1 to [`MAX_IDENTITY`] printable ASCII characters (HTTP's visible characters and
/// space). Nothing else: the name reaches logs, metric labels and limits' keys, where a
/// control or bidirectional-override character could disguise one user as another.
///
/// # Errors
/// What is wrong with it.
pub fn identity(value: &str) -> Result<&str, &'static str> {
    let value = value.trim_matches([' ', '\t']);
    if value.is_empty() {
        return Err("it is empty");
    }
    if !value.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return Err("it holds a character that is not printable ASCII");
    }
    if value.len() > MAX_IDENTITY {
        return Err("it is longer than 256 characters");
    }
    Ok(value)
}

#[cfg(test)]
#[path = "gateway/tests.rs"]
mod tests;
