//! Task ids sealed under the server's key: an HMAC-SHA-256 over what the id names (a
//! local task's number, or a background task's response, creation time and ttl), so an
//! id this server did not mint is refused before any lookup, and a background task can
//! be served by any instance holding the key.

use crate::settings::TaskKey;
use crate::sha256;
use crate::tools::{Tool, ALL_TOOLS};

/// What a background task's id carries: the OpenAI response that is the task, its life,
/// and the call that made it (its tool, and the client it belongs to). Sealed into the
/// id, so that any instance with the key can serve it and count it.
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
    /// Who may see it.
    pub owner: Owner,
}

/// The client a background task belongs to, as its id binds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// An id of 0.1, which does not say: any client may see it.
    Anyone,
    /// The client whose name has this digest ([`ClientDigest::of`]). A digest, not the
    /// name: identities (`email:…`, Auth0's `sub:provider|…`) may be far longer than an id
    /// should carry, and a cut name would lock a long one out of its own task.
    Client(ClientDigest),
}

/// The first 16 bytes of SHA-256 over a client's name, domain-separated: names of any
/// length bind alike, and two names share one only by a SHA-256 collision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientDigest(pub [u8; 16]);

impl ClientDigest {
    /// The digest of the client named `name`.
    pub fn of(name: &str) -> Self {
        let mut message = b"orm-client:".to_vec();
        message.extend_from_slice(name.as_bytes());
        let full = sha256::sha256(&message);
        let mut digest = [0; 16];
        digest.copy_from_slice(&full[..16]);
        ClientDigest(digest)
    }
}

impl Owner {
    /// The owner that is the client named `name`.
    pub fn named(name: &str) -> Self {
        Owner::Client(ClientDigest::of(name))
    }
}

const ID_PREFIX: &str = "task-";
/// Background ids: `task-d`, then in hex the created time, ttl, tool, the owner's
/// [`ClientDigest`] and the response id, then the MAC.
const BACKGROUND_PREFIX: &str = "task-d";
/// Background ids of the first 0.2 builds: `task-c`, then in hex the created time, ttl,
/// tool, client name length, client name and response id, then the MAC. Still read (the
/// name is bound as its digest), so that tasks survive an upgrade.
const BACKGROUND_V2_PREFIX: &str = "task-c";
/// Background ids of 0.1 (no tool, no client): `task-b`, then in hex the created time,
/// ttl and response id, then the MAC. Still read, so that tasks survive an upgrade;
/// counted as `answer` calls of the client that asks, and served to any client.
const BACKGROUND_V1_PREFIX: &str = "task-b";
/// Longest response id sealed into a task id.
const MAX_RESPONSE_ID: usize = 128;
/// Longest client name an id of the `task-c` format held.
const MAX_V2_CLIENT: usize = 64;
/// Bytes of the HMAC kept in an id.
const MAC_BYTES: usize = 16;
/// Bytes before the response id in a `task-d` payload.
const HEAD: usize = 8 + 8 + 1 + 16;

impl BackgroundRef {
    /// Whether the client named `client` may see this task: the one that created it, or
    /// anyone for an id of 0.1, which does not say.
    pub fn client_may_see(&self, client: &str) -> bool {
        match self.owner {
            Owner::Anyone => true,
            Owner::Client(digest) => sha256::same(&digest.0, &ClientDigest::of(client).0),
        }
    }
}

/// A background task's sealed id. An owner of [`Owner::Anyone`] is sealed as the
/// digest of the empty name, which no client has.
pub fn seal_background(key: &TaskKey, r: &BackgroundRef) -> String {
    let digest = match r.owner {
        Owner::Client(digest) => digest,
        Owner::Anyone => ClientDigest::of(""),
    };
    let mut payload = Vec::with_capacity(HEAD + r.response_id.len());
    payload.extend_from_slice(&r.created.to_be_bytes());
    payload.extend_from_slice(&r.ttl_ms.to_be_bytes());
    payload.push(tool_byte(r.tool));
    payload.extend_from_slice(&digest.0);
    payload.extend_from_slice(r.response_id.as_bytes());
    seal_payload(key, BACKGROUND_PREFIX, b"background/3:", &payload)
}

