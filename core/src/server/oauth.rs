//! OAuth mode on the server: a request whose bearer token is no static one passes the
//! gate ([`crate::oauth::Gate`]) before anything else, and goes on as the client its
//! verified identity is; the gate's fetches of the identity provider's metadata and
//! keys are the call engine's work ([`Work::Fetch`]), retried and bounded like every
//! upstream request, and never carry the provider's credentials.

use super::{Now, Output, Server};
use crate::calls::{Planned, Work};
use crate::clients::ClientId;
use crate::io::ExchangeId;
use crate::oauth::{Challenge, Denial, FetchError, Gate, GateStep};
use crate::routing::Context;
use crate::serve::exchange::{Asked, ExchangeOut, WayIn};

/// Why a new identity is refused when every identity the roster tells apart holds
/// something.
const TOO_MANY_IDENTITIES: &str = "this instance tells apart as many identities as it can, and each of them has a request, a call, a task or a day's spend under way: try another instance, or again once some of them are done (its /ready says not ready meanwhile)";

impl Server {
    /// An HTTP request the endpoint let through: served as its client, or first through
    /// the gate when it carries a token to verify (its body still unread).
    pub(super) fn on_asked(&mut self, now: Now, id: ExchangeId, asked: Asked) {
        match asked {
            Asked::Rpc {
                message,
                version,
                client,
                trace,
                way,
            } => {
                self.verifying.remove(id);
                if way.identity.is_some() {
                    self.keep_room(now);
                }
                let header = self.config.identity_header.as_deref();
                let Some(client) = client_of(
                    (&mut self.ledger, &mut self.clients),
                    header,
                    (client, &way),
                ) else {
                    let denial = Denial {
                        status: 503,
                        challenge: None,
                        message: TOO_MANY_IDENTITIES.into(),
                    };
                    self.out
                        .push(Output::Exchange(id, ExchangeOut::Refused(denial)));
                    return;
                };
                self.arriving = crate::ledger::Arrival {
                    remote: way.remote,
                    credential: way.credential,
                    ..crate::ledger::Arrival::default()
                };
                self.on_exchange(now, id, message, (version, trace), client);
                self.arriving = crate::ledger::Arrival::default();
            }
            Asked::Metrics => {
                let text = self.metrics_text();
                self.out
                    .push(Output::Exchange(id, ExchangeOut::Metrics(text)));
            }
            Asked::Token(token) => match &mut self.gate {
                Some(gate) => {
                    // All it holds while it waits: the body is still the client's.
                    let bytes = token.expose().len();
                    gate.admit(now, token, id, bytes);
                    self.drain_gate(now);
                }
                // The endpoint hands on tokens only in OAuth mode.
                None => {
                    let denial = Denial {
                        status: 401,
                        challenge: Some(Challenge::NOT_VALID.header(None)),
                        message: "the bearer token is not valid".into(),
                    };
                    self.out
                        .push(Output::Exchange(id, ExchangeOut::Refused(denial)));
                }
            },
        }
    }

    /// Acts on what the gate says: requests passed or refused, documents to fetch.
    pub(super) fn drain_gate(&mut self, now: Now) {
        while let Some(step) = self.gate.as_mut().and_then(Gate::poll) {
            match step {
                GateStep::Passed(id, passed) => {
                    self.keep_room(now);
                    let client = self.gate.as_ref().and_then(|gate| {
                        let claim = &gate.settings().identity_claim;
                        self.clients.identify(claim, &passed.identity)
                    });
                    match client {
                        // The connection reads the body now, and asks as `client`.
                        Some(client) => {
                            // Held until its body is read and it asks.
                            self.verifying.insert(id, client);
                            self.out
                                .push(Output::Exchange(id, ExchangeOut::Verified(client)));
                        }
                        None => {
                            let denial = Denial {
                                status: 503,
                                challenge: None,
                                message: TOO_MANY_IDENTITIES.into(),
                            };
                            self.out
                                .push(Output::Exchange(id, ExchangeOut::Refused(denial)));
                        }
                    }
                }
                GateStep::Refused(id, denial) => {
                    log::debug!(
                        "oauth: a request refused with {}: {}",
                        denial.status,
                        denial.message
                    );
                    self.out
                        .push(Output::Exchange(id, ExchangeOut::Refused(denial)));
                }
                GateStep::Fetch(url) => {
                    log::debug!("oauth: fetching {url}");
                    let today = crate::date::Date::tokyo(now.unix_secs).to_string();
                    let started = self.calls.start_internal(
                        now,
                        Context::Identity,
                        Work::Fetch(url),
                        Planned::default(),
                        today,
                    );
                    if started.is_err() {
                        // Reads of stored responses hold every fetch this engine allows.
                        if let Some(gate) = &mut self.gate {
                            gate.fetched(now, Err(FetchError::NoRoom));
                        }
                    }
                }
            }
        }
    }
}

/// The client a request is served as: the identity a trusted gateway named (the
/// named client that claims it, or one of its own, `<header>:<value>`), else the one
/// its credential is. An identity header from an untrusted peer is counted, and
/// changes nothing. `None` when the roster is full of identities that hold something.
fn client_of(
    (ledger, clients): (&mut crate::ledger::Ledger, &mut crate::clients::Clients),
    header: Option<&str>,
    (client, way): (ClientId, &WayIn),
) -> Option<ClientId> {
    if way.header_ignored {
        ledger.identity_header_ignored();
    }
    let Some(identity) = &way.identity else {
        return Some(client);
    };
    clients.identify(header.unwrap_or("gateway"), identity)
}
