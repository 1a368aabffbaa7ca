//! The ABI driven by three hosts that are not Rust, each running the same conversation
//! (initialize, tools/list, a tools/call whose request goes to the loopback fake OpenAI
//! over real HTTP and whose answer is fed back): a C program compiled here with `cc`
//! against the static library, Python through `ctypes` on the shared library, and the
//! `wasm32-wasip1` module under Python's `wasmtime`. The judge is this file: what each
//! host printed (the engine's writes) and what the fake received. Beside them: the
//! structs' layouts as `cc` compiles the header, and the shared library's dynamic symbols
//! against the header's functions.

// A test runs programs, reads files and fails loudly; the core's sans-IO rules are not its.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr
)]

use responses_mcp_ffi::{OrmAction, OrmInput};
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use serde_json::Value;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEY: &str = "sk-host-test-key";

/// The folder holding the libraries this test run built: the test binary's own
/// (`target/debug/deps`, where `cargo test` leaves the crate's `cdylib` and `staticlib`
/// beside it), else `target/debug` (where `cargo build` puts them).
fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("libresponses_mcp_ffi.a").exists() {
        return deps;
    }
    deps.parent().unwrap().to_path_buf()
}

fn hosts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts")
}

fn fake_openai() -> FakeOpenAi {
    let answer = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/openai/response-web-search.json"),
    )
    .unwrap();
    FakeOpenAi::fixed(200, answer)
}

/// Compiles the C host against the static library and the header.
fn c_host(dir: &Path) -> PathBuf {
    let exe = dir.join("host");
    let out = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
        .arg(hosts_dir().join("host.c"))
        .arg("-o")
        .arg(&exe)
        .arg(build_dir().join("libresponses_mcp_ffi.a"))
        .args([
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ])
        .output()
        .expect("cc runs (the C host test needs a C compiler)");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Checks what a host printed and what the fake received: the whole conversation.
fn assert_conversation(host: &str, out: &Output, fake: &FakeOpenAi) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{host} failed:\n{stderr}\n{stdout}");
    let messages: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{host}: {e}: {l}")))
        .collect();
    let by_id = |id: u64| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("{host}: no reply to {id} in:\n{stdout}\n{stderr}"))
    };
    assert_eq!(
        by_id(1)["result"]["protocolVersion"],
        "2025-06-18",
        "{host}"
    );
    assert_eq!(
        by_id(1)["result"]["serverInfo"]["name"],
        "openai-responses-mcp",
        "{host}"
    );
    let tools: Vec<&str> = by_id(2)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"answer"), "{host}: {tools:?}");
    let call = &by_id(3)["result"];
    assert!(call.get("isError").is_none(), "{host}: {call}");
    let answer = &call["structuredContent"];
    assert_eq!(answer["used_search"], true, "{host}");
    assert!(
        answer["answer"]
            .as_str()
            .unwrap()
            .starts_with("Short answer first"),
        "{host}"
    );
    assert_eq!(answer["citations"].as_array().unwrap().len(), 3, "{host}");
    // One request, as the engine built it, with the key the host added.
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{host}: {requests:?}");
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(request.body["input"]
        .to_string()
        .contains("Weather in Tokyo today?"));
    // The host saw the engine exit after its last write.
    assert!(stderr.contains("exit"), "{host}: {stderr}");
}

#[test]
fn a_c_host_runs_a_conversation_through_the_static_library() {
    let dir = responses_mcp_testkit::temp_dir("ffi-c");
    let exe = c_host(&dir);
    let fake = fake_openai();
    let out = Command::new(&exe).args([&fake.url, KEY]).output().unwrap();
    assert_conversation("the C host", &out, &fake);
    // The attempt's handle came back to the host once, when its reply was fed.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("released handle 100").count(), 1, "{stderr}");
}

