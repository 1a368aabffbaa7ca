//! Client programs people run, driving the binaries as their users do: the MCP Inspector
//! CLI (`tools/list` and `tools/call` over stdio and Streamable HTTP, in its legacy,
//! modern and auto eras) and Claude Code's `mcp` commands against a server that wants a
//! bearer token (with it, without it, with a wrong one). `.ci/test` installs them, pinned,
//! under `target/clients`; they run offline against the loopback fake OpenAI.

use crate::fake_openai::FakeOpenAi;
use crate::http_client::listening;
use crate::*;

const TOKEN: &str = "client-test-token-5b2f";

/// `program` from the clients' `.bin`, with that folder first on PATH (the Inspector
/// needs the Node 22 installed beside it) and no proxy in its environment.
pub(super) fn client(bin: &std::path::Path, program: &str, home: &std::path::Path) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let mut command = Command::new(bin.join(program));
    command
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("HOME", home)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(home);
    without_proxies(&mut command);
    command
}

/// The line `claude mcp list` printed for server `name`.
pub(super) fn listed_line(listed: &str, name: &str) -> String {
    listed
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("{name} not listed:\n{listed}"))
        .to_owned()
}

/// Runs `command`, checks that it succeeded and printed no secret, and returns stdout.
pub(super) fn run(mut command: Command) -> String {
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{command:?} failed:\n{stdout}\n{stderr}"
    );
    for secret in [PLANTED_KEY, TOKEN] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret} was printed"
        );
    }
    stdout
}

/// The Inspector CLI's arguments for `method` in `era` (`--format json`).
fn inspector_args(era: &str, method: &str) -> Vec<String> {
    let mut args = [
        "--cli",
        "--protocol-era",
        era,
        "--format",
        "json",
        "--method",
        method,
    ]
    .map(String::from)
    .to_vec();
    if method == "tools/call" {
        args.extend(["--tool-name", "answer", "--tool-arg", "query=hello"].map(String::from));
    }
    args
}

/// What the Inspector printed for `tools/list` and `tools/call`: the tool names, and the
/// call's result is the answer itself (a quick answer is never a task, whatever the era).
fn check_inspector_output(list: &str, call: &str, era: &str) {
    let list: Value = serde_json::from_str(list).unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["answer", "answer_detailed", "answer_quick"],
        "{era}"
    );
    let call: Value = serde_json::from_str(call).unwrap();
    let result = &call["result"];
    assert!(
        result["structuredContent"]["answer"].is_string(),
        "{era}: {call}"
    );
    assert_ne!(result["resultType"], "task", "{era}: {call}");
    assert!(
        !result["isError"].as_bool().unwrap_or(false),
        "{era}: {call}"
    );
}

pub fn inspector_cli_lists_and_calls_over_stdio_in_every_era() {
    let Some(bin) = clients_bin() else { return };
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let home = temp_dir("inspector-stdio");
    for era in ["legacy", "modern", "auto"] {
        let mut out = Vec::new();
        for method in ["tools/list", "tools/call"] {
            let mut command = client(&bin, "inspector", &home);
            command.args(inspector_args(era, method));
            for (k, v) in [
                ("OPENAI_API_KEY", PLANTED_KEY),
                ("OPENAI_BASE_URL", fake.url.as_str()),
                ("HOME", home.to_str().unwrap()),
            ] {
                command.arg("-e").arg(format!("{k}={v}"));
            }
            command.arg(binary()).arg("--stdio");
            out.push(run(command));
        }
        check_inspector_output(&out[0], &out[1], era);
    }
    let _ = std::fs::remove_dir_all(home);
}

pub fn inspector_cli_lists_and_calls_over_http_in_every_era() {
    let Some(bin) = clients_bin() else { return };
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mcp = Mcp::spawn(Opts::http(&fake.url).env("MCP_HTTP_TOKEN", TOKEN));
    let url = format!("http://{}/mcp", listening(&mcp));
    let home = temp_dir("inspector-http");
    for era in ["legacy", "modern", "auto"] {
        let mut out = Vec::new();
        for method in ["tools/list", "tools/call"] {
            let mut command = client(&bin, "inspector", &home);
            command
                .args(inspector_args(era, method))
                .args(["--transport", "http", "--server-url", &url, "--header"])
                .arg(format!("Authorization: Bearer {TOKEN}"));
            out.push(run(command));
        }
        check_inspector_output(&out[0], &out[1], era);
    }
    assert!(!mcp.stderr().contains(TOKEN));
    let _ = std::fs::remove_dir_all(home);
}

pub fn claude_code_mcp_list_says_when_the_bearer_token_is_missing_or_wrong() {
    let Some(bin) = clients_bin() else { return };
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let mcp = Mcp::spawn(Opts::http(&fake.url).env("MCP_HTTP_TOKEN", TOKEN));
    let url = format!("http://{}/mcp", listening(&mcp));
    let home = temp_dir("claude-code");
    let bearer = format!("Authorization: Bearer {TOKEN}");
    for (name, header) in [
        ("with-token", Some(bearer.as_str())),
        ("no-token", None),
        ("wrong-token", Some("Authorization: Bearer not-the-token")),
    ] {
        let mut add = client(&bin, "claude", &home);
        add.args(["mcp", "add", "--transport", "http", name, &url]);
        if let Some(header) = header {
            add.args(["--header", header]);
        }
        run(add);
    }
    let listed = run({
        let mut list = client(&bin, "claude", &home);
        list.args(["mcp", "list"]);
        list
    });
    let line = |name: &str| listed_line(&listed, name);
    assert!(line("with-token").contains("Connected"), "{listed}");
    let missing = line("no-token");
    assert!(
        missing.contains("does not use OAuth") && missing.contains("Authorization: Bearer <token>"),
        "a missing token must be named as such: {missing}"
    );
    let wrong = line("wrong-token");
    assert!(
        wrong.contains("401") && wrong.contains("not valid"),
        "{wrong}"
    );
    let got = run({
        let mut get = client(&bin, "claude", &home);
        get.args(["mcp", "get", "no-token"]);
        get
    });
    assert!(got.contains("does not use OAuth"), "{got}");
    assert!(!mcp.stderr().contains(TOKEN));
    let _ = std::fs::remove_dir_all(home);
}
