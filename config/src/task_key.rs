//! The key that seals task ids (`tasks.secret_env`'s secret, else the system's random
//! source), kept apart from the seed of trace ids and jitter.

use crate::resolve::Env;

/// The task secret in `variable`, when it holds one.
pub(crate) fn secret<'a>(env: &'a Env, variable: &str) -> Option<&'a str> {
    env.get(variable)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
}

/// The key that seals task ids: from the secret in `variable` (instances that share it
/// serve each other's tasks), else 32 bytes of the system's random source, `fill` (the
/// host's: ring's `SystemRandom`), never anything derived from the seed that trace ids
/// and jitter come from.
pub(crate) fn task_key(
    env: &Env,
    variable: &str,
    fill: impl FnOnce(&mut [u8]) -> bool,
) -> Result<responses_mcp_core::tasks::TaskKey, crate::ConfigError> {
    use responses_mcp_core::{sha256::sha256, tasks::TaskKey};
    if let Some(secret) = secret(env, variable) {
        if secret.len() < 16 {
            log::warn!("{variable} is shorter than 16 characters: task ids sealed with it are easier to forge");
        }
        return Ok(TaskKey(sha256(secret.as_bytes())));
    }
    let mut random = [0u8; 32];
    if !fill(&mut random) {
        return Err(crate::ConfigError::NoTaskKey {
            variable: variable.to_owned(),
        });
    }
    Ok(TaskKey(random))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's random source, as the host passes it.
    fn system_random(bytes: &mut [u8]) -> bool {
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), bytes).is_ok()
    }

    const VARIABLE: &str = "MCP_TASKS_SECRET";

    #[test]
    fn without_a_secret_each_key_is_fresh_from_the_system() {
        let env = Env::new();
        let one = task_key(&env, VARIABLE, system_random).unwrap();
        let two = task_key(&env, VARIABLE, system_random).unwrap();
        assert_ne!(one.0, two.0);
        assert_ne!(one.0, [0; 32]);
    }

    #[test]
    fn the_key_is_what_the_source_gave_and_nothing_else() {
        let key = task_key(&Env::new(), VARIABLE, |b| {
            b.fill(7);
            true
        });
        assert_eq!(key.unwrap().0, [7; 32]);
    }

    #[test]
    fn no_random_source_and_no_secret_is_refused_with_what_to_set() {
        let error = task_key(&Env::new(), VARIABLE, |_| false).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(VARIABLE) && text.contains("openssl rand"),
            "{text}"
        );
        // A secret needs no random source.
        let mut env = Env::new();
        env.insert(VARIABLE.into(), "a-long-shared-secret-of-the-fleet".into());
        let keyed = task_key(&env, VARIABLE, |_| false).unwrap();
        assert_eq!(
            keyed.0,
            responses_mcp_core::sha256::sha256(b"a-long-shared-secret-of-the-fleet")
        );
    }
}
