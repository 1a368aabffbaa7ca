//! The gate in front of the server for bearer tokens that are not static ones: each
//! token verified (by the host's verifier) and judged (by its claims), and, when the
//! keys it needs are not at hand, the request parked while they are fetched: through
//! the issuer's metadata to its `jwks_uri`, at most once per `refetch_after` on an
//! unknown key, and never longer than `wait`.
//!
//! Sans IO: requests, fetched documents and deadlines in; steps out ([`GateStep`]).

use super::BearerToken;
use super::{claims, discovery, OAuthSettings, Rejection, TokenError, TokenVerifier};
use crate::io::{after, Now};
use std::collections::VecDeque;
use std::time::Instant;

/// Why a token whose key the provider's fresh key set lacks is refused.
const UNPUBLISHED_KEY: &str =
    "the token is signed with a key the identity provider does not publish: get a new token";

/// Requests waiting for keys, at most; beyond, a request is refused as busy at once.
const MAX_WAITING: usize = 1024;

/// What the gate says.
#[derive(Debug, PartialEq, Eq)]
pub enum GateStep<P> {
    /// The request may pass as this caller.
    Passed(P, Passed),
    /// The request is refused with this status, challenge and message.
    Refused(P, Denial),
    /// Fetch this document (GET, no credentials) and answer with [`Gate::fetched`].
    Fetch(String),
}

/// A request's verified caller.
#[derive(Debug, PartialEq, Eq)]
pub struct Passed {
    /// The identity claim's value.
    pub identity: String,
}

/// A refusal: the HTTP status, the `WWW-Authenticate` challenge (none for 503) and a
/// message that says what happened and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// 401, 403 or 503.
    pub status: u16,
    /// The challenge, for 401 and 403.
    pub challenge: Option<String>,
    /// The explanation.
    pub message: String,
}

/// What is being fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fetching {
    Nothing,
    /// The `n`-th of the issuer's metadata URLs.
    Metadata(usize),
    Keys,
}

/// A token's fate as the keys at hand tell it.
enum Judged {
    Identity(String),
    Denied(Denial),
    NeedKeys,
}

/// The gate. `P` is what the server parks with a request (its exchange).
pub struct Gate<P> {
    settings: OAuthSettings,
    verifier: Box<dyn TokenVerifier>,
    fetching: Fetching,
    jwks_uri: Option<String>,
    /// When keys were last loaded.
    loaded_at: Option<Instant>,
    /// When the last fetch started.
    started_at: Option<Instant>,
    /// A fetch due once `refetch_after` has passed, for requests waiting on a new key.
    fetch_at: Option<Instant>,
    /// Why the provider cannot be used now (the last fetch failed, or took too long).
    down: Option<String>,
    waiting: Vec<(Instant, BearerToken, P)>,
    steps: VecDeque<GateStep<P>>,
}

