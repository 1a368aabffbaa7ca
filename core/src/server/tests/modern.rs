//! 2026-07-28 requests, served statelessly from their `_meta`, and both eras on one
//! process.

use super::super::*;
use super::answer_of;
use crate::fixture;
use crate::settings::*;
use crate::testing::Harness;
use crate::{Input, Output};
use serde_json::{json, Value};

const V: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// A modern request: `params` plus the required `_meta`.
fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"][V] = "2026-07-28".into();
    params["_meta"][CAPS] = json!({});
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

fn keyed() -> Harness {
    Harness::new(Harness::keyed())
}

#[test]
fn discover_answers_before_anything_else() {
    let mut h = keyed();
    let r = h.request(modern(json!("d"), "server/discover", json!({})));
    let result = &r["result"];
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": false}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    assert!(result["instructions"]
        .as_str()
        .unwrap()
        .contains("answer_quick"));
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "openai-responses-mcp");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn tools_are_listed_and_called_without_a_session() {
    let mut h = keyed();
    let r = h.request(modern(json!(1), "tools/list", json!({})));
    let result = &r["result"];
    assert_eq!(
        (result["resultType"].clone(), result["cacheScope"].clone()),
        (json!("complete"), json!("public"))
    );
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["answer", "answer_detailed", "answer_quick"]);
    assert!(result["tools"][0].get("outputSchema").is_some());

    h.send(modern(
        json!(2),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    let attempt = h.take_http().pop().unwrap().attempt;
    h.reply(attempt, 200, &fixture("response-no-search.json"), &[]);
    let r = h.frames().pop().unwrap();
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(r["result"].get("isError").is_none());
    assert_eq!(answer_of(&r)["used_search"], false);
    assert_eq!(
        h.server.protocol_version(),
        None,
        "no legacy session was opened"
    );
}

#[test]
fn envelope_errors_name_the_field_or_the_versions() {
    let mut h = keyed();
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{V:"2026-07-28"}}}),
    );
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"].as_str().unwrap().contains(CAPS),
        "{r}"
    );
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{V:"2026-07-28",CAPS:"all"}}}));
    assert_eq!(r["error"]["code"], -32602);
    let r = h.request(json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{V:20260728,CAPS:{}}}}));
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains(V), "{r}");
    for requested in ["1900-01-01", "2025-11-25"] {
        let r = h.request(json!({"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{V:requested,CAPS:{}}}}));
        assert_eq!(r["error"]["code"], -32022, "{r}");
        assert_eq!(r["error"]["data"]["requested"], requested);
        assert_eq!(r["error"]["data"]["supported"][0], "2026-07-28");
    }
}

#[test]
fn methods_the_era_removed_are_not_found() {
    let mut h = keyed();
    for method in ["ping", "initialize", "logging/setLevel", "resources/list"] {
        let r = h.request(modern(json!(1), method, json!({})));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    // Legacy ping still works on the same process.
    assert_eq!(
        h.request(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))["result"],
        json!({})
    );
}

#[test]
fn tool_failures_are_error_results_whose_text_stands_alone() {
    let mut h = Harness::new(ServerConfig::default()); // no API key
    let r = h.request(modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    let result = &r["result"];
    assert_eq!(
        (result["isError"].clone(), result["resultType"].clone()),
        (json!(true), json!("complete"))
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("OPENAI_API_KEY") && text.contains("restart"),
        "{text}"
    );
    assert_eq!(
        result["_meta"]["com.github.openai-responses-mcp/error"]["kind"],
        "missing_api_key"
    );

    let mut h = keyed();
    let r = h.request(modern(
        json!(2),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q","max_results":"five"}}),
    ));
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("answer was called with invalid arguments: max_results"),
        "{text}"
    );
    // A call that names no tool is still a protocol error.
    let r = h.request(modern(json!(3), "tools/call", json!({"name":"nope"})));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn upstream_failures_are_error_results_with_details_in_meta() {
    let mut h = Harness::new(ServerConfig {
        max_retries: 0,
        ..Harness::keyed()
    });
    h.send(modern(
        json!(1),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    let attempt = h.take_http().pop().unwrap().attempt;
    h.reply(
        attempt,
        401,
        &fixture("error-429-insufficient-quota.json"),
        &[],
    );
    let r = h.frames().pop().unwrap();
    assert_eq!(r["result"]["isError"], true, "{r}");
    let details = &r["result"]["_meta"]["com.github.openai-responses-mcp/error"];
    assert_eq!(
        (details["kind"].clone(), details["status"].clone()),
        (json!("upstream"), json!(401))
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("The OpenAI request failed") && text.contains("OPENAI_API_KEY"),
        "{text}"
    );
    let code = r.get("error").map(|e| e["code"].clone());
    assert_eq!(code, None, "no -32050 in the modern era");
}

#[test]
fn subscriptions_are_acknowledged_held_and_closed() {
    let mut h = keyed();
    h.send(modern(
        json!("s1"),
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    ));
    let ack = h.frames();
    assert_eq!(ack.len(), 1, "{ack:?}");
    assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack[0]["params"]["notifications"],
        json!({}),
        "nothing is honoured"
    );
    assert_eq!(
        ack[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "s1"
    );
    // Cancelled: ends silently.
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}));
    assert!(h.frames().is_empty());
    // Another one ends with its closing result at EOF, and the process exits.
    h.send(modern(json!(7), "subscriptions/listen", json!({})));
    assert_eq!(h.frames().len(), 1);
    h.feed(Input::StdinClosed);
    let end = h.frames();
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["id"], 7);
    assert_eq!(end[0]["result"]["resultType"], "complete");
    assert_eq!(
        end[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert!(h.take_other().contains(&Output::Exit));
}

#[test]
fn subscriptions_are_bounded_and_ids_unique() {
    let mut h = keyed();
    for i in 0..64 {
        h.send(modern(json!(i), "subscriptions/listen", json!({})));
    }
    assert_eq!(h.frames().len(), 64);
    let r = h.request(modern(json!(64), "subscriptions/listen", json!({})));
    assert_eq!(r["error"]["code"], -32600);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancel one"),
        "{r}"
    );
    let r = h.request(modern(json!(3), "subscriptions/listen", json!({})));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in use"),
        "{r}"
    );
}

/// What Claude Code does: probe, initialize anyway, then both kinds of request.
#[test]
fn discover_then_initialize_then_both_eras_interleaved() {
    let mut h = keyed();
    let r = h.request(modern(json!(0), "server/discover", json!({})));
    assert!(r.get("result").is_some());
    h.init("2025-06-18");
    let legacy = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    assert!(legacy["result"].get("resultType").is_none(), "legacy shape");
    assert!(legacy["result"].get("ttlMs").is_none());
    let modern_list = h.request(modern(json!(2), "tools/list", json!({})));
    assert_eq!(modern_list["result"]["resultType"], "complete");
    // A legacy call and a modern call in flight together, each answered in its own shape.
    h.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}));
    h.send(modern(
        json!(4),
        "tools/call",
        json!({"name":"answer","arguments":{"query":"q"}}),
    ));
    let http = h.take_http();
    assert_eq!(http.len(), 2);
    for r in &http {
        h.reply(r.attempt, 200, &fixture("response-no-search.json"), &[]);
    }
    let replies = h.frames();
    let by_id = |id: u64| replies.iter().find(|m| m["id"] == id).unwrap().clone();
    assert!(by_id(3)["result"].get("resultType").is_none());
    assert_eq!(by_id(4)["result"]["resultType"], "complete");
    assert_eq!(
        h.server.protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
}

#[test]
fn sessions_at_2025_11_25_get_error_results_older_ones_error_codes() {
    let args = json!({"name":"answer","arguments":{"query":""}});
    let mut h = Harness::ready("2025-11-25");
    let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":args}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"].get("resultType").is_none(),
        "legacy results have no resultType"
    );
    let mut h = Harness::ready("2025-06-18");
    let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":args}));
    assert_eq!(r["error"]["code"], -32001);
}

#[test]
fn unreadable_ids_are_left_out_once_a_modern_client_spoke() {
    let mut h = keyed();
    let r = h.request(json!({"jsonrpc":"2.0","id":{},"method":"ping"}));
    assert_eq!(
        r["id"],
        Value::Null,
        "before any modern request: JSON-RPC's null"
    );
    h.request(modern(json!(1), "server/discover", json!({})));
    let r = h.request(json!({"jsonrpc":"2.0","id":{},"method":"ping"}));
    assert!(r.get("id").is_none(), "{r}");
}
