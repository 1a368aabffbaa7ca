//! The official SDK clients, as users run them, drive the binary over stdio: the Python
//! SDK 2.x (PyPI `mcp`) and the TypeScript SDK v2 (`@modelcontextprotocol/client`) in
//! their probing (auto), modern and legacy modes, and the TypeScript SDK 1.x
//! (`@modelcontextprotocol/sdk`, legacy only). Each lists the tools and calls one against
//! the fake OpenAI; `.ci/test` installs them under `target/sdk`.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::*;

/// Runs `command` (an SDK client script that starts the binary over stdio) against
/// `fake` with the planted key, and returns the JSON report on its last line; no output
/// may carry the key.
fn run_over_stdio(command: Command, fake: &FakeOpenAi) -> Value {
    run_over_stdio_with(command, fake, None)
}

/// [`run_over_stdio`], with `yaml` as the user's configuration file.
fn run_over_stdio_with(mut command: Command, fake: &FakeOpenAi, yaml: Option<&str>) -> Value {
    let home = temp_dir("sdk");
    if let Some(yaml) = yaml {
        let dir = home.join(".config/openai-responses-mcp");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), yaml).unwrap();
    }
    command
        .arg(crate::binary())
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env("OPENAI_API_KEY", PLANTED_KEY)
        .env("OPENAI_BASE_URL", &fake.url);
    let report = report_of(command, String::new);
    let _ = std::fs::remove_dir_all(home);
    report
}

/// Runs an SDK client script with no proxy in its environment; checks that it succeeded
/// and that nothing it printed carries the key; returns the JSON report on its last
/// line. `server_log` is shown when it fails.
fn report_of(mut command: Command, server_log: impl Fn() -> String) -> Value {
    crate::without_proxies(&mut command);
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "sdk client failed:\n{stdout}\n{stderr}\nserver:\n{}",
        server_log()
    );
    assert!(!stdout.contains(PLANTED_KEY) && !stderr.contains(PLANTED_KEY));
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// Runs `command` (an SDK client script) and checks its report: the era it ended in, the
/// tools, and an answer with search and citations, once upstream.
fn check_client(command: Command, expected_version: Option<&str>) {
    let fake = FakeOpenAi::fixed(200, fixture("response-web-search.json"));
    let report = run_over_stdio(command, &fake);
    if let Some(version) = expected_version {
        assert_eq!(report["version"], version, "{report}");
    }
    assert_eq!(
        report["tools"],
        json!(["answer", "answer_detailed", "answer_quick"])
    );
    assert_eq!(report["is_error"], false, "{report}");
    let answer: Value = serde_json::from_str(report["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["used_search"], true);
    assert!(!answer["citations"].as_array().unwrap().is_empty());
    assert_eq!(report["structured"], answer);
    assert_eq!(fake.requests().len(), 1);
}

/// The Python client, or `None` (a skip outside CI) when the SDK is not installed.
fn python(mode: &str) -> Option<Command> {
    python_script("sdk_client.py", mode)
}

/// `script` run by the Python SDK's interpreter, or `None` as for [`python`].
fn python_script(script: &str, mode: &str) -> Option<Command> {
    let Some(python) = crate::sdk_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the Python MCP SDK (.ci/test does)"
        );
        eprintln!("skipping: the Python MCP SDK is not installed (run .ci/test)");
        return None;
    };
    let mut command = Command::new(python);
    command
        .arg(format!("{}/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(mode);
    Some(command)
}

/// A TypeScript client (`sdk` is `v2` or `v1`), or `None` when the packages are missing.
fn typescript(sdk: &str, mode: &str) -> Option<Command> {
    typescript_script("sdk_client.cjs", sdk, mode)
}

/// `script` run by Node with the TypeScript SDKs, or `None` as for [`typescript`].
fn typescript_script(script: &str, sdk: &str, mode: &str) -> Option<Command> {
    let Some(modules) = crate::sdk_node_modules() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the TypeScript MCP SDKs (.ci/test does)"
        );
        eprintln!("skipping: the TypeScript MCP SDKs are not installed (run .ci/test)");
        return None;
    };
    let mut command = Command::new("node");
    command
        .arg(format!("{}/{script}", env!("CARGO_MANIFEST_DIR")))
        .args([sdk, mode])
        .env("NODE_PATH", modules);
    Some(command)
}

pub fn python_sdk_in_its_default_probing_mode_ends_modern() {
    if let Some(c) = python("auto") {
        check_client(c, Some("2026-07-28"));
    }
}

