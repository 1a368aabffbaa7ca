//! Core tests through the shared harness: feed JSON, move a fake clock, complete attempts,
//! and look at what the server asks for. This file: the lifecycle and dispatch;
//! `calls.rs`: tool calls over time (retries, timeouts, cancels, progress, shutdown).

use super::*;
use crate::fixture;
use crate::io::*;
use crate::settings::*;
use crate::testing::Harness;
use crate::{Asked, ExchangeOut, Input, Output};
use serde_json::{json, Value};

pub(super) fn body_of(r: &HttpRequest) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

/// A keyed configuration with the named clients `a` and `b`, and their ids.
pub(super) fn two_named_clients() -> (
    ServerConfig,
    crate::clients::ClientId,
    crate::clients::ClientId,
) {
    use crate::clients::{Clients, NamedClient};
    let mut config = Harness::keyed();
    let named = |name: &str| NamedClient {
        name: name.into(),
        limit: crate::clients::Limit::default(),
        identity: None,
        gateway: false,
    };
    config.clients = Clients::new(vec![named("a"), named("b")]).unwrap_or_default();
    let a = config.clients.id(0).unwrap_or_default();
    let b = config.clients.id(1).unwrap_or_default();
    (config, a, b)
}

pub(super) fn answer_of(reply: &Value) -> Value {
    serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn initialize_negotiates_every_supported_version() {
    for v in ProtocolVersion::LEGACY {
        let mut h = Harness::new(ServerConfig::default());
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":v.as_str(),"capabilities":{}}}));
        assert_eq!(r["result"]["protocolVersion"], v.as_str());
        assert_eq!(r["result"]["serverInfo"]["name"], "openai-responses-mcp");
        assert_eq!(
            r["result"]["serverInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(
            r["result"]["serverInfo"].get("title").is_some(),
            v >= ProtocolVersion::V2025_06_18
        );
        // Tasks are offered where the version defines them (2025-11-25).
        let mut caps = json!({"tools":{"listChanged":false}});
        if v.has_session_tasks() {
            caps["tasks"] = json!({"list":{},"cancel":{},"requests":{"tools":{"call":{}}}});
        }
        assert_eq!(r["result"]["capabilities"], caps);
        assert!(r["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("answer_detailed"));
    }
    for asked in [json!("2099-01-01"), json!("")] {
        let mut h = Harness::new(ServerConfig::default());
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":asked}}));
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    }
    let mut h = Harness::new(ServerConfig::default());
    let r = h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":20250618}}),
    );
    assert_eq!(r["error"]["code"], -32602);
    // Still not initialized: a proper initialize works afterwards.
    h.init("2025-06-18");
}

#[test]
fn requests_before_initialize_get_prompt_errors() {
    let mut h = Harness::new(ServerConfig::default());
    assert_eq!(
        h.request(json!({"jsonrpc":"2.0","id":1,"method":"ping"}))["result"],
        json!({})
    );
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}));
    assert_eq!(r["error"]["code"], -32601);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("server/discover"));
    let r = h.request(json!({"jsonrpc":"2.0","id":"x","method":"tools/list"}));
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!("x"), json!(-32600))
    );
    h.init("2025-03-26");
    let r = h.request(json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}));
    assert_eq!(r["error"]["code"], -32600);
}

#[test]
fn tools_list_fields_follow_the_version() {
    for v in ProtocolVersion::LEGACY {
        let mut h = Harness::ready(v.as_str());
        let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        let tools = r["result"]["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["answer", "answer_detailed", "answer_quick"]);
        for t in tools {
            assert_eq!(t.get("annotations").is_some(), v.has_annotations(), "{v:?}");
            assert_eq!(
                t.get("title").is_some(),
                v.has_titles_and_structured_output()
            );
            assert_eq!(
                t.get("outputSchema").is_some(),
                v.has_titles_and_structured_output()
            );
            assert_eq!(t["inputSchema"]["required"], json!(["query"]));
        }
        assert!(tools[0]["inputSchema"]["properties"]
            .get("domains")
            .is_some());
        assert!(tools[2]["inputSchema"]["properties"]
            .get("domains")
            .is_none());
    }
}

#[test]
fn notifications_and_responses_get_no_reply() {
    let mut h = Harness::ready("2025-06-18");
    h.send(json!({"jsonrpc":"2.0","method":"notifications/whatever","params":{}}));
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}));
    h.send(json!({"jsonrpc":"2.0","id":5,"result":{}}));
    assert!(h.frames().is_empty());
}

