//! The environment as startup reads it: a snapshot taken once, so that resolving is pure.

use std::collections::BTreeMap;

/// A snapshot of the environment.
pub type Env = BTreeMap<String, String>;
