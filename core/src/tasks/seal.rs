//! Task ids sealed under the server's key: an HMAC-SHA-256 over what the id names (a
//! local task's number, or a background task's response, creation time and ttl), so an
//! id this server did not mint is refused before any lookup, and a background task can
//! be served by any instance holding the key.

use super::sha256;
use crate::settings::TaskKey;
use crate::tools::{Tool, ALL_TOOLS};

/// What a background task's id carries: the OpenAI response that is the task, its life,
/// and the call that made it (its tool and client, which its end is counted under). Sealed
/// into the id, so that any instance with the key can serve it and count it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackgroundRef {
    /// The stored response's id (`resp_…`).
    pub response_id: String,
    /// Creation time, Unix seconds.
    pub created: u64,
    /// Its ttl, ms.
    pub ttl_ms: u64,
    /// The tool called.
    pub tool: Tool,
    /// The name of the client that called (at most 64 bytes, as the clients file allows);
    /// empty in an id of 0.1, which does not say.
    pub client: String,
}

const ID_PREFIX: &str = "task-";
/// Background ids: `task-c`, then in hex the created time, ttl, tool, client length,
/// client and response id, then the MAC.
const BACKGROUND_PREFIX: &str = "task-c";
/// Background ids of 0.1 (no tool, no client): `task-b`, then in hex the created time,
/// ttl and response id, then the MAC. Still read, so that tasks survive an upgrade;
/// counted as `answer` calls of the default client, and served to any client.
const BACKGROUND_V1_PREFIX: &str = "task-b";
/// Longest response id sealed into a task id.
const MAX_RESPONSE_ID: usize = 128;
/// Longest client name sealed into a task id (the clients file allows no longer).
pub const MAX_CLIENT: usize = 64;
/// Bytes of the HMAC kept in an id.
const MAC_BYTES: usize = 16;

impl BackgroundRef {
    /// Whether the client named `client` may see this task: the one that created it, or
    /// anyone for an id of 0.1, which does not say.
    pub fn client_may_see(&self, client: &str) -> bool {
        self.client.is_empty() || self.client == client
    }
}

/// A background task's sealed id.
pub fn seal_background(key: &TaskKey, r: &BackgroundRef) -> String {
    let client = &r.client.as_bytes()[..r.client.len().min(MAX_CLIENT)];
    let mut payload = Vec::with_capacity(18 + client.len() + r.response_id.len());
    payload.extend_from_slice(&r.created.to_be_bytes());
    payload.extend_from_slice(&r.ttl_ms.to_be_bytes());
    payload.push(tool_byte(r.tool));
    // At most 64: always a byte.
    payload.push(u8::try_from(client.len()).unwrap_or(0));
    payload.extend_from_slice(client);
    payload.extend_from_slice(r.response_id.as_bytes());
    seal_payload(key, BACKGROUND_PREFIX, b"background/2:", &payload)
}

/// The reference inside a background id, when the seal holds (never for ids of the
/// local store).
pub fn open_background(key: &TaskKey, id: &str) -> Option<BackgroundRef> {
    if let Some(hex) = id.strip_prefix(BACKGROUND_PREFIX) {
        let max = 18 + MAX_CLIENT + MAX_RESPONSE_ID + MAC_BYTES;
        let payload = unhex_payload(hex, 18 + 1 + MAC_BYTES, max)?;
        let (created, ttl_ms) = (word(&payload, 0)?, word(&payload, 8)?);
        let tool = ALL_TOOLS.get(usize::from(*payload.get(16)?))?;
        let client_len = usize::from(*payload.get(17)?);
        let client = std::str::from_utf8(payload.get(18..18 + client_len)?).ok()?;
        let response_id = std::str::from_utf8(payload.get(18 + client_len..)?).ok()?;
        let reference = BackgroundRef {
            response_id: response_id.to_owned(),
            created,
            ttl_ms,
            tool: *tool,
            client: client.to_owned(),
        };
        return (!response_id.is_empty()
            && sha256::same(seal_background(key, &reference).as_bytes(), id.as_bytes()))
        .then_some(reference);
    }
    let hex = id.strip_prefix(BACKGROUND_V1_PREFIX)?;
    let payload = unhex_payload(hex, 16 + 1 + MAC_BYTES, 16 + MAX_RESPONSE_ID + MAC_BYTES)?;
    let (created, ttl_ms) = (word(&payload, 0)?, word(&payload, 8)?);
    let response_id = std::str::from_utf8(payload.get(16..)?).ok()?;
    let expected = seal_payload(key, BACKGROUND_V1_PREFIX, b"background:", &payload);
    sha256::same(expected.as_bytes(), id.as_bytes()).then(|| BackgroundRef {
        response_id: response_id.to_owned(),
        created,
        ttl_ms,
        tool: Tool::Answer,
        client: String::new(),
    })
}

