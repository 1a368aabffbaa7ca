//! Models that drift: reading a 400 that names a parameter the model does not take (or a
//! value it does not take, or a number out of its range) as a limit, and moving a request
//! inside the limits a model is known to have.
//!
//! A new model often rejects what its predecessor took (`minimal` effort, `verbosity`
//! other than `medium`, a service tier). The API says so in a 400 whose `param` names the
//! parameter and whose message lists what is supported:
//!
//! ```text
//! Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.
//! Supported values are: 'none', 'low', 'medium', and 'high'.
//! ```

use super::request::RequestPlan;
use crate::vocab::{Effort, SearchContextSize, ServiceTier, Verbosity};
use serde_json::Value;
use std::fmt;

/// A request parameter a model may refuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Param {
    /// `reasoning.effort`.
    ReasoningEffort,
    /// `text.verbosity`.
    Verbosity,
    /// `service_tier`.
    ServiceTier,
    /// `max_output_tokens`.
    MaxOutputTokens,
    /// The web_search tool's `search_context_size`.
    SearchContextSize,
    /// The web_search tool's `user_location`.
    UserLocation,
    /// The web_search tool's `external_web_access`.
    ExternalWebAccess,
}

impl Param {
    /// The parameter's path in the request body, as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Param::ReasoningEffort => "reasoning.effort",
            Param::Verbosity => "text.verbosity",
            Param::ServiceTier => "service_tier",
            Param::MaxOutputTokens => "max_output_tokens",
            Param::SearchContextSize => "tools.web_search.search_context_size",
            Param::UserLocation => "tools.web_search.user_location",
            Param::ExternalWebAccess => "tools.web_search.external_web_access",
        }
    }

    /// Reads the API's `param` field: `reasoning.effort`, `tools[0].search_context_size`…
    fn from_api(param: &str) -> Option<Param> {
        let last = param.rsplit('.').next().unwrap_or(param);
        Some(match param {
            "reasoning.effort" | "reasoning" | "reasoning_effort" => Param::ReasoningEffort,
            "text.verbosity" | "verbosity" | "text" => Param::Verbosity,
            "service_tier" => Param::ServiceTier,
            "max_output_tokens" => Param::MaxOutputTokens,
            _ if param.starts_with("tools") => match last {
                "search_context_size" => Param::SearchContextSize,
                "external_web_access" => Param::ExternalWebAccess,
                _ if param.contains("user_location") => Param::UserLocation,
                _ => return None,
            },
            _ => return None,
        })
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a model takes for one parameter, as a 400 told us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Not the parameter at all: leave it out.
    Unsupported,
    /// Only these values (as the API spells them).
    OneOf(Vec<String>),
    /// A number no larger than this.
    AtMost(u64),
    /// A number no smaller than this.
    AtLeast(u64),
}

/// A model's refusal of one parameter, read from a 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamRejection {
    /// The parameter.
    pub param: Param,
    /// What the model takes instead.
    pub limit: Limit,
}

impl ParamRejection {
    /// Reads an API `error` object of a 400. `None` when it does not name a parameter
    /// we send, or is not about what the model supports.
    pub fn from_error(error: &Value) -> Option<ParamRejection> {
        let field = |k: &str| error.get(k).and_then(Value::as_str);
        let param = Param::from_api(field("param")?)?;
        let message = field("message").unwrap_or("");
        let code = field("code");
        let limit = match code {
            Some("unsupported_parameter") => Limit::Unsupported,
            Some("unsupported_value") => match supported_values(message) {
                values if values.is_empty() => Limit::Unsupported,
                values => Limit::OneOf(values),
            },
            Some("integer_above_max_value") => Limit::AtMost(bound(message, "<=")?),
            Some("integer_below_min_value") => Limit::AtLeast(bound(message, ">=")?),
            // Compatible servers leave the code out; their messages still say it.
            None if message.starts_with("Unsupported parameter") => Limit::Unsupported,
            None if message.starts_with("Unsupported value") => match supported_values(message) {
                values if values.is_empty() => Limit::Unsupported,
                values => Limit::OneOf(values),
            },
            _ => return None,
        };
        Some(ParamRejection { param, limit })
    }
}

/// The quoted values after "Supported values are:" (at most 16, each short).
fn supported_values(message: &str) -> Vec<String> {
    let Some((_, list)) = message.split_once("Supported values are") else {
        return Vec::new();
    };
    list.split('\'')
        .skip(1)
        .step_by(2)
        .filter(|v| !v.is_empty() && v.len() <= 32)
        .take(16)
        .map(str::to_owned)
        .collect()
}

