//! Replays every committed fuzz corpus file through the fuzz target functions on the
//! stable toolchain, so `cargo test` exercises the corpora and every crash that became a
//! corpus file stays fixed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use responses_mcp_fuzz_targets as targets;
use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(outcome.is_ok(), "{target} fails on {}", path.display());
            count += 1;
        }
    }
    assert!(count > 0, "no corpus for {target}");
}

#[test]
fn abi_corpus() {
    replay("abi", targets::abi);
}

#[test]
fn alloc_corpus() {
    replay("alloc", targets::alloc);
}

#[test]
fn framer_corpus() {
    replay("framer", targets::framer);
}

#[test]
fn framer_split_corpus() {
    replay("framer_split", targets::framer_split);
}

#[test]
fn server_corpus() {
    replay("server", targets::server);
}

#[test]
fn responses_parser_corpus() {
    replay("responses_parser", targets::responses_parser);
}

#[test]
fn config_corpus() {
    replay("config", targets::config);
}

#[test]
fn http_response_corpus() {
    replay("http_response", targets::http_response);
}

#[test]
fn sse_corpus() {
    replay("sse", targets::sse);
}

#[test]
fn http_request_corpus() {
    replay("http_request", targets::http_request);
}

#[test]
fn http_connection_corpus() {
    replay("http_connection", targets::http_connection);
}

#[test]
fn tasks_corpus() {
    replay("tasks", targets::tasks);
}

#[test]
fn drift_corpus() {
    replay("drift", targets::drift);
}

#[test]
fn gateway_corpus() {
    replay("gateway", targets::gateway);
}

#[test]
fn traceparent_corpus() {
    replay("traceparent", targets::traceparent);
}

#[test]
fn proxy_replies_corpus() {
    replay("proxy_replies", targets::proxy_replies);
}

#[test]
fn clients_file_corpus() {
    replay("clients_file", targets::clients_file);
}

#[test]
fn store_replies_corpus() {
    replay("store_replies", targets::store_replies);
}

#[test]
fn oauth_corpus() {
    replay("oauth", targets::oauth);
}

#[test]
fn store_tasks_corpus() {
    replay("store_tasks", targets::store_tasks);
}

#[test]
fn seal_corpus() {
    replay("seal", targets::seal);
}

#[test]
fn otel_env_corpus() {
    replay("otel_env", targets::otel_env);
}

#[test]
fn id_scan_corpus() {
    replay("id_scan", targets::id_scan);
}

#[test]
fn lease_corpus() {
    replay("lease", targets::lease);
}

#[test]
fn roster_corpus() {
    replay("roster", targets::roster);
}
