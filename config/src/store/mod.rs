//! The shared store (`server.store.*`). With the `store` feature (the release archives
//! and the container image have it), the Redis or Valkey client in `redis_client.rs`;
//! without it, a build that refuses `server.store.url` saying which builds have one, so
//! that the static binaries built without it stay small.

#[cfg(feature = "store")]
mod batch;
#[cfg(feature = "store")]
mod redis_client;
#[cfg(feature = "store")]
pub use redis_client::{Store, StoreConnect};

#[cfg(not(feature = "store"))]
mod absent;
#[cfg(not(feature = "store"))]
pub use absent::{Store, StoreConnect};

/// The URL as it may be shown: its password replaced.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{user}:****@{host}{}", &rest[end..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_never_holds_the_password() {
        for (url, shown) in [
            (
                "redis://:s3cret@10.0.0.5:6379/0",
                "redis://:****@10.0.0.5:6379/0",
            ),
            (
                "redis://app:s3cret@store:6379",
                "redis://app:****@store:6379",
            ),
            ("redis://store:6379", "redis://store:6379"),
            ("redis://a@b:pw@store/1", "redis://a@b:****@store/1"),
        ] {
            assert_eq!(without_password(url), shown);
            assert!(!without_password(url).contains("s3cret"));
        }
    }
}
