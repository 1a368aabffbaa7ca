#![allow(clippy::expect_used)]

//! The core stays sans-IO: its dependency tree holds no runtime, HTTP or logging backend.
//! (`core/clippy.toml` forbids clocks, env, files, sockets, stdio and threads in its code.)

use std::process::Command;

fn tree(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "responses-mcp-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn core_depends_on_nothing_that_does_io() {
    let all = tree(&[]);
    for banned in [
        "smol",
        "async-io",
        "ureq",
        "env_logger",
        "rustls",
        "tokio",
        "hyper",
        "reqwest",
        "lexopt",
        "serde_yaml",
    ] {
        assert!(
            !all.lines().any(|l| l.starts_with(&format!("{banned} "))),
            "core pulls in {banned}:\n{all}"
        );
    }
    let direct = tree(&["--depth", "1"]);
    for line in direct.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(
            ["serde", "serde_json", "thiserror", "log"].contains(&name),
            "unexpected direct dependency {line}"
        );
    }
}
