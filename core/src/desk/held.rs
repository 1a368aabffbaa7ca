//! Task-augmented calls of modern clients held for a short window: a call whose answer
//! comes within `tasks.answer_within_ms` is answered with the result itself, as a plain
//! call would be; one that runs longer is answered with its task at the window's end.
//! The 2026-07-28 tasks extension lets the server choose (a client that declares it takes
//! either a result or a task); 2025-11-25 clients that ask with `params.task` get their
//! task at once, as that version requires.
//!
//! It keeps the held requests and when their windows end; the desk keeps the deadlines
//! and decides what each is answered with.

use crate::routing::Ticket;
use std::collections::BTreeMap;
use std::time::Instant;

/// Held requests by task id, each with the end of its window (the desk keeps the
/// deadlines on its one heap).
#[derive(Default)]
pub(super) struct Held {
    requests: BTreeMap<String, (Instant, Ticket)>,
}

impl Held {
    /// Holds `request` for task `task_id` until `until`.
    pub fn hold(&mut self, task_id: String, request: Ticket, until: Instant) {
        self.requests.insert(task_id, (until, request));
    }

    /// Whether task `task_id`'s request is still held (its client has not heard of it).
    pub fn contains(&self, task_id: &str) -> bool {
        self.requests.contains_key(task_id)
    }

    /// When task `task_id`'s window ends, if its request is held.
    pub fn until(&self, task_id: &str) -> Option<Instant> {
        self.requests.get(task_id).map(|(until, _)| *until)
    }

    /// Requests held.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Every held window's end.
    pub fn deadlines(&self) -> impl Iterator<Item = (Instant, &str)> {
        self.requests
            .iter()
            .map(|(id, (until, _))| (*until, id.as_str()))
    }

    /// Releases task `task_id`'s request, if held.
    pub fn release(&mut self, task_id: &str) -> Option<Ticket> {
        self.requests.remove(task_id).map(|(_, request)| request)
    }

    /// Releases task `task_id`'s request if its window ends at `at` (a request released
    /// meanwhile, answered or its client gone, left its deadline behind).
    pub fn release_at(&mut self, task_id: &str, at: Instant) -> Option<Ticket> {
        if self.until(task_id) != Some(at) {
            return None;
        }
        self.release(task_id)
    }

    /// The held tasks whose request `gone` picks, released.
    pub fn release_all(&mut self, gone: impl Fn(&Ticket) -> bool) -> Vec<String> {
        let of: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, (_, r))| gone(r))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &of {
            self.requests.remove(id);
        }
        of
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::ExchangeId;
    use crate::jsonrpc::RequestId;
    use crate::mcp::ProtocolVersion;
    use crate::routing::ReplyTo;
    use std::time::Duration;

    fn request(n: u64, reply_to: ReplyTo) -> Ticket {
        Ticket {
            no: n,
            id: RequestId::Int(n.to_string()),
            reply_to,
            method: "tools/call",
            tool: Some(crate::tools::Tool::Answer),
            version: Some(ProtocolVersion::V2026_07_28),
            client: crate::clients::ClientId::DEFAULT,
            received: crate::testing::start_instant(),
            trace: None,
            span: None,
        }
    }

    #[test]
    fn a_window_ends_once_and_a_released_request_is_never_due() {
        let t0 = crate::testing::start_instant();
        let (t1, t2, t3) = (
            t0 + Duration::from_secs(1),
            t0 + Duration::from_secs(2),
            t0 + Duration::from_secs(3),
        );
        let mut held = Held::default();
        held.hold("a".into(), request(1, ReplyTo::Direct), t1);
        held.hold("b".into(), request(2, ReplyTo::Direct), t2);
        let x = ReplyTo::Exchange(ExchangeId(7));
        held.hold("c".into(), request(3, x), t3);
        assert_eq!(held.deadlines().map(|(at, _)| at).min(), Some(t1));
        assert_eq!(
            held.release("a").map(|r| r.id),
            Some(RequestId::Int("1".into()))
        );
        assert!(!held.contains("a"));
        assert!(held.release_at("a", t1).is_none(), "a was answered");
        assert!(held.release_at("b", t1).is_none(), "not b's window");
        assert_eq!(
            held.release_at("b", t2).map(|r| r.id),
            Some(RequestId::Int("2".into()))
        );
        assert!(held.release_at("b", t2).is_none(), "due once");
        assert_eq!(held.release_all(|r| r.reply_to == x), vec!["c".to_owned()]);
        assert!(held.release_at("c", t3).is_none());
        assert_eq!(held.len(), 0);
    }
}
