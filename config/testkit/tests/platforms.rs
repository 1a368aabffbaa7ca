#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The entries that list the server where platforms look for MCP servers, each checked
//! against its owner's schema or rules (vendored beside it, source and date in
//! packaging/README.md):
//! - ToolHive's registry (packaging/toolhive/registry.json): the upstream MCP registry
//!   format ToolHive reads (`upstream-registry.schema`, toolhive-core), each server a
//!   server.json (the MCP registry's schema of 2025-12-11), ToolHive's own fields under
//!   `_meta` (`publisher-provided.schema`), egress allowed to every preset's host;
//! - the `MCPServer` example for ToolHive's operator, against its CRD's v1beta1 schema;
//! - Docker's MCP registry entry, against the offline rules of docker/mcp-registry's
//!   `cmd/validate` (it has no schema; its other checks ask GitHub and Docker Hub);
//! - the MCPB manifest's version (packaging/verify.sh runs `mcpb validate` on the bundle).

use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(file: &str) -> String {
    let path = root().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(file: &str) -> Value {
    serde_json::from_str(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).unwrap();
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

/// The upstream registry schema names the server, skill and plugin schemas by URL; the
/// servers are checked against the vendored server schema on their own instead.
/// ToolHive's extensions schema, its one ECMA-262-only escape (`\0`, a NUL in the path
/// patterns) written as the Rust regex engine spells it (`\x00`): the same pattern.
fn extensions_schema() -> Value {
    let text = read("packaging/toolhive/publisher-provided.schema.2026-05-21.json");
    assert!(text.contains(r#"[^/\\0]"#));
    serde_json::from_str(&text.replace(r#"[^/\\0]"#, r#"[^/\\x00]"#)).unwrap()
}

fn registry_schema() -> Value {
    let mut schema = json("packaging/toolhive/upstream-registry.schema.2026-07-07.json");
    let data = &mut schema["properties"]["data"]["properties"];
    data["servers"]["items"] = serde_json::json!({});
    let data = data.as_object_mut().unwrap();
    data.remove("skills");
    data.remove("plugins");
    schema
}

/// Every https host a preset sends requests to (config/src/providers.rs), Azure's as the
/// suffix its resources share.
fn preset_hosts() -> Vec<String> {
    let providers = read("config/src/providers.rs");
    let mut hosts: Vec<String> = providers
        .lines()
        .filter_map(|l| l.trim().strip_prefix("base_url: Some(\"https://"))
        .map(|rest| rest.split('/').next().unwrap().to_owned())
        .collect();
    assert!(providers.contains("https://{name}.openai.azure.com/openai/v1"));
    hosts.push(".openai.azure.com".to_owned());
    assert!(hosts.len() >= 5, "{hosts:?}");
    hosts
}

fn toolhive_extension(server: &Value) -> (&String, &Value) {
    let image = server["packages"][0]["identifier"].as_str().unwrap();
    let published = &server["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
    let ours = published["io.github.stacklok"].as_object().unwrap();
    assert_eq!(ours.len(), 1);
    let (key, extension) = ours.iter().next().unwrap();
    assert_eq!(
        key, image,
        "ToolHive keys a container server's fields by its image"
    );
    (key, extension)
}

#[test]
fn the_toolhive_registry_entry_is_valid_and_allows_each_presets_host() {
    let registry = json("packaging/toolhive/registry.json");
    assert_eq!(errors(&registry_schema(), &registry), Vec::<String>::new());
    let servers = registry["data"]["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1);
    let server = &servers[0];
    let server_schema = json("packaging/registry/server.schema.2025-12-11.json");
    assert_eq!(errors(&server_schema, server), Vec::<String>::new());
    let published = &server["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
    let extensions = extensions_schema();
    assert_eq!(errors(&extensions, published), Vec::<String>::new());

    // The same server, image and version as the MCP registry's server.json.
    let listed = json("packaging/registry/server.json");
    for key in ["name", "version", "description", "repository"] {
        assert_eq!(server[key], listed[key], "{key}");
    }
    let package = &server["packages"][0];
    assert_eq!(package["registryType"], "oci");
    let oci = listed["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["registryType"] == "oci")
        .unwrap();
    assert_eq!(package["identifier"], oci["identifier"]);
    assert_eq!(package["transport"]["type"], "stdio");
    // Every key variable is marked secret, and nothing else is.
    for variable in package["environmentVariables"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap();
        assert_eq!(variable["isSecret"], name.ends_with("_API_KEY"), "{name}");
    }

    let (_, extension) = toolhive_extension(server);
    let outbound = &extension["permissions"]["network"]["outbound"];
    let allowed: Vec<&str> = outbound["allow_host"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    let mut wanted = preset_hosts();
    wanted.sort();
    let mut got: Vec<String> = allowed.iter().map(|h| (*h).to_owned()).collect();
    got.sort();
    assert_eq!(
        got, wanted,
        "allow_host must be the presets' hosts, no more"
    );
    assert_eq!(outbound["allow_port"], serde_json::json!([443]));
    assert!(outbound.get("insecure_allow_all").is_none());
}

#[test]
fn the_schemas_refuse_what_toolhive_refuses() {
    let registry = json("packaging/toolhive/registry.json");
    let published = &registry["data"]["servers"][0]["_meta"]
        ["io.modelcontextprotocol.registry/publisher-provided"];
    let extensions = extensions_schema();
    let image = registry["data"]["servers"][0]["packages"][0]["identifier"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut no_status = published.clone();
    no_status["io.github.stacklok"][&image]
        .as_object_mut()
        .unwrap()
        .remove("status");
    let mut bad_tag = published.clone();
    bad_tag["io.github.stacklok"][&image]["tags"] = serde_json::json!(["Web Search"]);
    for bad in [no_status, bad_tag] {
        assert!(!errors(&extensions, &bad).is_empty(), "{bad}");
    }
    let mut no_data = registry.clone();
    no_data.as_object_mut().unwrap().remove("data");
    assert!(!errors(&registry_schema(), &no_data).is_empty());
}

#[test]
fn the_mcpserver_example_is_valid_against_the_operators_crd() {
    let crd: Value =
        serde_yaml::from_str(&read("packaging/toolhive/mcpservers.crd.2026-06-22.yaml")).unwrap();
    let version = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "v1beta1")
        .unwrap();
    assert_eq!(version["served"], true);
    let schema = &version["schema"]["openAPIV3Schema"];
    let text = read("packaging/toolhive/mcpserver.yaml");
    let documents: Vec<Value> = text
        .split("\n---\n")
        .map(|d| serde_yaml::from_str(d).unwrap())
        .collect();
    let server = documents.iter().find(|d| d["kind"] == "MCPServer").unwrap();
    assert_eq!(server["apiVersion"], "toolhive.stacklok.dev/v1beta1");
    assert_eq!(errors(schema, server), Vec::<String>::new());
    // The CRD's schema is strict where it matters: an unknown transport is refused.
    let mut bad = server.clone();
    bad["spec"]["transport"] = "websocket".into();
    assert!(!errors(schema, &bad).is_empty());
    // The same image and egress as the registry entry.
    let registry = json("packaging/toolhive/registry.json");
    let listed = &registry["data"]["servers"][0];
    assert_eq!(server["spec"]["image"], listed["packages"][0]["identifier"]);
    let profile = documents.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    let name = &server["spec"]["permissionProfile"];
    assert_eq!(profile["metadata"]["name"], name["name"]);
    let permissions: Value = serde_json::from_str(
        profile["data"][name["key"].as_str().unwrap()]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let (_, extension) = toolhive_extension(listed);
    assert_eq!(permissions["network"], extension["permissions"]["network"]);
    let secret = &server["spec"]["secrets"][0];
    assert_eq!(secret["targetEnvName"], "OPENAI_API_KEY");
}

#[test]
fn the_docker_entry_passes_the_registrys_offline_rules() {
    let dir = "packaging/docker-mcp/openai-responses-mcp";
    let entry: Value = serde_yaml::from_str(&read(&format!("{dir}/server.yaml"))).unwrap();
    // Only the fields of docker/mcp-registry's pkg/servers types.
    let known = [
        "name",
        "image",
        "type",
        "dynamic",
        "longLived",
        "meta",
        "about",
        "source",
        "remote",
        "run",
        "config",
        "oauth",
        "tools",
        "requirement",
    ];
    for key in entry.as_object().unwrap().keys() {
        assert!(known.contains(&key.as_str()), "unknown field {key}");
    }
    let name = entry["name"].as_str().unwrap();
    assert!(name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
    assert!(
        dir.ends_with(&format!("/{name}")),
        "the folder is named for the server"
    );
    assert_eq!(entry["type"], "server");
    let title = entry["about"]["title"].as_str().unwrap();
    assert!(
        !title.contains("MCP") && !title.contains("Server"),
        "{title}"
    );
    for word in title
        .split_whitespace()
        .filter(|w| *w != "and" && *w != "for")
    {
        assert!(
            word.chars().next().unwrap().is_uppercase(),
            "{title}: {word}"
        );
    }
    let commit = entry["source"]["commit"].as_str().unwrap();
    assert!(
        commit.len() == 40
            && commit
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    );
    for secret in entry["config"]["secrets"].as_array().unwrap() {
        let (prefix, rest) = secret["name"].as_str().unwrap().split_once('.').unwrap();
        assert!(!prefix.is_empty() && !rest.is_empty());
        assert!(secret["env"].as_str().unwrap().ends_with("_API_KEY"));
    }
    for env in entry["config"]["env"].as_array().into_iter().flatten() {
        let value = env["value"].as_str().unwrap_or_default();
        assert!(!value.starts_with("{{") || value.starts_with(&format!("{{{{{name}.")));
    }
    // The image and egress: the release's image; every preset host but Azure's, whose
    // hosts are per resource (host:port entries take no wildcard).
    let listed = json("packaging/registry/server.json");
    let oci = listed["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["registryType"] == "oci")
        .unwrap();
    assert_eq!(entry["image"], oci["identifier"]);
    assert_eq!(entry["run"]["command"], serde_json::json!(["--stdio"]));
    let mut allowed: Vec<String> = entry["run"]["allowHosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_owned())
        .collect();
    allowed.sort();
    let mut wanted: Vec<String> = preset_hosts()
        .into_iter()
        .filter(|h| !h.starts_with('.'))
        .map(|h| format!("{h}:443"))
        .collect();
    wanted.sort();
    assert_eq!(allowed, wanted);
}

#[test]
fn the_mcpb_manifest_is_version_0_4() {
    let manifest = json("packaging/mcpb/manifest.json");
    assert_eq!(manifest["manifest_version"], "0.4");
    assert!(manifest["$schema"]
        .as_str()
        .unwrap()
        .ends_with("mcpb-manifest-v0.4.schema.json"));
}
