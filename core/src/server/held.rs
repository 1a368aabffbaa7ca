//! Task-augmented calls of modern clients held for a short window: a call whose answer
//! comes within `tasks.answer_within_ms` is answered with the result itself, as a plain
//! call would be; one that runs longer is answered with its task at the window's end.
//! The 2026-07-28 tasks extension lets the server choose (a client that declares it takes
//! either a result or a task); 2025-11-25 clients that ask with `params.task` get their
//! task at once, as that version requires.
//!
//! A sub-machine: it keeps the held requests and their deadlines, and says which are due;
//! the server decides what each is answered with.

use super::routing::ReplyTo;
use crate::timers::Timers;
use std::collections::BTreeMap;
use std::time::Instant;

/// The request a held task will answer.
pub(super) type HeldRequest = super::routing::Asker;

/// Held requests by task id, with their deadlines.
#[derive(Default)]
pub(super) struct Held {
    requests: BTreeMap<String, (Instant, HeldRequest)>,
    timers: Timers<String>,
}

impl Held {
    /// Holds `request` for task `task_id` until `until`.
    pub fn hold(&mut self, task_id: String, request: HeldRequest, until: Instant) {
        self.timers.schedule(task_id.clone(), until);
        self.requests.insert(task_id, (until, request));
    }

    /// Whether task `task_id`'s request is still held (its client has not heard of it).
    pub fn contains(&self, task_id: &str) -> bool {
        self.requests.contains_key(task_id)
    }

    /// Releases task `task_id`'s request, if held.
    pub fn release(&mut self, task_id: &str) -> Option<HeldRequest> {
        self.requests.remove(task_id).map(|(_, request)| request)
    }

    /// The held tasks whose window is over at `now`, released, oldest first.
    pub fn due(&mut self, now: Instant) -> Vec<(String, HeldRequest)> {
        let mut due = Vec::new();
        for (at, task_id) in self.timers.take_due(now) {
            // A request released meanwhile (answered, or its client left) left its entry.
            if self
                .requests
                .get(&task_id)
                .is_some_and(|(until, _)| *until == at)
            {
                if let Some(request) = self.release(&task_id) {
                    due.push((task_id, request));
                }
            }
        }
        due
    }

    /// The held tasks whose request came over exchange `reply_to`, released.
    pub fn release_all(&mut self, reply_to: ReplyTo) -> Vec<String> {
        let of: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, (_, r))| r.reply_to == reply_to)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &of {
            self.requests.remove(id);
        }
        of
    }

    /// When the next window ends (an entry left by a released request wakes the server
    /// once, for nothing).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|(at, _)| at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::ExchangeId;
    use crate::jsonrpc::RequestId;
    use crate::mcp::ProtocolVersion;
    use std::time::Duration;

    fn request(n: u64, reply_to: ReplyTo) -> HeldRequest {
        HeldRequest {
            id: RequestId::Int(n.to_string()),
            reply_to,
            method: "tools/call",
            tool: Some("answer"),
            version: ProtocolVersion::V2026_07_28,
            received: crate::testing::start_instant(),
        }
    }

    #[test]
    fn a_window_ends_once_and_a_released_request_is_never_due() {
        let t0 = crate::testing::start_instant();
        let mut held = Held::default();
        held.hold(
            "a".into(),
            request(1, ReplyTo::Direct),
            t0 + Duration::from_secs(1),
        );
        held.hold(
            "b".into(),
            request(2, ReplyTo::Direct),
            t0 + Duration::from_secs(2),
        );
        let x = ReplyTo::Exchange(ExchangeId(7));
        held.hold("c".into(), request(3, x), t0 + Duration::from_secs(3));
        assert_eq!(held.poll_timeout(), Some(t0 + Duration::from_secs(1)));
        assert!(held.due(t0).is_empty());
        assert_eq!(
            held.release("a").map(|r| r.id),
            Some(RequestId::Int("1".into()))
        );
        assert!(!held.contains("a"));
        assert!(
            held.due(t0 + Duration::from_secs(1)).is_empty(),
            "a was answered"
        );
        let due = held.due(t0 + Duration::from_secs(2));
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].0, "b");
        assert!(held.due(t0 + Duration::from_secs(2)).is_empty(), "due once");
        assert_eq!(held.release_all(x), vec!["c".to_owned()]);
        assert!(held.due(t0 + Duration::from_secs(9)).is_empty());
        assert_eq!(held.poll_timeout(), None);
    }
}
