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
//! Identities of their own are bounded ([`MAX_IDENTITIES`]): a full roster forgets the
//! least recently seen that hold nothing, and their ids go to new identities, so
//! whatever keeps an id either makes its identity hold something (a request, a call, a
//! task, a day's spend its limits read) or is cleared when it is forgotten.

mod id;
mod limits;
mod roster;

pub use id::ClientId;
pub use limits::{Counts, Exceeded, Limit, LimitKind, Limits, Scope, DAY, MINUTE};
use roster::Identities;
pub use roster::{LABELLED_IDENTITIES, MAX_IDENTITIES};

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

/// The label of identities beyond [`LABELLED_IDENTITIES`].
pub const OTHER_LABEL: &str = "_OTHER";

/// The named clients, in the order of the clients file, and the identities seen lately
/// (bounded: see `clients/roster.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clients {
    named: Vec<NamedClient>,
    /// Identities no named client claims, each with its name (`<claim>:<value>`).
    identities: Identities,
    /// The limits of identities of their own.
    identity_limit: Limit,
}

impl Default for Clients {
    fn default() -> Clients {
        Clients {
            named: Vec::new(),
            identities: Identities::new(1),
            identity_limit: Limit::default(),
        }
    }
}

impl Clients {
    /// The clients of the clients file; `None` when there are more than an id can tell
    /// apart (65,535).
    pub fn new(named: Vec<NamedClient>) -> Option<Clients> {
        (named.len() < usize::from(u16::MAX)).then(|| Clients {
            identities: Identities::new(named.len() + 1),
            named,
            ..Clients::default()
        })
    }

    /// Sets the limits of identities no named client claims.
    pub fn set_identity_limit(&mut self, limit: Limit) {
        self.identity_limit = limit;
    }

    /// Tells apart at most `most` identities of their own at once (fewer than
    /// [`MAX_IDENTITIES`]): for tests and the fuzz target, which fill the roster.
    pub fn limit_identities(&mut self, most: usize) {
        self.identities.limit_to(most);
    }

    /// The client of the identity `value` of claim `claim`: the named client that claims
    /// it, or its own (numbered now if new), seen now. `None` when the roster is full
    /// ([`Clients::forget_idle`] makes room).
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
    /// named client's cannot), else the default client. `None` when the roster is full.
    pub fn resolve(&mut self, name: &str) -> Option<ClientId> {
        if !name.contains(':') {
            return Some(self.find(name));
        }
        self.identities.see(name)
    }

    /// The client named `name` if this instance knows it now (never numbering a new one).
    pub fn known(&self, name: &str) -> Option<ClientId> {
        if let Some(id) = self.identities.get(name) {
            return Some(id);
        }
        let found = self.find(name);
        (self.name(found) == name).then_some(found)
    }

    /// Whether a new identity would find no room until some are forgotten.
    pub fn is_full(&self) -> bool {
        self.identities.is_full()
    }

    /// The identities of their own told apart now, least recently seen first: the only
    /// clients ever forgotten.
    pub fn identities(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.identities.ids()
    }

    /// How many identities of their own are told apart now.
    pub fn identity_count(&self) -> usize {
        self.identities.len()
    }

    /// Forgets up to `most` identities of their own that hold nothing (`held` says which
    /// ids hold something: a request, a call, a task, a day's spend), least recently
    /// seen first; their ids, which new identities may take from now on, so whatever was
    /// kept by them must be cleared. The default and named clients are never forgotten.
    pub fn forget_idle(&mut self, held: impl Fn(ClientId) -> bool, most: usize) -> Vec<ClientId> {
        self.identities.forget_idle(held, most, &mut |_, _| {})
    }

    /// [`Clients::forget_idle`], telling `forgotten` each id and name as it goes.
    pub fn forget_idle_telling(
        &mut self,
        held: impl Fn(ClientId) -> bool,
        most: usize,
        forgotten: &mut dyn FnMut(ClientId, &str),
    ) -> Vec<ClientId> {
        self.identities.forget_idle(held, most, forgotten)
    }

    /// Whether `id` is an identity of its own told apart now (one that may be forgotten
    /// once it holds nothing).
    pub fn is_identity(&self, id: ClientId) -> bool {
        self.identities.contains(id)
    }

    /// `id`'s label in metrics: its name, or [`OTHER_LABEL`] for an identity beyond the
    /// first [`LABELLED_IDENTITIES`] seen. A label is never another identity's.
    pub fn label(&self, id: ClientId) -> &str {
        match self.identities.labelled(id) {
            Some(false) => OTHER_LABEL,
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

    /// `id`'s name; `default` for the default client (and for an id told apart no more,
    /// which nothing that holds something keeps).
    pub fn name(&self, id: ClientId) -> &str {
        if let Some(name) = self.identities.name(id) {
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
        if self.identities.contains(id) {
            return self.identity_limit;
        }
        self.named(id).map_or(Limit::default(), |c| c.limit)
    }

    /// The limits of identities of their own.
    pub fn identity_limit(&self) -> Limit {
        self.identity_limit
    }
}

#[cfg(test)]
mod tests;
