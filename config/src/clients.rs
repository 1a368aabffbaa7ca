//! `server.http.clients_file`: the named clients, each with the SHA-256 of its bearer
//! token and optional limits, read and checked at startup; and `server.limits.*`.
//!
//! ```yaml
//! clients:
//!   - name: ci                 # letters, digits, '.', '_', '-'; up to 64
//!     token_sha256: 9f86d0...  # printf %s "$TOKEN" | sha256sum
//!     calls_per_minute: 30     # optional
//!     spend_per_day_usd: 5     # optional, estimated
//!     metrics: true            # optional: this token reads /metrics (every client's
//!                              # spend); only an operator's client should
//!   - name: alice
//!     identity: 00u1b2c3d4     # OAuth mode: the identity claim's value this client is
//!   - name: gateway
//!     token_sha256: 4e07a8...
//!     gateway: true            # optional: this credential may name users in
//!                              # server.http.identity_header; no other may
//! ```
//!
//! A client has a token digest, an identity, or both. A gateway client has no limits
//! of its own: its requests are its users', each under the identities' limits (or
//! those of the named client whose identity it is), and all under `server.limits`.
//!
//! The file holds digests only, so it reveals no token; errors name the client and the
//! field, never a digest.

use crate::error::ConfigError;
use crate::resolve::Resolved;
use responses_mcp_core::clients::{Clients, Limit, NamedClient, DEFAULT_NAME};
use responses_mcp_core::openai::pricing::Picodollars;
use responses_mcp_core::serve::access::ClientTokens;
use responses_mcp_core::sha256::sha256;
use serde_yaml::Value;
use std::path::Path;

/// One client as the file gives it.
struct Entry {
    name: String,
    token_sha256: String,
    identity: Option<String>,
    calls_per_minute: Option<u32>,
    spend_per_day_usd: Option<f64>,
    metrics: bool,
    gateway: bool,
}

/// What each client may hold.
const FIELDS: &str = "name, token_sha256 or identity (or both), and optionally calls_per_minute, spend_per_day_usd, metrics and gateway";

impl Entry {
    /// Reads one client (the `i`-th, from 0); the error names it and the field. Read
    /// from the YAML tree the configuration already parses into, so that the file costs
    /// no deserializer of its own in the binary.
    fn read(i: usize, value: &Value) -> Result<Entry, ClientsFileError> {
        let which = format!("client {}", i + 1);
        let Value::Mapping(map) = value else {
            return Err(format!("{which}: not a mapping of {FIELDS}").into());
        };
        let mut entry = Entry {
            name: String::new(),
            token_sha256: String::new(),
            identity: None,
            calls_per_minute: None,
            spend_per_day_usd: None,
            metrics: false,
            gateway: false,
        };
        for (key, value) in map {
            let wrong =
                |what: &str| format!("{which}: {} must be {what}", key.as_str().unwrap_or("?"));
            match key.as_str() {
                Some("name") => entry.name = value.as_str().ok_or_else(|| wrong("text"))?.into(),
                Some("token_sha256") => {
                    entry.token_sha256 = value.as_str().ok_or_else(|| wrong("text"))?.into();
                }
                Some("identity") => {
                    let identity = value.as_str().ok_or_else(|| wrong("text"))?;
                    if identity.is_empty()
                        || identity.len() > 256
                        || identity.chars().any(char::is_control)
                    {
                        return Err(wrong("1 to 256 bytes of text").into());
                    }
                    entry.identity = Some(identity.into());
                }
                Some("calls_per_minute") => {
                    let n = value.as_u64().and_then(|n| u32::try_from(n).ok());
                    entry.calls_per_minute = Some(n.ok_or_else(|| wrong("a whole number"))?);
                }
                Some("spend_per_day_usd") => {
                    entry.spend_per_day_usd =
                        Some(value.as_f64().ok_or_else(|| wrong("a number"))?);
                }
                Some("metrics") => {
                    entry.metrics = value.as_bool().ok_or_else(|| wrong("true or false"))?;
                }
                Some("gateway") => {
                    entry.gateway = value.as_bool().ok_or_else(|| wrong("true or false"))?;
                }
                _ => return Err(format!("{which}: unknown field (a client has {FIELDS})").into()),
            }
        }
        if entry.name.is_empty() || (entry.token_sha256.is_empty() && entry.identity.is_none()) {
            return Err(format!("{which}: name and token_sha256 or identity are required").into());
        }
        Ok(entry)
    }
}

