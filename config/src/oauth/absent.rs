//! A build without the `oauth` feature: OAuth mode is refused at startup, naming the
//! builds that have it.

use crate::error::ConfigError;

/// Refuses `server.http.oauth.issuer`.
///
/// # Errors
/// Always.
pub fn available() -> Result<(), ConfigError> {
    Err(ConfigError::Invalid {
        key: "server.http.oauth.issuer".into(),
        value: "(set)".into(),
        origin: "configuration".into(),
        allowed: "null in this build, which has no OAuth mode (built without the `oauth` feature, `--no-default-features`): use a release archive, the npm package, the container image or a default build from source (`cargo install openai-responses-mcp`), or add `--features oauth`".into(),
    })
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;

    #[test]
    fn an_issuer_is_refused_naming_the_builds_that_have_oauth_mode() {
        let env = crate::Env::new();
        let resolve = |yaml: &str| {
            let input = crate::YamlInput {
                text: yaml,
                path: std::path::Path::new("/c.yaml"),
            };
            let resolved = crate::resolve(Some(input), &env, &Cli::default()).unwrap();
            crate::oauth::resolve(&resolved)
        };
        assert!(matches!(resolve(""), Ok(None)));
        let refused = resolve("server: {http: {oauth: {issuer: 'https://idp.example'}}}");
        let text = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("server.http.oauth.issuer"), "{text}");
        assert!(text.contains("--features oauth"), "{text}");
        assert!(
            text.contains("cargo install openai-responses-mcp"),
            "{text}"
        );
        assert!(text.contains("container image"), "{text}");
    }
}
