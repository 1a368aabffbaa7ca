//! The profiles' models looked up at the provider (`GET /models/{id}`), in the background:
//! a second after the first input (so the first replies never wait, nor compete with it)
//! and again every day; a slow or failing lookup changes nothing. What the provider says decides
//! whether calls with a model are refused, and is warned about once when near.

use super::{Now, Server};
use crate::calls::{Planned, Work};
use crate::date::Date;
use crate::openai::calendar::{Calendar, Shutdown, WARN_DAYS};
use crate::openai::models::retirement;
use crate::openai::UpstreamFailure;
use crate::routing::Context;
use crate::settings::ServerConfig;
use crate::tools::ALL_TOOLS;

impl Server {
    /// Starts the lookups when they are due.
    pub(super) fn look_up_models(&mut self, now: Now) {
        let wanted = self.config.model_lookups && self.config.credentials_ready;
        if !wanted {
            return;
        }
        self.calendar.start(now.instant);
        if !self.calendar.due(now.instant) {
            return;
        }
        self.calendar.looked_up(now.instant);
        for (model, _) in profile_models(&self.config) {
            // Gateways name models `vendor/model`, which is not one path segment.
            if model.contains('/') {
                continue;
            }
            let today = Date::tokyo(now.unix_secs).to_string();
            let context = Context::Lookup(model.clone());
            let work = Work::Model(model);
            if let Err(refused) =
                self.calls
                    .start_internal(now, context, work, Planned::default(), today)
            {
                log::debug!("model lookup not started: {refused:?}");
            }
        }
    }
}

/// What the provider said of `model`: recorded, and warned about once when the date
/// is past or within [`WARN_DAYS`].
pub(super) fn model_date(
    (calendar, config): (&mut Calendar, &ServerConfig),
    now: Now,
    model: &str,
    outcome: Result<Option<String>, UpstreamFailure>,
) {
    let date = match outcome {
        Ok(date) => date,
        Err(failure) => {
            // No endpoint, no such model, no answer: the built-in table decides.
            log::debug!(
                "the provider gave no shutdown date for {model}: {}",
                failure.message
            );
            return;
        }
    };
    log::debug!("the provider's shutdown date for {model}: {date:?}");
    calendar.handle_date(model, date);
    let (today, soon) = days(now);
    let setting = profile_models(config)
        .into_iter()
        .find_map(|(named, setting)| (named == model).then_some(setting))
        .unwrap_or("model_profiles.answer.model");
    let said = match calendar.shutdown(model, &today, &soon) {
        Shutdown::Past(date) => {
            format!("was shut down on {date} (the provider's own date): calls with it are refused")
        }
        Shutdown::Soon(date) => {
            format!("will be shut down on {date} (the provider's own date)")
        }
        Shutdown::Later => return,
    };
    if calendar.warn_once(model) {
        log::warn!(
            "model {model} {said}; set {setting} to {}",
            replacement(model)
        );
    }
}

/// Why calls to `model` (configured under `setting`) are refused before any request: the
/// provider's own shutdown date is past, or, where it gave none, OpenAI's calendar says so
/// (when `config` enforces it).
pub(super) fn retired(
    (calendar, config): (&Calendar, &ServerConfig),
    model: &str,
    setting: &'static str,
    now: Now,
) -> Option<String> {
    let (today, soon) = days(now);
    if let Shutdown::Past(date) = calendar.shutdown(model, &today, &soon) {
        return Some(format!(
            "model {model} was shut down on {date} (the provider's own shutdown date); set {setting} to {} and restart the server",
            replacement(model)
        ));
    }
    if !config.enforce_retirements {
        return None;
    }
    let retired = retirement(model).filter(|r| r.is_past(&today))?;
    Some(retired.describe(model, setting, &today))
}

/// Each profile's model in `config` once, with the setting of the first profile that
/// names it, in the tools' order (at most three: a `Vec`, not a map of its own).
fn profile_models(config: &ServerConfig) -> Vec<(String, &'static str)> {
    let mut models: Vec<(String, &'static str)> = Vec::new();
    for tool in ALL_TOOLS {
        if let Some(profile) = config.profiles.own(tool) {
            if !models.iter().any(|(model, _)| *model == profile.model) {
                models.push((profile.model.clone(), tool.model_setting()));
            }
        }
    }
    models
}

/// Today and the day [`WARN_DAYS`] ahead, in Asia/Tokyo.
fn days(now: Now) -> (String, String) {
    let ahead = now.unix_secs.saturating_add(WARN_DAYS * 86_400);
    (
        Date::tokyo(now.unix_secs).to_string(),
        Date::tokyo(ahead).to_string(),
    )
}

/// OpenAI's recommended replacement when the table knows it.
fn replacement(model: &str) -> String {
    retirement(model).map_or_else(
        || "a current model (`openai-responses-mcp doctor` lists each profile's)".to_owned(),
        |r| format!("{} (the recommended replacement)", r.replacement),
    )
}
