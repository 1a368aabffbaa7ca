//! Who calls, and what each caller may use: the clients an operator named (in the clients
//! file, each with its token's digest and optional limits) and the limits on calls per
//! minute and estimated spend per day, per client and for the whole instance, which
//! [`Limits`] keeps.
//!
//! A caller is a [`ClientId`]: a small copyable index, so that it travels with each call
//! for its log line, its metrics and its spend. Requests with the single token, over
//! stdio, or without any token are the `default` client. In OAuth mode each identity a
//! verified token names is a client too: the named client that claims it, or one of its
//! own, numbered on first sight (named `<claim>:<value>`, with the identities' limits).

use std::collections::BTreeMap;

mod id;
mod limits;

pub use id::ClientId;
pub use limits::{Exceeded, Limit, LimitKind, Limits, Scope, DAY, MINUTE};

/// The name of the client of every request that names none.
pub const DEFAULT_NAME: &str = "default";

/// A client of the clients file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedClient {
    /// Its name in logs and metrics (the configuration checks it is a short label).
    pub name: String,
    /// Its own limits.
    pub limit: Limit,
    /// The OAuth identity (the value of the identity claim) this client is, if any.
    pub identity: Option<String>,
    /// Whether this is the gateway's credential (`gateway: true`): only its requests
    /// may name their user in `server.http.identity_header`.
    pub gateway: bool,
}

/// Metric labels of their own for this many identities; the rest share `_OTHER`, so a
/// scrape stays small whatever the number of users.
pub const LABELLED_IDENTITIES: usize = 32;

/// The label of identities beyond [`LABELLED_IDENTITIES`].
pub const OTHER_LABEL: &str = "_OTHER";

/// The named clients, in the order of the clients file, and the identities seen since.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clients {
    named: Vec<NamedClient>,
    /// Identities no named client claims, by id: each one's name (`<claim>:<value>`).
    identities: Vec<String>,
    /// Every name an identity is known by (its own, or its named client's) → its id.
    by_name: BTreeMap<String, ClientId>,
    /// The limits of identities of their own.
    identity_limit: Limit,
}

impl Clients {
    /// The clients of the clients file; `None` when there are more than an id can tell
    /// apart (65,535).
    pub fn new(named: Vec<NamedClient>) -> Option<Clients> {
        (named.len() < usize::from(u16::MAX)).then_some(Clients {
            named,
            ..Clients::default()
        })
    }

    /// Sets the limits of identities no named client claims.
    pub fn set_identity_limit(&mut self, limit: Limit) {
        self.identity_limit = limit;
    }

    /// The client of the identity `value` of claim `claim`: the named client that claims
    /// it, or its own (numbered now if new). `None` once ids run out (65,535 clients
    /// since start): the caller is refused rather than confused with another.
    pub fn identify(&mut self, claim: &str, value: &str) -> Option<ClientId> {
        if let Some((id, _)) = self
            .iter()
            .find(|(_, c)| c.identity.as_deref() == Some(value))
        {
            return Some(id);
        }
        self.resolve(&format!("{claim}:{value}"))
    }

    /// The client named `name`, as a task's record or another instance names it: a
    /// named client, an identity (numbered now if new: its name holds a `:`, which a
    /// named client's cannot), else the default client. `None` once ids run out.
    pub fn resolve(&mut self, name: &str) -> Option<ClientId> {
        if let Some(id) = self.by_name.get(name) {
            return Some(*id);
        }
        if !name.contains(':') {
            return Some(self.find(name));
        }
        let id = u16::try_from(self.len()).ok().filter(|n| *n < u16::MAX)?;
        self.identities.push(name.to_owned());
        self.by_name.insert(name.to_owned(), ClientId(id));
        Some(ClientId(id))
    }

    /// The client named `name` if this instance knows it (never numbering a new one).
    pub fn known(&self, name: &str) -> Option<ClientId> {
        if let Some(id) = self.by_name.get(name) {
            return Some(*id);
        }
        let found = self.find(name);
        (self.name(found) == name).then_some(found)
    }

    /// The identity behind `id`, when it is one of its own.
    fn identity(&self, id: ClientId) -> Option<(usize, &str)> {
        let n = id.index().checked_sub(self.named.len() + 1)?;
        self.identities.get(n).map(|name| (n, name.as_str()))
    }

    /// `id`'s label in metrics: its name, or [`OTHER_LABEL`] for an identity beyond the
    /// first [`LABELLED_IDENTITIES`].
    pub fn label(&self, id: ClientId) -> &str {
        match self.identity(id) {
            Some((n, _)) if n >= LABELLED_IDENTITIES => OTHER_LABEL,
            _ => self.name(id),
        }
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
        if let Some((_, name)) = self.identity(id) {
            return name;
        }
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
        if self.identity(id).is_some() {
            return self.identity_limit;
        }
        self.named(id).map_or(Limit::default(), |c| c.limit)
    }

    /// How many ids there are, the default client's and the identities' included.
    fn len(&self) -> usize {
        self.named.len() + 1 + self.identities.len()
    }
}

#[cfg(test)]
mod tests;
