//! What a call sends: the profile's model and settings, overridden by the call's
//! arguments and the search defaults, then moved inside what the model is known to take
//! (its family's parameters, and the limits it told us in earlier 400s).

use crate::openai::drift::{fit, Adjustment, Limit, Param, ParamRejection};
use crate::openai::request::Hints;
use crate::openai::{model_supports, Capabilities, RequestPlan};
use crate::settings::{Api, Profile, SearchDefaults, WebSearch};
use crate::tools::AnswerArgs;
use crate::vocab::{Effort, ServiceTier};
use std::collections::BTreeMap;

/// Most models whose limits are kept; a process that meets more forgets the oldest
/// learned (a bound for a server fed model ids by a hostile configuration).
const MAX_MODELS: usize = 256;

/// The limits each model told us, remembered for the life of the process so that the
/// next call does not pay the same 400 again.
#[derive(Default)]
pub struct ModelLimits {
    by_model: BTreeMap<String, BTreeMap<Param, Limit>>,
    /// Models in the order they were first learned, for the bound.
    order: Vec<String>,
}

/// What one call asks for, before the model's limits.
pub struct Ask<'a> {
    /// The profile serving the call.
    pub profile: &'a Profile,
    /// The setting the profile's model came from (`model_profiles.<tool>.model`).
    pub model_setting: &'static str,
    /// The call's arguments.
    pub args: &'a AnswerArgs,
    /// `search.defaults`.
    pub defaults: &'a SearchDefaults,
    /// How the provider searches.
    pub web_search: WebSearch,
    /// Whose API the provider speaks.
    pub api: Api,
    /// Today in Asia/Tokyo, `YYYY-MM-DD`.
    pub today: &'a str,
    /// The tier of the call's lane over the profile's (`tasks.service_tier` for a
    /// task's call): decided here, before the model's known limits are applied, so a
    /// model that refused the lane's tier is not sent it again.
    pub lane: Option<ServiceTier>,
}

impl ModelLimits {
    /// Records what `model` takes for the rejection's parameter.
    pub fn remember(&mut self, model: &str, rejection: &ParamRejection) {
        if !self.by_model.contains_key(model) {
            if self.order.len() >= MAX_MODELS {
                let oldest = self.order.remove(0);
                self.by_model.remove(&oldest);
            }
            self.order.push(model.to_owned());
        }
        self.by_model
            .entry(model.to_owned())
            .or_default()
            .insert(rejection.param, rejection.limit.clone());
    }

    /// The request `ask` sends, with every change made to fit the model's known limits.
    pub fn plan(&self, ask: &Ask<'_>) -> (RequestPlan, Vec<Adjustment>) {
        let Ask { profile, args, .. } = ask;
        let domains = args
            .domains
            .clone()
            .unwrap_or_else(|| ask.defaults.domains.clone());
        let hints = Hints {
            today: ask.today.to_owned(),
            recency_days: args.recency_days.or(ask.defaults.recency_days),
            max_results: args.max_results.or(ask.defaults.max_results),
            style: args.style,
            domains: &domains,
        };
        let mut supports = model_supports(&profile.model);
        if !ask.api.takes_openai_options() {
            // The service decides what its models take: efforts it names, no verbosity.
            supports.reasoning = ask.api.efforts().is_some();
            supports.verbosity = false;
        }
        let mut effort = args.reasoning_effort.or(profile.reasoning_effort);
        if effort == Some(Effort::Minimal) && ask.web_search.available() {
            // The API rejects `minimal` together with web_search, which we send.
            log::debug!("reasoning effort minimal cannot be combined with web_search; sending low");
            effort = Some(Effort::Low);
        }
        let mut plan = RequestPlan {
            model: profile.model.clone(),
            model_setting: ask.model_setting,
            input: RequestPlan::input_text(&args.query, &hints),
            effort: effort.filter(|_| supports.reasoning),
            verbosity: args
                .verbosity
                .or(profile.verbosity)
                .filter(|_| supports.verbosity),
            api: ask.api,
            web_search: ask.web_search,
            allowed_domains: domains,
            search: profile.search.clone(),
            service_tier: ask
                .lane
                .or(profile.service_tier)
                .filter(|_| ask.api.takes_openai_options()),
            max_output_tokens: profile.max_output_tokens,
            stream: false,
            background: false,
            completion_window: None,
            user: None,
        };
        let adjustments = self.fit(&mut plan, ask.api, &supports);
        log_plan(&plan, &supports);
        (plan, adjustments)
    }

