#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The alert rules and the dashboard in `packaging/observability/` hold together: every
//! rule is valid for Prometheus's own `promtool` and passes its unit tests, every alert
//! has a severity, a `for:` window and a runbook whose section exists in
//! `docs/deployment.md`, and every alert is shown firing by a unit test. What the queries
//! return against a real Prometheus is the end-to-end suite's (`suite/dashboard.rs`).

use responses_mcp_testkit::system_program;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn yaml(file: &str) -> serde_yaml::Value {
    let path = root().join("packaging/observability").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn alerts() -> Vec<serde_yaml::Value> {
    yaml("alerts.yml")["groups"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_sequence().unwrap().clone())
        .collect()
}

/// The anchors GitHub makes of `docs/deployment.md`'s headings.
fn anchors() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/deployment.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

#[test]
fn every_alert_has_a_severity_a_window_and_a_runbook_that_exists() {
    let anchors = anchors();
    let alerts = alerts();
    assert!(alerts.len() >= 10, "{alerts:?}");
    for rule in &alerts {
        let name = rule["alert"].as_str().unwrap();
        let severity = rule["labels"]["severity"].as_str().unwrap_or_default();
        assert!(
            ["critical", "warning", "info"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        assert!(rule["for"].as_str().is_some(), "{name} has no for: window");
        for key in ["summary", "description"] {
            assert!(
                rule["annotations"][key].as_str().is_some(),
                "{name}: no {key}"
            );
        }
        let runbook = rule["annotations"]["runbook_url"].as_str().unwrap();
        let (page, anchor) = runbook.split_once('#').unwrap();
        assert!(page.ends_with("/docs/deployment.md"), "{name}: {runbook}");
        assert!(
            anchors.iter().any(|a| a == anchor),
            "{name}: no section #{anchor} in docs/deployment.md"
        );
    }
}

#[test]
fn every_alert_is_shown_firing_by_a_unit_test() {
    let tests = yaml("alerts.test.yml");
    let firing: Vec<&str> = tests["tests"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|t| t["alert_rule_test"].as_sequence().unwrap())
        .filter(|case| {
            case["exp_alerts"]
                .as_sequence()
                .is_some_and(|a| !a.is_empty())
        })
        .map(|case| case["alertname"].as_str().unwrap())
        .collect();
    for rule in alerts() {
        let name = rule["alert"].as_str().unwrap();
        assert!(firing.contains(&name), "no unit test shows {name} firing");
    }
}

#[test]
fn promtool_checks_the_rules_and_passes_their_unit_tests() {
    let Some(promtool) = system_program("promtool") else {
        return;
    };
    let dir = root().join("packaging/observability");
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts.test.yml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_dashboard_is_a_grafana_dashboard_on_one_data_source() {
    let path = root().join("packaging/observability/dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(dashboard["uid"].is_string() && dashboard["title"].is_string());
    let panels = dashboard["panels"].as_array().unwrap();
    let mut ids: Vec<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    for panel in panels.iter().filter(|p| p["type"] != "row") {
        let title = panel["title"].as_str().unwrap();
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{title}");
        assert!(
            panel["description"].is_string(),
            "{title} says what it shows"
        );
        for key in ["h", "w", "x", "y"] {
            assert!(panel["gridPos"][key].is_u64(), "{title}: gridPos.{key}");
        }
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title}");
        for t in targets {
            assert!(
                t["refId"].is_string() && t["expr"].is_string(),
                "{title}: {t}"
            );
        }
    }
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(variables, ["datasource", "instance"]);
}
