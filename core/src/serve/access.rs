//! Who may use the endpoint: the `Host` and `Origin` a request names (DNS-rebinding
//! protection: a web page whose name resolves to 127.0.0.1 must not reach a local
//! server) and, when the operator set one, a bearer token.

use super::exchange::{Caller, Credential};
use crate::clients::ClientId;
use crate::http::Request;
use crate::oauth::{BearerToken, OAuthSettings};
use std::fmt;

/// Host names that always mean this machine.
pub const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// The access rules of one endpoint.
#[derive(Debug, Clone)]
pub struct Access {
    /// Names (`host` or `host:port`, case-insensitive) a request's `Host` may carry;
    /// `None` accepts any (an operator serving on all interfaces behind a proxy that
    /// rewrites `Host`). A name without a port matches every port.
    pub allowed_hosts: Option<Vec<String>>,
    /// Origins (`scheme://host[:port]`) a browser request may come from, besides
    /// loopback ones when `loopback_origins` is set. Requests without `Origin` (every
    /// non-browser client) are not affected.
    pub allowed_origins: Vec<String>,
    /// Accept any `Origin` whose host is a loopback name (a local web client).
    pub loopback_origins: bool,
    /// The single bearer token (the `default` client's), if any.
    pub token: Option<Token>,
    /// The named clients' tokens, if a clients file names any. With either this or
    /// `token`, every request must carry one of them.
    pub clients: Option<ClientTokens>,
    /// Whether `/mcp` is served here; false on a `--metrics-listen` listener, which
    /// serves `/metrics`, `/health` and `/ready` only.
    pub mcp: bool,
    /// OAuth mode: any other bearer token goes to the server's gate, and the protected
    /// resource's metadata is served.
    pub oauth: Option<OAuthDoor>,
    /// Trusted proxies and the identity header they set (none by default).
    pub gateway: super::gateway::Gateway,
}

/// What the endpoint needs of OAuth mode: the metadata it serves and the challenge of a
/// request without a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthDoor {
    /// The Protected Resource Metadata document (RFC 9728).
    pub metadata: Vec<u8>,
    /// `WWW-Authenticate` for a request without a token.
    pub challenge: String,
    /// `WWW-Authenticate` for a token that is not valid.
    pub invalid: String,
    /// The authorization server, named to clients that look for one here.
    pub issuer: String,
}

impl OAuthDoor {
    /// The door of `settings`.
    pub fn of(settings: &OAuthSettings) -> OAuthDoor {
        OAuthDoor {
            metadata: crate::oauth::protected_resource_metadata(settings),
            challenge: settings.challenge(crate::oauth::Challenge::Missing),
            invalid: settings.challenge(crate::oauth::Challenge::NOT_VALID),
            issuer: settings.issuer.clone(),
        }
    }
}

/// A bearer token. Its bytes never leave this type except to be compared.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl Token {
    /// A token; `None` when empty (an empty variable is not a token).
    pub fn new(token: &str) -> Option<Token> {
        let token = token.trim();
        (!token.is_empty()).then(|| Token(token.as_bytes().to_vec()))
    }

    /// Compares in time that depends on the lengths only, not on where bytes differ.
    fn matches(&self, offered: &[u8]) -> bool {
        let mut diff = u8::from(self.0.len() != offered.len());
        for (i, &b) in self.0.iter().enumerate() {
            diff |= b ^ offered.get(i).copied().unwrap_or(!b);
        }
        diff == 0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// The tokens of the named clients, kept as their SHA-256 digests (the clients file
/// holds digests, so it reveals no token). The digest function is given so that a test
/// can name clients by short made-up digests; the hosts give [`crate::sha256::sha256`].
#[derive(Clone)]
pub struct ClientTokens {
    /// SHA-256.
    pub sha256: fn(&[u8]) -> [u8; 32],
    /// Each client's token digest.
    pub digests: Vec<(ClientId, [u8; 32])>,
    /// The clients the file marks `metrics: true`: their token reads `/metrics`, which
    /// names every client and its spend.
    pub metrics: Vec<ClientId>,
}

impl ClientTokens {
    /// Whether `client` may read `/metrics`.
    pub fn reads_metrics(&self, client: ClientId) -> bool {
        self.metrics.contains(&client)
    }

    /// The client whose token is `offered`. Every digest is compared, each in constant
    /// time, so that the time taken says nothing about which bytes or which client
    /// matched.
    fn client_of(&self, offered: &[u8]) -> Option<ClientId> {
        let digest = (self.sha256)(offered);
        let mut found = None;
        for (client, known) in &self.digests {
            let diff = known
                .iter()
                .zip(&digest)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b));
            if diff == 0 && found.is_none() {
                found = Some(*client);
            }
        }
        found
    }
}

impl ClientTokens {
    /// `text` with every word that is a named client's token (a run of the characters a
    /// bearer token is made of, RFC 6750's `b64token`) replaced by `***`. Only the digests
    /// are known, so a token glued to other such characters cannot be found; the single
    /// token, which is known, is scrubbed wherever it stands. Bounded: words past the
    /// first 256 characters are not looked at ([`Access::shown`] gives it 100).
    fn masked(&self, text: &str) -> String {
        let is_token_char = |c: char| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '=')
        };
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            if !word.is_empty() && self.client_of(word.as_bytes()).is_some() {
                out.push_str("***");
            } else {
                out.push_str(word);
            }
            word.clear();
        };
        for c in text.chars().take(256) {
            if is_token_char(c) {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// Characters a request value shows in a refusal, at most.
const SHOWN: usize = 100;

/// A character a bearer token can hold (RFC 6750's `b64token`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/' | '=')
}

impl fmt::Debug for ClientTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientTokens({} clients, ***)", self.digests.len())
    }
}