/// `prefix`, then in hex `payload` and the first bytes of HMAC(domain ‖ payload).
fn seal_payload(key: &TaskKey, prefix: &str, domain: &[u8], payload: &[u8]) -> String {
    let mut message = domain.to_vec();
    message.extend_from_slice(payload);
    let mac = sha256::hmac_sha256(&key.0, &message);
    let mut id = String::with_capacity(prefix.len() + 2 * (payload.len() + MAC_BYTES));
    id.push_str(prefix);
    for b in payload.iter().chain(&mac[..MAC_BYTES]) {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The payload of hex holding `min..=max` bytes with the MAC (which is dropped).
fn unhex_payload(hex: &str, min: usize, max: usize) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 || hex.len() < 2 * min || hex.len() > 2 * max {
        return None;
    }
    let mut bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    bytes.truncate(bytes.len() - MAC_BYTES);
    Some(bytes)
}

/// The big-endian word at `at`.
fn word(payload: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(
        payload.get(at..at + 8)?.try_into().ok()?,
    ))
}

/// A tool's place in [`ALL_TOOLS`].
fn tool_byte(tool: Tool) -> u8 {
    let at = ALL_TOOLS.iter().position(|t| *t == tool).unwrap_or(0);
    u8::try_from(at).unwrap_or(0)
}

/// `task-<number, 16 hex><mac, 32 hex>`.
pub fn seal(key: &TaskKey, seq: u64) -> String {
    let mac = sha256::hmac_sha256(&key.0, &seq.to_be_bytes());
    let mut id = format!("{ID_PREFIX}{seq:016x}");
    for b in &mac[..MAC_BYTES] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The number inside a sealed id, when the seal holds.
pub fn open(key: &TaskKey, id: &str) -> Option<u64> {
    let hex = id.strip_prefix(ID_PREFIX)?;
    if hex.len() != 16 + 2 * MAC_BYTES || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let seq = u64::from_str_radix(&hex[..16], 16).ok()?;
    let expected = seal(key, seq);
    sha256::same(expected.as_bytes(), id.as_bytes()).then_some(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TaskKey {
        TaskKey([7; 32])
    }

    fn reference(client: &str) -> BackgroundRef {
        BackgroundRef {
            response_id: "resp_abc123".into(),
            created: 1_764_000_000,
            ttl_ms: 3_600_000,
            tool: Tool::AnswerQuick,
            client: client.into(),
        }
    }

    #[test]
    fn a_background_id_carries_its_call() {
        for client in ["default", "ops-team", &"x".repeat(MAX_CLIENT)] {
            let r = reference(client);
            let id = seal_background(&key(), &r);
            assert!(id.starts_with("task-c"), "{id}");
            assert_eq!(open_background(&key(), &id), Some(r));
        }
    }

    #[test]
    fn a_background_id_is_refused_when_changed_or_sealed_by_another_key() {
        let id = seal_background(&key(), &reference("ops"));
        assert_eq!(open_background(&TaskKey([8; 32]), &id), None);
        // Every hex digit changed in turn: the seal refuses each.
        for at in BACKGROUND_PREFIX.len()..id.len() {
            let mut bytes = id.clone().into_bytes();
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            let changed = String::from_utf8(bytes).unwrap_or_default();
            assert_eq!(open_background(&key(), &changed), None, "digit {at}");
        }
        for bad in [
            "task-c",
            "task-c00",
            "task-czz",
            &format!("{id}00"),
            &id[..id.len() - 2],
        ] {
            assert_eq!(open_background(&key(), bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_of_the_first_format_still_open_as_answer_calls_of_no_named_client() {
        let mut payload = Vec::new();
        payload.extend_from_slice(&5u64.to_be_bytes());
        payload.extend_from_slice(&60_000u64.to_be_bytes());
        payload.extend_from_slice(b"resp_old");
        let id = seal_payload(&key(), BACKGROUND_V1_PREFIX, b"background:", &payload);
        let opened = open_background(&key(), &id);
        assert_eq!(
            opened,
            Some(BackgroundRef {
                response_id: "resp_old".into(),
                created: 5,
                ttl_ms: 60_000,
                tool: Tool::Answer,
                client: String::new(),
            })
        );
        assert_eq!(open_background(&TaskKey([8; 32]), &id), None);
    }
}
