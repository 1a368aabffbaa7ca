//! The gauges of the instance's health, written at scrape time: the identity provider's
//! keys, readiness, the shared store, and the spend limits alert rules compare against.

use super::gauges::Gauges;
use super::text::Exposition;
use super::PREFIX;

/// OAuth mode's identity provider: whether tokens can be checked, and whether the
/// provider answers (keys usable while it does not: degraded).
pub(super) fn write_identity(out: &mut Exposition, identity: Option<(bool, bool)>) {
    let Some((keys, answering)) = identity else {
        return;
    };
    let p = PREFIX;
    out.gauge_family(
        &format!("{p}identity_provider_keys_usable"),
        "1 when a verified key set of the identity provider is at hand (tokens can be checked), else 0.",
        std::iter::once((Vec::new(), f64::from(u8::from(keys)))),
    );
    out.gauge_family(
        &format!("{p}identity_provider_up"),
        "1 when the identity provider answered its last fetch, else 0 (with usable keys: degraded).",
        std::iter::once((Vec::new(), f64::from(u8::from(answering)))),
    );
}

/// Whether the instance can serve, the store answers, and what the spend limits are: what
/// alert rules compare against (`packaging/observability/alerts.yml`).
pub(super) fn write_readiness(out: &mut Exposition, gauges: &Gauges) {
    let p = PREFIX;
    out.gauge_family(
        &format!("{p}ready"),
        "1 when /ready would answer 200 (a call can work now), else 0.",
        std::iter::once((Vec::new(), f64::from(u8::from(gauges.ready)))),
    );
    if let Some(up) = gauges.store_up {
        out.gauge_family(
            &format!("{p}store_up"),
            "1 while the shared store (server.store.url) answers, else 0.",
            std::iter::once((Vec::new(), f64::from(u8::from(up)))),
        );
    }
    if let Some(told) = gauges.identities {
        out.gauge_family(
            &format!("{p}identities"),
            &format!("Identities of their own (OAuth or gateway users) this instance tells apart now, at most {}; the least recently seen with nothing under way are forgotten to make room, and when every one of them has something under way a new one is refused and ready is 0.", crate::clients::MAX_IDENTITIES),
            std::iter::once((Vec::new(), told as f64)),
        );
    }
    if !gauges.spend_limits.is_empty() {
        out.gauge_family(
            &format!("{p}spend_limit_usd"),
            "Estimated spend allowed per UTC day in US dollars: the instance's (scope=\"instance\") and each named client's own (scope=\"client\").",
            gauges.spend_limits.iter().map(|(client, usd)| {
                let labels = match client {
                    None => vec![("scope", "instance".to_owned())],
                    Some(name) => vec![("scope", "client".to_owned()), ("client", name.clone())],
                };
                (labels, usd.usd())
            }),
        );
    }
}
