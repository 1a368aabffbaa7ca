//! What calls of each profile cost lately, as OpenAI reported it: the ground of the
//! estimate charged for a run whose usage OpenAI never reports (a call cancelled mid-way,
//! a background run cancelled, expired or gone).
//!
//! The estimate of a run is the usage of the median of the profile's last [`KEPT`]
//! reported calls (by cost), never below what is known of the run itself (the input it
//! was sent, the searches it began): an input-only figure undercounts a call that read
//! 31,073 tokens of search results for a 789-token question by forty times.

use crate::money::Picodollars;
use crate::openai::Usage;
use crate::tools::Tool;
use std::collections::VecDeque;

/// Reported calls remembered per profile.
pub(super) const KEPT: usize = 31;

/// The latest reported usages of each profile, with what each cost.
#[derive(Debug, Default)]
pub(super) struct Recent {
    /// By tool (one profile each), the oldest first.
    by_tool: Vec<(Tool, VecDeque<(Picodollars, Usage)>)>,
}

impl Recent {
    /// A call of `tool` reported `usage`, which cost `cost`.
    pub fn observe(&mut self, tool: Tool, cost: Picodollars, usage: &Usage) {
        let i = match self.by_tool.iter().position(|(t, _)| *t == tool) {
            Some(i) => i,
            None => {
                self.by_tool.push((tool, VecDeque::new()));
                self.by_tool.len() - 1
            }
        };
        let kept = &mut self.by_tool[i].1;
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((cost, usage.clone()));
    }

    /// The usage to charge a run of `tool` whose own usage is unknown: the median recent
    /// call's, raised to what the run is known to have used (`known`); `known` alone
    /// while no call of the profile was reported.
    pub fn estimate(&self, tool: Tool, known: &Usage) -> Usage {
        let Some(median) = self.median(tool) else {
            return known.clone();
        };
        Usage {
            response_id: known.response_id.clone(),
            input_tokens: median.input_tokens.max(known.input_tokens),
            cached_input_tokens: median.cached_input_tokens,
            output_tokens: median.output_tokens.max(known.output_tokens),
            reasoning_tokens: median.reasoning_tokens.max(known.reasoning_tokens),
            cache_write_tokens: median.cache_write_tokens,
            web_searches: median.web_searches.max(known.web_searches),
            searches_from: median.searches_from,
            service_tier: known
                .service_tier
                .clone()
                .or_else(|| median.service_tier.clone()),
            billed: None,
            effort: known.effort.or(median.effort),
        }
    }

    /// The usage of the median of `tool`'s recent calls by cost (the lower of the two
    /// middle ones when they are even).
    fn median(&self, tool: Tool) -> Option<&Usage> {
        let (_, kept) = self.by_tool.iter().find(|(t, _)| *t == tool)?;
        let mut order: Vec<&(Picodollars, Usage)> = kept.iter().collect();
        order.sort_by_key(|(cost, _)| cost.0);
        let middle = order.len().checked_sub(1)? / 2;
        order.get(middle).map(|(_, usage)| usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn without_history_the_estimate_is_what_is_known() {
        let recent = Recent::default();
        let known = usage(789, 0);
        assert_eq!(recent.estimate(Tool::Answer, &known), known);
    }

    #[test]
    fn the_estimate_is_the_median_call_never_below_what_is_known() {
        let mut recent = Recent::default();
        for (n, (input, output)) in [(31_073, 4_416), (100, 10), (50_000, 9_000)]
            .into_iter()
            .enumerate()
        {
            let cost = Picodollars(u64::try_from(n).unwrap_or(0) * 10 + input);
            recent.observe(Tool::Answer, cost, &usage(input, output));
        }
        let estimate = recent.estimate(Tool::Answer, &usage(789, 0));
        assert_eq!(
            (estimate.input_tokens, estimate.output_tokens),
            (31_073, 4_416)
        );
        let bigger = recent.estimate(Tool::Answer, &usage(40_000, 0));
        assert_eq!((bigger.input_tokens, bigger.output_tokens), (40_000, 4_416));
        // Another profile has no history of its own.
        let other = recent.estimate(Tool::AnswerQuick, &usage(789, 0));
        assert_eq!(other.input_tokens, 789);
    }

    #[test]
    fn only_the_latest_calls_count() {
        let mut recent = Recent::default();
        for _ in 0..KEPT {
            recent.observe(Tool::Answer, Picodollars(1), &usage(1, 1));
        }
        for _ in 0..KEPT {
            recent.observe(Tool::Answer, Picodollars(9), &usage(900, 90));
        }
        let estimate = recent.estimate(Tool::Answer, &usage(0, 0));
        assert_eq!(estimate.input_tokens, 900);
    }
}
