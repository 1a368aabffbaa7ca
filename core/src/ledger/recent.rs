//! What each client's calls of each profile cost lately, as OpenAI reported it: the
//! ground of the estimate held for a call from its admission to its end, and charged for
//! a run whose usage OpenAI never reports (a call cancelled mid-way, a background run
//! cancelled, expired or gone).
//!
//! The estimate of a call is the usage of the median of its *own client's* last [`KEPT`]
//! reported calls of the profile (by cost), never below what is known of the run itself
//! (the input it was sent, the searches it began): an input-only figure undercounts a
//! call that read 31,073 tokens of search results for a 789-token question by forty
//! times. Another client's calls never set it: a cheap client is not charged a heavy
//! one's median, nor a heavy one let through on a cheap one's. A client with no history
//! of the profile is estimated at [`first_call`]: a bound the operator can read in the
//! docs (docs/reference/limits.md).
//!
//! Bounded: at most [`CLIENTS`] (client, profile) histories, the least recently used
//! one forgotten first; so a flood of new identities costs at most their bound.

use crate::money::Picodollars;
use crate::openai::Usage;
use crate::tools::Tool;
use std::collections::VecDeque;

/// Reported calls remembered per client and profile.
pub(super) const KEPT: usize = 15;

/// (client, profile) histories remembered; the least recently used goes first.
pub(super) const CLIENTS: usize = 512;

/// Input tokens of a call with no history: a question with the search results a
/// typical search reads (31,073 tokens in the reference transcript), rounded up.
pub const FIRST_CALL_INPUT_TOKENS: u64 = 32_000;

/// Output tokens of a call with no history, when its profile sets no
/// `max_output_tokens`.
pub const FIRST_CALL_OUTPUT_TOKENS: u64 = 4_096;

/// The usage a call with no history of its own client and profile is estimated at:
/// [`FIRST_CALL_INPUT_TOKENS`] in, the profile's `max_output_tokens` (else
/// [`FIRST_CALL_OUTPUT_TOKENS`]) out, and one web search.
pub fn first_call(max_output_tokens: Option<u64>) -> Usage {
    Usage {
        input_tokens: FIRST_CALL_INPUT_TOKENS,
        output_tokens: max_output_tokens.unwrap_or(FIRST_CALL_OUTPUT_TOKENS),
        web_searches: 1,
        ..Usage::default()
    }
}

/// One client's history of one profile.
#[derive(Debug)]
struct History {
    client: String,
    tool: Tool,
    /// The oldest first, with what each cost.
    kept: VecDeque<(Picodollars, Usage)>,
    /// The median of `kept` by cost, found when a call is observed (every admission reads
    /// it, so it is not sorted again per call).
    median: Usage,
}

/// The latest reported usages of each client's profiles.
#[derive(Debug, Default)]
pub(super) struct Recent {
    /// The most recently used last.
    histories: Vec<History>,
}

impl Recent {
    /// A call of `client` on `tool` reported `usage`, which cost `cost`.
    pub fn observe(&mut self, client: &str, tool: Tool, cost: Picodollars, usage: &Usage) {
        let history = match self.take(client, tool) {
            Some(history) => history,
            None => {
                if self.histories.len() >= CLIENTS {
                    self.histories.remove(0);
                }
                History {
                    client: client.to_owned(),
                    tool,
                    kept: VecDeque::new(),
                    median: Usage::default(),
                }
            }
        };
        let mut history = history;
        if history.kept.len() == KEPT {
            history.kept.pop_front();
        }
        let mut usage = usage.clone();
        // Only the figures are kept: the id names another response.
        usage.response_id = None;
        history.kept.push_back((cost, usage));
        history.median = median(&history.kept).cloned().unwrap_or_default();
        self.histories.push(history);
    }

    /// The usage to hold for, or charge, a run of `client` on `tool` whose own usage is
    /// unknown: its client's median recent call of the profile, else `bound`, raised to
    /// what the run is known to have used (`known`).
    pub fn estimate(&mut self, client: &str, tool: Tool, known: &Usage, bound: &Usage) -> Usage {
        let i = self.position(client, tool);
        if let Some(i) = i.filter(|i| i + 1 != self.histories.len()) {
            // The most recently used goes last.
            let history = self.histories.remove(i);
            self.histories.push(history);
        }
        let base = match i {
            Some(_) => self.histories.last().map_or(bound, |h| &h.median),
            None => bound,
        };
        Usage {
            response_id: known.response_id.clone(),
            input_tokens: base.input_tokens.max(known.input_tokens),
            cached_input_tokens: base.cached_input_tokens,
            output_tokens: base.output_tokens.max(known.output_tokens),
            reasoning_tokens: base.reasoning_tokens.max(known.reasoning_tokens),
            cache_write_tokens: base.cache_write_tokens,
            web_searches: base.web_searches.max(known.web_searches),
            searches_from: base.searches_from,
            service_tier: known
                .service_tier
                .clone()
                .or_else(|| base.service_tier.clone()),
            billed: None,
            effort: known.effort.or(base.effort),
        }
    }