    /// Moves `plan` inside what its model takes: the efforts the service or the model's
    /// family is known to take, then the limits the model told us in earlier 400s.
    fn fit(&self, plan: &mut RequestPlan, api: Api, supports: &Capabilities) -> Vec<Adjustment> {
        let mut adjustments = Vec::new();
        if let Some(efforts) = api.efforts() {
            let known = Limit::OneOf(efforts.iter().map(|e| (*e).to_owned()).collect());
            adjustments.extend(fit(plan, Param::ReasoningEffort, &known));
        } else if !supports.efforts.is_empty() {
            // What the model's family is known to take: a request never carries an effort
            // the model refuses (`minimal` to gpt-6.1-terra).
            let known = Limit::OneOf(supports.efforts.iter().map(|e| e.to_string()).collect());
            adjustments.extend(fit(plan, Param::ReasoningEffort, &known));
        }
        if let Some(limits) = self.by_model.get(&plan.model) {
            for (param, limit) in limits {
                adjustments.extend(fit(plan, *param, limit));
            }
        }
        for a in &adjustments {
            log::debug!("answer: {} takes {a} (learned earlier)", plan.model);
        }
        adjustments
    }
}

/// The debug lines that say what a call's request carries.
fn log_plan(plan: &RequestPlan, supports: &Capabilities) {
    log::debug!(
        "answer: model={} supports={{verbosity:{}, reasoning:{}}}",
        plan.model,
        supports.verbosity,
        supports.reasoning
    );
    log::debug!(
        "answer: request summary tools={} reasoning={} text.verbosity={}",
        match plan.web_search {
            WebSearch::OpenAi => "web_search(on)",
            WebSearch::OpenRouter => "openrouter:web_search(on)",
            WebSearch::Perplexity => "perplexity web_search(on)",
            WebSearch::Always => "none (the service searches)",
            WebSearch::Unavailable => "none",
        },
        on_off(plan.effort.is_some()),
        on_off(plan.verbosity.is_some())
    );
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Verbosity;

    fn ask_with<'a>(profile: &'a Profile, args: &'a AnswerArgs, d: &'a SearchDefaults) -> Ask<'a> {
        Ask {
            profile,
            model_setting: crate::tools::Tool::Answer.model_setting(),
            args,
            defaults: d,
            web_search: WebSearch::OpenAi,
            api: Api::OpenAi,
            today: "2026-11-23",
            lane: None,
        }
    }

    #[test]
    fn learned_limits_move_the_next_plan_and_say_so() {
        let profile = Profile {
            model: "gpt-5.5".into(),
            reasoning_effort: Some(Effort::Xhigh),
            verbosity: Some(Verbosity::Low),
            service_tier: Some(ServiceTier::Priority),
            max_output_tokens: Some(200_000),
            ..Profile::default()
        };
        let args = AnswerArgs::default();
        let defaults = SearchDefaults::default();
        let mut limits = ModelLimits::default();
        let (plan, adjusted) = limits.plan(&ask_with(&profile, &args, &defaults));
        assert!(adjusted.is_empty());
        assert_eq!(plan.effort, Some(Effort::Xhigh));
        let one_of = |v: &[&str]| Limit::OneOf(v.iter().map(|s| s.to_string()).collect());
        for (param, limit) in [
            (
                Param::ReasoningEffort,
                one_of(&["none", "low", "medium", "high"]),
            ),
            (Param::Verbosity, one_of(&["medium"])),
            (Param::ServiceTier, Limit::Unsupported),
            (Param::MaxOutputTokens, Limit::AtMost(128_000)),
        ] {
            limits.remember("gpt-5.5", &ParamRejection { param, limit });
        }
        let (plan, adjusted) = limits.plan(&ask_with(&profile, &args, &defaults));
        assert_eq!(
            (
                plan.effort,
                plan.verbosity,
                plan.service_tier,
                plan.max_output_tokens
            ),
            (
                Some(Effort::High),
                Some(Verbosity::Medium),
                None,
                Some(128_000)
            )
        );
        let shown: Vec<String> = adjusted.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "reasoning.effort xhigh -> high",
                "text.verbosity low -> medium",
                "service_tier priority left out",
                "max_output_tokens 200000 -> 128000"
            ]
        );
        // Another model is not affected.
        let other = Profile {
            model: "gpt-5.6-terra".into(),
            ..profile.clone()
        };
        let (plan, adjusted) = limits.plan(&ask_with(&other, &args, &defaults));
        assert!(adjusted.is_empty() && plan.effort == Some(Effort::Xhigh));
    }

    #[test]
    fn minimal_is_kept_where_nothing_is_searched() {
        let profile = Profile {
            model: "gpt-5-nano".into(),
            reasoning_effort: Some(Effort::Minimal),
            ..Profile::default()
        };
        let args = AnswerArgs::default();
        let defaults = SearchDefaults::default();
        let limits = ModelLimits::default();
        let mut ask = ask_with(&profile, &args, &defaults);
        assert_eq!(limits.plan(&ask).0.effort, Some(Effort::Low));
        ask.web_search = WebSearch::Unavailable;
        assert_eq!(limits.plan(&ask).0.effort, Some(Effort::Minimal));
    }

    #[test]
    fn a_known_model_is_never_sent_an_effort_it_refuses() {
        let args = AnswerArgs::default();
        let defaults = SearchDefaults::default();
        let limits = ModelLimits::default();
        for (model, asked, sent) in [
            ("gpt-6.1-terra", Effort::Minimal, Effort::Low),
            ("openai/gpt-6.1-terra", Effort::Minimal, Effort::Low),
            ("gpt-6.1-terra", Effort::Max, Effort::Max),
            ("gpt-6.1-terra", Effort::None, Effort::None),
            ("gpt-5-mini", Effort::Xhigh, Effort::High),
            ("gpt-5-mini-2025-08-07", Effort::None, Effort::Minimal),
            ("gpt-5.1", Effort::Max, Effort::High),
        ] {
            let profile = Profile {
                model: model.into(),
                reasoning_effort: Some(asked),
                ..Profile::default()
            };
            for web_search in [WebSearch::OpenAi, WebSearch::Unavailable] {
                let mut ask = ask_with(&profile, &args, &defaults);
                ask.web_search = web_search;
                let (plan, adjusted) = limits.plan(&ask);
                let expected = if asked == Effort::Minimal && web_search.available() {
                    Effort::Low
                } else {
                    sent
                };
                assert_eq!(
                    plan.effort,
                    Some(expected),
                    "{model} {asked} {web_search:?}"
                );
                let shown: Vec<String> = adjusted.iter().map(ToString::to_string).collect();
                if asked == sent || (asked == Effort::Minimal && web_search.available()) {
                    assert!(shown.is_empty(), "{model}: {shown:?}");
                } else {
                    assert_eq!(shown, [format!("reasoning.effort {asked} -> {sent}")]);
                }
            }
        }
    }

    #[test]
    fn the_number_of_models_remembered_is_bounded() {
        let mut limits = ModelLimits::default();
        let rejection = ParamRejection {
            param: Param::Verbosity,
            limit: Limit::Unsupported,
        };
        for i in 0..MAX_MODELS + 10 {
            limits.remember(&format!("m{i}"), &rejection);
        }
        assert_eq!(limits.by_model.len(), MAX_MODELS);
        assert!(!limits.by_model.contains_key("m0"));
        assert!(limits
            .by_model
            .contains_key(&format!("m{}", MAX_MODELS + 9)));
    }
}
