//! `GET /metrics`: who may read the figures, judged by the head alone.

use super::verdict::{Early, Verdict};
use crate::clients::ClientId;
use crate::http::{ReplyHead, Request};
use crate::oauth::Challenge;
use crate::serve::access::{Access, Denied};
use crate::serve::exchange::Caller;

/// `GET /metrics`, under the same Host, Origin and token rules as `/mcp` (the figures
/// say how the service is used, so they are not for anyone who can reach the port).
pub(super) fn metrics(request: &Request, access: &Access) -> Verdict {
    let keep_alive = request.keep_alive;
    let caller = match access.check(request) {
        Ok(caller) => caller,
        Err(denied) => {
            let mut head = ReplyHead::new(denied.status(), keep_alive);
            if let Denied::Token(_) = denied {
                let challenge = access.oauth.as_ref().map_or_else(
                    || Challenge::Missing.header(None),
                    |door| door.challenge.clone(),
                );
                head = head.header("www-authenticate", challenge);
            }
            return Verdict::Answer(Early::Respond(
                head.with_body(format!("{denied}\n").as_bytes()),
            ));
        }
    };
    // The figures name every client and identity and their spend: they are for the
    // operators (the static token, a client the file marks `metrics: true`), not for
    // every client or everyone who signs in.
    let refused = match caller {
        Caller::Bearer(_) => Some("the metrics are served to the static token (server.http.token_env), to a client the clients file marks `metrics: true`, or on the metrics listener (server.metrics_listen), not to an identity of the identity provider\n"),
        Caller::Client(ClientId::DEFAULT) => None,
        Caller::Client(client) if access.clients.as_ref().is_some_and(|c| c.reads_metrics(client)) => None,
        Caller::Client(_) => Some("the metrics name every client and its spend: this client's token does not read them. Mark the client `metrics: true` in the clients file (server.http.clients_file) if it is an operator's, or scrape with the static token (server.http.token_env)\n"),
    };
    if let Some(message) = refused {
        return Verdict::Answer(Early::Respond(
            ReplyHead::new(403, keep_alive).with_body(message.as_bytes()),
        ));
    }
    if request.method != "GET" && request.method != "HEAD" {
        return Verdict::Answer(Early::Respond(
            ReplyHead::new(405, keep_alive)
                .header("allow", "GET")
                .with_body(b""),
        ));
    }
    Verdict::Answer(Early::Metrics)
}
