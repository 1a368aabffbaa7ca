//! MCP: the protocol versions we speak, the methods we serve, and the shape of every MCP
//! JSON value we send (`shape` is the only place that builds one).

pub(crate) mod failure;
pub mod meta;
mod method;
mod params;
pub(crate) mod shape;
pub mod task_end;
mod version;

pub use meta::{era_of, Era, MetaError};
pub use method::{Method, NotificationMethod};
pub(crate) use params::trace_parent;
pub use params::{declares_tasks, CallParams, CallParamsError, ProgressToken, TASKS_EXTENSION};
pub use shape::{INSTRUCTIONS, SERVER_NAME, SERVER_VERSION};
pub use version::ProtocolVersion;
