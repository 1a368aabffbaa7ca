//! The MCP lifecycle over real pipes, in both framings (foundation issue).

use crate::*;

const FRAMINGS: [Framing; 2] = [Framing::Line, Framing::ContentLength];

pub fn handshake_list_and_ping_then_eof_exits_zero() {
    for framing in FRAMINGS {
        let mut mcp = Mcp::spawn_framed(Opts::default(), framing);
        let init = mcp.initialize("2025-06-18");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "openai-responses-mcp");
        let tools = mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
        let names: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["answer", "answer_detailed", "answer_quick"]);
        let pong = mcp.request(json!({"jsonrpc":"2.0","id":3,"method":"ping"}));
        assert_eq!(pong["result"], json!({}));
        mcp.close_stdin();
        assert!(mcp.wait_exit(PATIENCE).success(), "{framing:?}");
    }
}

pub fn negotiates_every_supported_version_and_answers_unknown_with_the_latest() {
    for framing in FRAMINGS {
        for (asked, expected) in [
            ("2024-11-05", "2024-11-05"),
            ("2025-03-26", "2025-03-26"),
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
            ("2031-01-01", "2025-11-25"),
        ] {
            let mut mcp = Mcp::spawn_framed(Opts::default(), framing);
            let init = mcp.initialize(asked);
            assert_eq!(init["result"]["protocolVersion"], expected);
            // tools/list is checked against that version's schema, and fields the version
            // lacks must be absent (the schemas allow extra fields, so check by hand).
            let tools = mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
            let first = &tools["result"]["tools"][0];
            let modern = expected >= "2025-06-18";
            assert_eq!(first.get("outputSchema").is_some(), modern, "{expected}");
            assert_eq!(first.get("title").is_some(), modern, "{expected}");
            assert_eq!(
                first.get("annotations").is_some(),
                expected >= "2025-03-26",
                "{expected}"
            );
            assert_eq!(init["result"]["serverInfo"].get("title").is_some(), modern);
        }
    }
}

pub fn broken_frames_are_answered_and_serving_continues() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.initialize("2025-06-18");
    mcp.send_raw(b"{this is not json\n");
    let e = mcp.recv();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"ping"}))["result"],
        json!({})
    );

    let mut mcp = Mcp::spawn_framed(Opts::default(), Framing::ContentLength);
    mcp.initialize("2025-06-18");
    mcp.send_raw(b"Content-Length: twelve\r\n\r\n{\"jsonrpc\":\"2.0\"}");
    let e = mcp.recv();
    assert_eq!(e["error"]["code"], -32700);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("twelve"),
        "{e}"
    );
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))["result"],
        json!({})
    );
}

pub fn oversized_message_is_refused_and_the_next_served() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.initialize("2025-11-25");
    let mut big = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
    big.extend_from_slice(b"\"}}\n");
    mcp.send_raw(&big);
    let e = mcp.recv();
    assert_eq!(e["error"]["code"], -32600);
    assert!(e["error"]["message"].as_str().unwrap().contains("limit"));
    assert!(
        e.get("id").is_none(),
        "2025-11-25 leaves the unknown id out: {e}"
    );
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))["result"],
        json!({})
    );
}

pub fn nothing_is_written_before_the_first_message() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.expect_silence(Duration::from_millis(300));
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    mcp.expect_silence(Duration::from_millis(50));
}

pub fn requests_before_initialize_get_prompt_errors() {
    let mut mcp = Mcp::spawn(Opts::default());
    let r = mcp.request(json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}));
    assert_eq!(r["error"]["code"], -32601);
    let r = mcp.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(
        mcp.request(json!({"jsonrpc":"2.0","id":3,"method":"ping"}))["result"],
        json!({})
    );
    mcp.initialize("2025-06-18");
    let r = mcp.request(json!({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}));
    assert_eq!(r["error"]["code"], -32600);
}

pub fn batches_are_answered_as_arrays_in_2025_03_26_only() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.initialize("2025-03-26");
    mcp.send(&json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]));
    let r = mcp.recv();
    assert_eq!(r.as_array().map(Vec::len), Some(2), "{r}");
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.initialize("2025-06-18");
    mcp.send(&json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]));
    let r = mcp.recv();
    assert_eq!(r["error"]["code"], -32600);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not supported"));
}

pub fn line_mode_env_forces_newline_replies() {
    let mut mcp = Mcp::spawn_framed(
        Opts::default().env("MCP_LINE_MODE", "1"),
        Framing::ContentLength,
    );
    mcp.reply_framing = Framing::Line;
    assert_eq!(
        mcp.initialize("2025-06-18")["result"]["protocolVersion"],
        "2025-06-18"
    );
}

pub fn bom_crlf_and_blank_lines_are_tolerated() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.send_raw(b"\xEF\xBB\xBF\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n");
    assert_eq!(mcp.recv()["result"], json!({}));
}

pub fn help_version_and_bad_flags() {
    let run = |args: &[&str]| {
        Command::new(crate::binary())
            .args(args)
            .env_clear()
            .output()
            .unwrap()
    };
    for args in [&["--help"][..], &[]] {
        let out = run(args);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("--stdio"));
    }
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("openai-responses-mcp {}", env!("CARGO_PKG_VERSION"))
    );
    let out = run(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--frobnicate") && err.contains("Usage"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

pub fn closed_stdout_exits_quietly() {
    let mut child = Command::new(crate::binary())
        .arg("--stdio")
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..50 {
        if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#).is_err() {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(err.lines().count() < 5, "no error spam: {err}");
}

/// Peak resident memory of a process, from /proc (Linux).
pub(super) fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn garbage_and_an_endless_line_keep_memory_bounded() {
    let mut mcp = Mcp::spawn(Opts::default());
    mcp.initialize("2025-06-18");
    let mut noise: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunk = vec![0u8; 1 << 20];
    let mut replies = 0usize;
    for _ in 0..48 {
        for b in chunk.iter_mut() {
            noise ^= noise << 13;
            noise ^= noise >> 7;
            noise ^= noise << 17;
            *b = noise as u8;
        }
        mcp.send_raw(&chunk);
        while mcp.recv_within(Duration::ZERO).is_some() {
            replies += 1;
        }
    }
    mcp.send_raw(b"\n{");
    let line = vec![b'a'; 1 << 20];
    for _ in 0..48 {
        mcp.send_raw(&line);
        while mcp.recv_within(Duration::ZERO).is_some() {
            replies += 1;
        }
    }
    mcp.send_raw(b"\n");
    let pong = mcp.request(json!({"jsonrpc":"2.0","id":"after","method":"ping"}));
    assert_eq!(pong["result"], json!({}));
    if let Some(peak) = peak_rss_kib(mcp.pid()) {
        // 96 MiB went in; a buffer that grew with it would show here.
        assert!(peak < 40 * 1024, "peak RSS {peak} KiB");
    }
    assert!(replies > 0);
}