impl<P> Gate<P> {
    /// A gate for `settings`, checking signatures with `verifier`.
    pub fn new(settings: OAuthSettings, verifier: Box<dyn TokenVerifier>) -> Gate<P> {
        Gate {
            settings,
            verifier,
            fetching: Fetching::Nothing,
            jwks_uri: None,
            loaded_at: None,
            started_at: None,
            fetch_at: None,
            down: None,
            waiting: Vec::new(),
            steps: VecDeque::new(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// Fetches the keys if none were fetched yet (at startup, so the first request does
    /// not wait).
    pub fn start(&mut self, now: Now) {
        if self.started_at.is_none() {
            self.fetch(now);
        }
    }

    /// A request offering `token`: passed, refused, or parked until the keys come.
    pub fn admit(&mut self, now: Now, token: BearerToken, parked: P) {
        let stale = self.loaded_at.is_some_and(|at| {
            now.instant.saturating_duration_since(at) >= self.settings.refresh_every
        });
        if stale && self.may_fetch(now) {
            // In the background: the keys at hand still serve this request.
            self.fetch(now);
        }
        match self.judge(&token, now.unix_secs) {
            Judged::Identity(identity) => self
                .steps
                .push_back(GateStep::Passed(parked, Passed { identity })),
            Judged::Denied(denial) => self.steps.push_back(GateStep::Refused(parked, denial)),
            Judged::NeedKeys => self.need_keys(now, token, parked),
        }
    }

    fn need_keys(&mut self, now: Now, token: BearerToken, parked: P) {
        if self.fetching == Fetching::Nothing && self.may_fetch(now) {
            self.fetch(now);
        }
        let wait = self.settings.bounded_wait();
        let deadline = after(now.instant, wait);
        // Too soon after the last fetch: the next one is due when the interval ends,
        // and the request waits for it if that is within its wait.
        let next = self
            .started_at
            .map(|at| after(at, self.settings.refetch_after));
        if self.fetching == Fetching::Nothing {
            if let Some(next) = next.filter(|next| *next <= deadline) {
                self.fetch_at = Some(next);
            }
        }
        if self.fetching == Fetching::Nothing && self.fetch_at.is_none() {
            let denial = match (&self.down, self.loaded_at) {
                (None, Some(_)) => self.invalid(UNPUBLISHED_KEY),
                (down, _) => self.unavailable(down.as_deref()),
            };
            self.steps.push_back(GateStep::Refused(parked, denial));
        } else if self.waiting.len() >= MAX_WAITING {
            let denial = self.unavailable(Some("too many requests are waiting for its keys"));
            self.steps.push_back(GateStep::Refused(parked, denial));
        } else {
            self.waiting.push((deadline, token, parked));
        }
    }

    /// Whether a fetch may start now: none ran within `refetch_after`.
    fn may_fetch(&self, now: Now) -> bool {
        self.fetching == Fetching::Nothing
            && self.started_at.is_none_or(|at| {
                now.instant.saturating_duration_since(at) >= self.settings.refetch_after
            })
    }

    fn fetch(&mut self, now: Now) {
        self.started_at = Some(now.instant);
        match &self.jwks_uri {
            Some(uri) => {
                self.fetching = Fetching::Keys;
                self.steps.push_back(GateStep::Fetch(uri.clone()));
            }
            None => self.fetch_metadata(0),
        }
    }

    fn fetch_metadata(&mut self, n: usize) {
        let urls = discovery::metadata_urls(&self.settings.issuer);
        match urls.into_iter().nth(n) {
            Some(url) => {
                self.fetching = Fetching::Metadata(n);
                self.steps.push_back(GateStep::Fetch(url));
            }
            None => self.fetching = Fetching::Nothing,
        }
    }

    /// The document the last [`GateStep::Fetch`] asked for, or why there is none.
    pub fn fetched(&mut self, now: Now, document: Result<Vec<u8>, String>) {
        let fetching = std::mem::replace(&mut self.fetching, Fetching::Nothing);
        match (fetching, document) {
            (Fetching::Nothing, _) => {}
            (Fetching::Metadata(_), Ok(body)) => {
                match discovery::jwks_uri(&self.settings.issuer, &body) {
                    Ok(uri) => {
                        self.jwks_uri = Some(uri.clone());
                        self.fetching = Fetching::Keys;
                        self.steps.push_back(GateStep::Fetch(uri));
                    }
                    Err(why) => self.failed(now, &format!("its metadata is not usable: {why}")),
                }
            }
            (Fetching::Metadata(n), Err(why)) => {
                self.fetch_metadata(n + 1);
                if self.fetching == Fetching::Nothing {
                    self.failed(now, &format!("its metadata could not be read: {why}"));
                }
            }
            (Fetching::Keys, Ok(body)) => match self.verifier.load(&body) {
                Ok(n) => {
                    log::info!(
                        "oauth: {n} signing key(s) of {} loaded",
                        self.settings.issuer
                    );
                    self.loaded_at = Some(now.instant);
                    self.down = None;
                    self.release(now);
                }
                Err(why) => self.failed(now, &format!("its key set is not usable: {why}")),
            },
            (Fetching::Keys, Err(why)) => {
                // The keys may have moved: discover them again next time.
                self.jwks_uri = None;
                self.failed(now, &format!("its keys could not be read: {why}"));
            }
        }
    }

    /// The fetch failed at `now`: the next may start `refetch_after` from now.
    fn failed(&mut self, now: Now, why: &str) {
        self.started_at = Some(now.instant);
        log::warn!(
            "oauth: the identity provider {} {why}",
            self.settings.issuer
        );
        self.down = Some(format!(
            "the identity provider {} {why}",
            self.settings.issuer
        ));
        let denial = self.unavailable(self.down.as_deref());
        for (_, _, parked) in std::mem::take(&mut self.waiting) {
            self.steps
                .push_back(GateStep::Refused(parked, denial.clone()));
        }
    }

    /// The keys came: every waiting request judged again, now without waiting.
    fn release(&mut self, now: Now) {
        for (_, token, parked) in std::mem::take(&mut self.waiting) {
            let step = match self.judge(&token, now.unix_secs) {
                Judged::Identity(identity) => GateStep::Passed(parked, Passed { identity }),
                Judged::Denied(denial) => GateStep::Refused(parked, denial),
                Judged::NeedKeys => GateStep::Refused(parked, self.invalid(UNPUBLISHED_KEY)),
            };
            self.steps.push_back(step);
        }
    }

    /// Requests waiting past their deadline are refused; the provider counts as down
    /// until a fetch succeeds.
    pub fn timeout(&mut self, now: Now) {
        if self.fetch_at.is_some_and(|at| at <= now.instant) {
            self.fetch_at = None;
            if self.fetching == Fetching::Nothing {
                self.fetch(now);
            }
        }
        if !self.waiting.iter().any(|(at, _, _)| *at <= now.instant) {
            return;
        }
        let secs = self.settings.bounded_wait().as_secs_f64();
        let why = format!(
            "the identity provider {} did not answer within {secs} s",
            self.settings.issuer
        );
        if self.down.is_none() {
            log::warn!("oauth: {why}");
            self.down = Some(why.clone());
        }
        let denial = self.unavailable(Some(&why));
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(at, _, _)| *at <= now.instant);
        self.waiting = rest;
        for (_, _, parked) in due {
            self.steps
                .push_back(GateStep::Refused(parked, denial.clone()));
        }
    }

    /// Drops the waiting requests `gone` says are gone (their client left).
    pub fn forget(&mut self, mut gone: impl FnMut(&P) -> bool) {
        self.waiting.retain(|(_, _, p)| !gone(p));
    }

    /// When [`Gate::timeout`] is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let waits = self.waiting.iter().map(|(at, _, _)| *at);
        waits.chain(self.fetch_at).min()
    }

    /// The next step.
    pub fn poll(&mut self) -> Option<GateStep<P>> {
        self.steps.pop_front()
    }

    /// Why a token could not be checked now, if it could not (`/ready`).
    pub fn not_ready(&self) -> Option<String> {
        match (&self.down, self.loaded_at) {
            (Some(why), _) => Some(why.clone()),
            (None, None) => Some(format!(
                "the signing keys of {} are not fetched yet",
                self.settings.issuer
            )),
            (None, Some(_)) => None,
        }
    }

    fn judge(&mut self, token: &BearerToken, now: u64) -> Judged {
        if self.loaded_at.is_none() {
            return Judged::NeedKeys;
        }
        let claims = match self.verifier.verify(token.expose()) {
            Ok(claims) => claims,
            Err(TokenError::UnknownKey) => return Judged::NeedKeys,
            Err(TokenError::Invalid(why)) => return Judged::Denied(self.invalid(&why)),
        };
        match claims::identity(&self.settings, &claims, now) {
            Ok(identity) => Judged::Identity(identity),
            Err(Rejection::Invalid(why)) => Judged::Denied(self.invalid(&why)),
            Err(Rejection::Scope(missing)) => {
                let message = format!(
                    "the token lacks the scope {} this server requires: ask the identity provider for a token with it",
                    missing.join(" ")
                );
                let error = ("insufficient_scope", message.as_str());
                Judged::Denied(Denial {
                    status: 403,
                    challenge: Some(self.settings.challenge(Some(error))),
                    message,
                })
            }
        }
    }

    fn invalid(&self, why: &str) -> Denial {
        let message = format!("the bearer token is not valid: {why}");
        Denial {
            status: 401,
            challenge: Some(self.settings.challenge(Some(("invalid_token", &message)))),
            message,
        }
    }

    fn unavailable(&self, why: Option<&str>) -> Denial {
        let why = why.unwrap_or("the identity provider's keys could not be fetched");
        Denial {
            status: 503,
            challenge: None,
            message: format!("the bearer token cannot be checked now: {why}. Try again shortly; the server's operator can see the cause at /ready"),
        }
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