#[test]
fn parse_and_framing_errors_reply_with_null_id_and_serving_continues() {
    let mut h = Harness::ready("2025-06-18");
    h.send_raw(b"{not json\n");
    let f = h.frames();
    assert_eq!(
        (f[0]["id"].clone(), f[0]["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    h.send_raw(b"Content-Length: nope\r\n\r\n{}\n");
    let f = h.frames();
    assert_eq!(f[0]["error"]["code"], -32700);
    assert!(f[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not a number"));
    assert_eq!(
        h.request(json!({"jsonrpc":"2.0","id":1,"method":"ping"}))["result"],
        json!({})
    );
}

#[test]
fn replies_mirror_content_length_framing_unless_forced() {
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
    let mut framed = format!("Content-Length: {}\r\n\r\n", init.len()).into_bytes();
    framed.extend_from_slice(init);
    let mut h = Harness::new(ServerConfig::default());
    h.send_raw(&framed);
    let Output::Write(bytes) = &h.take_other()[0] else {
        panic!()
    };
    assert!(bytes.starts_with(b"Content-Length: "));
    let mut h = Harness::new(ServerConfig {
        force_line_output: true,
        ..ServerConfig::default()
    });
    h.send_raw(&framed);
    let Output::Write(bytes) = &h.take_other()[0] else {
        panic!()
    };
    assert!(bytes.starts_with(b"{") && bytes.ends_with(b"\n"));
}

#[test]
fn batches_only_in_2025_03_26() {
    let mut h = Harness::ready("2025-03-26");
    let r = h.request(json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"nope"}]));
    let arr = r.as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert_eq!(arr[0]["result"], json!({}));
    assert_eq!(arr[1]["error"]["code"], -32601);
    assert_eq!(h.request(json!([]))["error"]["code"], -32600);
    // A batch of notifications only gets nothing back.
    h.send(json!([{"jsonrpc":"2.0","method":"notifications/x"}]));
    assert!(h.frames().is_empty());
    let mut h = Harness::ready("2025-06-18");
    let r = h.request(json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]));
    assert_eq!(r["error"]["code"], -32600);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2025-06-18"));
}

#[test]
fn batch_with_a_tool_call_is_answered_when_the_call_ends() {
    let mut h = Harness::ready("2025-03-26");
    h.send(json!([{"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}]));
    assert!(h.frames().is_empty());
    let http = h.take_http();
    h.reply(
        http[0].attempt,
        200,
        &fixture("response-no-search.json"),
        &[],
    );
    let f = h.frames();
    let arr = f[0].as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert_eq!(arr[1]["id"], 2);
    assert!(arr[1]["result"]["content"][0]["text"].is_string());
}

#[test]
fn tool_call_argument_and_profile_errors() {
    let mut h = Harness::ready("2025-06-18");
    let r =
        h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}));
    assert_eq!(
        (r["error"]["code"].clone(), r["error"]["message"].clone()),
        (json!(-32602), json!("Unknown tool: nope"))
    );
    let r = h.request(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}));
    assert_eq!(r["error"]["code"], -32602);
    let cases = [
        (json!({}), "query is required"),
        (json!({"query": ""}), "query must not be empty"),
        (json!({"query": 5}), "query must be a string"),
        (json!({"query": "q", "recency_days": 0}), "recency_days"),
        (
            json!({"query": "q", "recency_days": "seven"}),
            "recency_days must be a whole number from 1 to 3650, got \"seven\"",
        ),
        (
            json!({"query": "q", "recency_days": true}),
            "recency_days must be an integer",
        ),
        (json!({"query": "q", "max_results": 1.5}), "max_results"),
        (
            json!({"query": "q", "domains": 5}),
            "domains must be an array",
        ),
        (
            json!({"query": "q", "domains": [5]}),
            "domains[0] must be a string",
        ),
        (
            json!({"query": "q", "domains": ["https://a.com/x"]}),
            "domains[0]",
        ),
        (
            json!({"query": "q", "style": "poem"}),
            "style must be one of",
        ),
        (json!({"query": "q", "verbosity": "loud"}), "verbosity"),
        (
            json!({"query": "q", "reasoning_effort": 3}),
            "reasoning_effort",
        ),
        (
            json!({"query": "q", "bogus": 1}),
            "unknown argument \"bogus\"",
        ),
    ];
    for (args, needle) in cases {
        let r = h.request(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"answer","arguments":args}}));
        assert_eq!(r["error"]["code"], -32001, "{args}");
        assert_eq!(r["error"]["message"], "answer: invalid arguments");
        let reason = r["error"]["data"]["reason"].as_str().unwrap();
        assert!(reason.contains(needle), "{args}: {reason}");
    }
    let r = h.request(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"answer_quick","arguments":{"query":"q","domains":[]}}}));
    assert_eq!(r["error"]["code"], -32001);
    let r = h.request(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"answer","arguments":[1]}}));
    assert_eq!(r["error"]["code"], -32001);

    let no_profile = ServerConfig {
        profiles: Profiles::default(),
        ..Harness::keyed()
    };
    let mut h = Harness::new(no_profile);
    h.init("2025-06-18");
    let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer_quick","arguments":{"query":"q"}}}));
    assert_eq!(
        (r["error"]["code"].clone(), r["error"]["message"].clone()),
        (json!(-32052), json!("model_profiles.answer is required"))
    );
}

