//! The store's URL as it may be shown in messages and `--show-config`: never its password.

/// The URL as it may be shown: rebuilt from what the store's client reads in it (the
/// scheme, the user, the host and port, the database), never from its text, so that no
/// character a password holds (`/`, `?`, `#`, `@`, `+`, `=`) can carry it into a message.
/// A URL the client cannot read is not shown at all.
pub fn without_password(url: &str) -> String {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme).filter(|s| {
        !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+')
    });
    let Some(scheme) = scheme else {
        return "(a value that is not a URL, not shown)".into();
    };
    match read(url) {
        Some(shown) => format!("{scheme}://{shown}"),
        None => format!("{scheme}://… (not shown: unreadable as a URL; a password holding / ? # or @ must be percent-encoded, or given in server.store.password_env)"),
    }
}

/// The URL's parts that may be shown, as the store's client reads them.
#[cfg(feature = "store")]
fn read(url: &str) -> Option<String> {
    let info = redis::IntoConnectionInfo::into_connection_info(url).ok()?;
    let settings = info.redis_settings();
    let user = match (settings.username(), settings.password()) {
        (Some(user), Some(_)) => format!("{user}:****@"),
        (None, Some(_)) => ":****@".to_owned(),
        (Some(user), None) => format!("{user}@"),
        (None, None) => String::new(),
    };
    Some(format!("{user}{}/{}", info.addr(), settings.db()))
}

/// Without the store's client nothing of it is read, so nothing is shown.
#[cfg(not(feature = "store"))]
fn read(_url: &str) -> Option<String> {
    Some("… (not shown: this build has no store client)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "store")]
    #[test]
    fn a_shown_url_never_holds_the_password() {
        for (url, shown) in [
            (
                "redis://:s3cret@10.0.0.5:6379/0",
                "redis://:****@10.0.0.5:6379/0",
            ),
            (
                "redis://app:s3cret@store:6379",
                "redis://app:****@store:6379/0",
            ),
            ("redis://store", "redis://store:6379/0"),
            (
                "rediss://app:s3cret@store:6380/2",
                "rediss://app:****@store:6380/2",
            ),
            (
                "redis://app:s3cret+x=@store:6379",
                "redis://app:****@store:6379/0",
            ),
            (
                "redis://app:s3cret%2Fx@store:6379",
                "redis://app:****@store:6379/0",
            ),
        ] {
            assert_eq!(without_password(url), shown, "{url}");
        }
    }

    #[test]
    fn no_character_a_password_holds_carries_it_into_the_shown_url() {
        let secrets = [
            "s3cr/et",
            "s3cr?et",
            "s3cr#et",
            "s3cr@et",
            "s3cr+e=t",
            "s3cr/e+t=",
            "a/b/c@d",
        ];
        for secret in secrets {
            for url in [
                format!("redis://:{secret}@store:6379/0"),
                format!("redis://app:{secret}@store:6379"),
                format!("rediss://default:{secret}@10.1.2.3"),
                format!("redis://app:{secret}"),
                format!("redis://:{secret}/0"),
            ] {
                let shown = without_password(&url);
                assert!(!shown.contains(secret), "{url} shown as {shown}");
                for part in secret.split(|c: char| !c.is_ascii_alphanumeric()) {
                    assert!(
                        part.len() < 4 || !shown.contains(part),
                        "{url} shown as {shown}"
                    );
                }
            }
        }
        assert!(!without_password("s3cret").contains("s3cret"));
    }
}
