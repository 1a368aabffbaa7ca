//! `openai-responses-mcp-blocking`: the small build, with no async runtime.

/// The static build keeps freed blocks: musl's allocator would unmap them after every
/// call, and mimalloc's heap per thread costs too much with a thread per call
/// (core/alloc, docs/benchmarks.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: responses_mcp_alloc::cache::Cache = responses_mcp_alloc::cache::Cache;

fn main() {
    let env = responses_mcp_host::process_env();
    let seed = responses_mcp_host::seed();
    let status = match responses_mcp_host::launch(std::env::args_os().skip(1).collect(), env, seed)
    {
        responses_mcp_host::Launch::Exit(status) => status,
        responses_mcp_host::Launch::Serve(startup) => responses_mcp_blocking::run(*startup),
        responses_mcp_host::Launch::Doctor(doctor) => {
            let mut client = doctor
                .startup()
                .map(responses_mcp_blocking::doctor::Client::new);
            doctor.run(client.as_mut().map(|c| c as _))
        }
    };
    std::process::exit(status);
}