#[test]
fn missing_api_key_fails_at_once_naming_the_variable() {
    let mut h = Harness::new(ServerConfig {
        api_key_env: "MY_KEY".into(),
        ..ServerConfig::default()
    });
    h.init("2025-06-18");
    let r = h.request(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}));
    assert_eq!(r["error"]["code"], -32050);
    assert!(r["error"]["message"].as_str().unwrap().contains("MY_KEY"));
    assert!(h.take_http().is_empty());
}

#[test]
fn request_body_carries_model_policy_hints_and_filters() {
    let mut h = Harness::ready("2025-06-18");
    let http = h
        .call(1, "answer", json!({"query":"東京の天気","domains":["JMA.go.jp."],"style":"bullets","recency_days":3,"reasoning_effort":"minimal"}))
        .unwrap();
    assert_eq!(http.url, "https://api.openai.com/v1/responses");
    let body = body_of(&http);
    assert_eq!(body["model"], "gpt-6.1-terra");
    assert_eq!(body["instructions"], crate::policy::SYSTEM_POLICY);
    // Without a configured location, one that states none: OpenAI would otherwise
    // assume the United States.
    assert_eq!(
        body["tools"],
        json!([{"type":"web_search","filters":{"allowed_domains":["jma.go.jp"]},
                "user_location":{"type":"approximate"}}])
    );
    assert_eq!(body["include"], json!(["web_search_call.action.sources"]));
    assert_eq!(
        body["reasoning"],
        json!({"effort":"low"}),
        "minimal becomes low"
    );
    assert_eq!(body["text"], json!({"verbosity":"medium"}));
    let input = body["input"].as_str().unwrap();
    for needle in [
        "東京の天気",
        "2025-08-09",
        "last 3 days",
        "at most 5",
        "Style: bullets",
        "jma.go.jp",
    ] {
        assert!(input.contains(needle), "{needle} in {input}");
    }
}

#[test]
fn non_gpt5_models_get_no_verbosity_and_o_series_keep_effort() {
    let profiles = |model: &str| {
        let mut p = Profiles::default();
        let profile = Profile {
            model: model.into(),
            reasoning_effort: Some(crate::vocab::Effort::High),
            verbosity: Some(crate::vocab::Verbosity::Low),
            ..Profile::default()
        };
        p.set(crate::tools::Tool::Answer, profile);
        p
    };
    for (model, effort, verbosity) in [
        ("gpt-4.1", false, false),
        ("o3", true, false),
        ("gpt-5", true, true),
    ] {
        let mut h = Harness::new(ServerConfig {
            profiles: profiles(model),
            ..Harness::keyed()
        });
        h.init("2025-06-18");
        let body = body_of(&h.call(1, "answer_detailed", json!({"query":"q"})).unwrap());
        assert_eq!(body["model"], model);
        assert_eq!(body.get("reasoning").is_some(), effort, "{model}");
        assert_eq!(body.get("text").is_some(), verbosity, "{model}");
    }
}

#[test]
fn answer_flows_into_content_and_structured_content() {
    for (version, structured) in [("2025-06-18", true), ("2025-03-26", false)] {
        let mut h = Harness::ready(version);
        let http = h
            .call(7, "answer", json!({"query":"today's Tokyo weather"}))
            .unwrap();
        h.reply(http.attempt, 200, &fixture("response-web-search.json"), &[]);
        let f = h.frames();
        assert_eq!(f.len(), 1);
        let answer = answer_of(&f[0]);
        assert_eq!(answer["used_search"], true);
        assert_eq!(
            answer["citations"].as_array().unwrap().len(),
            3,
            "capped by max_citations"
        );
        // The harness's day in Asia/Tokyo; the API gives no publication date.
        assert_eq!(answer["citations"][0]["accessed_at"], "2025-08-09");
        assert!(answer["citations"][0].get("published_at").is_none());
        assert!(answer["answer"].as_str().unwrap().contains("Sources:"));
        assert_eq!(answer["model"], "gpt-5-mini-2025-08-07");
        assert_eq!(
            f[0]["result"].get("structuredContent") == Some(&answer),
            structured
        );
        assert_eq!(
            f[0]["result"].get("structuredContent").is_some(),
            structured
        );
    }
}

mod calls;
mod caps;
mod caps_attack;
mod desk;
mod exchanges;
mod lease;
mod ledger;
mod modern;
mod register;
mod roster;
mod roster_attack;
mod shared_tasks;
mod store;
mod stream;
mod tasks;
mod traces;
