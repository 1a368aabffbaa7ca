//! A tool call that could not produce an answer, in the shape its protocol version wants:
//! a JSON-RPC error with the codes of the spec we build from (2024-11-05 to 2025-06-18),
//! or a result with `isError: true` (2025-11-25 on), whose text stands alone (what
//! happened, what to do) because some clients show the model nothing else, and whose
//! details go to `_meta`.

use super::shape::{self, META_ERROR};
use super::version::ProtocolVersion;
use crate::clients::{Exceeded, LimitKind, Scope};
use crate::jsonrpc::{ErrorKind, RpcError};
use crate::openai::{Advice, FailureKind, UpstreamFailure};
use crate::tools::{ArgError, Tool};
use serde_json::{json, Value};

/// Why a tool call has no answer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ToolFailure<'a> {
    /// The arguments are wrong.
    Arguments { tool: Tool, error: &'a ArgError },
    /// No profile serves the tool.
    MissingProfile,
    /// The runtime found no API key for `service` in this variable.
    MissingKey { service: &'a str, env: &'a str },
    /// Every slot and the queue are taken.
    Busy { running: usize, queued: usize },
    /// The server is shutting down and takes no new calls.
    Draining,
    /// A limit on calls per minute or spend per day refused the call; nothing was sent.
    Limited {
        exceeded: Exceeded,
        /// The caller's name.
        client: &'a str,
        /// Unix seconds now.
        now: u64,
    },
    /// OpenAI has shut the profile's model down; nothing was sent.
    Retired { reason: &'a str },
    /// The store the limits are shared through did not answer; nothing was sent.
    StoreUnavailable { cause: &'a str },
    /// The upstream attempts failed.
    Upstream {
        failure: &'a UpstreamFailure,
        retries: u32,
        advice: Advice<'a>,
        /// Debug mode adds the diagnostic fields of spec 8.2 to the legacy error.
        debug: bool,
    },
}

impl ToolFailure<'_> {
    /// The refusal this failure is, when it refuses a call before any upstream request.
    pub fn refusal(&self) -> Option<crate::outcome::Refusal> {
        use crate::outcome::Refusal;
        match self {
            ToolFailure::Busy { .. } => Some(Refusal::Busy),
            ToolFailure::Draining => Some(Refusal::Draining),
            ToolFailure::MissingKey { .. } => Some(Refusal::NoApiKey),
            ToolFailure::Retired { .. } => Some(Refusal::ModelShutDown),
            ToolFailure::StoreUnavailable { .. } => Some(Refusal::StoreUnavailable),
            ToolFailure::Limited { exceeded, .. } => Some(exceeded.kind.into()),
            ToolFailure::Arguments { .. }
            | ToolFailure::MissingProfile
            | ToolFailure::Upstream { .. } => None,
        }
    }

    /// The failure as its protocol version wants it: `Ok` holds an `isError` result.
    pub fn reply(&self, version: ProtocolVersion) -> Result<Value, RpcError> {
        if version.tool_errors_are_results() {
            Ok(self.result(version))
        } else {
            Err(self.error())
        }
    }

    /// The JSON-RPC error of the legacy sessions before 2025-11-25.
    pub fn error(&self) -> RpcError {
        match *self {
            ToolFailure::Arguments { tool, error } => {
                RpcError::new(ErrorKind::InvalidArguments, format!("{tool}: invalid arguments"))
                    .with_data(json!({ "reason": error.to_string() }))
            }
            ToolFailure::MissingProfile => RpcError::new(
                ErrorKind::MissingProfile,
                "model_profiles.answer is required",
            ),
            ToolFailure::MissingKey { env, .. } => RpcError::new(
                ErrorKind::UpstreamFailed,
                format!("openai responses failed: no API key; set the {env} environment variable for the server"),
            )
            .with_data(json!({ "retries": 0, "status": null, "type": "missing_api_key", "code": null })),
            ToolFailure::Busy { running, queued } => RpcError::new(
                ErrorKind::Overloaded,
                format!("server busy: {running} calls running and {queued} queued; retry later"),
            ),
            ToolFailure::Draining => RpcError::new(
                ErrorKind::Overloaded,
                "the server is shutting down and takes no new calls; retry in a few seconds",
            ),
            ToolFailure::Limited { .. } | ToolFailure::StoreUnavailable { .. } => {
                RpcError::new(ErrorKind::Overloaded, self.text()).with_data(self.details())
            }
            ToolFailure::Retired { reason } => {
                RpcError::new(ErrorKind::UpstreamFailed, format!("openai responses failed: {reason}"))
                    .with_data(json!({ "retries": 0, "status": null, "type": "model_retired", "code": null }))
            }
            ToolFailure::Upstream {
                failure,
                retries,
                advice,
                debug,
            } => {
                let mut data = json!({
                    "retries": retries,
                    "status": failure.status,
                    "type": failure.error_type,
                    "code": failure.code,
                });
                if debug {
                    data["message"] = failure.message.clone().into();
                    data["name"] = failure.kind.as_str().into();
                }
                let message = match failure.kind {
                    FailureKind::Shutdown => {
                        format!("openai responses failed: {}", failure.message)
                    }
                    _ => format!(
                        "openai responses failed: {}; {}",
                        failure.message,
                        failure.advice(&advice)
                    ),
                };
                RpcError::new(ErrorKind::UpstreamFailed, message).with_data(data)
            }
        }
    }

    /// The `isError` result: one or two sentences that stand alone, details in `_meta`.
    pub fn result(&self, version: ProtocolVersion) -> Value {
        let mut result = json!({
            "content": [{ "type": "text", "text": self.text() }],
            "isError": true,
        });
        let mut details = self.details();
        if let Some(why) = self.refusal() {
            // The name metrics, the call log and `/ready` give the same refusal.
            details["refusal"] = why.label().into();
        }
        shape::add_meta(&mut result, META_ERROR, details);
        shape::complete(result, version)
    }

    /// What happened and what to do about it.
    fn text(&self) -> String {
        match *self {
            ToolFailure::Arguments { tool, error } => format!(
                "{tool} was called with invalid arguments: {error}. Fix that and call {tool} again."
            ),
            ToolFailure::MissingProfile => "No model is configured for this tool. Set model_profiles.answer.model in the server's configuration and restart it.".into(),
            ToolFailure::MissingKey { service, env } => format!(
                "The server has no {service} API key, so it cannot search. Set the {env} environment variable for the server and restart it."
            ),
            ToolFailure::Busy { running, queued } => format!(
                "The server is busy ({running} calls running, {queued} waiting). Try again in a few seconds."
            ),
            ToolFailure::Draining => "The server is shutting down and takes no new calls. Call the tool again in a few seconds; another instance, or this one once restarted, will answer.".into(),
            ToolFailure::Limited {
                exceeded,
                client,
                now,
            } => limited(exceeded, client, now),
            ToolFailure::Retired { reason } => format!(
                "The server did not call OpenAI: {}. Ask the server's operator to change it and restart the server.",
                sentence(reason)
            ),
            ToolFailure::StoreUnavailable { cause } => format!(
                "The server could not reach the store its instances share their limits through ({}), so it did not call OpenAI. Call the tool again in a few seconds; if this keeps happening, ask the server's operator to check server.store.url.",
                cause.trim_end_matches('.')
            ),
            ToolFailure::Upstream {
                failure,
                retries,
                advice,
                ..
            } => {
                let after = match retries {
                    0 => String::new(),
                    1 => " after 1 retry".into(),
                    n => format!(" after {n} retries"),
                };
                match failure.kind {
                    FailureKind::Shutdown => format!(
                        "The call was stopped: {}. Call the tool again once the server is back.",
                        failure.message
                    ),
                    _ => format!(
                        "The {} request failed{after}: {}. {}.",
                        advice.service,
                        failure.message.trim_end_matches('.'),
                        sentence(&failure.advice(&advice))
                    ),
                }
            }
        }
    }

    /// The structured details, for clients and logs rather than the model.
    fn details(&self) -> Value {
        match *self {
            ToolFailure::Arguments { tool, error } => {
                json!({ "kind": "invalid_arguments", "tool": tool.name(), "reason": error.to_string() })
            }
            ToolFailure::MissingProfile => json!({ "kind": "missing_profile" }),
            ToolFailure::MissingKey { env, .. } => json!({ "kind": "missing_api_key", "env": env }),
            ToolFailure::Busy { running, queued } => {
                json!({ "kind": "busy", "running": running, "queued": queued })
            }
            ToolFailure::Draining => json!({ "kind": "draining" }),
            ToolFailure::Limited {
                exceeded, client, ..
            } => {
                let (value, spent, held) = match exceeded.kind {
                    LimitKind::CallsPerMinute(max) => (json!(max), Value::Null, Value::Null),
                    LimitKind::SpendPerDay { limit, spent, held } => {
                        (json!(limit.usd()), json!(spent.usd()), json!(held.usd()))
                    }
                };
                json!({
                    "kind": "limit",
                    "limit": exceeded.kind.label(),
                    "scope": match exceeded.scope {
                        Scope::Client => "client",
                        Scope::Instance => "instance",
                    },
                    "client": client,
                    "value": value,
                    "spent_usd": spent,
                    "held_usd": held,
                    "resets_at": crate::date::iso_utc(exceeded.resets_at),
                    "retry_after_secs": exceeded.retry_after_secs,
                    // The same, in the spelling MCP's own `_meta` keys use.
                    "retryAfterSeconds": exceeded.retry_after_secs,
                })
            }
            ToolFailure::Retired { .. } => json!({ "kind": "model_retired" }),
            ToolFailure::StoreUnavailable { .. } => json!({ "kind": "store_unavailable" }),
            ToolFailure::Upstream {
                failure, retries, ..
            } => json!({
                "kind": "upstream",
                "failure": failure.kind.as_str(),
                "retries": retries,
                "status": failure.status,
                "type": failure.error_type,
                "code": failure.code,
            }),
        }
    }
}

/// What a limit refused, when it resets, and what to do: one paragraph that stands alone.
fn limited(exceeded: Exceeded, client: &str, now: u64) -> String {
    let whose = match exceeded.scope {
        Scope::Client => format!("Client \"{client}\" reached its limit of"),
        Scope::Instance => "This server reached its limit, shared by all its clients, of".into(),
    };
    let what = match exceeded.kind {
        LimitKind::CallsPerMinute(max) => format!("{max} calls per minute"),
        LimitKind::SpendPerDay { limit, spent, held } if held.0 > 0 => format!(
            "{} of estimated OpenAI spend per day (UTC; {} spent today, and {} held by its calls still running, estimated from its recent calls)",
            usd(limit),
            usd(spent),
            usd(held)
        ),
        LimitKind::SpendPerDay { limit, spent, .. } => format!(
            "{} of estimated OpenAI spend per day (UTC; {} spent today)",
            usd(limit),
            usd(spent)
        ),
    };
    // A hold is let go when its call ends, which may leave room before the day does.
    let sooner = match exceeded.kind {
        LimitKind::SpendPerDay { limit, spent, held } if held.0 > 0 && spent.0 < limit.0 => {
            " Room may open sooner, when the calls still running end and their real cost replaces what they hold."
        }
        _ => "",
    };
    let raise = match exceeded.scope {
        Scope::Client => format!(
            "ask the server's operator to raise {} for \"{client}\" in the clients file",
            exceeded.kind.label()
        ),
        Scope::Instance => format!(
            "ask the server's operator to raise server.limits.{}",
            exceeded.kind.label()
        ),
    };
    format!(
        "{whose} {what}, so the server did not call OpenAI. The limit resets at {} (in {}): call the tool again then, or {raise}.{sooner}",
        crate::date::iso_utc(exceeded.resets_at),
        wait(exceeded.resets_at.saturating_sub(now))
    )
}

/// An amount in dollars as people read it: cents from a cent up, else enough digits to
/// tell a small cap or call from nothing.
fn usd(amount: crate::money::Picodollars) -> String {
    let dollars = amount.usd();
    if dollars >= 0.01 || dollars == 0.0 {
        format!("${dollars:.2}")
    } else {
        format!("${dollars:.6}")
    }
}

/// A wait as people say it: seconds, minutes, or hours and minutes.
fn wait(secs: u64) -> String {
    match secs {
        0..=119 => format!("{} s", secs.max(1)),
        120..=7199 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// `advice` as a sentence: a capital first letter.
fn sentence(advice: &str) -> String {
    let mut chars = advice.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_decides_the_shape() {
        let busy = ToolFailure::Busy {
            running: 16,
            queued: 1024,
        };
        assert_eq!(
            busy.reply(ProtocolVersion::V2025_06_18).unwrap_err().code,
            -32051
        );
        let result = busy.reply(ProtocolVersion::V2025_11_25).unwrap();
        assert_eq!(result["isError"], true);
        assert_eq!(result[shape::META][META_ERROR]["kind"], "busy");
        assert_eq!(result[shape::META][META_ERROR]["refusal"], "busy");
        assert!(result.get("resultType").is_none());
        let modern = busy.reply(ProtocolVersion::V2026_07_28).unwrap();
        assert_eq!(modern["resultType"], "complete");
    }

    #[test]
    fn texts_stand_alone() {
        let failure = UpstreamFailure {
            status: Some(429),
            ..UpstreamFailure::local(FailureKind::HttpError, "Rate limit reached.")
        };
        let f = ToolFailure::Upstream {
            failure: &failure,
            retries: 3,
            advice: Advice {
                api_key_env: "OPENAI_API_KEY",
                ..Advice::default()
            },
            debug: false,
        };
        assert_eq!(
            f.text(),
            "The OpenAI request failed after 3 retries: Rate limit reached. Rate limited by OpenAI: wait a little, lower concurrency, or raise the rate limit."
        );
        let key = ToolFailure::MissingKey {
            service: "Parallel",
            env: "PARALLEL_API_KEY",
        }
        .text();
        assert!(
            key.starts_with("The server has no Parallel API key")
                && key.contains("PARALLEL_API_KEY")
                && key.ends_with("restart it."),
            "{key}"
        );
        let parallel = ToolFailure::Upstream {
            failure: &UpstreamFailure {
                status: Some(503),
                ..UpstreamFailure::local(FailureKind::HttpError, "Service Unavailable")
            },
            retries: 0,
            advice: Advice {
                service: "Parallel",
                api_key_env: "PARALLEL_API_KEY",
                ..Advice::default()
            },
            debug: false,
        };
        assert_eq!(
            parallel.text(),
            "The Parallel request failed: Service Unavailable. Parallel had a server error; try again later."
        );
    }
}

/// How this server words a call's end for `tools/call`: the service and the variable
/// holding its API key (named in advice), and whether failures carry their debug details.
/// One value, kept by whoever answers calls (the server for plain calls, the desk for
/// tasks).
#[derive(Clone, Debug)]
pub(crate) struct Wording {
    /// The service called ([`crate::settings::Api::name`]).
    service: &'static str,
    api_key_env: String,
    debug: bool,
}

impl Wording {
    /// The wording `config` asks for.
    pub(crate) fn new(config: &crate::settings::ServerConfig) -> Self {
        Wording {
            service: config.api.name(),
            api_key_env: config.api_key_env.clone(),
            debug: config.debug,
        }
    }

    /// What `tools/call` returns for a call that ended with `outcome` (priced at `cost`),
    /// as `version` shapes answers and failures.
    pub(crate) fn priced_result(
        &self,
        outcome: Result<crate::openai::Answer, UpstreamFailure>,
        retries: u32,
        report: &crate::openai::Report,
        version: ProtocolVersion,
        cost: &crate::openai::pricing::Estimate,
    ) -> Result<Value, RpcError> {
        match outcome {
            Ok(answer) => Ok(shape::tool_result(&answer, version, report, cost)),
            Err(failure) => ToolFailure::Upstream {
                failure: &failure,
                retries,
                advice: Advice {
                    service: self.service,
                    api_key_env: &self.api_key_env,
                    model: Some(report.model.model.as_str()).filter(|m| !m.is_empty()),
                    model_setting: Some(report.model.setting).filter(|s| !s.is_empty()),
                },
                debug: self.debug,
            }
            .reply(version),
        }
    }
}
