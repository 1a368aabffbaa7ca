//! What OpenAI is told of the user a call is for: `safety_identifier` and
//! `prompt_cache_key`, each an HMAC-SHA-256 of the caller's name (the client, OAuth
//! identity or gateway identity the call log names) under the tasks secret. OpenAI can
//! tell users apart by them, never learn who they are; instances that share the secret
//! (`tasks.secret_env`) send the same values for the same user. Without a secret each
//! process draws its own key, so the values change with every restart and differ between
//! instances.
//!
//! The two are domain-separated, so neither says anything about the other. The cache
//! key is per user because OpenAI routes by the prompt's prefix together with the key
//! (its prompt caching guide), and one key carrying every user's calls would spill over
//! to other machines (past about 15 requests a minute, as OpenAI announced the routing;
//! README, "What OpenAI is told"), while the same user's calls, which share the long
//! system policy, stay on the machine that cached it.

use crate::clients::ClientId;
use crate::openai::UserIds;
use crate::settings::TaskKey;
use crate::sha256::hmac_sha256;
use std::collections::BTreeMap;

/// The ids of the callers seen so far: two MACs depend only on the caller, so each is
/// made once, not on every call (as many as the roster has clients and identities).
#[derive(Default)]
pub(super) struct Known(BTreeMap<ClientId, UserIds>);

impl Known {
    /// The ids of `client`, named `name`, under `key`.
    pub(super) fn of(&mut self, key: &TaskKey, client: ClientId, name: &str) -> &UserIds {
        self.0.entry(client).or_insert_with(|| user_ids(key, name))
    }
}

impl Known {
    /// Forgets the ids of `client`: its id was forgotten, and may name another caller.
    pub(super) fn forget(&mut self, client: ClientId) {
        self.0.remove(&client);
    }
}

/// Bytes of each MAC sent, as hex: 128 bits, far from any collision among users.
const SENT: usize = 16;

/// The ids of the caller named `name`.
pub(super) fn user_ids(key: &TaskKey, name: &str) -> UserIds {
    UserIds {
        safety_identifier: format!("u-{}", mac(key, b"orm-safety/1:", name)),
        prompt_cache_key: format!("c-{}", mac(key, b"orm-cache/1:", name)),
    }
}

fn mac(key: &TaskKey, domain: &[u8], name: &str) -> String {
    let mut message = domain.to_vec();
    message.extend_from_slice(name.as_bytes());
    let full = hmac_sha256(&key.0, &message);
    full[..SENT].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_per_user_and_key_different_otherwise_and_never_the_name() {
        let key = TaskKey([7; 32]);
        let alice = user_ids(&key, "x-forwarded-user:alice@example.com");
        assert_eq!(alice, user_ids(&key, "x-forwarded-user:alice@example.com"));
        let bob = user_ids(&key, "x-forwarded-user:bob@example.com");
        assert_ne!(alice.safety_identifier, bob.safety_identifier);
        assert_ne!(alice.prompt_cache_key, bob.prompt_cache_key);
        let other_key = user_ids(&TaskKey([8; 32]), "x-forwarded-user:alice@example.com");
        assert_ne!(alice.safety_identifier, other_key.safety_identifier);
        // Domain-separated: the cache key is not the safety identifier.
        assert_ne!(alice.safety_identifier[2..], alice.prompt_cache_key[2..]);
        for id in [&alice.safety_identifier, &alice.prompt_cache_key] {
            assert_eq!(id.len(), 34, "{id}");
            assert!(id.len() <= 64, "OpenAI's safety_identifier limit");
            assert!(!id.contains("alice"), "{id}");
        }
    }
}
