//! The desk's deadlines, one kind for every backend: a leaf, so that the backends need
//! not import the desk above them.

/// A deadline the desk keeps: a held call's window, a shared task's re-read, or the
/// renewal of this instance's lease on its shared tasks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Due {
    Window(String),
    Recheck(String),
    Lease,
}
