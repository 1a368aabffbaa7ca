//! OAuth mode on the server: a request whose bearer token is no static one passes the
//! gate ([`crate::oauth::Gate`]) before anything else, and goes on as the client its
//! verified identity is; the gate's fetches of the identity provider's metadata and
//! keys are the call engine's work ([`Work::Fetch`]), retried and bounded like every
//! upstream request, and never carry the provider's credentials.

use super::{Now, Output, Server};
use crate::calls::{Planned, Work};
use crate::clients::{ClientId, Clients};
use crate::io::ExchangeId;
use crate::oauth::{Challenge, Denial, FetchError, Gate, GateStep};
use crate::routing::Context;
use crate::serve::exchange::{Asked, Credential, ExchangeOut, WayIn};

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
                let (client, credential) = match client_of(
                    (&mut self.ledger, &mut self.clients),
                    header,
                    (client, &way),
                ) {
                    Ok(served) => served,
                    Err(denial) => {
                        self.out
                            .push(Output::Exchange(id, ExchangeOut::Refused(denial)));
                        return;
                    }
                };
                self.arriving = crate::ledger::Arrival {
                    remote: way.remote,
                    credential,
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

/// The client a request is served as, and the credential its call line names: the
/// identity a trusted gateway named (the named client that claims it, or one of its
/// own, `<header>:<value>`) when the request carries the gateway's credential
/// ([`speaks_for_users`]), else the one its credential is. An identity header from an
/// untrusted peer, or beside any other credential, is counted and changes nothing, even
/// a malformed one: its sender's own identity, limits and tasks apply.
///
/// # Errors
/// The gateway's malformed identity header (400), or a new identity when the roster
/// is full of identities that hold something (503).
fn client_of(
    (ledger, clients): (&mut crate::ledger::Ledger, &mut crate::clients::Clients),
    header: Option<&str>,
    (client, way): (ClientId, &WayIn),
) -> Result<(ClientId, Credential), Denial> {
    if way.header_ignored {
        ledger.identity_header_ignored();
    }
    let Some(claim) = &way.identity else {
        return Ok((client, way.credential));
    };
    if !speaks_for_users(clients, client, way.credential) {
        ledger.identity_header_ignored();
        return Ok((client, way.credential));
    }
    let refused = |status, message| Denial {
        status,
        challenge: None,
        message,
    };
    let identity = claim
        .as_ref()
        .map_err(|bad| refused(400, bad.to_string()))?;
    let user = clients
        .identify(header.unwrap_or("gateway"), identity)
        .ok_or_else(|| refused(503, TOO_MANY_IDENTITIES.into()))?;
    Ok((user, Credential::Gateway))
}

/// Whether a request admitted as `client` with `credential` is the gateway's, whose
/// identity header names the user: a client of the clients file marked `gateway: true`
/// (by its token, or by the OAuth identity it claims), or the single token when there is
/// no clients file. An OAuth token of any other identity names its own identity only.
fn speaks_for_users(clients: &Clients, client: ClientId, credential: Credential) -> bool {
    match credential {
        // A clients file names at least one client: none means there is none.
        Credential::StaticToken => clients.iter().next().is_none(),
        Credential::ClientsFile | Credential::OAuth => clients
            .iter()
            .any(|(id, named)| id == client && named.gateway),
        Credential::None | Credential::Gateway => false,
    }
}
