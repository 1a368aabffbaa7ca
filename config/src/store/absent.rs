//! A build without the `store` feature: no store client, and `server.store.url` refused
//! with a message that says which builds have one.

use crate::error::ConfigError;
use crate::resolve::Resolved;

/// No store can be reached from this build: there is no value of this type.
#[derive(Clone, Debug)]
pub enum StoreConnect {}

impl StoreConnect {
    /// `None` without `server.store.url`.
    ///
    /// # Errors
    /// With one: this build has no store client.
    pub fn resolve(
        resolved: &Resolved,
        _env: &crate::env::Env,
        _ca_pem: Option<&[u8]>,
    ) -> Result<Option<Self>, ConfigError> {
        let Some(url) = resolved.settings.server.store.url.as_deref() else {
            return Ok(None);
        };
        Err(ConfigError::Invalid {
            key: "server.store.url".into(),
            value: super::shown::without_password(url),
            origin: resolved
                .sources
                .get("server.store.url")
                .map_or_else(|| "the configuration".into(), ToString::to_string),
            allowed: "no store in this build: it was built without the `store` feature (`--no-default-features`). The release archives, the npm packages, the container image and a default build from source (`cargo install openai-responses-mcp`) have it; or add `--features store`".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    #[test]
    fn a_store_url_is_refused_naming_the_builds_that_have_one_and_no_password() {
        let env = crate::Env::new();
        let resolve = |yaml: &str| {
            let input = crate::YamlInput {
                text: yaml,
                path: std::path::Path::new("/c.yaml"),
            };
            let resolved = crate::resolve(Some(input), &env, &Cli::default()).unwrap();
            StoreConnect::resolve(&resolved, &env, None)
        };
        assert!(matches!(resolve(""), Ok(None)));
        let refused = resolve("server: {store: {url: 'redis://:s3cret@store:6379/0'}}");
        let text = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("server.store.url"), "{text}");
        assert!(text.contains("--features store"), "{text}");
        assert!(
            text.contains("cargo install openai-responses-mcp"),
            "{text}"
        );
        assert!(text.contains("container image"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }
}