/// Why a clients file cannot be used: which client and which field, in words that never
/// repeat a digest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ClientsFileError(pub String);

impl From<String> for ClientsFileError {
    fn from(message: String) -> Self {
        ClientsFileError(message)
    }
}

/// The named clients, for the core, and their tokens' digests, for the access rules.
#[derive(Debug, Clone)]
pub struct NamedClients {
    /// Names and limits, numbered as the core counts them.
    pub clients: Clients,
    /// Each client's token digest.
    pub tokens: ClientTokens,
}

/// The clients file `server.http.clients_file` names (relative to the config file), if
/// any.
///
/// # Errors
/// A file that cannot be read or does not hold a valid list of clients.
pub fn read(
    resolved: &Resolved,
    config: Option<&Path>,
) -> Result<Option<NamedClients>, ConfigError> {
    let Some(path) = resolved.settings.server.http.clients_file.as_deref() else {
        return Ok(None);
    };
    let path = crate::paths::relative_to_config(Path::new(path), config);
    let fail = |message: String| ConfigError::ClientsFile {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
    let named = parse(&text).map_err(|e| fail(e.0))?;
    let gateway = named.clients.iter().find(|(_, c)| c.gateway);
    if let (Some((_, c)), None) = (gateway, &resolved.settings.server.http.identity_header) {
        log::warn!(
            "client {:?} of {} is marked gateway: true, but server.http.identity_header is not set: no request names its user, so all of the gateway's requests are its own client's (one budget for all its users). Set identity_header (and trusted_proxies) to the header the gateway names users in",
            c.name,
            path.display()
        );
    }
    log::debug!(
        "{} named client(s) from {}",
        named.tokens.digests.len(),
        path.display()
    );
    Ok(Some(named))
}

/// Reads a clients file's text; the error says which client and field are wrong.
pub fn parse(text: &str) -> Result<NamedClients, ClientsFileError> {
    let tree: Value = serde_yaml::from_str(text).map_err(|e| {
        // serde_yaml's message can quote the text; say where instead.
        match e.location() {
            Some(at) => format!("not YAML at line {}, column {}", at.line(), at.column()),
            None => "not YAML".into(),
        }
    })?;
    let list = match &tree {
        Value::Mapping(top) if top.len() == 1 => top.get("clients").and_then(Value::as_sequence),
        _ => None,
    };
    let Some(list) = list else {
        return Err(format!("not a list of clients: a mapping with one key, `clients:`, whose items each have {FIELDS}").into());
    };
    if list.is_empty() {
        return Err(ClientsFileError("names no client".into()));
    }
    let entries = list
        .iter()
        .enumerate()
        .map(|(i, v)| Entry::read(i, v))
        .collect::<Result<Vec<_>, _>>()?;
    let mut roster = Roster::default();
    for (i, entry) in entries.into_iter().enumerate() {
        roster.admit(i, entry)?;
    }
    let Roster { named, digests } = roster;
    let clients = Clients::new(named)
        .ok_or_else(|| ClientsFileError("names more than 65,534 clients".into()))?;
    let ids: Vec<_> = digests
        .into_iter()
        .filter_map(|(i, d, metrics)| Some((clients.id(i)?, d, metrics)))
        .collect();
    let metrics = ids
        .iter()
        .filter(|(_, _, m)| *m)
        .map(|(id, ..)| *id)
        .collect();
    let digests = ids.into_iter().map(|(id, d, _)| (id, d)).collect();
    Ok(NamedClients {
        clients,
        tokens: ClientTokens {
            sha256,
            digests,
            metrics,
        },
    })
}

/// The clients admitted so far, and the digests of those with a token (by index, with
/// whether the client reads `/metrics`).
#[derive(Default)]
struct Roster {
    named: Vec<NamedClient>,
    digests: Vec<(usize, [u8; 32], bool)>,
}

impl Roster {
    /// Admits the `i`-th client (from 0) unless it clashes with an earlier one or holds a
    /// value out of range.
    fn admit(&mut self, i: usize, entry: Entry) -> Result<(), ClientsFileError> {
        let which = format!("client {}", i + 1);
        if !is_label(&entry.name) {
            return Err(format!("{which}: name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit").into());
        }
        let which = format!("{which} ({:?})", entry.name);
        if entry.name == DEFAULT_NAME {
            return Err(format!(
                "{which}: \"{DEFAULT_NAME}\" names the single token's client; choose another name"
            )
            .into());
        }
        if self.named.iter().any(|c| c.name == entry.name) {
            return Err(format!("{which}: the name is taken by an earlier client").into());
        }
        let digest = match entry.token_sha256.is_empty() {
            true => None,
            false => Some(hex_digest(&entry.token_sha256).ok_or_else(|| {
                format!("{which}: token_sha256 must be 64 hex digits, the SHA-256 of the token (printf %s \"$TOKEN\" | sha256sum)")
            })?),
        };
        if digest.is_some_and(|d| self.digests.iter().any(|(_, known, _)| *known == d)) {
            return Err(format!("{which}: an earlier client has the same token").into());
        }
        if entry.identity.is_some() && self.named.iter().any(|c| c.identity == entry.identity) {
            return Err(format!("{which}: an earlier client has the same identity").into());
        }
        if entry.metrics && digest.is_none() {
            return Err(format!("{which}: metrics: true needs token_sha256: /metrics takes a client's token, never an identity of the identity provider").into());
        }
        if entry.gateway && (entry.calls_per_minute.is_some() || entry.spend_per_day_usd.is_some())
        {
            return Err(format!("{which}: gateway: true takes no calls_per_minute or spend_per_day_usd: the gateway's requests are its users', each held to the identities' limits (server.http.oauth.calls_per_minute and spend_per_day_usd, or the limits of the client whose identity it names) and all of them to server.limits; leave them out").into());
        }
        if entry.calls_per_minute == Some(0) {
            return Err(format!(
                "{which}: calls_per_minute must be at least 1 (leave it out for no limit)"
            )
            .into());
        }
        let limit = Limit {
            calls_per_minute: entry.calls_per_minute,
            spend_per_day: spend(&which, entry.spend_per_day_usd)?,
        };
        self.named.push(NamedClient {
            name: entry.name,
            limit,
            identity: entry.identity,
            gateway: entry.gateway,
        });
        if let Some(digest) = digest {
            self.digests
                .push((self.named.len() - 1, digest, entry.metrics));
        }
        Ok(())
    }
}

/// `spend_per_day_usd`, when set, as an amount the core counts in.
fn spend(which: &str, usd: Option<f64>) -> Result<Option<Picodollars>, ClientsFileError> {
    let Some(usd) = usd else { return Ok(None) };
    match Picodollars::from_usd(usd) {
        Some(amount) => Ok(Some(amount)),
        None => Err(format!(
            "{which}: spend_per_day_usd must be an amount of US dollars from 0 to 999999"
        )
        .into()),
    }
}

/// `server.limits.*`, for the core.
pub fn instance_limit(resolved: &Resolved) -> Limit {
    let limits = &resolved.settings.server.limits;
    Limit {
        calls_per_minute: limits.calls_per_minute,
        spend_per_day: limits.spend_per_day_usd.and_then(Picodollars::from_usd),
    }
}

/// A short label: safe in a metric label, a log field and a message.
fn is_label(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// 64 hex digits as 32 bytes.
fn hex_digest(text: &str) -> Option<[u8; 32]> {
    let text = text.trim().as_bytes();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(text.chunks(2)) {
        let digit = |c: u8| char::from(c).to_digit(16);
        *byte = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests;
