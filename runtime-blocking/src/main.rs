//! `openai-responses-mcp-blocking`: the small build, with no async runtime.

/// The static builds run on mimalloc: musl's allocator would unmap freed memory after
/// every call (core/alloc, docs/benchmarks.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: responses_mcp_alloc::Allocator = responses_mcp_alloc::Allocator;

fn main() {
    let env = responses_mcp_config::process_env();
    let seed = responses_mcp_config::seed();
    let status = match responses_mcp_config::launch(std::env::args_os().skip(1), env, seed) {
        responses_mcp_config::Launch::Exit(status) => status,
        responses_mcp_config::Launch::Serve(startup) => responses_mcp_blocking::run(*startup),
        responses_mcp_config::Launch::Doctor(doctor) => {
            let mut client = doctor
                .startup()
                .map(responses_mcp_blocking::doctor::Client::new);
            doctor.run(client.as_mut().map(|c| c as _))
        }
    };
    std::process::exit(status);
}
