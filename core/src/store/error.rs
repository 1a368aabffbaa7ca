//! Why an answer of the store cannot be used.

/// Why an answer of the store cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store could not be reached or refused the operation, as the host says (a
    /// sentence that names no secret and no address).
    #[error("{0}")]
    Unavailable(String),
    /// The answer is of another operation's kind.
    #[error("the store answered the operation as if it were another one")]
    Mismatched,
    /// The answer is not one the script gives.
    #[error(transparent)]
    Unreadable(#[from] Unreadable),
    /// A reserve named a limit it was not asked about.
    #[error("the store's reserve answered limit {0}, which it was not asked about")]
    UnaskedLimit(i64),
}

/// The store's answer could not be read: what it held instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the store answered {0}")]
pub struct Unreadable(pub String);

/// An unreadable answer, shown by at most 120 characters of what it held.
pub(super) fn unreadable(what: &str) -> Unreadable {
    Unreadable(what.chars().take(120).collect())
}
