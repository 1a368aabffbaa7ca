//! A whole host in a page: it drives the core with its own loop, a virtual clock and an
//! in-memory upstream that answers every attempt after a second of virtual time. No
//! sockets, no threads, no sleeping: the same loop a real runtime runs, with the IO
//! swapped for memory.
//!
//! Run it with `cargo run -p responses-mcp-core --example in_memory_host`; `cargo test`
//! runs the test at the bottom.

#![allow(clippy::print_stdout)] // An example prints what it did.

use responses_mcp_core::{AttemptId, Driver, Event, HttpReply, Now, Poll, ServerConfig};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What the in-memory upstream answers: a real Responses API body with web search.
const ANSWER: &[u8] = include_bytes!("../testdata/openai/response-web-search.json");

/// An upstream that answers each attempt `latency` after it started.
struct InMemoryUpstream {
    latency: Duration,
    /// Attempts in flight and when they complete, in start order.
    in_flight: VecDeque<(Instant, AttemptId)>,
}

impl InMemoryUpstream {
    /// The attempt that completes first, taken off the list, when it completes no later
    /// than the core's `deadline` (if it has one).
    fn take_before(&mut self, deadline: Option<Instant>) -> Option<(Instant, AttemptId)> {
        let at = self.in_flight.iter().map(|(at, _)| *at).min()?;
        if deadline.is_some_and(|d| at > d) {
            return None;
        }
        let i = self.in_flight.iter().position(|(t, _)| *t == at)?;
        self.in_flight.remove(i)
    }
}

/// Runs one session: `lines` arrive on "stdin" one after the other, then stdin closes.
/// Returns what the server wrote, one message per line.
fn run_session(lines: &[&str]) -> Vec<String> {
    let config = ServerConfig {
        // The host holds the key; the core only needs to know there is one.
        credentials_ready: true,
        progress_interval: Duration::from_millis(400),
        ..ServerConfig::default()
    };
    // The handle a host keeps per attempt is its own choice; here, the id itself.
    let mut driver: Driver<AttemptId> = Driver::new(config);
    #[allow(clippy::disallowed_methods)] // The host owns the clock: read once, then virtual.
    let mut now = Now {
        instant: Instant::now(),
        unix_secs: 1_754_708_400,
    };
    // Once, first: what starts with the server starts now.
    driver.handle(now, Event::Start);
    let mut stdin: VecDeque<&str> = lines.iter().copied().collect();
    let mut upstream = InMemoryUpstream {
        latency: Duration::from_secs(1),
        in_flight: VecDeque::new(),
    };
    let mut stdout = Vec::new();
    loop {
        match driver.poll() {
            Poll::Write(bytes) => {
                stdout.extend_from_slice(bytes);
                driver.written(now, true);
            }
            Poll::Start(request) => {
                let done_at = now.instant + upstream.latency;
                upstream.in_flight.push_back((done_at, request.attempt));
                driver.started(now, request.attempt, Ok(request.attempt));
            }
            Poll::Abort(attempt) => upstream.in_flight.retain(|(_, a)| *a != attempt),
            Poll::Wait(deadline) => {
                // Stdin first, as if the client wrote everything at once.
                if let Some(line) = stdin.pop_front() {
                    driver.handle(now, Event::Stdin(format!("{line}\n").as_bytes()));
                    if stdin.is_empty() {
                        driver.handle(now, Event::StdinClosed);
                    }
                    continue;
                }
                // Then whichever comes first: an upstream answer or the core's deadline.
                if let Some((at, attempt)) = upstream.take_before(deadline) {
                    now.instant = now.instant.max(at);
                    let reply = HttpReply {
                        status: 200,
                        headers: Vec::new(),
                        body: ANSWER.to_vec(),
                    };
                    // A real host would release the handle (return a connection to a
                    // pool); ours is just the id.
                    let _handle = driver.completed(now, attempt, Ok(reply));
                } else if let Some(d) = deadline {
                    now.instant = now.instant.max(d);
                    driver.handle(now, Event::Timeout);
                } else {
                    break; // Nothing can happen any more.
                }
            }
            Poll::Exit => break,
            // Actions a newer core adds; this host performs none.
            _ => {}
        }
    }
    String::from_utf8_lossy(&stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

const SESSION: [&str; 3] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"answer","arguments":{"query":"Weather in Tokyo today?"},"_meta":{"progressToken":"p"}}}"#,
];

fn main() {
    for line in run_session(&SESSION) {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_example_host_calls_a_tool_from_start_to_answer() {
        let out: Vec<Value> = run_session(&SESSION)
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(out[0]["result"]["protocolVersion"], "2025-06-18");
        let progress: Vec<u64> = out
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| m["params"]["progress"].as_u64().unwrap())
            .collect();
        // One at the start, then one per 400 ms of the second the upstream takes.
        assert_eq!(progress, [1, 2, 3]);
        let last = out.last().unwrap();
        assert_eq!(last["id"], 2);
        let answer = &last["result"]["structuredContent"];
        assert_eq!(answer["used_search"], true);
        assert!(!answer["citations"].as_array().unwrap().is_empty());
    }
}