#[test]
fn the_structs_have_the_same_layout_in_c_and_rust() {
    let dir = responses_mcp_testkit::temp_dir("ffi-layout");
    let out = Command::new(c_host(&dir)).arg("--layout").output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let input = format!(
        "orm_input {} {} {} {} {} {} {} {} {}",
        size_of::<OrmInput>(),
        offset_of!(OrmInput, attempt),
        offset_of!(OrmInput, handle),
        offset_of!(OrmInput, kind),
        offset_of!(OrmInput, status),
        offset_of!(OrmInput, data),
        offset_of!(OrmInput, data_len),
        offset_of!(OrmInput, headers),
        offset_of!(OrmInput, headers_len),
    );
    let action = format!(
        "orm_action {} {} {} {} {} {} {} {} {} {} {} {}",
        size_of::<OrmAction>(),
        offset_of!(OrmAction, attempt),
        offset_of!(OrmAction, handle),
        offset_of!(OrmAction, deadline_ms),
        offset_of!(OrmAction, kind),
        offset_of!(OrmAction, flags),
        offset_of!(OrmAction, method),
        offset_of!(OrmAction, destination),
        offset_of!(OrmAction, data),
        offset_of!(OrmAction, data_len),
        offset_of!(OrmAction, url),
        offset_of!(OrmAction, url_len),
    );
    assert_eq!(stdout.lines().collect::<Vec<_>>(), [input, action]);
}

/// The Python the host runs under: `ORM_WASMTIME_PYTHON` (a virtual environment with the
/// pinned `wasmtime`, which `.ci/test` makes) when set, else `python3`.
fn python(need_wasmtime: bool) -> Option<PathBuf> {
    match std::env::var_os("ORM_WASMTIME_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None if need_wasmtime => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must set ORM_WASMTIME_PYTHON (.ci/test does)"
            );
            eprintln!(
                "ORM_WASMTIME_PYTHON is not set: the wasm host is skipped (bash .ci/test runs it)"
            );
            None
        }
        None => Some("python3".into()),
    }
}

#[test]
fn a_python_host_runs_a_conversation_through_ctypes() {
    let Some(python) = python(false) else { return };
    let fake = fake_openai();
    let out = Command::new(python)
        .arg(hosts_dir().join("host.py"))
        .arg("native")
        .arg(build_dir().join("libresponses_mcp_ffi.so"))
        .args([&fake.url, KEY])
        .output()
        .unwrap();
    assert_conversation("the ctypes host", &out, &fake);
}

#[test]
fn a_python_host_runs_a_conversation_in_the_wasm_module() {
    let Some(python) = python(true) else { return };
    let Some(module) = std::env::var_os("ORM_FFI_WASM") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must set ORM_FFI_WASM (.ci/test builds the module)"
        );
        eprintln!("ORM_FFI_WASM is not set: the wasm host is skipped (bash .ci/test runs it)");
        return;
    };
    let fake = fake_openai();
    let out = Command::new(python)
        .arg(hosts_dir().join("host.py"))
        .arg("wasm")
        .arg(module)
        .args([&fake.url, KEY])
        .output()
        .unwrap();
    assert_conversation("the wasm host", &out, &fake);
    // The module can do no IO: it imports the clock (read once), the random seed of the
    // standard library's hash maps, and the panic path's writes and exit; nothing that
    // opens a file or a socket.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let imports = stderr
        .lines()
        .find_map(|l| l.strip_prefix("module imports: "))
        .unwrap_or_else(|| panic!("the wasm host named no imports:\n{stderr}"));
    for import in imports.split(' ') {
        let name = import
            .strip_prefix("wasi_snapshot_preview1.")
            .unwrap_or(import);
        assert!(
            [
                "clock_time_get",
                "random_get",
                "fd_write",
                "environ_get",
                "environ_sizes_get",
                "proc_exit"
            ]
            .contains(&name),
            "the module imports {import}"
        );
    }
}

#[test]
fn the_shared_library_exports_exactly_the_headers_functions() {
    let header = include_str!("../include/responses_mcp.h");
    // A prototype's name is the identifier before its `(`: `int32_t orm_engine_new(`.
    let declared: std::collections::BTreeSet<&str> = header
        .split('(')
        .filter_map(|before| before.rsplit([' ', '*', '\n']).next())
        .filter(|name| name.starts_with("orm_"))
        .collect();
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(build_dir().join("libresponses_mcp_ffi.so"))
        .output()
        .expect("nm runs (binutils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|name| name.starts_with("orm_"))
        .map(str::to_owned)
        .collect();
    let declared: std::collections::BTreeSet<String> =
        declared.into_iter().map(str::to_owned).collect();
    assert_eq!(exported, declared);
    assert_eq!(declared.len(), 9);
}
