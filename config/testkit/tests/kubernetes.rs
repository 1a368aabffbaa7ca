#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The Kubernetes pack (packaging/kubernetes) agrees with its sources and keeps its
//! promises: the PrometheusRule and the dashboard's ConfigMap hold exactly
//! packaging/observability's rules and dashboard (one source: `generate.sh` writes them),
//! and the Deployment is the hardened one docs/deployment.md describes. Rendering and
//! schema validation of every overlay are `packaging/kubernetes/check.sh`'s.

use serde_yaml::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn yaml(file: &str) -> Value {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const REGENERATE: &str =
    "run packaging/kubernetes/generate.sh after editing packaging/observability";

#[test]
fn the_prometheus_rule_is_the_alert_rules_file() {
    let rule = yaml("packaging/kubernetes/base/prometheusrule.yaml");
    assert_eq!(rule["kind"], "PrometheusRule");
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    let alerts = yaml("packaging/observability/alerts.yml");
    assert_eq!(rule["spec"], alerts, "{REGENERATE}");
}

#[test]
fn the_dashboard_config_map_holds_the_dashboard() {
    let map = yaml("packaging/kubernetes/base/dashboard.yaml");
    assert_eq!(map["kind"], "ConfigMap");
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let held: serde_json::Value =
        serde_json::from_str(map["data"]["openai-responses-mcp.json"].as_str().unwrap()).unwrap();
    let path = root().join("packaging/observability/dashboard.json");
    let source: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(held, source, "{REGENERATE}");
}

#[test]
fn the_deployment_is_hardened_and_probed_where_the_server_answers() {
    let deployment = yaml("packaging/kubernetes/base/deployment.yaml");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    // Longer than the server's default drain (server.shutdown_grace_ms, 30 s).
    assert!(pod["terminationGracePeriodSeconds"].as_u64().unwrap() > 30);
    let containers = pod["containers"].as_sequence().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/ready");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/health");
    assert_eq!(c["ports"][0]["containerPort"], 8787);
    let security = &c["securityContext"];
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"]["drop"][0], "ALL");
    for (kind, what) in [
        ("requests", "memory"),
        ("requests", "cpu"),
        ("limits", "memory"),
    ] {
        assert!(c["resources"][kind][what].is_string(), "no {kind}.{what}");
    }
    // Secrets come from Secrets, never as values in the manifest.
    for env in c["env"].as_sequence().unwrap() {
        let name = env["name"].as_str().unwrap();
        if name.ends_with("KEY") || name.ends_with("TOKEN") || name.ends_with("SECRET") {
            assert!(env["valueFrom"]["secretKeyRef"].is_mapping(), "{name}");
        }
    }
    // The image's tag is the release's (packaging/release.sh keeps it).
    let kustomization = yaml("packaging/kubernetes/base/kustomization.yaml");
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let version = cargo
        .lines()
        .skip_while(|l| *l != "[workspace.package]")
        .find_map(|l| l.strip_prefix("version = "))
        .unwrap()
        .trim_matches('"');
    assert_eq!(kustomization["images"][0]["newTag"], version);
}

#[test]
fn egress_is_dns_https_the_store_and_the_identity_provider_only() {
    let mut ports = Vec::new();
    for file in [
        "packaging/kubernetes/base/networkpolicy.yaml",
        "packaging/kubernetes/fleet/networkpolicy-store.yaml",
        "packaging/kubernetes/oauth/networkpolicy-identity-provider.yaml",
    ] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        for document in text.split("\n---\n") {
            let policy: Value = serde_yaml::from_str(document).unwrap();
            assert_eq!(policy["kind"], "NetworkPolicy");
            let types = policy["spec"]["policyTypes"].as_sequence().unwrap();
            assert!(
                types.iter().any(|t| t == "Egress"),
                "{file}: egress unrestricted"
            );
            for rule in policy["spec"]["egress"].as_sequence().unwrap() {
                // A rule without peers or ports would let everything out.
                assert!(
                    rule["to"].is_sequence() && rule["ports"].is_sequence(),
                    "{file}"
                );
                for port in rule["ports"].as_sequence().unwrap() {
                    ports.push(port["port"].as_u64().unwrap());
                }
            }
        }
    }
    ports.sort_unstable();
    ports.dedup();
    // DNS; HTTPS (upstream, identity provider); Redis; an in-cluster provider's ports.
    assert_eq!(ports, [53, 443, 6379, 8080, 8443]);
}
