//! What a call sends: the profile's model and settings, overridden by the call's
//! arguments and the search defaults, minus what the model does not take or has rejected.

use crate::openai::request::Hints;
use crate::openai::{model_supports, RequestPlan, UnsupportedParam};
use crate::server::{Profile, SearchDefaults};
use crate::tools::AnswerArgs;
use crate::vocab::Effort;
use std::collections::{BTreeMap, BTreeSet};

/// Parameters each model rejected, remembered for the life of the process so that the
/// next call does not pay the same 400 again.
#[derive(Default)]
pub struct Rejections {
    by_model: BTreeMap<String, BTreeSet<UnsupportedParam>>,
}

impl Rejections {
    /// Records that `model` rejected `param`.
    pub fn remember(&mut self, model: &str, param: UnsupportedParam) {
        self.by_model
            .entry(model.to_owned())
            .or_default()
            .insert(param);
    }

    fn rejects(&self, model: &str, param: UnsupportedParam) -> bool {
        self.by_model.get(model).is_some_and(|r| r.contains(&param))
    }

    /// The request a call with `args` on `profile` sends, `today` being the date in
    /// Asia/Tokyo.
    pub fn plan(
        &self,
        profile: &Profile,
        args: &AnswerArgs,
        defaults: &SearchDefaults,
        today: &str,
    ) -> RequestPlan {
        let domains = args
            .domains
            .clone()
            .unwrap_or_else(|| defaults.domains.clone());
        let hints = Hints {
            today: today.to_owned(),
            recency_days: args.recency_days.or(defaults.recency_days),
            max_results: args.max_results.or(defaults.max_results),
            style: args.style,
            domains: &domains,
        };
        let supports = model_supports(&profile.model);
        let mut effort = args.reasoning_effort.or(profile.reasoning_effort);
        if effort == Some(Effort::Minimal) {
            // The API rejects `minimal` together with web_search, which we always send.
            log::debug!("reasoning effort minimal cannot be combined with web_search; sending low");
            effort = Some(Effort::Low);
        }
        let model = &profile.model;
        let plan = RequestPlan {
            model: model.clone(),
            input: RequestPlan::input_text(&args.query, &hints),
            effort: effort.filter(|_| {
                supports.reasoning && !self.rejects(model, UnsupportedParam::ReasoningEffort)
            }),
            verbosity: args.verbosity.or(profile.verbosity).filter(|_| {
                supports.verbosity && !self.rejects(model, UnsupportedParam::Verbosity)
            }),
            allowed_domains: domains,
            stream: false,
        };
        log::debug!(
            "answer: model={model} supports={{verbosity:{}, reasoning:{}}}",
            supports.verbosity,
            supports.reasoning
        );
        log::debug!(
            "answer: request summary tools=web_search(on) reasoning={} text.verbosity={}",
            on_off(plan.effort.is_some()),
            on_off(plan.verbosity.is_some())
        );
        plan
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}
