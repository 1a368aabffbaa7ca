//! Where the shared store is (the `store` feature): `server.store.*` read into the
//! connection details of the `redis` crate, whose URL reader decides what a valid URL is,
//! so that a URL the store's thread (in the host crate) could not use is refused at
//! startup. Nothing here connects, and nothing prints the password.

use super::shown::without_password;
use crate::error::ConfigError;
use crate::resolve::Resolved;
use std::time::Duration;

/// Where the store is and how to reach it. `Debug` names no password.
#[derive(Clone)]
pub struct StoreConnect {
    /// The client's connection details, the password included.
    pub info: redis::ConnectionInfo,
    /// `host:port`, for messages.
    pub shown: String,
    /// The connect, read and write timeout (`server.store.timeout_ms`).
    pub timeout: Duration,
    /// With `rediss://`: the roots the store's certificate must chain to (`openai.ca_file`,
    /// as for OpenAI), or `None` for the built-in web PKI roots.
    pub tls: Option<Option<Vec<u8>>>,
}

impl std::fmt::Debug for StoreConnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StoreConnect({}, timeout {:?})",
            self.shown, self.timeout
        )
    }
}

impl StoreConnect {
    /// The store `server.store.url` names, with the password of `server.store.password_env`
    /// when that is set; `None` without a URL. A `rediss://` store is reached over TLS with
    /// the upstream's settings: the roots of `ca_pem` (`openai.ca_file`) when given, else
    /// the built-in ones, and the same cipher suites.
    ///
    /// # Errors
    /// A URL that is not `redis://` or `rediss://`, or that the client cannot read (the
    /// message shows the URL without its password).
    pub fn resolve(
        resolved: &Resolved,
        env: &crate::env::Env,
        ca_pem: Option<&[u8]>,
    ) -> Result<Option<Self>, ConfigError> {
        let store = &resolved.settings.server.store;
        let Some(url) = store.url.as_deref() else {
            return Ok(None);
        };
        let invalid = |why: &str| ConfigError::Invalid {
            key: "server.store.url".into(),
            value: without_password(url),
            origin: resolved
                .sources
                .get("server.store.url")
                .map_or_else(|| "the configuration".into(), ToString::to_string),
            allowed: why.into(),
        };
        let tls = url.starts_with("rediss://");
        if !tls && !url.starts_with("redis://") {
            return Err(invalid(
                "a redis:// URL, or rediss:// for TLS (redis[s]://[user[:password]@]host[:port][/db])",
            ));
        }
        let mut info = redis::IntoConnectionInfo::into_connection_info(url)
            .map_err(|_| invalid("a redis[s]://[user[:password]@]host[:port][/db] URL"))?;
        if let Some(name) = store.password_env.as_deref() {
            if let Some(password) = env.get(name).filter(|p| !p.is_empty()) {
                let redis = info.redis_settings().clone().set_password(password);
                info = info.set_redis_settings(redis);
            }
        }
        Ok(Some(StoreConnect {
            shown: format!("{}", info.addr()),
            info,
            timeout: Duration::from_millis(store.timeout_ms),
            tls: tls.then(|| ca_pem.map(<[u8]>::to_vec)),
        }))
    }
}
