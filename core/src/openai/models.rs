//! What we know of OpenAI models by their ids: which request parameters a family takes,
//! and which models OpenAI has scheduled for shutdown.
//!
//! The shutdown table follows OpenAI's deprecations page
//! (developers.openai.com/api/docs/deprecations, as of [`CALENDAR_AS_OF`]; announcements
//! of 2025-11-18, 2026-04-22, 2026-05-08, 2026-06-11 and 2026-10-14). Where sources
//! disagree on a replacement, the one named on the page today wins: since October it names
//! the gpt-6 models for the 2026-12-11 shutdowns (gpt-5 → gpt-6.1-sol, gpt-5-mini →
//! gpt-6.1-terra; gpt-5-nano's model page recommends gpt-6-luna; gpt-5-pro, o3 and o3-pro
//! follow gpt-5). The dates are what counts, and every source agrees on them. A model id
//! matches its row and the row's dated snapshots (`o3` covers `o3-2025-04-16`), with or
//! without a provider prefix (`openai/`). The provider's own `shutdown_date` (from `GET
//! /models/{id}`) is newer than any table; this table decides only where the provider
//! says nothing. Refresh it before each release (packaging/README.md).

use crate::vocab::Effort;

/// One model OpenAI shuts down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retirement {
    /// The model id (its dated snapshots match too).
    pub model: &'static str,
    /// The day the API stops serving it, `YYYY-MM-DD`.
    pub shutdown: &'static str,
    /// What OpenAI recommends instead.
    pub replacement: &'static str,
}

macro_rules! retired {
    ($($shutdown:literal => $replacement:literal: [$($model:literal),+ $(,)?]),+ $(,)?) => {
        &[$($(Retirement { model: $model, shutdown: $shutdown, replacement: $replacement }),+),+]
    };
}

/// The day the table was last checked against OpenAI's deprecations page.
pub const CALENDAR_AS_OF: &str = "2026-11-26";

/// Models with a shutdown date, by date.
pub const RETIREMENTS: &[Retirement] = retired![
    "2026-02-17" => "gpt-5.1-chat-latest": ["chatgpt-4o-latest"],
    "2026-07-23" => "gpt-5.5": ["gpt-5-chat-latest", "gpt-5.1-chat-latest"],
    "2026-07-23" => "gpt-5.4": ["gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.2-codex"],
    "2026-07-23" => "gpt-5.4-mini": ["gpt-5.1-codex-mini", "computer-use-preview"],
    "2026-07-23" => "gpt-4.1-mini": ["gpt-4o-search-preview", "gpt-4o-mini-search-preview"],
    "2026-07-23" => "gpt-5.4-pro": ["o3-deep-research", "o4-mini-deep-research"],
    "2026-08-10" => "gpt-5.5": ["gpt-5.2-chat-latest", "gpt-5.3-chat-latest"],
    "2026-10-23" => "gpt-5.6-terra": ["gpt-3.5-turbo", "o4-mini"],
    "2026-10-23" => "gpt-5.6-sol": ["gpt-4", "gpt-4-turbo", "gpt-4-turbo-preview",
                                    "gpt-4-1106-preview", "o1", "o1-pro", "o1-mini", "o3-mini"],
    "2026-10-23" => "gpt-5.6-luna": ["gpt-4.1-nano"],
    "2026-12-11" => "gpt-6.1-sol": ["gpt-5", "gpt-5-pro", "o3", "o3-pro"],
    "2026-12-11" => "gpt-6.1-terra": ["gpt-5-mini"],
    "2026-12-11" => "gpt-6-luna": ["gpt-5-nano"],
    "2027-01-14" => "gpt-6-luna": ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini"],
];

/// The shutdown of `model`, if it is scheduled.
pub fn retirement(model: &str) -> Option<&'static Retirement> {
    let id = bare_id(model);
    RETIREMENTS.iter().find(|r| is_model(&id, r.model))
}

/// `-2025-04-16` or `-0613`: a dated snapshot of the model before it.
fn is_snapshot_suffix(rest: &str) -> bool {
    let Some(date) = rest.strip_prefix('-') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match date.len() {
        4 => digits(date),
        10 => {
            let b = date.as_bytes();
            b[4] == b'-'
                && b[7] == b'-'
                && digits(&date[..4])
                && digits(&date[5..7])
                && digits(&date[8..])
        }
        _ => false,
    }
}

