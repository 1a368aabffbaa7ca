//! `/health` (liveness and load) and `/ready` (whether a call can work now): what the
//! server reports of itself, and the answers written from it.

use crate::http::{ReplyHead, Request};
use crate::mcp::shape;
use serde_json::json;

/// What `/health` and `/ready` report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// Calls running upstream.
    pub running: usize,
    /// Calls waiting for a slot.
    pub queued: usize,
    /// The server is shutting down and takes no new calls.
    pub draining: bool,
    /// No API key is configured: every call would fail.
    pub key_missing: bool,
    /// Every slot is taken and the queue is full: a new call would be refused.
    pub full: bool,
    /// The shared store of limits does not answer.
    pub store_down: bool,
    /// OAuth mode: no verified key set is at hand (none fetched yet, or none could be),
    /// so a token cannot be checked.
    pub identity_down: bool,
    /// OAuth mode: the identity provider does not answer, but the keys at hand still
    /// verify tokens: ready, and said to be degraded.
    pub identity_degraded: bool,
    /// Every identity the roster tells apart holds something: a new identity would be
    /// refused.
    pub identities_full: bool,
    /// The listener is up but the server has not reported its state yet: `/ready` is
    /// 503 until it has, so no balancer is told "ready" by a guess.
    pub starting: bool,
}

impl Health {
    /// What a listener reports before the server's first word.
    pub fn starting() -> Health {
        Health {
            starting: true,
            ..Health::default()
        }
    }
}

impl Health {
    /// Why a new call would be refused now, if it would; the order is the one to fix.
    pub fn refusal(&self) -> Option<crate::outcome::Refusal> {
        use crate::outcome::Refusal;
        if self.draining {
            Some(Refusal::Draining)
        } else if self.key_missing {
            Some(Refusal::NoApiKey)
        } else if self.store_down {
            Some(Refusal::StoreUnavailable)
        } else if self.identity_down {
            Some(Refusal::IdentityProviderUnavailable)
        } else if self.full {
            Some(Refusal::Busy)
        } else if self.identities_full {
            Some(Refusal::TooManyIdentities)
        } else {
            None
        }
    }
}

/// The `/health` response: status, version and load; nothing about configuration.
pub fn health(request: &Request, health: Health) -> Vec<u8> {
    let body = json!({
        "status": if health.draining { "draining" } else { "ok" },
        "version": shape::SERVER_VERSION,
        "calls": { "running": health.running, "queued": health.queued },
    });
    let status = if health.draining { 503 } else { 200 };
    let head = ReplyHead::new(status, request.keep_alive)
        .header("content-type", "application/json")
        .header("cache-control", "no-store");
    let body = body.to_string();
    if request.method == "HEAD" {
        return head.without_body(body.len());
    }
    head.with_body(body.as_bytes())
}

/// `/ready`'s answer: 200 when a call can work now, 503 with the reason otherwise (a
/// load balancer or Kubernetes takes the instance out of rotation; `/health` stays
/// liveness). Like `/health` it needs no token and names no secret.
pub fn ready(request: &Request, health: Health) -> Vec<u8> {
    let refusal = health.refusal();
    let (status, body) = match refusal {
        _ if health.starting => (
            503,
            json!({ "status": "not ready", "reason": "starting: the server has not yet told this listener its state; ask again in a moment" }),
        ),
        None if health.identity_degraded => (
            200,
            json!({ "status": "ready", "degraded": "identity provider unreachable: the signing keys in hand still verify tokens" }),
        ),
        None => (200, json!({ "status": "ready" })),
        Some(why) => (
            503,
            json!({ "status": "not ready", "reason": why.not_ready() }),
        ),
    };
    let mut head = ReplyHead::new(status, request.keep_alive)
        .header("content-type", "application/json")
        .header("cache-control", "no-store");
    if health.full && !health.draining && !health.key_missing {
        head = head.header("retry-after", "1");
    }
    let body = body.to_string();
    if request.method == "HEAD" {
        return head.without_body(body.len());
    }
    head.with_body(body.as_bytes())
}
