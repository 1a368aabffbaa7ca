//! The small copyable index a caller is known by, apart from the roster that numbers it,
//! so that the limits can be kept by it without reaching back into the roster.

/// A caller: [`ClientId::DEFAULT`], or a client of the clients file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(pub(super) u16);

impl ClientId {
    /// Requests over stdio, with the single token, or with none.
    pub const DEFAULT: ClientId = ClientId(0);

    pub(super) fn index(self) -> usize {
        usize::from(self.0)
    }
}
