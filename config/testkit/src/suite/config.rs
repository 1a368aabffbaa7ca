//! Configuration through the real binary (configuration issue).

use crate::fake_openai::{self, FakeOpenAi};
use crate::*;

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the binary to completion with `args` and `env` (and a clean HOME).
pub(crate) fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let home = temp_dir("run");
    let mut cmd = Command::new(crate::binary());
    cmd.args(args)
        .env_clear()
        .env("HOME", &home)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(home);
    out
}

pub fn cli_beats_env_beats_yaml_at_the_upstream() {
    let fake = FakeOpenAi::fixed(200, fixture("response-no-search.json"));
    let dir = temp_dir("layers");
    let yaml = write(
        &dir,
        "config.yaml",
        "openai:\n  base_url: http://127.0.0.1:1/v1\nmodel_profiles:\n  answer:\n    model: yaml-model\n    verbosity: low\n  answer_detailed:\n    model: yaml-detailed\nsearch:\n  defaults:\n    domains: [yaml.example]\n",
    );
    let opts = Opts::default()
        .arg("--config")
        .arg(yaml.to_str().unwrap())
        .arg("--model=gpt-5-cli")
        .env("MODEL_ANSWER", "gpt-5-env")
        .env("MODEL_DETAILED", "gpt-5-env-detailed");
    // OPENAI_BASE_URL (env) beats the YAML's unreachable base_url.
    let mut mcp = Mcp::spawn(Opts {
        base_url: Some(fake.url.clone()),
        ..opts
    });
    mcp.initialize("2025-06-18");
    assert!(mcp
        .call(1, "answer", json!({"query":"q"}))
        .get("result")
        .is_some());
    assert!(mcp
        .call(2, "answer_detailed", json!({"query":"q"}))
        .get("result")
        .is_some());
    let r = fake.requests();
    assert_eq!(r[0].body["model"], "gpt-5-cli");
    assert_eq!(
        r[0].body["text"],
        json!({"verbosity":"low"}),
        "the YAML's verbosity stays"
    );
    assert_eq!(
        r[0].body["tools"][0]["filters"]["allowed_domains"],
        json!(["yaml.example"])
    );
    assert_eq!(r[1].body["model"], "gpt-5-env-detailed");
    let _ = std::fs::remove_dir_all(dir);
}