pub fn python_sdk_pinned_to_2026_07_28() {
    if let Some(c) = python("modern") {
        check_client(c, Some("2026-07-28"));
    }
}

pub fn python_sdk_in_legacy_mode_negotiates_2025_11_25() {
    if let Some(c) = python("legacy") {
        check_client(c, Some("2025-11-25"));
    }
}

pub fn typescript_sdk_v2_in_auto_mode_ends_modern() {
    if let Some(c) = typescript("v2", "auto") {
        check_client(c, Some("2026-07-28"));
    }
}

pub fn typescript_sdk_v2_pinned_to_2026_07_28() {
    if let Some(c) = typescript("v2", "modern") {
        check_client(c, Some("2026-07-28"));
    }
}

pub fn typescript_sdk_1_x_legacy_client() {
    if let Some(c) = typescript("v1", "legacy") {
        check_client(c, None);
    }
}

/// Runs an SDK client script against the binary serving HTTP and checks its report: the
/// tools, progress during a slow call, its answer, and a cancelled call whose upstream
/// connection the server closed.
fn check_http_client(mut command: Command, expected_version: Option<&str>) {
    let fake = FakeOpenAi::start(|r, _| {
        if r.body.to_string().contains("please-hang-forever") {
            Action::Hang
        } else {
            Action::json(200, &fixture("response-web-search.json"))
                .after(Duration::from_millis(600))
        }
    });
    let dir = temp_dir("sdk-http");
    let mcp =
        Mcp::spawn(Opts::http(&fake.url).config(&dir, "server: {progress_interval_ms: 100}\n"));
    let addr = crate::http_client::listening(&mcp);
    command.arg(format!("http://{addr}/mcp"));
    let report = report_of(command, || mcp.stderr());
    if let Some(version) = expected_version {
        assert_eq!(report["version"], version, "{report}");
    }
    assert_eq!(
        report["tools"],
        json!(["answer", "answer_detailed", "answer_quick"])
    );
    assert!(
        !report["progress"].as_array().unwrap().is_empty(),
        "progress during the call: {report}"
    );
    assert_eq!(report["is_error"], false, "{report}");
    let answer: Value = serde_json::from_str(report["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["used_search"], true);
    assert_eq!(report["structured"], answer);
    assert_eq!(report["cancel"], "cancelled", "{report}");
    assert_eq!(report["tools_after_cancel"], 3);
    let start = Instant::now();
    while fake.closed().is_empty() {
        assert!(
            start.elapsed() < PATIENCE,
            "the cancelled call's upstream connection stayed open"
        );
        thread::sleep(Duration::from_millis(10));
    }
    assert!(!mcp.stderr().contains(PLANTED_KEY));
    let _ = std::fs::remove_dir_all(dir);
}

pub fn python_sdk_over_http_lists_calls_with_progress_and_cancels() {
    if let Some(c) = python_script("sdk_http_client.py", "auto") {
        check_http_client(c, Some("2026-07-28"));
    }
}

pub fn python_sdk_over_http_in_legacy_mode() {
    if let Some(c) = python_script("sdk_http_client.py", "legacy") {
        check_http_client(c, Some("2025-11-25"));
    }
}

pub fn typescript_sdk_v2_over_http_lists_calls_with_progress_and_cancels() {
    if let Some(c) = typescript_script("sdk_http_client.cjs", "v2", "auto") {
        check_http_client(c, Some("2026-07-28"));
    }
}

pub fn typescript_sdk_1_x_over_http_lists_calls_with_progress_and_cancels() {
    if let Some(c) = typescript_script("sdk_http_client.cjs", "v1", "legacy") {
        check_http_client(c, None);
    }
}

/// The TypeScript SDK 1.x client's Tasks API (2025-11-25) over stdio: a task streamed to
/// its result, `getTask`, `listTasks`, and a second task cancelled while it works (the
/// fake sees its upstream connection close).
pub fn typescript_sdk_1_x_tasks_over_stdio() {
    let Some(command) = typescript_script("sdk_tasks_client.cjs", "", "") else {
        return;
    };
    let fake = FakeOpenAi::start(|r, _| {
        if r.body.to_string().contains("please-hang-forever") {
            Action::Hang
        } else {
            Action::json(200, &fixture("response-web-search.json"))
                .after(Duration::from_millis(300))
        }
    });
    let report = run_over_stdio(command, &fake);
    let seen: Vec<&str> = report["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(seen.first(), Some(&"taskCreated"), "{report}");
    assert_eq!(seen.last(), Some(&"result"), "{report}");
    assert_eq!(report["status_after"], "completed");
    assert!(report["listed"]
        .as_array()
        .unwrap()
        .contains(&report["task_id"]));
    let answer: Value = serde_json::from_str(report["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["used_search"], true);
    assert_eq!(report["structured"], answer);
    assert_eq!(report["cancelled_status"], "cancelled");
    let start = Instant::now();
    while fake.closed().is_empty() {
        assert!(
            start.elapsed() < PATIENCE,
            "the cancelled task's upstream connection stayed open"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// The same TypeScript SDK 1.x Tasks client against background tasks: the answer comes
/// from the stored OpenAI response, and the cancel reaches OpenAI.
pub fn typescript_sdk_1_x_tasks_with_openai_background() {
    let Some(command) = typescript_script("sdk_tasks_client.cjs", "", "") else {
        return;
    };
    let openai = crate::fake_openai::Background::new(
        &fixture("response-web-search.json"),
        Duration::from_millis(500),
    );
    let fake = openai.serve();
    let yaml = "tasks: {openai_background: true, poll_interval_ms: 100}\n";
    let report = run_over_stdio_with(command, &fake, Some(yaml));
    assert_eq!(report["status_after"], "completed", "{report}");
    let answer: Value = serde_json::from_str(report["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["used_search"], true);
    assert_eq!(report["cancelled_status"], "cancelled", "{report}");
    let requests = fake.requests();
    assert!(requests
        .iter()
        .all(|r| r.path.starts_with("/v1/responses") || r.path.starts_with("/responses")));
    assert!(requests
        .iter()
        .any(|r| r.method == "POST" && r.path.ends_with("/cancel")));
    assert!(requests.iter().any(|r| r.method == "GET"));
}

/// The SDK clients connecting to a server that wants a bearer token, without one: the
/// error each raises says that a bearer token is required (not a stand-in such as
/// "Server returned an error response"), and no client drifts into OAuth.
pub fn sdk_clients_without_the_bearer_token_say_that_one_is_required() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mcp = Mcp::spawn(Opts::http(&fake.url).env("MCP_HTTP_TOKEN", "sdk-token-9f3a"));
    let url = format!("http://{}/mcp", crate::http_client::listening(&mcp));
    const PYTHON: &str = r#"
import asyncio, sys
from mcp.client.client import Client
def leaves(e):
    subs = getattr(e, "exceptions", None)
    return [m for x in subs for m in leaves(x)] if subs else [str(e)]
async def main():
    try:
        async with Client(sys.argv[1], mode=sys.argv[2]) as c:
            await c.list_tools()
        print("connected")
    except BaseException as e:
        print(" | ".join(leaves(e)))
asyncio.run(main())
"#;
    const NODE: &str = r#"
const [sdk, url] = process.argv.slice(1);
const { Client, StreamableHTTPClientTransport } = sdk === "v2"
  ? require("@modelcontextprotocol/client")
  : { ...require("@modelcontextprotocol/sdk/client/index.js"), ...require("@modelcontextprotocol/sdk/client/streamableHttp.js") };
const client = new Client({ name: "e2e-401", version: "1.0.0" });
client.connect(new StreamableHTTPClientTransport(new URL(url)))
  .then(() => console.log("connected"), (e) => console.log(e.message))
  .finally(() => process.exit(0));
"#;
    let mut said = Vec::new();
    if let Some(python) = crate::sdk_python() {
        for mode in ["auto", "legacy"] {
            let out = Command::new(&python)
                .args(["-c", PYTHON, &url, mode])
                .output()
                .unwrap();
            said.push((
                format!("python {mode}"),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ));
        }
    }
    if let Some(modules) = crate::sdk_node_modules() {
        for sdk in ["v2", "v1"] {
            let out = Command::new("node")
                .args(["-e", NODE, sdk, &url])
                .env("NODE_PATH", &modules)
                .output()
                .unwrap();
            said.push((
                format!("typescript {sdk}"),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ));
        }
    }
    assert!(
        said.len() == 4 || std::env::var_os("CI").is_none(),
        "CI must install both SDKs (.ci/test does)"
    );
    for (client, message) in &said {
        assert!(
            message.contains("requires a bearer token") && !message.contains("connected"),
            "{client}: {message}"
        );
        assert!(!message.contains("sdk-token-9f3a"));
    }
}
