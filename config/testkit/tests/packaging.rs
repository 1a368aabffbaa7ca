#![allow(clippy::unwrap_used, clippy::expect_used)]

//! What the packaging folder ships agrees with itself and with the registry's schema:
//! server.json validates against the MCP registry's `server.schema.json` of 2025-12-11
//! (vendored beside it), the README carries the `mcp-name:` line the registry checks for
//! crates.io, and the names the README gives are the names the packages have.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator() -> jsonschema::Validator {
    let schema = json(&root().join("packaging/registry/server.schema.2025-12-11.json"));
    jsonschema::draft7::new(&schema).unwrap()
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

#[test]
fn server_json_is_valid_against_the_registry_schema() {
    let validator = validator();
    let server = json(&root().join("packaging/registry/server.json"));
    assert_eq!(errors(&validator, &server), Vec::<String>::new());
    // The one verify.sh fills with the real hash of the bundle it built, when it ran.
    let built = root().join("target/packaging/dist/server.json");
    if built.exists() {
        let built = json(&built);
        assert_eq!(errors(&validator, &built), Vec::<String>::new());
    }
    let kinds: Vec<&str> = server["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["registryType"].as_str().unwrap())
        .collect();
    for kind in ["npm", "cargo", "mcpb", "oci"] {
        assert!(kinds.contains(&kind), "no {kind} package in server.json");
    }
    for p in server["packages"].as_array().unwrap() {
        if p["registryType"] == "mcpb" {
            let url = p["identifier"].as_str().unwrap();
            // The registry requires "mcp" in the URL and a hash for every bundle.
            assert!(url.contains("mcp") && url.ends_with(".mcpb"), "{url}");
            assert!(p["fileSha256"].is_string());
        }
        if p["registryType"] == "oci" {
            // The registry takes the tag in the identifier and refuses a separate version
            // or base URL; the tag is the release's version.
            let tag = format!(":{}", server["version"].as_str().unwrap());
            assert!(p["identifier"].as_str().unwrap().ends_with(&tag), "{p}");
            assert!(
                p.get("version").is_none() && p.get("registryBaseUrl").is_none(),
                "{p}"
            );
        }
    }
}

#[test]
fn the_schema_rejects_what_the_registry_rejects() {
    let validator = validator();
    let good = json(&root().join("packaging/registry/server.json"));
    let mut long = good.clone();
    long["description"] = "x".repeat(101).into();
    let mut name = good.clone();
    name["name"] = "no-slash".into();
    let mut latest = good.clone();
    latest["packages"][0]["version"] = "latest".into();
    let mut hash = good.clone();
    hash["packages"][2]["fileSha256"] = "not-a-hash".into();
    let mut transport = good;
    transport["packages"][1]
        .as_object_mut()
        .unwrap()
        .remove("transport");
    for bad in [long, name, latest, hash, transport] {
        assert!(!errors(&validator, &bad).is_empty(), "accepted: {bad}");
    }
}

#[test]
fn names_agree_across_readme_npm_registry_and_bundle() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let server = json(&root().join("packaging/registry/server.json"));
    let launcher = json(&root().join("packaging/npm/launcher/package.json"));
    let name = server["name"].as_str().unwrap();
    // Visible text: crates.io strips HTML comments, so the registry's check needs it bare.
    assert!(readme.contains(&format!("mcp-name: {name}")));
    assert_eq!(
        launcher["mcpName"], name,
        "npm ownership is checked through mcpName"
    );
    let npm = launcher["name"].as_str().unwrap();
    assert_ne!(
        npm, "openai-responses-mcp",
        "that npm name belongs to another project"
    );
    assert!(readme.contains(&format!("npx -y {npm} --stdio")));
    let npm_package = server["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["registryType"] == "npm")
        .unwrap();
    assert_eq!(npm_package["identifier"], npm);
    // No install scripts: the launcher must work under --ignore-scripts.
    let scripts = launcher.get("scripts").and_then(Value::as_object);
    assert!(scripts.is_none_or(|s| !s.keys().any(|k| k.contains("install"))));
    let manifest = json(&root().join("packaging/mcpb/manifest.json"));
    assert_eq!(manifest["server"]["type"], "binary");
    let key = &manifest["user_config"]["openai_api_key"];
    assert_eq!(key["sensitive"], true);
    assert_eq!(
        manifest["server"]["mcp_config"]["env"]["OPENAI_API_KEY"],
        "${user_config.openai_api_key}"
    );
    for v in [
        &server["version"],
        &launcher["version"],
        &manifest["version"],
    ] {
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
    }
}