/// The number after `op` in "Expected a value >= 16".
fn bound(message: &str, op: &str) -> Option<u64> {
    let (_, rest) = message.split_once(op)?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// One change made to fit a model's limits, for the debug log and the usage `_meta`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adjustment {
    /// The parameter.
    pub param: Param,
    /// The value asked for.
    pub from: String,
    /// The value sent instead; `None` when the parameter was left out.
    pub to: Option<String>,
}

impl fmt::Display for Adjustment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.to {
            Some(to) => write!(f, "{} {} -> {to}", self.param, self.from),
            None => write!(f, "{} {} left out", self.param, self.from),
        }
    }
}

/// A value ordered on a scale (efforts, verbosities, context sizes), for "nearest".
pub trait Scaled: Copy + PartialEq + 'static {
    /// Every value, lowest first.
    const SCALE: &'static [Self];
    /// The wire spelling.
    fn name(self) -> &'static str;
}

impl Scaled for Effort {
    const SCALE: &'static [Effort] = &Effort::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Scaled for Verbosity {
    const SCALE: &'static [Verbosity] = &Verbosity::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Scaled for SearchContextSize {
    const SCALE: &'static [SearchContextSize] = &SearchContextSize::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// The supported value closest to `wanted` on its scale (the higher one on a tie, so
/// a refused `minimal` becomes `low`, not `none`); `None` when no supported value is
/// one we know.
pub fn nearest<T: Scaled, S: AsRef<str>>(wanted: T, supported: &[S]) -> Option<T> {
    let rank = |v: T| T::SCALE.iter().position(|s| *s == v).unwrap_or(0);
    let target = rank(wanted);
    T::SCALE
        .iter()
        .copied()
        .filter(|v| supported.iter().any(|s| s.as_ref() == v.name()))
        .min_by_key(|v| {
            let r = rank(*v);
            // Distance first; on a tie the higher rank wins (smaller key).
            (r.abs_diff(target), usize::MAX - r)
        })
}

/// The service tier to send instead of `wanted`: the project's own choice (`auto`) or
/// the standard tier, whichever the model takes; `None` leaves it out.
pub fn fallback_tier(wanted: ServiceTier, supported: &[String]) -> Option<ServiceTier> {
    if supported.iter().any(|s| s == wanted.as_str()) {
        return Some(wanted);
    }
    [ServiceTier::Auto, ServiceTier::Default]
        .into_iter()
        .find(|t| supported.iter().any(|s| s == t.as_str()))
}

/// Moves `plan` inside `limit` for `param`: the nearest value the model takes, or without
/// the parameter. `None` when the plan already fits (or does not send the parameter).
pub fn fit(plan: &mut RequestPlan, param: Param, limit: &Limit) -> Option<Adjustment> {
    fn change<T: Copy + PartialEq + std::fmt::Display>(
        slot: &mut Option<T>,
        param: Param,
        to: impl FnOnce(T) -> Option<T>,
    ) -> Option<Adjustment> {
        let from = (*slot)?;
        let to = to(from);
        if to == Some(from) {
            return None;
        }
        *slot = to;
        Some(Adjustment {
            param,
            from: from.to_string(),
            to: to.map(|t| t.to_string()),
        })
    }
    let values = match limit {
        Limit::OneOf(values) => values.as_slice(),
        _ => &[],
    };
    match (param, limit) {
        (Param::ReasoningEffort, _) => change(&mut plan.effort, param, |e| nearest(e, values)),
        (Param::Verbosity, _) => change(&mut plan.verbosity, param, |v| nearest(v, values)),
        (Param::SearchContextSize, _) => {
            change(&mut plan.search.context_size, param, |s| nearest(s, values))
        }
        (Param::ServiceTier, _) => {
            change(&mut plan.service_tier, param, |t| fallback_tier(t, values))
        }
        (Param::MaxOutputTokens, Limit::AtMost(max)) => {
            change(&mut plan.max_output_tokens, param, |n| Some(n.min(*max)))
        }
        (Param::MaxOutputTokens, Limit::AtLeast(min)) => {
            change(&mut plan.max_output_tokens, param, |n| Some(n.max(*min)))
        }
        (Param::MaxOutputTokens, _) => change(&mut plan.max_output_tokens, param, |_| None),
        (Param::ExternalWebAccess, _) => {
            change(&mut plan.search.external_web_access, param, |_| None)
        }
        (Param::UserLocation, _) => {
            let from = plan.search.user_location.take()?;
            let shown = [&from.country, &from.region, &from.city, &from.timezone]
                .into_iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            Some(Adjustment {
                param,
                from: shown,
                to: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let v: Value = serde_json::from_slice(&crate::fixture(name)).unwrap();
        v["error"].clone()
    }

    #[test]
    fn the_real_unsupported_effort_error_lists_its_values() {
        let r = ParamRejection::from_error(&fixture("error-400-unsupported-reasoning-effort.json"));
        let expected = ["none", "low", "medium", "high"].map(String::from).to_vec();
        assert_eq!(
            r,
            Some(ParamRejection {
                param: Param::ReasoningEffort,
                limit: Limit::OneOf(expected.clone())
            })
        );
        assert_eq!(nearest(Effort::Minimal, &expected), Some(Effort::Low));
        assert_eq!(nearest(Effort::Max, &expected), Some(Effort::High));
        assert_eq!(nearest(Effort::Xhigh, &expected), Some(Effort::High));
        assert_eq!(nearest(Effort::Medium, &expected), Some(Effort::Medium));
    }

    #[test]
    fn the_minimal_with_web_search_error_is_not_a_parameter_limit() {
        // param "tools", code null, a message about a combination: nothing to clamp.
        let e = fixture("error-400-web-search-minimal-effort.json");
        assert_eq!(ParamRejection::from_error(&e), None);
    }

    #[test]
    fn verbosity_tier_tokens_and_tool_fields_are_read() {
        let verbosity = json!({"message": "Unsupported value: 'verbosity' does not support 'low' with this model. Supported values are: 'medium'.",
            "type": "invalid_request_error", "param": "text.verbosity", "code": "unsupported_value"});
        let r = ParamRejection::from_error(&verbosity).unwrap();
        assert_eq!(r.limit, Limit::OneOf(vec!["medium".into()]));
        assert_eq!(
            nearest(Verbosity::Low, &["medium".to_owned()]),
            Some(Verbosity::Medium)
        );
        let tokens = json!({"message": "Invalid 'max_output_tokens': integer above maximum value. Expected a value <= 128000, but got 200000 instead.",
            "param": "max_output_tokens", "code": "integer_above_max_value"});
        assert_eq!(
            ParamRejection::from_error(&tokens).unwrap().limit,
            Limit::AtMost(128_000)
        );
        let low = json!({"message": "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 8 instead.",
            "param": "max_output_tokens", "code": "integer_below_min_value"});
        assert_eq!(
            ParamRejection::from_error(&low).unwrap().limit,
            Limit::AtLeast(16)
        );
        let temp = json!({"message": "Unsupported parameter: 'service_tier' is not supported with this model.",
            "param": "service_tier", "code": "unsupported_parameter"});
        assert_eq!(
            ParamRejection::from_error(&temp).unwrap(),
            ParamRejection {
                param: Param::ServiceTier,
                limit: Limit::Unsupported
            }
        );
        let tool = json!({"message": "Unsupported parameter: 'tools[0].external_web_access'.",
            "param": "tools[0].external_web_access", "code": null});
        assert_eq!(
            ParamRejection::from_error(&tool).unwrap().param,
            Param::ExternalWebAccess
        );
        let location = json!({"message": "Unsupported value", "param": "tools[0].user_location.country", "code": "unsupported_value"});
        assert_eq!(
            ParamRejection::from_error(&location).unwrap(),
            ParamRejection {
                param: Param::UserLocation,
                limit: Limit::Unsupported
            }
        );
    }

    #[test]
    fn other_400s_are_not_limits() {
        for e in [
            json!({"message": "bad", "param": "input", "code": "unsupported_value"}),
            json!({"message": "Unsupported value", "param": null, "code": "unsupported_value"}),
            json!({"message": "x", "param": "max_output_tokens", "code": "integer_above_max_value"}),
            json!({"message": "Invalid", "param": "reasoning.effort", "code": "invalid_value"}),
            json!("not an object"),
        ] {
            assert_eq!(ParamRejection::from_error(&e), None, "{e}");
        }
    }

    #[test]
    fn nearest_knows_nothing_of_unknown_values_and_tiers_fall_back() {
        assert_eq!(nearest(Effort::Low, &["turbo".to_owned()]), None);
        assert_eq!(nearest::<Effort, String>(Effort::Low, &[]), None);
        let tiers = ["auto", "default", "flex"].map(String::from);
        assert_eq!(
            fallback_tier(ServiceTier::Priority, &tiers),
            Some(ServiceTier::Auto)
        );
        assert_eq!(
            fallback_tier(ServiceTier::Flex, &tiers),
            Some(ServiceTier::Flex)
        );
        assert_eq!(fallback_tier(ServiceTier::Scale, &["x".to_owned()]), None);
    }
}
