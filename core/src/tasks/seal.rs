//! Task ids sealed under the server's key: an HMAC-SHA-256 over what the id names (a
//! local task's number, or a background task's response, creation time and ttl), so an
//! id this server did not mint is refused before any lookup, and a background task can
//! be served by any instance holding the key.

use super::sha256;
use crate::settings::TaskKey;

/// What a background task's id carries: the OpenAI response that is the task, and its
/// life. Sealed into the id, so that any instance with the key can serve it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackgroundRef {
    /// The stored response's id (`resp_…`).
    pub response_id: String,
    /// Creation time, Unix seconds.
    pub created: u64,
    /// Its ttl, ms.
    pub ttl_ms: u64,
}

const ID_PREFIX: &str = "task-";
/// Background ids: `task-b` + hex(created, ttl, response id) + hex(mac).
const BACKGROUND_PREFIX: &str = "task-b";
/// Longest response id sealed into a task id.
const MAX_RESPONSE_ID: usize = 128;
/// Bytes of the HMAC kept in an id.
const MAC_BYTES: usize = 16;

/// A background task's sealed id.
pub fn seal_background(key: &TaskKey, r: &BackgroundRef) -> String {
    let mut payload = Vec::with_capacity(16 + r.response_id.len());
    payload.extend_from_slice(&r.created.to_be_bytes());
    payload.extend_from_slice(&r.ttl_ms.to_be_bytes());
    payload.extend_from_slice(r.response_id.as_bytes());
    let mut message = b"background:".to_vec();
    message.extend_from_slice(&payload);
    let mac = sha256::hmac_sha256(&key.0, &message);
    let mut id = String::from(BACKGROUND_PREFIX);
    for b in payload.iter().chain(&mac[..MAC_BYTES]) {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The reference inside a background id, when the seal holds (never for ids of the
/// local store).
pub fn open_background(key: &TaskKey, id: &str) -> Option<BackgroundRef> {
    let hex = id.strip_prefix(BACKGROUND_PREFIX)?;
    let max = 2 * (16 + MAX_RESPONSE_ID + MAC_BYTES);
    if hex.len() % 2 != 0 || hex.len() < 2 * (16 + 1 + MAC_BYTES) || hex.len() > max {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    let bytes = bytes?;
    let (payload, _) = bytes.split_at(bytes.len() - MAC_BYTES);
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_be_bytes(
            payload.get(at..at + 8)?.try_into().ok()?,
        ))
    };
    let (created, ttl_ms) = (word(0)?, word(8)?);
    let response_id = std::str::from_utf8(&payload[16..]).ok()?;
    let reference = BackgroundRef {
        response_id: response_id.to_owned(),
        created,
        ttl_ms,
    };
    sha256::same(seal_background(key, &reference).as_bytes(), id.as_bytes()).then_some(reference)
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
