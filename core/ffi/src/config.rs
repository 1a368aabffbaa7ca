//! The engine's configuration as a host gives it: one JSON object (ABI v1's keys, in
//! README.md), read over [`ServerConfig::default`]. A key this version does not know is
//! refused, so a typo never passes as a default.

use responses_mcp_core::settings::TaskKey;
use responses_mcp_core::ServerConfig;
use serde_json::{Map, Value};
use std::time::Duration;

/// The keys of ABI v1, in the order README.md lists them.
pub(crate) const KEYS: [&str; 16] = [
    "base_url",
    "credentials_ready",
    "stream",
    "model_lookups",
    "timeout_ms",
    "idle_timeout_ms",
    "max_retries",
    "max_inflight",
    "max_queue",
    "progress_interval_ms",
    "shutdown_grace_ms",
    "jitter_seed",
    "task_key",
    "debug",
    "call_records",
    "line_output",
];

/// What is wrong with a host's configuration; the message says what to give instead.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("the configuration is not JSON ({0}): pass one JSON object")]
    NotJson(serde_json::Error),
    #[error("the configuration is not a JSON object: pass one, such as {{}}")]
    NotObject,
    #[error("the configuration has an unknown key {0:?}: this version knows {keys}", keys = KEYS.join(", "))]
    UnknownKey(String),
    #[error("{0} is not a string: give it in quotes")]
    NotString(String),
    #[error("{0} is not true or false")]
    NotBool(String),
    #[error("{0} is not a whole number from 0 to {max}", max = u64::MAX)]
    NotNumber(String),
    #[error("{key} is too large: at most {max}")]
    TooLarge { key: String, max: u64 },
    #[error("{0} is 0: give at least 1")]
    Zero(&'static str),
    #[error("base_url {0:?} is not an http:// or https:// URL: give the API's root, such as https://api.openai.com/v1")]
    NotHttp(String),
    #[error("task_key is not 64 hex digits: give 32 random bytes in hex")]
    TaskKey,
}

/// The configuration for `bytes` (UTF-8 JSON; empty means `{}`), or what is wrong with it.
pub(crate) fn parse(bytes: &[u8]) -> Result<ServerConfig, ConfigError> {
    let mut config = ServerConfig {
        // The host holds the key (or its provider needs none), adds it to each request,
        // and asks for whole answers and no model lookups unless it says otherwise.
        credentials_ready: true,
        stream: false,
        model_lookups: false,
        call_records: false,
        ..ServerConfig::default()
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(config);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(ConfigError::NotJson)?;
    let Value::Object(object) = value else {
        return Err(ConfigError::NotObject);
    };
    for (key, value) in &object {
        set(&mut config, key, value)?;
    }
    check(&config, &object)?;
    Ok(config)
}

fn set(config: &mut ServerConfig, key: &str, value: &Value) -> Result<(), ConfigError> {
    match key {
        "base_url" => config.base_url = string(key, value)?.trim_end_matches('/').to_owned(),
        "credentials_ready" => config.credentials_ready = boolean(key, value)?,
        "stream" => config.stream = boolean(key, value)?,
        "model_lookups" => config.model_lookups = boolean(key, value)?,
        "timeout_ms" => config.timeout = millis(key, value)?,
        "idle_timeout_ms" => config.idle_timeout = millis(key, value)?,
        "max_retries" => {
            config.max_retries =
                u32::try_from(number(key, value)?).map_err(|_| too_large(key, u32::MAX.into()))?;
        }
        "max_inflight" => config.max_inflight = count(key, value)?,
        "max_queue" => config.max_queue = count(key, value)?,
        "progress_interval_ms" => config.progress_interval = millis(key, value)?,
        "shutdown_grace_ms" => config.shutdown_grace = millis(key, value)?,
        "jitter_seed" => config.jitter_seed = number(key, value)?,
        "task_key" => config.tasks.key = task_key(string(key, value)?)?,
        "debug" => config.debug = boolean(key, value)?,
        "call_records" => config.call_records = boolean(key, value)?,
        "line_output" => config.force_line_output = boolean(key, value)?,
        _ => return Err(ConfigError::UnknownKey(key.to_owned())),
    }
    Ok(())
}

fn check(config: &ServerConfig, object: &Map<String, Value>) -> Result<(), ConfigError> {
    if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
        return Err(ConfigError::NotHttp(config.base_url.clone()));
    }
    for key in [
        "max_inflight",
        "timeout_ms",
        "idle_timeout_ms",
        "progress_interval_ms",
    ] {
        if object.get(key).and_then(Value::as_u64) == Some(0) {
            return Err(ConfigError::Zero(key));
        }
    }
    Ok(())
}

fn string<'a>(key: &str, value: &'a Value) -> Result<&'a str, ConfigError> {
    value
        .as_str()
        .ok_or_else(|| ConfigError::NotString(key.to_owned()))
}

fn boolean(key: &str, value: &Value) -> Result<bool, ConfigError> {
    value
        .as_bool()
        .ok_or_else(|| ConfigError::NotBool(key.to_owned()))
}

fn number(key: &str, value: &Value) -> Result<u64, ConfigError> {
    value
        .as_u64()
        .ok_or_else(|| ConfigError::NotNumber(key.to_owned()))
}

fn count(key: &str, value: &Value) -> Result<usize, ConfigError> {
    let max = u64::try_from(usize::MAX).unwrap_or(u64::MAX);
    usize::try_from(number(key, value)?).map_err(|_| too_large(key, max))
}

fn too_large(key: &str, max: u64) -> ConfigError {
    ConfigError::TooLarge {
        key: key.to_owned(),
        max,
    }
}

fn millis(key: &str, value: &Value) -> Result<Duration, ConfigError> {
    number(key, value).map(Duration::from_millis)
}

/// 64 hex digits: the secret that seals task ids, from the host's random source.
fn task_key(hex: &str) -> Result<TaskKey, ConfigError> {
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(ConfigError::TaskKey);
    }
    let mut key = [0u8; 32];
    for (byte, pair) in key.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let text = std::str::from_utf8(pair).map_err(|_| ConfigError::TaskKey)?;
        *byte = u8::from_str_radix(text, 16).map_err(|_| ConfigError::TaskKey)?;
    }
    Ok(TaskKey(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_the_hosts_defaults() {
        let config = parse(b"").unwrap();
        assert!(config.credentials_ready);
        assert!(!config.stream);
        assert!(!config.model_lookups);
        assert_eq!(config.base_url, "https://api.openai.com/v1");
    }

    #[test]
    fn keys_are_read_and_checked() {
        let config = parse(
            br#"{"base_url":"http://127.0.0.1:9/v1/","timeout_ms":2500,"max_retries":0,
                "task_key":"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"}"#,
        )
        .unwrap();
        assert_eq!(config.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(config.timeout, Duration::from_millis(2500));
        assert_eq!(config.max_retries, 0);
        assert_eq!(config.tasks.key.0[31], 0x1f);
        for (bad, says) in [
            (&br#"{"timeout":1}"#[..], "unknown key \"timeout\""),
            (br#"{"stream":"yes"}"#, "stream is not true or false"),
            (
                br#"{"max_retries":-1}"#,
                "max_retries is not a whole number",
            ),
            (
                br#"{"base_url":"api.openai.com"}"#,
                "not an http:// or https:// URL",
            ),
            (br#"{"max_inflight":0}"#, "max_inflight is 0"),
            (br#"{"task_key":"zz"}"#, "task_key is not 64 hex digits"),
            (br#"[1]"#, "not a JSON object"),
            (b"{", "not JSON"),
        ] {
            let error = parse(bad).unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        }
    }
}
