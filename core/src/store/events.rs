//! What instances tell each other through the store's pub/sub channel: a task ended or
//! was cancelled, or a request was cancelled. Each is one line of text; anything else on
//! the channel (another version's event, a stray publish) is ignored.

use super::operation::StoreOp;
use crate::jsonrpc::RequestId;

/// The channel every instance subscribes to.
pub const CHANNEL: &str = "orm:events";

/// Longest message read from the channel.
const MAX_MESSAGE: usize = 4096;

/// An event on [`CHANNEL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreEvent {
    /// Task `id` ended: whoever waits for it reads it again.
    Ended(String),
    /// Task `task_id` of the client named `owner` was cancelled: the instance running
    /// its call stops it, when that call is this owner's.
    Cancel {
        /// The task.
        task_id: String,
        /// Its owner's name, as the store holds it.
        owner: String,
    },
    /// `notifications/cancelled` of request `id` from the client named `client`: the
    /// instance running that call stops it.
    Request {
        /// The client's name.
        client: String,
        /// The request.
        id: RequestId,
    },
}

impl StoreEvent {
    /// The event a message on the channel holds, if any.
    pub fn parse(message: &str) -> Option<StoreEvent> {
        if message.len() > MAX_MESSAGE {
            return None;
        }
        let (kind, rest) = message.split_once(' ')?;
        match kind {
            "ended" => Some(StoreEvent::Ended(rest.to_owned())),
            // `cancel <id> <owner>` (a name may hold spaces; an id never does). The
            // ownerless `cancel <id>` of earlier builds is not obeyed: nothing says
            // whose call it may stop.
            "cancel" => {
                let (task_id, owner) = rest.split_once(' ')?;
                Some(StoreEvent::Cancel {
                    task_id: task_id.to_owned(),
                    owner: owner.to_owned(),
                })
            }
            "request" => {
                let (client, id): (String, serde_json::Value) = serde_json::from_str(rest).ok()?;
                Some(StoreEvent::Request {
                    client,
                    id: RequestId::from_value(&id)?,
                })
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for StoreEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreEvent::Ended(id) => write!(f, "ended {id}"),
            StoreEvent::Cancel { task_id, owner } => write!(f, "cancel {task_id} {owner}"),
            StoreEvent::Request { client, id } => {
                let pair = serde_json::json!([client, id.to_value()]);
                write!(f, "request {pair}")
            }
        }
    }
}

/// Publishing `event` to every instance.
pub fn publish(event: &StoreEvent) -> StoreOp {
    StoreOp::Publish {
        channel: CHANNEL.to_owned(),
        message: event.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_back_as_written() {
        for event in [
            StoreEvent::Ended("task-00ff".into()),
            StoreEvent::Cancel {
                task_id: "task-00ff".into(),
                owner: "ops".into(),
            },
            StoreEvent::Cancel {
                task_id: "task-01".into(),
                owner: "email:a b@example.com".into(),
            },
            StoreEvent::Request {
                client: "ci bot".into(),
                id: RequestId::Int("7".into()),
            },
            StoreEvent::Request {
                client: String::new(),
                id: RequestId::Str("a \"quoted\" id".into()),
            },
        ] {
            assert_eq!(StoreEvent::parse(&event.to_string()), Some(event));
        }
    }

    #[test]
    fn other_messages_are_ignored() {
        for message in [
            "",
            "ended",
            "finished task-1",
            // Whose call it would stop is not said: not obeyed.
            "cancel task-00ff",
            "request [1]",
            "request [\"c\", null]",
            "request {\"client\":1}",
        ] {
            assert_eq!(StoreEvent::parse(message), None, "{message}");
        }
        let long = format!("ended {}", "x".repeat(MAX_MESSAGE));
        assert_eq!(StoreEvent::parse(&long), None);
    }
}