impl Retirement {
    /// Whether the model is gone on `today` (`YYYY-MM-DD`; ISO dates order as text).
    pub fn is_past(&self, today: &str) -> bool {
        today >= self.shutdown
    }

    /// One sentence for a user who configured the model under `setting`.
    pub fn describe(&self, model: &str, setting: &str, today: &str) -> String {
        let when = if self.is_past(today) {
            format!("was shut down by OpenAI on {}", self.shutdown)
        } else {
            format!("will be shut down by OpenAI on {}", self.shutdown)
        };
        format!(
            "model {model} {when}; set {setting} to {} (OpenAI's recommended replacement) or another current model",
            self.replacement
        )
    }
}

/// What a model accepts, by its id (spec 5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// `text.verbosity` (gpt-5 and later).
    pub verbosity: bool,
    /// `reasoning.effort` (gpt-5 and later, o-series).
    pub reasoning: bool,
    /// The `reasoning.effort` values the model is known to take, lowest first; empty
    /// when we do not know (the value is sent, and a 400 teaches the limit).
    pub efforts: &'static [Effort],
}

/// The efforts models take, from OpenAI's model pages (checked 2026-11-26): the gpt-5
/// models of 2025-08-07 take `minimal` to `high`; gpt-5.1 `none` to `high` (its 400
/// says so: `core/testdata/openai/error-400-unsupported-reasoning-effort.json`); the
/// gpt-5.6 models, gpt-6-sol, gpt-6-luna (the deployment checklist,
/// developers.openai.com/api/docs/guides/deployment-checklist) and gpt-6.1-terra
/// (developers.openai.com/api/docs/models/gpt-6.1-terra, released 2026-10-26) `none`
/// to `max`; gpt-6-astra and gpt-6.1-sol `low` to `max`; gpt-6.2-astra and gpt-6.2-sol
/// (released 2026-11-17) `low` to `max`: both reject `none` and `minimal`
/// (developers.openai.com/api/docs/models/gpt-6.2-sol; BerriAI/litellm discussion #52347;
/// runware.ai's gpt-6.2-astra page, "reasoning from low through max"; checked 2026-11-27).
/// None of these takes `minimal`. A model id matches its row and the row's dated
/// snapshots, with or without a provider prefix.
const EFFORTS: &[(&[&str], &[Effort])] = {
    use Effort::{High, Low, Max, Medium, Minimal, None, Xhigh};
    &[
        (
            &["gpt-5", "gpt-5-mini", "gpt-5-nano"],
            &[Minimal, Low, Medium, High],
        ),
        (&["gpt-5.1"], &[None, Low, Medium, High]),
        (
            &[
                "gpt-5.6",
                "gpt-5.6-sol",
                "gpt-5.6-terra",
                "gpt-5.6-luna",
                "gpt-6-sol",
                "gpt-6-luna",
                "gpt-6.1-terra",
            ],
            &[None, Low, Medium, High, Xhigh, Max],
        ),
        (
            &["gpt-6-astra", "gpt-6.1-sol", "gpt-6.2-astra", "gpt-6.2-sol"],
            &[Low, Medium, High, Xhigh, Max],
        ),
    ]
};

/// The parameters `model` accepts, judged from its id.
pub fn model_supports(model: &str) -> Capabilities {
    let id = bare_id(model);
    let gpt5_or_later = id
        .strip_prefix("gpt-")
        .and_then(|rest| {
            let major: String = rest.chars().take_while(char::is_ascii_digit).collect();
            major.parse::<u32>().ok()
        })
        .is_some_and(|major| major >= 5);
    let efforts = EFFORTS
        .iter()
        .find(|(models, _)| models.iter().any(|m| is_model(&id, m)))
        .map_or(&[][..], |(_, efforts)| efforts);
    Capabilities {
        verbosity: gpt5_or_later,
        reasoning: gpt5_or_later || id.starts_with("o3") || id.starts_with("o4"),
        efforts,
    }
}

/// The id as OpenAI spells it: trimmed, lower case, without a provider prefix
/// (`openai/gpt-5`).
fn bare_id(model: &str) -> String {
    let id = model.trim().to_ascii_lowercase();
    match id.rsplit_once('/') {
        Some((_, last)) => last.to_owned(),
        None => id,
    }
}