/// The reference inside a background id, when the seal holds (never for ids of the
/// local store).
pub fn open_background(key: &TaskKey, id: &str) -> Option<BackgroundRef> {
    if let Some(hex) = id.strip_prefix(BACKGROUND_PREFIX) {
        let max = HEAD + MAX_RESPONSE_ID + MAC_BYTES;
        let payload = unhex_payload(hex, HEAD + 1 + MAC_BYTES, max)?;
        let (created, ttl_ms) = (word(&payload, 0)?, word(&payload, 8)?);
        let tool = ALL_TOOLS.get(usize::from(*payload.get(16)?))?;
        let digest = ClientDigest(payload.get(17..HEAD)?.try_into().ok()?);
        let response_id = std::str::from_utf8(payload.get(HEAD..)?).ok()?;
        let expected = seal_payload(key, BACKGROUND_PREFIX, b"background/3:", &payload);
        return sha256::same(expected.as_bytes(), id.as_bytes()).then(|| BackgroundRef {
            response_id: response_id.to_owned(),
            created,
            ttl_ms,
            tool: *tool,
            owner: Owner::Client(digest),
        });
    }
    if let Some(hex) = id.strip_prefix(BACKGROUND_V2_PREFIX) {
        let max = 18 + MAX_V2_CLIENT + MAX_RESPONSE_ID + MAC_BYTES;
        let payload = unhex_payload(hex, 18 + 1 + MAC_BYTES, max)?;
        let (created, ttl_ms) = (word(&payload, 0)?, word(&payload, 8)?);
        let tool = ALL_TOOLS.get(usize::from(*payload.get(16)?))?;
        let client_len = usize::from(*payload.get(17)?);
        let client = std::str::from_utf8(payload.get(18..18 + client_len)?).ok()?;
        let response_id = std::str::from_utf8(payload.get(18 + client_len..)?).ok()?;
        let expected = seal_payload(key, BACKGROUND_V2_PREFIX, b"background/2:", &payload);
        let owner = if client.is_empty() {
            Owner::Anyone
        } else {
            Owner::named(client)
        };
        return (!response_id.is_empty() && sha256::same(expected.as_bytes(), id.as_bytes())).then(
            || BackgroundRef {
                response_id: response_id.to_owned(),
                created,
                ttl_ms,
                tool: *tool,
                owner,
            },
        );
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
        owner: Owner::Anyone,
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

/// `task-<shown number, 16 hex><mac, 32 hex>`: the MAC is over the shown number, which is
/// task number `seq` through [`permute`].
pub fn seal(key: &TaskKey, seq: u64) -> String {
    seal_shown(key, permute(key, seq, Way::Hide))
}

fn seal_shown(key: &TaskKey, shown: u64) -> String {
    let mac = sha256::hmac_sha256(&key.0, &shown.to_be_bytes());
    let mut id = format!("{ID_PREFIX}{shown:016x}");
    for b in &mac[..MAC_BYTES] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The task number inside a sealed id, when the seal holds.
pub fn open(key: &TaskKey, id: &str) -> Option<u64> {
    let hex = id.strip_prefix(ID_PREFIX)?;
    if hex.len() != 16 + 2 * MAC_BYTES || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let shown = u64::from_str_radix(&hex[..16], 16).ok()?;
    let expected = seal_shown(key, shown);
    sha256::same(expected.as_bytes(), id.as_bytes()).then(|| permute(key, shown, Way::Reveal))
}

/// Which way [`permute`] goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// From a task number to the number its id shows.
    Hide,
    /// Back.
    Reveal,
}

/// Task numbers run on from a start drawn from the process seed; ids show them through
/// a permutation of the 64-bit numbers under the task key (four Feistel rounds): one-to-
/// one, so ids stay as unique as the numbers, yet without the key an id says nothing of
/// where this instance's numbers began nor of how many tasks came between two ids.
/// Instances sharing the key read each other's numbers back. Each round is SHA-256 over
/// a fixed-length block (a domain, the key, the round, the half): one compression, a
/// keyed function for inputs of one length (no length extension to fear), at a quarter
/// of an HMAC's cost.
fn permute(key: &TaskKey, x: u64, way: Way) -> u64 {
    const ROUNDS: u8 = 4;
    const DOMAIN: &[u8; 16] = b"orm-task-number:";
    let mut block = [0u8; 16 + 32 + 1 + 4];
    block[..16].copy_from_slice(DOMAIN);
    block[16..48].copy_from_slice(&key.0);
    let mut round = |i: u8, half: u32| -> u32 {
        block[48] = i;
        block[49..].copy_from_slice(&half.to_be_bytes());
        let digest = sha256::sha256(&block);
        u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
    };
    let bytes = x.to_be_bytes();
    let mut l = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let mut r = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    match way {
        Way::Hide => {
            for i in 0..ROUNDS {
                (l, r) = (r, l ^ round(i, r));
            }
        }
        Way::Reveal => {
            for i in (0..ROUNDS).rev() {
                (l, r) = (r ^ round(i, l), l);
            }
        }
    }
    (u64::from(l) << 32) | u64::from(r)
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
            owner: Owner::named(client),
        }
    }

    #[test]
    fn local_ids_open_to_their_number_and_show_neither_it_nor_the_count() {
        let first = 0x0123_4567_89ab_cdef_u64;
        let ids: Vec<String> = (first..first + 50).map(|n| seal(&key(), n)).collect();
        for (n, id) in (first..).zip(&ids) {
            assert_eq!(open(&key(), id), Some(n));
            assert_eq!(open(&TaskKey([8; 32]), id), None);
            assert!(
                !id.contains(&format!("{:x}", first >> 8)),
                "{id} shows its number"
            );
        }
        // Neighbours share no run of their shown numbers: no count to read off.
        let shown = |id: &str| u64::from_str_radix(&id[ID_PREFIX.len()..][..16], 16).ok();
        for pair in ids.windows(2) {
            let (a, b) = (shown(&pair[0]), shown(&pair[1]));
            assert!(
                a.zip(b).is_some_and(|(a, b)| a >> 32 != b >> 32),
                "{pair:?}"
            );
        }
        // Every number round-trips, the edges included, and a changed digit is refused.
        for n in [0, 1, u64::MAX, 1 << 63] {
            assert_eq!(open(&key(), &seal(&key(), n)), Some(n));
        }
        let id = &ids[0];
        for at in ID_PREFIX.len()..id.len() {
            let mut bytes = id.clone().into_bytes();
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            let changed = String::from_utf8(bytes).unwrap_or_default();
            assert_eq!(open(&key(), &changed), None, "digit {at}");
        }
    }

    #[test]
    fn a_background_id_carries_its_call_for_a_client_of_any_name() {
        let long = format!("email:{}@example.com", "a".repeat(200));
        let auth0 = format!("sub:google-oauth2|{}", "1".repeat(300));
        for client in ["default", "ops-team", &"x".repeat(64), &long, &auth0] {
            let r = reference(client);
            let id = seal_background(&key(), &r);
            assert!(id.starts_with("task-d"), "{id}");
            let opened = open_background(&key(), &id);
            assert_eq!(opened.as_ref(), Some(&r));
            assert!(opened.is_some_and(|o| o.client_may_see(client)));
        }
    }

    #[test]
    fn a_long_identity_is_not_mistaken_for_another_with_the_same_start() {
        let name = format!("email:{}", "b".repeat(200));
        let id = seal_background(&key(), &reference(&name));
        let opened = open_background(&key(), &id);
        assert!(opened.as_ref().is_some_and(|o| o.client_may_see(&name)));
        for other in [
            &name[..64],
            &name[..name.len() - 1],
            &format!("{name}x"),
            "",
        ] {
            assert!(
                opened.as_ref().is_some_and(|o| !o.client_may_see(other)),
                "{other}"
            );
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
            "task-d",
            "task-d00",
            "task-dzz",
            &format!("{id}00"),
            &id[..id.len() - 2],
        ] {
            assert_eq!(open_background(&key(), bad), None, "{bad}");
        }
    }

    /// An id as the `task-c` builds sealed it.
    fn v2_id(client: &str) -> String {
        let mut payload = Vec::new();
        payload.extend_from_slice(&9u64.to_be_bytes());
        payload.extend_from_slice(&60_000u64.to_be_bytes());
        payload.push(2);
        payload.push(u8::try_from(client.len()).unwrap_or(0));
        payload.extend_from_slice(client.as_bytes());
        payload.extend_from_slice(b"resp_v2");
        seal_payload(&key(), BACKGROUND_V2_PREFIX, b"background/2:", &payload)
    }

    #[test]
    fn ids_of_the_second_format_still_open_for_their_client() {
        let opened = open_background(&key(), &v2_id("ops-team"));
        assert_eq!(
            opened,
            Some(BackgroundRef {
                response_id: "resp_v2".into(),
                created: 9,
                ttl_ms: 60_000,
                tool: ALL_TOOLS[2],
                owner: Owner::named("ops-team"),
            })
        );
        assert!(opened
            .as_ref()
            .is_some_and(|o| o.client_may_see("ops-team")));
        assert!(opened.is_some_and(|o| !o.client_may_see("ops")));
        assert_eq!(open_background(&TaskKey([8; 32]), &v2_id("ops-team")), None);
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
                owner: Owner::Anyone,
            })
        );
        assert!(opened.is_some_and(|o| o.client_may_see("anyone")));
        assert_eq!(open_background(&TaskKey([8; 32]), &id), None);
    }
}
