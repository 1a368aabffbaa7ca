//! How a call ended, in one vocabulary: the metrics' `outcome` and `reason` labels, the
//! call log's `outcome`, a tool failure's kind and `/ready`'s reason all name the same
//! [`Refusal`]s and [`Outcome`]s, so a dashboard, a log query and a probe agree.

use crate::clients::LimitKind;
use crate::openai::FailureKind;

/// Why a call was refused before any upstream request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// Every call slot and the queue are taken.
    Busy,
    /// The server is shutting down and takes no new calls.
    Draining,
    /// The server has no API key.
    NoApiKey,
    /// OpenAI has shut the profile's model down.
    ModelShutDown,
    /// A client's or the instance's calls per minute.
    CallsPerMinute,
    /// A client's or the instance's estimated spend per day.
    SpendPerDay,
    /// The store the limits are shared through does not answer.
    StoreUnavailable,
    /// OAuth mode: the identity provider's signing keys cannot be had, so no token it
    /// issued can be checked (`/ready` only: such a request is refused before it is a
    /// call).
    IdentityProviderUnavailable,
    /// Every identity the roster tells apart has something under way, so a new one is
    /// refused (`/ready` only: such a request is refused before it is a call).
    TooManyIdentities,
}

impl Refusal {
    /// The label in metrics (`reason`) and, after `refused_`, in `outcome`.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Busy => "busy",
            Refusal::Draining => "draining",
            Refusal::NoApiKey => "no_api_key",
            Refusal::ModelShutDown => "model_shut_down",
            Refusal::CallsPerMinute => "limit_calls_per_minute",
            Refusal::SpendPerDay => "limit_spend_per_day",
            Refusal::StoreUnavailable => "store_unavailable",
            Refusal::IdentityProviderUnavailable => "identity_provider_unavailable",
            Refusal::TooManyIdentities => "too_many_identities",
        }
    }

    /// The reason `/ready` gives when every new call would be refused for this.
    pub fn not_ready(self) -> &'static str {
        match self {
            Refusal::Draining => "draining: the server is shutting down and takes no new calls",
            Refusal::NoApiKey => {
                "no API key: the server was started without one, so every call would fail"
            }
            Refusal::Busy => "at capacity: every call slot is taken and the queue is full",
            Refusal::ModelShutDown => "model shut down: OpenAI no longer serves a profile's model",
            Refusal::CallsPerMinute => "limit: the instance's calls per minute are used up",
            Refusal::SpendPerDay => "limit: the instance's spend for the day is used up",
            Refusal::StoreUnavailable => {
                "store unreachable: the store the instances share their limits through (server.store.url) does not answer"
            }
            Refusal::IdentityProviderUnavailable => {
                "identity provider unreachable: the signing keys of server.http.oauth.issuer are not fetched yet, or its last fetch failed or took too long (the log says why), so its tokens cannot be checked; static tokens still work"
            }
            Refusal::TooManyIdentities => {
                "too many identities: every identity this instance tells apart has a request, a call, a task or a day's spend under way, so a new identity would be refused; known identities are still served"
            }
        }
    }
}

impl From<LimitKind> for Refusal {
    fn from(kind: LimitKind) -> Refusal {
        match kind {
            LimitKind::CallsPerMinute(_) => Refusal::CallsPerMinute,
            LimitKind::SpendPerDay { .. } => Refusal::SpendPerDay,
        }
    }
}

/// How a `tools/call` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An answer.
    Ok,
    /// The upstream call failed, this way.
    Upstream(FailureKind),
    /// Refused before any upstream request.
    Refused(Refusal),
    /// Stopped before its answer (cancelled, or its client left) after its request
    /// reached OpenAI: no reply, but charged.
    Cancelled,
}

impl Outcome {
    /// The label: `ok`, `upstream_<kind>` or `refused_<why>`.
    pub fn label(self) -> String {
        match self {
            Outcome::Ok => "ok".into(),
            Outcome::Upstream(kind) => format!("upstream_{}", kind.as_str()),
            Outcome::Refused(why) => format!("refused_{}", why.label()),
            Outcome::Cancelled => "cancelled".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_ones_dashboards_already_query() {
        assert_eq!(Outcome::Ok.label(), "ok");
        assert_eq!(
            Outcome::Upstream(FailureKind::Timeout).label(),
            "upstream_timeout"
        );
        assert_eq!(
            Outcome::Refused(Refusal::SpendPerDay).label(),
            "refused_limit_spend_per_day"
        );
        assert_eq!(
            Outcome::Refused(Refusal::ModelShutDown).label(),
            "refused_model_shut_down"
        );
    }
}
