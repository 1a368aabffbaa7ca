//! Where the configuration file is looked for.

use crate::cli::Cli;
use crate::resolve::Env;
use std::path::{Path, PathBuf};

const DIR: &str = "openai-responses-mcp";
const FILE: &str = "config.yaml";

/// The config file to read: `--config`, else the platform's default location.
///
/// macOS/Linux: `$XDG_CONFIG_HOME/openai-responses-mcp/config.yaml`, else
/// `~/.config/openai-responses-mcp/config.yaml`. Windows:
/// `%APPDATA%\openai-responses-mcp\config.yaml`.
pub fn config_path(cli: &Cli, env: &Env, windows: bool) -> Option<PathBuf> {
    if let Some(path) = &cli.config {
        return Some(path.clone());
    }
    let var = |name: &str| {
        env.get(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    if windows {
        return var("APPDATA").map(|d| d.join(DIR).join(FILE));
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join(DIR).join(FILE));
    }
    var("HOME").map(|h| h.join(".config").join(DIR).join(FILE))
}

/// A relative policy path is taken relative to the config file's folder.
pub(crate) fn relative_to_config(path: &Path, config: Option<&Path>) -> PathBuf {
    match config.and_then(|c| c.parent()) {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn locations() {
        let cli = Cli::default();
        assert_eq!(
            config_path(&cli, &env(&[("HOME", "/home/u")]), false),
            Some(PathBuf::from(
                "/home/u/.config/openai-responses-mcp/config.yaml"
            ))
        );
        assert_eq!(
            config_path(
                &cli,
                &env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/x")]),
                false
            ),
            Some(PathBuf::from("/x/openai-responses-mcp/config.yaml"))
        );
        // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
        assert_eq!(
            config_path(
                &cli,
                &env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")]),
                false
            ),
            Some(PathBuf::from("/h/.config/openai-responses-mcp/config.yaml"))
        );
        assert_eq!(
            config_path(
                &cli,
                &env(&[("APPDATA", "C:\\Users\\u\\AppData\\Roaming")]),
                true
            ),
            Some(
                PathBuf::from("C:\\Users\\u\\AppData\\Roaming")
                    .join(DIR)
                    .join(FILE)
            )
        );
        assert_eq!(config_path(&cli, &env(&[]), false), None);
        let explicit = Cli {
            config: Some("/etc/c.yaml".into()),
            ..Cli::default()
        };
        assert_eq!(
            config_path(&explicit, &env(&[("HOME", "/h")]), false),
            Some(PathBuf::from("/etc/c.yaml"))
        );
    }
}
