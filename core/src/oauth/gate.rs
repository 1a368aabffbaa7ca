//! The gate in front of the server for bearer tokens that are not static ones: each
//! token verified (by the host's verifier) and judged (by its claims), and, when the
//! keys it needs are not at hand, the request parked while they are fetched: through
//! the issuer's metadata to its `jwks_uri`, at most once per `refetch_after` on an
//! unknown key, and never longer than `wait`.
//!
//! Sans IO: requests, fetched documents and deadlines in; steps out ([`GateStep`]).

use super::claims::{self, TokenRejection};
use super::discovery::{self, FetchError};
use super::settings::{Challenge, OAuthSettings};
use super::token::{BearerToken, TokenError, TokenVerifier};
use super::well_known::metadata_urls;
use crate::io::{after, Now};
use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};
use waiting::{Waiting, WaitingRoom};

mod waiting;
pub use waiting::MAX_WAITING_BYTES;

/// Why a token whose key the provider's fresh key set lacks is refused.
const UNPUBLISHED_KEY: &str =
    "the token is signed with a key the identity provider does not publish: get a new token";

/// Key ids remembered as unpublished by the latest key set, at most.
const MAX_UNPUBLISHED: usize = 1024;
/// The longest wait between two fetches after a failure: a provider back after an
/// outage of any length is read again within this (plus the fetch's own time).
const MAX_RETRY: Duration = Duration::from_secs(15);

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
    /// 401, 403 or 503 (400: a gateway's malformed identity header).
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
    /// The keys at hand lack this key id.
    NeedKeys(String),
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
    /// Fetches failed in a row, for the backoff of the next.
    failures: u32,
    /// When the next fetch is due on its own: a retry after a failure, or the periodic
    /// refresh. No request needs to come for it.
    retry_at: Option<Instant>,
    /// Key ids the latest key set lacks: a token naming one is refused at once until
    /// the next fetch is allowed, so forged key ids cannot park requests.
    unpublished: BTreeSet<String>,
    /// The requests waiting for keys (beyond its room, a request is refused as busy).
    waiting: WaitingRoom<P>,
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
            failures: 0,
            retry_at: None,
            unpublished: BTreeSet::new(),
            waiting: WaitingRoom::default(),
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

    /// A request offering `token`, holding `bytes` while it waits: passed, refused, or
    /// parked until the keys come.
    pub fn admit(&mut self, now: Now, token: BearerToken, parked: P, bytes: usize) {
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
            Judged::NeedKeys(kid) if self.unpublished.contains(&kid) && !self.may_fetch(now) => {
                // The latest key set lacks it, and no newer one may be had yet.
                let denial = self.invalid(UNPUBLISHED_KEY);
                self.steps.push_back(GateStep::Refused(parked, denial));
            }
            Judged::NeedKeys(_) => self.need_keys(now, token, parked, bytes),
        }
    }

    fn need_keys(&mut self, now: Now, token: BearerToken, parked: P, bytes: usize) {
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
        } else if !self.waiting.has_room(bytes) {
            let denial = self.unavailable(Some("too many requests are waiting for its keys"));
            self.steps.push_back(GateStep::Refused(parked, denial));
        } else {
            self.waiting.enter(Waiting {
                deadline,
                token,
                parked,
                bytes,
            });
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
        self.retry_at = None;
        // A new key set may publish them.
        self.unpublished.clear();
        match &self.jwks_uri {
            Some(uri) => {
                self.fetching = Fetching::Keys;
                self.steps.push_back(GateStep::Fetch(uri.clone()));
            }
            None => self.fetch_metadata(0),
        }
    }

    fn fetch_metadata(&mut self, n: usize) {
        let urls = metadata_urls(&self.settings.issuer);
        match urls.into_iter().nth(n) {
            Some(url) => {
                self.fetching = Fetching::Metadata(n);
                self.steps.push_back(GateStep::Fetch(url));
            }
            None => self.fetching = Fetching::Nothing,
        }
    }

    /// The document the last [`GateStep::Fetch`] asked for, or why there is none.
    pub fn fetched(&mut self, now: Now, document: Result<Vec<u8>, FetchError>) {
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
                    self.failures = 0;
                    self.retry_at = Some(after(now.instant, self.settings.refresh_every));
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

    /// The fetch failed at `now`: the next may start `refetch_after` from now, and
    /// starts by itself after a backoff (`refetch_after` doubled per failure in a row, at
    /// most [`MAX_RETRY`]), so that readiness comes back with the provider and no
    /// request has to come for it.
    fn failed(&mut self, now: Now, why: &str) {
        self.started_at = Some(now.instant);
        self.failures = self.failures.saturating_add(1);
        let backoff = self
            .settings
            .refetch_after
            .max(Duration::from_secs(1))
            .saturating_mul(1 << self.failures.min(8).saturating_sub(1))
            .min(MAX_RETRY);
        self.retry_at = Some(after(now.instant, backoff));
        log::warn!(
            "oauth: the identity provider {} {why}",
            self.settings.issuer
        );
        self.down = Some(format!(
            "the identity provider {} {why}",
            self.settings.issuer
        ));
        let denial = self.unavailable(self.down.as_deref());
        for waiting in self.waiting.take_all() {
            self.steps
                .push_back(GateStep::Refused(waiting.parked, denial.clone()));
        }
    }

    /// The keys came: every waiting request judged again, now without waiting.
    fn release(&mut self, now: Now) {
        for Waiting { token, parked, .. } in self.waiting.take_all() {
            let step = match self.judge(&token, now.unix_secs) {
                Judged::Identity(identity) => GateStep::Passed(parked, Passed { identity }),
                Judged::Denied(denial) => GateStep::Refused(parked, denial),
                Judged::NeedKeys(kid) => {
                    if self.unpublished.len() < MAX_UNPUBLISHED {
                        self.unpublished.insert(kid);
                    }
                    GateStep::Refused(parked, self.invalid(UNPUBLISHED_KEY))
                }
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
        if self.retry_at.is_some_and(|at| at <= now.instant) && self.fetching == Fetching::Nothing {
            self.fetch(now);
        }
        let due = self.waiting.take_due(now.instant);
        if due.is_empty() {
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
        for waiting in due {
            self.steps
                .push_back(GateStep::Refused(waiting.parked, denial.clone()));
        }
    }

    /// Drops the waiting requests `gone` says are gone (their client left).
    pub fn forget(&mut self, gone: impl FnMut(&P) -> bool) {
        self.waiting.forget(gone);
    }

    /// When [`Gate::timeout`] is due next: the soonest of a waiting request's deadline,
    /// the next allowed fetch and the retry.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let wait = self.waiting.next_deadline();
        let retry = self.retry_at.filter(|_| self.fetching == Fetching::Nothing);
        [wait, self.fetch_at, retry].into_iter().flatten().min()
    }

    /// Bytes the requests waiting for keys hold.
    pub fn waiting_bytes(&self) -> usize {
        self.waiting.bytes()
    }

    /// The next step.
    pub fn poll(&mut self) -> Option<GateStep<P>> {
        self.steps.pop_front()
    }

    /// Why no token can be checked now, if none can (`/ready`): no verified key set is
    /// at hand. Keys loaded once stay usable while the provider is away.
    pub fn not_ready(&self) -> Option<String> {
        match (&self.down, self.loaded_at) {
            (_, Some(_)) => None,
            (Some(why), None) => Some(why.clone()),
            (None, None) => Some(format!(
                "the signing keys of {} are not fetched yet",
                self.settings.issuer
            )),
        }
    }

    /// Why the provider is away while the keys at hand still serve, if it is
    /// (`/ready`'s body and the metrics say "degraded").
    pub fn degraded(&self) -> Option<&str> {
        self.loaded_at.and(self.down.as_deref())
    }

    fn judge(&mut self, token: &BearerToken, now: u64) -> Judged {
        if self.loaded_at.is_none() {
            return Judged::NeedKeys(String::new());
        }
        let claims = match self.verifier.verify(token.expose()) {
            Ok(claims) => claims,
            Err(TokenError::UnknownKey(kid)) => return Judged::NeedKeys(kid),
            Err(TokenError::Invalid(why)) => return Judged::Denied(self.invalid(&why)),
        };
        match claims::identity(&self.settings, &claims, now) {
            Ok(identity) => Judged::Identity(identity),
            Err(TokenRejection::Invalid(why)) => Judged::Denied(self.invalid(&why)),
            Err(TokenRejection::Scope(missing)) => {
                let message = format!(
                    "the token lacks the scope {} this server requires: ask the identity provider for a token with it",
                    missing.join(" ")
                );
                let error = Challenge::InsufficientScope(message.as_str());
                Judged::Denied(Denial {
                    status: 403,
                    challenge: Some(self.settings.challenge(error)),
                    message,
                })
            }
        }
    }

    fn invalid(&self, why: &str) -> Denial {
        let message = format!("the bearer token is not valid: {why}");
        Denial {
            status: 401,
            challenge: Some(self.settings.challenge(Challenge::InvalidToken(&message))),
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