/// Why a request was refused. Messages say what to fix and never echo a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// `Origin` names a site that may not use this server.
    #[error("Origin {0} is not allowed: add it to server.http.allowed_origins if this web client may use the server")]
    Origin(String),
    /// `Host` names a host this server does not answer for.
    #[error("Host {0} is not allowed: add it to server.http.allowed_hosts if clients reach the server by that name")]
    Host(String),
    /// No `Authorization: Bearer` header, or the wrong token.
    #[error("{}", if *.0 { "this server requires a bearer token: send Authorization: Bearer <token>" } else { "the bearer token is not valid" })]
    Token(bool),
}

impl Denied {
    /// The status to answer with.
    pub fn status(&self) -> u16 {
        match self {
            Denied::Origin(_) | Denied::Host(_) => 403,
            Denied::Token(_) => 401,
        }
    }
}

impl Access {
    /// Checks `Host`, then `Origin`, then the token, and says which client sent it: a
    /// static token's, or, in OAuth mode, any other bearer token for the gate to verify.
    pub fn check(&self, request: &Request) -> Result<Caller, Denied> {
        if let Some(allowed) = &self.allowed_hosts {
            // HTTP/1.0 may omit Host; the reader requires it for HTTP/1.1.
            let host = request.header("host").unwrap_or_default();
            if !allowed.iter().any(|a| host_matches(a, host)) {
                return Err(Denied::Host(self.shown(host)));
            }
        }
        if let Some(origin) = request.header("origin") {
            let loopback = self.loopback_origins
                && origin_host(origin)
                    .is_some_and(|h| LOOPBACK_NAMES.iter().any(|n| h.eq_ignore_ascii_case(n)));
            let listed = self.allowed_origins.iter().any(|o| {
                o.trim_end_matches('/')
                    .eq_ignore_ascii_case(origin.trim_end_matches('/'))
            });
            if !loopback && !listed {
                return Err(Denied::Origin(self.shown(origin)));
            }
        }
        if self.token.is_none() && self.clients.is_none() && self.oauth.is_none() {
            return Ok(Caller::Client(ClientId::DEFAULT));
        }
        let offered = request.header("authorization").and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
        let Some(offered) = offered else {
            return Err(Denied::Token(true));
        };
        if self
            .token
            .as_ref()
            .is_some_and(|t| t.matches(offered.as_bytes()))
        {
            return Ok(Caller::Client(ClientId::DEFAULT));
        }
        if let Some(client) = self
            .clients
            .as_ref()
            .and_then(|c| c.client_of(offered.as_bytes()))
        {
            return Ok(Caller::Client(client));
        }
        match (&self.oauth, BearerToken::new(offered)) {
            (Some(_), Some(token)) => Ok(Caller::Bearer(token)),
            _ => Err(Denied::Token(false)),
        }
    }
}

impl Access {
    /// The credential `caller` was admitted with: the default client's is the single
    /// token when there is one, else none was needed.
    pub fn credential(&self, caller: &Caller) -> Credential {
        match caller {
            Caller::Bearer(_) => Credential::OAuth,
            Caller::Client(ClientId::DEFAULT) if self.token.is_some() => Credential::StaticToken,
            Caller::Client(ClientId::DEFAULT) => Credential::None,
            Caller::Client(_) => Credential::ClientsFile,
        }
    }
}

/// Whether `Host` value `host` is allowed by entry `allowed`.
fn host_matches(allowed: &str, host: &str) -> bool {
    if allowed.eq_ignore_ascii_case(host) {
        return true;
    }
    let (name, _) = split_port(host);
    split_port(allowed).1.is_none() && name.eq_ignore_ascii_case(allowed)
}

/// `host[:port]` → the host (IPv6 in brackets) and the port, if any.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => {
                let port = authority[end + 1..].strip_prefix(':');
                (&authority[..=end], port)
            }
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => (name, Some(port)),
        _ => (authority, None),
    }
}

/// The host of an origin `scheme://host[:port]`.
fn origin_host(origin: &str) -> Option<&str> {
    let (_, rest) = origin.split_once("://")?;
    Some(split_port(rest.trim_end_matches('/')).0)
}

impl Access {
    /// A client-sent value for an error message: quoted, cut short, and with the token
    /// masked should a client have put it there (errors reach logs).
    pub(crate) fn shown(&self, value: &str) -> String {
        let value = match &self.token {
            Some(token) => {
                String::from_utf8_lossy(&crate::http::scrub(value.as_bytes().to_vec(), &token.0))
                    .into_owned()
            }
            None => value.to_owned(),
        };
        let mut cut = cut_short(&value);
        if let Some(clients) = &self.clients {
            cut = clients.masked(&cut);
        }
        quoted(&cut)
    }
}

/// `value` at most [`SHOWN`] characters, and no word cut short: a cut could leave a
/// named client's token alone where the text had glued it to more.
pub(crate) fn cut_short(value: &str) -> String {
    let mut cut: String = value.chars().take(SHOWN).collect();
    if value.chars().nth(SHOWN).is_some_and(is_token_char) {
        cut.truncate(cut.trim_end_matches(is_token_char).len());
    }
    cut
}

/// `value` quoted for an error message, control characters as `?`: echoing them helps
/// nobody, and their JSON escapes (`\f`, `\u001f`) could spell a credential's first letter
/// next to its rest.
pub(crate) fn quoted(value: &str) -> String {
    let shown: String = value
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    format!("'{shown}'")
}

#[cfg(test)]
#[path = "access/tests.rs"]
mod tests;
