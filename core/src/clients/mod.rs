//! Who calls, and what each caller may use: the clients an operator named (in the clients
//! file, each with its token's digest and optional limits) and the limits on calls per
//! minute and estimated spend per day, per client and for the whole instance, which
//! [`Limits`] keeps.
//!
//! A caller is a [`ClientId`]: a small copyable index, so that it travels with each call
//! for its log line, its metrics and its spend. Requests with the single token, over
//! stdio, or without any token are the `default` client.

mod limits;

pub use limits::{Exceeded, Limit, LimitKind, Limits, Scope, DAY, MINUTE};

/// The name of the client of every request that names none.
pub const DEFAULT_NAME: &str = "default";

/// A caller: [`ClientId::DEFAULT`], or a client of the clients file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(u16);

impl ClientId {
    /// Requests over stdio, with the single token, or with none.
    pub const DEFAULT: ClientId = ClientId(0);

    fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// A client of the clients file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedClient {
    /// Its name in logs and metrics (the configuration checks it is a short label).
    pub name: String,
    /// Its own limits.
    pub limit: Limit,
}

/// The named clients, in the order of the clients file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clients {
    named: Vec<NamedClient>,
}

impl Clients {
    /// The clients of the clients file; `None` when there are more than an id can tell
    /// apart (65,535).
    pub fn new(named: Vec<NamedClient>) -> Option<Clients> {
        (named.len() < usize::from(u16::MAX)).then_some(Clients { named })
    }

    /// The id of the `i`-th named client (from 0), as [`Clients::new`] numbered them.
    pub fn id(&self, i: usize) -> Option<ClientId> {
        (i < self.named.len())
            .then(|| u16::try_from(i + 1).ok().map(ClientId))
            .flatten()
    }

    /// Every named client with its id.
    pub fn iter(&self) -> impl Iterator<Item = (ClientId, &NamedClient)> {
        self.named
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((self.id(i)?, c)))
    }

    fn named(&self, id: ClientId) -> Option<&NamedClient> {
        id.index().checked_sub(1).and_then(|i| self.named.get(i))
    }

    /// `id`'s name; `default` for the default client.
    pub fn name(&self, id: ClientId) -> &str {
        self.named(id).map_or(DEFAULT_NAME, |c| c.name.as_str())
    }

    /// The client named `name`: a named client, or the default one (also for a name no
    /// longer in the clients file).
    pub fn find(&self, name: &str) -> ClientId {
        self.iter()
            .find(|(_, c)| c.name == name)
            .map_or(ClientId::DEFAULT, |(id, _)| id)
    }

    /// `id`'s own limits (none for the default client).
    pub fn limit(&self, id: ClientId) -> Limit {
        self.named(id).map_or(Limit::default(), |c| c.limit)
    }

    /// How many ids there are, the default client's included.
    fn len(&self) -> usize {
        self.named.len() + 1
    }
}

#[cfg(test)]
mod tests;