pub fn show_config_alone_prints_sources_and_exits() {
    let dir = temp_dir("show");
    let yaml = write(&dir, "c.yaml", "request:\n  timeout_ms: 1234\n");
    let out = run(
        &[
            "--show-config",
            "--config",
            yaml.to_str().unwrap(),
            "--model",
            "o3",
        ],
        &[
            ("OPENAI_API_KEY", PLANTED_KEY),
            ("MAX_CITATIONS", "5"),
            ("MCP_HTTP_TOKEN", "http-token-PLANTED-0123456789"),
        ],
    );
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "stdout stays clean");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(PLANTED_KEY));
    assert!(
        !stderr.contains("http-token-PLANTED"),
        "the HTTP token is never shown"
    );
    let shown: Value = serde_json::from_str(&stderr).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(shown["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(shown["api_key"]["set"], true);
    assert_eq!(
        shown["http_token"],
        json!({"env": "MCP_HTTP_TOKEN", "set": true})
    );
    assert_eq!(
        shown["tasks_secret"],
        json!({"env": "MCP_TASKS_SECRET", "set": false})
    );
    assert_eq!(shown["effective"]["request"]["timeout_ms"], 1234);
    assert_eq!(
        shown["sources"]["request.timeout_ms"],
        format!("yaml:{}", yaml.display())
    );
    assert_eq!(
        shown["sources"]["policy.max_citations"],
        "env:MAX_CITATIONS"
    );
    assert_eq!(
        shown["sources"]["model_profiles.answer.model"],
        "cli:--model"
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn show_config_with_stdio_keeps_serving_on_a_clean_stdout() {
    let mut mcp = Mcp::spawn(Opts::default().arg("--show-config"));
    assert_eq!(
        mcp.initialize("2025-06-18")["result"]["protocolVersion"],
        "2025-06-18"
    );
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    assert!(mcp.stderr_to_end().contains("\"sources\""));
}

pub fn startup_errors_name_the_problem_and_exit_non_zero() {
    let dir = temp_dir("errors");
    let bad = write(&dir, "bad.yaml", "request:\n  timeout_ms: [1,\n");
    let out = run(&["--stdio", "--config", bad.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:", bad.display())) && err.contains("invalid YAML"),
        "{err}"
    );

    let range = write(&dir, "range.yaml", "policy:\n  max_citations: 50\n");
    let out = run(&["--stdio", "--config", range.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("policy.max_citations") && err.contains("50") && err.contains("1 to 10"),
        "{err}"
    );

    let out = run(&["--stdio"], &[("OPENAI_API_TIMEOUT", "later")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OPENAI_API_TIMEOUT"));

    let not_pem = write(&dir, "ca.txt", "not a certificate\n");
    let out = run(
        &["--stdio"],
        &[("SSL_CERT_FILE", not_pem.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("openai.ca_file") && err.contains("no PEM certificate"),
        "{err}"
    );
    let out = run(&["--stdio"], &[("SSL_CERT_FILE", "/nonexistent/ca.pem")]);
    assert_eq!(out.status.code(), Some(1));

    let out = run(&["--stdio", "--config"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

pub fn unknown_keys_warn_and_missing_files_are_skipped() {
    let dir = temp_dir("warn");
    let yaml = write(&dir, "c.yaml", "request:\n  timeout: 5\n");
    let mut mcp = Mcp::spawn(Opts::default().arg("--config").arg(yaml.to_str().unwrap()));
    mcp.initialize("2025-06-18");
    mcp.close_stdin();
    mcp.wait_exit(PATIENCE);
    let log = mcp.stderr_to_end();
    assert!(log.contains("did you mean request.timeout_ms?"), "{log}");

    let missing = dir.join("nope.yaml");
    let mut mcp = Mcp::spawn(
        Opts::default()
            .arg("--config")
            .arg(missing.to_str().unwrap())
            .arg("--debug"),
    );
    mcp.initialize("2025-06-18");
    mcp.close_stdin();
    mcp.wait_exit(PATIENCE);
    let log = mcp.stderr_to_end();
    assert!(log.contains("not found; skipped"), "{log}");
    let _ = std::fs::remove_dir_all(dir);
}

pub fn the_xdg_location_is_read() {
    let xdg = temp_dir("xdg");
    std::fs::create_dir_all(xdg.join("openai-responses-mcp")).unwrap();
    write(
        &xdg.join("openai-responses-mcp"),
        "config.yaml",
        "policy:\n  max_citations: 7\n",
    );
    let out = run(
        &["--show-config"],
        &[("XDG_CONFIG_HOME", xdg.to_str().unwrap())],
    );
    let shown: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(shown["effective"]["policy"]["max_citations"], 7);
    let _ = std::fs::remove_dir_all(xdg);
}

pub fn debug_log_goes_to_stderr_and_file_without_secrets() {
    let fake = FakeOpenAi::fixed(500, fixture("error-500-server-error.json"));
    let dir = temp_dir("debug");
    let log = dir.join("debug.log");
    let opts = Opts::upstream(&fake.url)
        .arg("--debug")
        .arg(log.to_str().unwrap())
        .env("OPENAI_MAX_RETRIES", "0");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"secret question text"}));
    assert_eq!(
        reply["error"]["data"]["name"], "http_error",
        "debug adds diagnostics to error.data"
    );
    assert!(reply["error"]["data"]["message"].is_string());
    mcp.close_stdin();
    mcp.wait_exit(PATIENCE);
    let stderr = mcp.stderr_to_end();
    let file = std::fs::read_to_string(&log).unwrap();
    for text in [&stderr, &file] {
        assert!(
            text.contains("tools/call name=answer argsKeys=[query] queryLen=20"),
            "{text}"
        );
        assert!(
            text.contains("request summary tools=web_search(on)"),
            "{text}"
        );
        assert!(text.contains("status=500"), "{text}");
        assert!(!text.contains(PLANTED_KEY));
        assert!(
            !text.contains("secret question text"),
            "queries are not logged"
        );
        assert!(
            !text.contains("When to search"),
            "instructions are not logged"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The planted key is looked for in everything every path prints: help, version,
/// show-config, bad flags, bad files, serving, debug logs, and an upstream that echoes
/// the Authorization header back in its error body.
pub fn the_api_key_never_appears_on_any_path() {
    let key = [("OPENAI_API_KEY", PLANTED_KEY)];
    let dir = temp_dir("leak");
    let bad = write(&dir, "bad.yaml", "request: [\n");
    for args in [
        &["--help"][..],
        &["--version"],
        &["--show-config"],
        &["--frobnicate"],
        &["--stdio", "--config", bad.to_str().unwrap()],
    ] {
        let out = run(args, &key);
        for stream in [&out.stdout, &out.stderr] {
            assert!(
                !String::from_utf8_lossy(stream).contains(PLANTED_KEY),
                "{args:?}"
            );
        }
    }
    let echo = FakeOpenAi::start(|r, _| {
        let auth = r.header("authorization").unwrap_or("").to_owned();
        let body = json!({"error":{"message":format!("Incorrect API key provided: {auth}"),"type":"invalid_request_error","code":"invalid_api_key"}});
        fake_openai::Action::json(401, &serde_json::to_vec(&body).unwrap())
    });
    let log = dir.join("debug.log");
    let mut mcp = Mcp::spawn(
        Opts::upstream(&echo.url)
            .arg("--show-config")
            .arg("--debug")
            .arg(log.to_str().unwrap()),
    );
    mcp.initialize("2025-06-18");
    let reply = mcp.call(1, "answer", json!({"query":"q"}));
    assert_eq!(reply["error"]["code"], -32050);
    let text = reply.to_string();
    assert!(
        text.contains("Incorrect API key provided: Bearer ***"),
        "{text}"
    );
    assert!(
        text.contains("OPENAI_API_KEY"),
        "the hint names the variable: {text}"
    );
    mcp.close_stdin();
    mcp.wait_exit(PATIENCE);
    assert!(!std::fs::read_to_string(&log).unwrap().contains(PLANTED_KEY));
    // stdout and stderr are checked by the harness on every message and on drop.
    let _ = std::fs::remove_dir_all(dir);
}
