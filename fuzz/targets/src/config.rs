//! The `config` fuzz target.

use responses_mcp_config::proxy::ProxyRoute;
use responses_mcp_config::{resolve, show, Cli, Env, YamlInput};
use serde_json::Value;
use std::path::Path;

/// Arbitrary YAML text and environment values through the resolver. The input is split
/// at the first NUL: YAML before it, `NAME=value` lines after it.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (yaml, env_text) = text.split_once('\0').unwrap_or((&text, ""));
    let env: Env = env_text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let input = YamlInput {
        text: yaml,
        path: Path::new("/fuzz/config.yaml"),
    };
    if let Ok(resolved) = resolve(Some(input), &env, &Cli::default()) {
        let config = resolved.server_config(true, Some("policy"), 1);
        assert!((1..=10).contains(&config.max_citations));
        assert!(!config.timeout.is_zero());
        let secrets = show::SecretsSet {
            api_key: true,
            ..show::SecretsSet::default()
        };
        let shown = show::show_config(&resolved, secrets, &ProxyRoute::Direct);
        assert!(serde_json::from_str::<Value>(&shown).is_ok());
    }
}