/// Whether `id` is `model` or one of its dated snapshots (`o3-2025-04-16`).
fn is_model(id: &str, model: &str) -> bool {
    id == model || id.strip_prefix(model).is_some_and(is_snapshot_suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_snapshots_and_prefixes_match_their_row() {
        assert_eq!(
            retirement("o4-mini").map(|r| r.shutdown),
            Some("2026-10-23")
        );
        assert_eq!(
            retirement("o3-2025-04-16").map(|r| r.replacement),
            Some("gpt-6.1-sol")
        );
        assert_eq!(
            retirement("openai/gpt-5-mini").map(|r| r.model),
            Some("gpt-5-mini")
        );
        assert_eq!(retirement("gpt-4-0613").map(|r| r.model), Some("gpt-4"));
        assert_eq!(
            retirement(" GPT-5-NANO ").map(|r| r.model),
            Some("gpt-5-nano")
        );
        // A family name that merely starts like a retired one is another model.
        for current in [
            "gpt-5.6-terra",
            "gpt-5.5",
            "o3x",
            "gpt-4o-audio",
            "gpt-5-mini-x",
            "",
        ] {
            assert_eq!(retirement(current), None, "{current}");
        }
    }

    #[test]
    fn dates_decide_past_or_coming() {
        let r = retirement("gpt-5").unwrap();
        assert!(!r.is_past("2026-12-10"));
        assert!(r.is_past("2026-12-11"));
        let text = r.describe("gpt-5", "model_profiles.answer.model", "2026-12-12");
        assert!(
            text.contains("was shut down by OpenAI on 2026-12-11"),
            "{text}"
        );
        assert!(
            text.contains("set model_profiles.answer.model to gpt-6.1-sol"),
            "{text}"
        );
        let coming = r.describe("gpt-5", "k", "2026-11-23");
        assert!(coming.contains("will be shut down"), "{coming}");
    }

    #[test]
    fn every_row_of_the_table_is_checked() {
        // One line per row as OpenAI's page stood on CALENDAR_AS_OF: the model, its day
        // and its replacement. A row added without this list changing fails here.
        let expected = [
            ("chatgpt-4o-latest", "2026-02-17", "gpt-5.1-chat-latest"),
            ("gpt-5-chat-latest", "2026-07-23", "gpt-5.5"),
            ("gpt-5.1-chat-latest", "2026-07-23", "gpt-5.5"),
            ("gpt-5-codex", "2026-07-23", "gpt-5.4"),
            ("gpt-5.1-codex", "2026-07-23", "gpt-5.4"),
            ("gpt-5.1-codex-max", "2026-07-23", "gpt-5.4"),
            ("gpt-5.2-codex", "2026-07-23", "gpt-5.4"),
            ("gpt-5.1-codex-mini", "2026-07-23", "gpt-5.4-mini"),
            ("computer-use-preview", "2026-07-23", "gpt-5.4-mini"),
            ("gpt-4o-search-preview", "2026-07-23", "gpt-4.1-mini"),
            ("gpt-4o-mini-search-preview", "2026-07-23", "gpt-4.1-mini"),
            ("o3-deep-research", "2026-07-23", "gpt-5.4-pro"),
            ("o4-mini-deep-research", "2026-07-23", "gpt-5.4-pro"),
            ("gpt-5.2-chat-latest", "2026-08-10", "gpt-5.5"),
            ("gpt-5.3-chat-latest", "2026-08-10", "gpt-5.5"),
            ("gpt-3.5-turbo", "2026-10-23", "gpt-5.6-terra"),
            ("o4-mini", "2026-10-23", "gpt-5.6-terra"),
            ("gpt-4", "2026-10-23", "gpt-5.6-sol"),
            ("gpt-4-turbo", "2026-10-23", "gpt-5.6-sol"),
            ("gpt-4-turbo-preview", "2026-10-23", "gpt-5.6-sol"),
            ("gpt-4-1106-preview", "2026-10-23", "gpt-5.6-sol"),
            ("o1", "2026-10-23", "gpt-5.6-sol"),
            ("o1-pro", "2026-10-23", "gpt-5.6-sol"),
            ("o1-mini", "2026-10-23", "gpt-5.6-sol"),
            ("o3-mini", "2026-10-23", "gpt-5.6-sol"),
            ("gpt-4.1-nano", "2026-10-23", "gpt-5.6-luna"),
            ("gpt-5", "2026-12-11", "gpt-6.1-sol"),
            ("gpt-5-pro", "2026-12-11", "gpt-6.1-sol"),
            ("o3", "2026-12-11", "gpt-6.1-sol"),
            ("o3-pro", "2026-12-11", "gpt-6.1-sol"),
            ("gpt-5-mini", "2026-12-11", "gpt-6.1-terra"),
            ("gpt-5-nano", "2026-12-11", "gpt-6-luna"),
            ("gpt-4o", "2027-01-14", "gpt-6-luna"),
            ("gpt-4o-mini", "2027-01-14", "gpt-6-luna"),
            ("gpt-4.1", "2027-01-14", "gpt-6-luna"),
            ("gpt-4.1-mini", "2027-01-14", "gpt-6-luna"),
        ];
        assert_eq!(RETIREMENTS.len(), expected.len());
        for (model, shutdown, replacement) in expected {
            let r = retirement(model).unwrap_or_else(|| panic!("{model} is not in the table"));
            assert_eq!(
                (r.shutdown, r.replacement),
                (shutdown, replacement),
                "{model}"
            );
            // The default model and every replacement OpenAI names today are current.
            assert!(retirement(r.replacement).is_none_or(|n| n.shutdown > r.shutdown));
        }
        assert_eq!(
            retirement("gpt-6.1-terra"),
            None,
            "the default is not scheduled"
        );
    }

    #[test]
    fn every_row_is_well_formed() {
        for r in RETIREMENTS {
            assert!(is_snapshot_suffix(&format!("-{}", r.shutdown)), "{r:?}");
            assert!(
                retirement(r.replacement).is_none_or(|n| n.shutdown > r.shutdown),
                "{r:?}"
            );
            assert_eq!(retirement(r.model), Some(r), "an earlier row shadows {r:?}");
        }
    }

    #[test]
    fn capabilities_by_model_family() {
        let caps = |v, r| (v, r);
        let of = |m: &str| {
            let c = model_supports(m);
            (c.verbosity, c.reasoning)
        };
        assert_eq!(of("gpt-5-mini"), caps(true, true));
        assert_eq!(of("gpt-6.1-terra"), caps(true, true));
        assert_eq!(of("gpt-10"), caps(true, true));
        assert_eq!(of("o3"), caps(false, true));
        assert_eq!(of("o4-mini"), caps(false, true));
        assert_eq!(of("gpt-4.1"), caps(false, false));
        assert_eq!(of("gpt-4o"), caps(false, false));
        assert_eq!(of("openai/gpt-5"), caps(true, true));
    }

    #[test]
    fn known_efforts_by_family_and_snapshot() {
        use Effort::*;
        let efforts = |m: &str| model_supports(m).efforts;
        assert_eq!(
            efforts("gpt-6.1-terra"),
            &[None, Low, Medium, High, Xhigh, Max]
        );
        assert!(!efforts("gpt-6.1-terra").contains(&Minimal));
        assert_eq!(efforts("openai/gpt-6.1-terra"), efforts("gpt-6.1-terra"));
        assert_eq!(
            efforts("gpt-5-mini-2025-08-07"),
            &[Minimal, Low, Medium, High]
        );
        assert_eq!(efforts("gpt-5"), &[Minimal, Low, Medium, High]);
        assert_eq!(efforts("gpt-5-2025-08-07"), &[Minimal, Low, Medium, High]);
        assert_eq!(efforts("gpt-5.1"), &[None, Low, Medium, High]);
        assert_eq!(efforts("gpt-5.6-terra"), efforts("gpt-6.1-terra"));
        // Unknown families are sent as asked; a 400 teaches their limits.
        assert_eq!(efforts("gpt-6.1-sol"), &[Low, Medium, High, Xhigh, Max]);
        for model in ["gpt-6.2-sol", "gpt-6.2-astra", "openai/gpt-6.2-astra"] {
            assert_eq!(efforts(model), &[Low, Medium, High, Xhigh, Max], "{model}");
        }
        assert!(efforts("gpt-7").is_empty());
        assert!(efforts("gpt-5-mini-x").is_empty());
        assert!(efforts("gpt-5.5").is_empty());
        assert!(efforts("o3").is_empty());
    }
}
