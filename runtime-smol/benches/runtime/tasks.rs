//! Tasks: peak RSS with 10,000 finished tasks kept in the local store (each holding the
//! answer the fake gave), against 10,000 plain calls answered and forgotten, same binary,
//! same run.

use super::harness::*;
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::thread;
use std::time::Duration;

pub fn run() {
    const TASKS: u64 = 10_000;
    println!("## Peak RSS (VmHWM) with {TASKS} finished tasks kept, against {TASKS} plain calls (2025-11-25 session over stdio, the fake answers at once with the 1.2 KB no-search answer)\n");
    println!(
        "| binary | {TASKS} plain calls (baseline) | {TASKS} tasks kept | difference | per task |"
    );
    println!("|---|---|---|---|---|");
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let yaml = "server: {max_inflight: 64, max_queue: 20000}\ntasks: {max_tasks: 20000}\n";
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    for (name, bin) in binaries() {
        let mut rss = Vec::new();
        for as_task in [false, true] {
            let mut p = Proc::start(&bin, &fake.url, yaml);
            p.send(init);
            p.recv();
            let task = if as_task { r#","task":{}"# } else { "" };
            let request = |id: u64| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"answer","arguments":{{"query":"q"}}{task}}}}}"#
                )
            };
            // Plain calls: one reply each. Tasks: the handle, then a status notification.
            // At most 256 outstanding, so neither pipe fills while the other waits.
            let expected = if as_task { 2 * TASKS } else { TASKS };
            let (mut sent, mut replies, mut received) = (0u64, 0u64, 0u64);
            while received < expected {
                while sent < TASKS && sent - replies < 256 {
                    sent += 1;
                    p.send(&request(sent));
                }
                let line = p.recv();
                assert!(!line.contains("\"error\""), "{line}");
                received += 1;
                if line.contains("\"id\"") {
                    replies += 1;
                }
            }
            thread::sleep(Duration::from_millis(100));
            rss.push(p.peak_rss_kib());
        }
        let (plain, kept) = (rss[0] as f64, rss[1] as f64);
        println!(
            "| {name} | {:.1} MB | {:.1} MB | {:.1} MB | {:.2} KB |",
            plain / 1024.0,
            kept / 1024.0,
            (kept - plain) / 1024.0,
            (kept - plain) / TASKS as f64
        );
    }
    println!();
}