    /// `client`'s history of `tool`, taken out (to be put back as the most recent).
    fn take(&mut self, client: &str, tool: Tool) -> Option<History> {
        let i = self.position(client, tool)?;
        Some(self.histories.remove(i))
    }

    /// Where `client`'s history of `tool` is.
    fn position(&self, client: &str, tool: Tool) -> Option<usize> {
        self.histories
            .iter()
            .position(|h| h.tool == tool && h.client == client)
    }

    /// How many histories are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.histories.len()
    }
}

/// The usage of the median of `kept` by cost (the lower of the two middle ones when
/// they are even).
fn median(kept: &VecDeque<(Picodollars, Usage)>) -> Option<&Usage> {
    let mut order: Vec<&(Picodollars, Usage)> = kept.iter().collect();
    order.sort_by_key(|(cost, _)| cost.0);
    let middle = order.len().checked_sub(1)? / 2;
    order.get(middle).map(|(_, usage)| usage)
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
    fn without_history_the_estimate_is_the_bound_never_below_what_is_known() {
        let mut recent = Recent::default();
        let bound = first_call(None);
        let small = recent.estimate("ci", Tool::Answer, &usage(789, 0), &bound);
        assert_eq!(
            (small.input_tokens, small.output_tokens, small.web_searches),
            (32_000, 4_096, 1)
        );
        let big = recent.estimate(
            "ci",
            Tool::Answer,
            &usage(90_000, 0),
            &first_call(Some(500)),
        );
        assert_eq!((big.input_tokens, big.output_tokens), (90_000, 500));
    }

    #[test]
    fn the_estimate_is_the_clients_own_median_call_never_below_what_is_known() {
        let mut recent = Recent::default();
        for (n, (input, output)) in [(31_073, 4_416), (100, 10), (50_000, 9_000)]
            .into_iter()
            .enumerate()
        {
            let cost = Picodollars(u64::try_from(n).unwrap_or(0) * 10 + input);
            recent.observe("ci", Tool::Answer, cost, &usage(input, output));
        }
        let bound = first_call(None);
        let estimate = recent.estimate("ci", Tool::Answer, &usage(789, 0), &bound);
        assert_eq!(
            (estimate.input_tokens, estimate.output_tokens),
            (31_073, 4_416)
        );
        let bigger = recent.estimate("ci", Tool::Answer, &usage(40_000, 0), &bound);
        assert_eq!((bigger.input_tokens, bigger.output_tokens), (40_000, 4_416));
        // Another profile, and another client, have no history of their own.
        let other = recent.estimate("ci", Tool::AnswerQuick, &usage(789, 0), &bound);
        assert_eq!(other.input_tokens, 32_000);
        let stranger = recent.estimate("alice", Tool::Answer, &usage(789, 0), &bound);
        assert_eq!(
            (stranger.input_tokens, stranger.output_tokens),
            (32_000, 4_096)
        );
    }

    #[test]
    fn another_clients_heavy_calls_never_set_an_estimate() {
        let mut recent = Recent::default();
        for _ in 0..3 {
            recent.observe(
                "big",
                Tool::Answer,
                Picodollars(7_500_000_000_000),
                &usage(2_000_000, 200_000),
            );
        }
        recent.observe(
            "small",
            Tool::Answer,
            Picodollars(11_000_000_000),
            &usage(2_000, 400),
        );
        let bound = first_call(None);
        let estimate = recent.estimate("small", Tool::Answer, &usage(789, 0), &bound);
        assert_eq!(
            (estimate.input_tokens, estimate.output_tokens),
            (2_000, 400)
        );
    }

    #[test]
    fn only_the_latest_calls_count() {
        let mut recent = Recent::default();
        for _ in 0..KEPT {
            recent.observe("ci", Tool::Answer, Picodollars(1), &usage(1, 1));
        }
        for _ in 0..KEPT {
            recent.observe("ci", Tool::Answer, Picodollars(9), &usage(900, 90));
        }
        let estimate = recent.estimate("ci", Tool::Answer, &usage(0, 0), &first_call(None));
        assert_eq!(estimate.input_tokens, 900);
    }

    #[test]
    fn histories_are_bounded_the_least_recently_used_forgotten_first() {
        let mut recent = Recent::default();
        recent.observe("kept", Tool::Answer, Picodollars(5), &usage(5, 5));
        for n in 0..CLIENTS + 100 {
            if n % 100 == 0 {
                // Used now and then, so never the least recently used.
                let _ = recent.estimate("kept", Tool::Answer, &usage(0, 0), &first_call(None));
            }
            recent.observe(
                &format!("id:{n}"),
                Tool::Answer,
                Picodollars(1),
                &usage(1, 1),
            );
        }
        assert_eq!(recent.len(), CLIENTS);
        let kept = recent.estimate("kept", Tool::Answer, &usage(0, 0), &first_call(None));
        assert_eq!(kept.input_tokens, 5);
        let forgotten = recent.estimate("id:0", Tool::Answer, &usage(0, 0), &first_call(None));
        assert_eq!(forgotten.input_tokens, FIRST_CALL_INPUT_TOKENS);
    }
}
