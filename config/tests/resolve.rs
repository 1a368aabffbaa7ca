#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The resolver, table-driven: precedence in every combination of layers, merge rules,
//! every error path, the example files, and the --show-config snapshot. These tests never
//! touch the process environment: the environment is a map passed in.

use responses_mcp_config::{resolve, show, Cli, ConfigError, Env, Source, YamlInput};
use responses_mcp_core::tools::Tool;
use serde_json::{json, Value};
use std::path::Path;

const YAML_PATH: &str = "/etc/orm/config.yaml";

fn env(pairs: &[(&str, &str)]) -> Env {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run(
    yaml: Option<&str>,
    env: &Env,
    cli: &Cli,
) -> Result<responses_mcp_config::Resolved, ConfigError> {
    resolve(
        yaml.map(|text| YamlInput {
            text,
            path: Path::new(YAML_PATH),
        }),
        env,
        cli,
    )
}

fn yaml_source() -> Source {
    Source::Yaml(YAML_PATH.into())
}

#[test]
fn model_precedence_in_every_combination_of_layers() {
    for mask in 0..8u8 {
        let (in_yaml, in_env, in_cli) = (mask & 1 != 0, mask & 2 != 0, mask & 4 != 0);
        let yaml = in_yaml.then_some("model_profiles:\n  answer:\n    model: from-yaml\n");
        let e = if in_env {
            env(&[("MODEL_ANSWER", "from-env")])
        } else {
            env(&[])
        };
        let cli = Cli {
            model: in_cli.then(|| "from-cli".to_owned()),
            ..Cli::default()
        };
        let r = run(yaml, &e, &cli).unwrap();
        let (value, source) = if in_cli {
            ("from-cli", Source::Cli("--model"))
        } else if in_env {
            ("from-env", Source::Env("MODEL_ANSWER".into()))
        } else if in_yaml {
            ("from-yaml", yaml_source())
        } else {
            ("gpt-6.1-terra", Source::Default)
        };
        assert_eq!(
            r.get("model_profiles.answer.model"),
            Some(&json!(value)),
            "mask {mask}"
        );
        assert_eq!(
            r.sources["model_profiles.answer.model"], source,
            "mask {mask}"
        );
        // The other answer fields keep their defaults whatever layer set the model.
        assert_eq!(
            r.get("model_profiles.answer.verbosity"),
            Some(&json!("medium"))
        );
    }
}

#[test]
fn debug_precedence_in_every_combination_of_layers() {
    for mask in 0..8u8 {
        let (in_yaml, in_env, in_cli) = (mask & 1 != 0, mask & 2 != 0, mask & 4 != 0);
        let yaml = in_yaml.then_some("server:\n  debug: true\n  debug_file: /tmp/yaml.log\n");
        let e = if in_env {
            env(&[("DEBUG", "/tmp/env.log")])
        } else {
            env(&[])
        };
        let cli = Cli {
            debug: in_cli.then(|| Some("/tmp/cli.log".into())),
            ..Cli::default()
        };
        let r = run(yaml, &e, &cli).unwrap();
        let expected = if in_cli {
            Some("/tmp/cli.log")
        } else if in_env {
            Some("/tmp/env.log")
        } else if in_yaml {
            Some("/tmp/yaml.log")
        } else {
            None
        };
        assert_eq!(r.debug(), expected.is_some(), "mask {mask}");
        assert_eq!(
            r.debug_file().as_deref(),
            expected.map(Path::new),
            "mask {mask}"
        );
    }
    // DEBUG=0 turns off what the YAML turned on; DEBUG=true keeps the YAML's file.
    let r = run(
        Some("server: {debug: true}"),
        &env(&[("DEBUG", "0")]),
        &Cli::default(),
    )
    .unwrap();
    assert!(!r.debug());
    let r = run(
        Some("server: {debug_file: /tmp/y.log}"),
        &env(&[("DEBUG", "true")]),
        &Cli::default(),
    )
    .unwrap();
    assert_eq!(r.debug_file().as_deref(), Some(Path::new("/tmp/y.log")));
}

#[test]
fn every_env_variable_maps_to_its_key() {
    let cases = [
        (
            "OPENAI_API_TIMEOUT",
            "5000",
            "request.timeout_ms",
            json!(5000),
        ),
        ("OPENAI_MAX_RETRIES", "0", "request.max_retries", json!(0)),
        (
            "SEARCH_RECENCY_DAYS",
            "7",
            "search.defaults.recency_days",
            json!(7),
        ),
        (
            "SEARCH_MAX_RESULTS",
            "9",
            "search.defaults.max_results",
            json!(9),
        ),
        ("MAX_CITATIONS", "10", "policy.max_citations", json!(10)),
        ("REQUERY_ATTEMPTS", "2", "policy.requery_attempts", json!(2)),
        (
            "MODEL_ANSWER",
            "o3",
            "model_profiles.answer.model",
            json!("o3"),
        ),
        (
            "MODEL_DETAILED",
            "gpt-5",
            "model_profiles.answer_detailed.model",
            json!("gpt-5"),
        ),
        (
            "MODEL_QUICK",
            "gpt-5-nano",
            "model_profiles.answer_quick.model",
            json!("gpt-5-nano"),
        ),
        (
            "OPENAI_BASE_URL",
            "http://127.0.0.1:9/v1",
            "openai.base_url",
            json!("http://127.0.0.1:9/v1"),
        ),
        (
            "ANSWER_EFFORT",
            "high",
            "model_profiles.answer.reasoning_effort",
            json!("high"),
        ),
        (
            "ANSWER_VERBOSITY",
            "low",
            "model_profiles.answer.verbosity",
            json!("low"),
        ),
        ("MCP_LINE_MODE", "1", "server.line_mode", json!(true)),
    ];
    for (var, value, key, expected) in cases {
        let r = run(None, &env(&[(var, value)]), &Cli::default()).unwrap();
        assert_eq!(r.get(key), Some(&expected), "{var}");
        assert_eq!(r.sources[key], Source::Env(var.into()), "{var}");
    }
}

#[test]
fn env_beats_yaml_for_every_mapped_key() {
    let yaml = "request: {timeout_ms: 1000, max_retries: 5}\npolicy: {max_citations: 2}\nsearch: {defaults: {recency_days: 3}}\n";
    let e = env(&[("OPENAI_API_TIMEOUT", "2000"), ("MAX_CITATIONS", "4")]);
    let r = run(Some(yaml), &e, &Cli::default()).unwrap();
    assert_eq!(r.get("request.timeout_ms"), Some(&json!(2000)));
    assert_eq!(r.get("request.max_retries"), Some(&json!(5)));
    assert_eq!(r.sources["request.max_retries"], yaml_source());
    assert_eq!(r.get("policy.max_citations"), Some(&json!(4)));
    assert_eq!(r.get("search.defaults.recency_days"), Some(&json!(3)));
    assert_eq!(
        r.get("search.defaults.max_results"),
        Some(&json!(5)),
        "deep merge keeps siblings"
    );
}

#[test]
fn arrays_replace_and_objects_merge() {
    let yaml =
        "policy:\n  search_triggers: [weather]\nsearch:\n  defaults:\n    domains: [jma.go.jp]\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    assert_eq!(r.get("policy.search_triggers"), Some(&json!(["weather"])));
    assert_eq!(
        r.get("search.defaults.domains"),
        Some(&json!(["jma.go.jp"]))
    );
    assert_eq!(r.get("policy.max_citations"), Some(&json!(3)));
    let sc = r.server_config(true, None, 1);
    assert_eq!(sc.search_defaults.domains, vec!["jma.go.jp".to_owned()]);
    assert!(sc
        .instructions
        .ends_with("Always search when the question involves any of: weather."));
}

#[test]
fn profiles_fall_back_to_answer_and_can_be_removed() {
    let yaml = "model_profiles:\n  answer_detailed:\n    model: gpt-5\n    verbosity: high\n";
    let sc = run(Some(yaml), &env(&[]), &Cli::default())
        .unwrap()
        .server_config(true, None, 1);
    let detailed = sc.profiles.own(Tool::AnswerDetailed).cloned().unwrap();
    assert_eq!(
        (
            detailed.model.as_str(),
            detailed.verbosity.map(|v| v.as_str())
        ),
        ("gpt-5", Some("high"))
    );
    assert_eq!(
        detailed.reasoning_effort.map(|e| e.as_str()),
        Some("medium"),
        "inherited from answer"
    );
    assert!(sc.profiles.own(Tool::AnswerQuick).is_none());
    let sc = run(
        Some("model_profiles:\n  answer: null\n"),
        &env(&[]),
        &Cli::default(),
    )
    .unwrap()
    .server_config(true, None, 1);
    assert!(
        sc.profiles.own(Tool::Answer).is_none(),
        "the core then answers -32052"
    );
}

#[test]
fn invalid_yaml_names_file_line_and_column() {
    let err = run(
        Some("request:\n  timeout_ms: [1,\n"),
        &env(&[]),
        &Cli::default(),
    )
    .unwrap_err();
    let ConfigError::Yaml {
        path, line, column, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(path, YAML_PATH);
    assert!(*line >= 2 && *column >= 1, "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("{YAML_PATH}:{line}:{column}:")),
        "{err}"
    );
}

#[test]
fn wrong_types_and_ranges_name_key_value_and_what_is_allowed() {
    let cases = [
        (
            "policy: {max_citations: 11}",
            "policy.max_citations",
            "11",
            "from 1 to 10",
        ),
        (
            "policy: {max_citations: 0}",
            "policy.max_citations",
            "0",
            "from 1 to 10",
        ),
        (
            "request: {timeout_ms: 0}",
            "request.timeout_ms",
            "0",
            "whole number",
        ),
        (
            "request: {timeout_ms: -5}",
            "request.timeout_ms",
            "-5",
            "whole number",
        ),
        (
            "request: {timeout_ms: fast}",
            "request.timeout_ms",
            "\"fast\"",
            "whole number",
        ),
        (
            "model_profiles: {answer: {reasoning_effort: extreme}}",
            "model_profiles.answer.reasoning_effort",
            "\"extreme\"",
            "one of none, minimal",
        ),
        (
            "model_profiles: {answer: {verbosity: chatty}}",
            "model_profiles.answer.verbosity",
            "\"chatty\"",
            "one of low, medium, high",
        ),
        (
            "openai: {base_url: ftp://x}",
            "openai.base_url",
            "\"ftp://x\"",
            "http",
        ),
        (
            "search: {defaults: {domains: [\"https://a.com/\"]}}",
            "search.defaults.domains",
            "https://a.com/",
            "bare host names",
        ),
        (
            "server: {debug: maybe}",
            "server.debug",
            "\"maybe\"",
            "true or false",
        ),
        ("request: 5", "request", "5", "a mapping"),
        (
            "policy: {system: {source: file}}",
            "policy.system.path",
            "null",
            "file path",
        ),
    ];
    for (yaml, key, value, allowed) in cases {
        let err = run(Some(yaml), &env(&[]), &Cli::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(key), "{yaml}: {err}");
        assert!(
            err.contains(value) && err.contains(allowed),
            "{yaml}: {err}"
        );
    }
}

#[test]
fn bad_environment_values_name_the_variable() {
    for (var, value) in [
        ("OPENAI_API_TIMEOUT", "soon"),
        ("MAX_CITATIONS", "42"),
        ("OPENAI_MAX_RETRIES", "-1"),
        ("ANSWER_EFFORT", "turbo"),
        ("MCP_LINE_MODE", "sometimes"),
        ("OPENAI_BASE_URL", "nope"),
    ] {
        let err = run(None, &env(&[(var, value)]), &Cli::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(var), "{err}");
        assert!(err.contains(value), "{err}");
    }
}

#[test]
fn unknown_keys_warn_with_the_nearest_known_key() {
    let r = run(
        Some("request:\n  timeout: 5\nmodel_profile:\n  answer: {}\n"),
        &env(&[]),
        &Cli::default(),
    )
    .unwrap();
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("request.timeout")
            && r.warnings[0].contains("did you mean request.timeout_ms?"),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings[1].contains("did you mean model_profiles?"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn example_files_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(dir.join("config.yaml.example")).unwrap();
    let r = resolve(
        Some(YamlInput {
            text: &text,
            path: &dir.join("config.yaml.example"),
        }),
        &env(&[]),
        &Cli::default(),
    )
    .unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let sc = r.server_config(false, None, 1);
    assert_eq!(
        sc.profiles.own(Tool::AnswerQuick).unwrap().model,
        "gpt-6-luna"
    );

    let policy = std::fs::read_to_string(dir.join("policy.md.example")).unwrap();
    for (merge, first, last) in [
        ("append", true, false),
        ("prepend", false, true),
        ("replace", false, false),
    ] {
        let yaml = format!(
            "policy:\n  system:\n    source: file\n    path: ./policy.md\n    merge: {merge}\n"
        );
        let r = run(Some(&yaml), &env(&[]), &Cli::default()).unwrap();
        let instructions = r.server_config(true, Some(&policy), 1).instructions;
        let builtin = responses_mcp_core::policy::SYSTEM_POLICY;
        assert_eq!(instructions.starts_with(builtin), first, "{merge}");
        assert_eq!(instructions.ends_with(builtin), last, "{merge}");
        assert!(
            instructions.contains("Prefer official documentation"),
            "{merge}"
        );
        assert_eq!(instructions.contains(builtin), merge != "replace");
    }
}

#[test]
fn show_config_matches_the_snapshot_and_hides_the_key() {
    let yaml = "request: {timeout_ms: 30000}\nsearch: {defaults: {domains: [example.com]}}\n";
    let e = env(&[
        ("MODEL_DETAILED", "gpt-5"),
        ("OPENAI_API_KEY", "sk-PLANTED-never-shown"),
    ]);
    let cli = Cli {
        model: Some("o3".into()),
        ..Cli::default()
    };
    let r = run(Some(yaml), &e, &cli).unwrap();
    let secrets = show::SecretsSet {
        api_key: true,
        ..show::SecretsSet::default()
    };
    let text = show::show_config(
        &r,
        secrets,
        &responses_mcp_config::proxy::ProxyRoute::Direct,
    );
    assert!(!text.contains("sk-PLANTED"));
    let mut shown: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(shown["version"], env!("CARGO_PKG_VERSION"));
    shown["version"] = json!("<version>");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/show-config.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&shown).unwrap() + "\n").unwrap();
    }
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        shown, expected,
        "run with UPDATE_SNAPSHOTS=1 after an intended change"
    );
    assert_eq!(
        shown["sources"]["model_profiles.answer.model"],
        "cli:--model"
    );
    assert_eq!(
        shown["sources"]["model_profiles.answer_detailed.model"],
        "env:MODEL_DETAILED"
    );
    assert_eq!(
        shown["sources"]["request.timeout_ms"],
        format!("yaml:{YAML_PATH}")
    );
    assert_eq!(shown["sources"]["request.max_retries"], "default");
    assert_eq!(
        shown["api_key"],
        json!({"env": "OPENAI_API_KEY", "set": true})
    );
}

#[test]
fn the_reference_documents_every_key_and_variable() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/config-reference.md");
    let doc = std::fs::read_to_string(path).unwrap();
    for key in responses_mcp_config::keys::keys() {
        assert!(
            doc.contains(&format!("`{}`", key.path)),
            "{} is not documented",
            key.path
        );
        if let Some(var) = key.env {
            assert!(doc.contains(&format!("`{var}`")), "{var} is not documented");
        }
    }
}

#[test]
fn no_configuration_resolves_to_exactly_the_cores_defaults() {
    use responses_mcp_core::ServerConfig;
    let r = run(None, &env(&[]), &Cli::default()).unwrap();
    let seed = 0x5EED;
    assert_eq!(
        r.server_config(false, None, seed),
        ServerConfig {
            jitter_seed: seed,
            ..ServerConfig::default()
        }
    );
}

#[test]
fn the_typed_view_has_exactly_the_keys_of_the_table() {
    fn leaves(v: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
        // A leaf may hold an object (`pricing.models`).
        if responses_mcp_config::keys::key(prefix).is_some() {
            return out.push(prefix.to_owned());
        }
        match v.as_object() {
            Some(map) => {
                for (k, child) in map {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(child, &path, out);
                }
            }
            None => out.push(prefix.to_owned()),
        }
    }
    // Every profile present, so that each tool's leaves show.
    let every = "reasoning_effort: low, verbosity: low, search_context_size: low, external_web_access: true, service_tier: flex, max_output_tokens: 100, user_location: {country: JP, region: Tokyo, city: Minato, timezone: Asia/Tokyo}";
    let yaml = format!("model_profiles:\n  answer_detailed: {{model: a, {every}}}\n  answer_quick: {{model: b, {every}}}\n");
    let yaml = yaml.as_str();
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let mut from_view = Vec::new();
    leaves(
        &serde_json::to_value(&r.settings).unwrap(),
        "",
        &mut from_view,
    );
    from_view.sort();
    let mut from_table: Vec<String> = responses_mcp_config::keys::keys()
        .iter()
        .map(|k| k.path.to_owned())
        .collect();
    from_table.sort();
    assert_eq!(from_view, from_table);
}

#[test]
fn provider_presets_fill_only_what_nobody_set_and_say_so() {
    let preset = |p: &'static str| Source::Preset(p);
    // Ollama: local, no key, no search, its own model name.
    let cli = Cli {
        provider: Some("ollama".into()),
        ..Cli::default()
    };
    let r = run(None, &env(&[]), &cli).unwrap();
    assert_eq!(r.sources["openai.provider"], Source::Cli("--provider"));
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("http://localhost:11434/v1"))
    );
    assert_eq!(r.sources["openai.base_url"], preset("ollama"));
    assert_eq!(r.get("openai.web_search"), Some(&json!("none")));
    assert_eq!(r.sources["model_profiles.answer.model"], preset("ollama"));
    let config = r.server_config(false, None, 1);
    assert!(config.credentials_ready, "no key needed locally");
    assert_eq!(
        config.web_search,
        responses_mcp_core::WebSearch::Unavailable
    );
    assert!(!config.enforce_retirements);
    let warnings = responses_mcp_config::startup_warnings(&r, 1_795_000_000);
    assert!(warnings[0].contains("no hosted web search"), "{warnings:?}");
    // What the user set wins over the preset, at every layer.
    let yaml = "openai:\n  provider: openrouter\n  base_url: https://gw.example/v1\n";
    let r = run(
        Some(yaml),
        &env(&[("MODEL_ANSWER", "openai/gpt-5.6-terra")]),
        &Cli::default(),
    )
    .unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://gw.example/v1"))
    );
    assert_eq!(r.sources["openai.base_url"], yaml_source());
    assert_eq!(r.sources["openai.api_key_env"], preset("openrouter"));
    assert_eq!(
        r.get("openai.api_key_env"),
        Some(&json!("OPENROUTER_API_KEY"))
    );
    assert_eq!(
        r.get("model_profiles.answer.model"),
        Some(&json!("openai/gpt-5.6-terra"))
    );
    let config = r.server_config(false, None, 1);
    assert!(!config.credentials_ready, "OpenRouter needs its key");
    assert_eq!(config.web_search, responses_mcp_core::WebSearch::OpenRouter);
    // OpenAI is the defaults themselves: nothing is marked as a preset.
    let r = run(
        None,
        &env(&[("OPENAI_PROVIDER", "openai")]),
        &Cli::default(),
    )
    .unwrap();
    assert!(r.sources.values().all(|s| !matches!(s, Source::Preset(_))));
    assert!(r.server_config(true, None, 1).enforce_retirements);
}

#[test]
fn azure_needs_its_resource_from_the_file_the_endpoint_or_the_base_url() {
    let cli = Cli {
        provider: Some("azure".into()),
        ..Cli::default()
    };
    let message = run(None, &env(&[]), &cli).unwrap_err().to_string();
    assert!(message.contains("openai.azure_resource") && message.contains("AZURE_OPENAI_ENDPOINT"));
    // A variable that is set but unusable is named, with its value and why.
    let plain = env(&[("AZURE_OPENAI_ENDPOINT", "http://contoso.openai.azure.com")]);
    let message = run(None, &plain, &cli).unwrap_err().to_string();
    assert!(
        message.contains("AZURE_OPENAI_ENDPOINT environment variable is set to \"http://contoso.openai.azure.com\"")
            && message.contains("https:// URL"),
        "{message}"
    );
    let bad = "openai:\n  azure_resource: \"no spaces\"\n";
    let message = run(Some(bad), &env(&[]), &cli).unwrap_err().to_string();
    assert!(
        message.contains("openai.azure_resource is \"no spaces\""),
        "{message}"
    );
    let from_env = env(&[("AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com/")]);
    let r = run(None, &from_env, &cli).unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://contoso.openai.azure.com/openai/v1"))
    );
    assert_eq!(r.get("openai.auth"), Some(&json!("api-key")));
    assert_eq!(
        r.get("openai.api_key_env"),
        Some(&json!("AZURE_OPENAI_API_KEY"))
    );
    let yaml = "openai:\n  azure_resource: fabrikam\n";
    let r = run(Some(yaml), &env(&[]), &cli).unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://fabrikam.openai.azure.com/openai/v1"))
    );
    let yaml = "openai:\n  base_url: https://fabrikam.cognitiveservices.azure.com/openai/v1\n";
    assert!(run(Some(yaml), &env(&[]), &cli).is_ok());
    let bad = Cli {
        provider: Some("bedrock".into()),
        ..Cli::default()
    };
    let e = run(None, &env(&[]), &bad).unwrap_err().to_string();
    assert!(
        e.contains("openai.provider") && e.contains("lmstudio"),
        "{e}"
    );
}

#[test]
fn a_completion_window_and_its_price_are_read_and_checked() {
    use responses_mcp_core::tasks::CompletionWindow;
    let yaml = "tasks: {openai_background: true, completion_window: 8h, completion_window_price_percent: 65}\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let tasks = r.server_config(true, None, 1).tasks;
    assert_eq!(
        (tasks.completion_window, tasks.background_price_percent()),
        (CompletionWindow::EightHours, 65)
    );
    // Unset, the published discount.
    let yaml = "tasks: {openai_background: true, completion_window: 2h}\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    assert_eq!(
        r.server_config(true, None, 1)
            .tasks
            .background_price_percent(),
        70
    );
    for (yaml, key) in [
        (
            "tasks: {completion_window: 3h}\n",
            "tasks.completion_window",
        ),
        (
            "tasks: {completion_window_price_percent: 0}\n",
            "tasks.completion_window_price_percent",
        ),
    ] {
        let e = run(Some(yaml), &env(&[]), &Cli::default()).unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
}

#[test]
fn an_unset_location_is_sent_as_one_that_states_none() {
    use responses_mcp_core::settings::UserLocation;
    // Nothing configured: an approximate location with no fields, so that OpenAI does not
    // assume the United States; a profile that sets something else inherits it.
    let yaml = "model_profiles:\n  answer_quick:\n    model: gpt-6-luna\n";
    for yaml in [None, Some(yaml)] {
        let r = run(yaml, &env(&[]), &Cli::default()).unwrap();
        let config = r.server_config(true, None, 1);
        for tool in [Tool::Answer, Tool::AnswerQuick] {
            let Some(profile) = config.profiles.for_tool(tool) else {
                continue;
            };
            assert_eq!(profile.search.user_location, Some(UserLocation::default()));
        }
    }
}

#[test]
fn profile_tuning_is_validated_and_inherited() {
    let yaml = "model_profiles:\n  answer:\n    search_context_size: high\n    user_location: {country: JP, timezone: Asia/Tokyo}\n    service_tier: flex\n    max_output_tokens: 4000\n  answer_quick:\n    model: gpt-5.6-luna\n    service_tier: null\n    user_location: {city: Osaka}\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let config = r.server_config(true, None, 1);
    let answer = config.profiles.for_tool(Tool::Answer).unwrap();
    assert_eq!(answer.max_output_tokens, Some(4000));
    assert_eq!(
        answer
            .search
            .user_location
            .as_ref()
            .unwrap()
            .timezone
            .as_deref(),
        Some("Asia/Tokyo")
    );
    let quick = config.profiles.for_tool(Tool::AnswerQuick).unwrap();
    assert_eq!(quick.service_tier, None, "null sends nothing");
    assert_eq!(quick.max_output_tokens, Some(4000), "absent inherits");
    let location = quick.search.user_location.as_ref().unwrap();
    assert_eq!(
        (location.city.as_deref(), location.country.as_deref()),
        (Some("Osaka"), None)
    );
    assert_eq!(
        quick.search.context_size,
        Some(responses_mcp_core::vocab::SearchContextSize::High)
    );
    for (yaml, key) in [
        (
            "model_profiles:\n  answer:\n    user_location: {country: jp}\n",
            "user_location.country",
        ),
        (
            "model_profiles:\n  answer:\n    user_location: {timezone: Tokyo}\n",
            "user_location.timezone",
        ),
        (
            "model_profiles:\n  answer:\n    max_output_tokens: 8\n",
            "max_output_tokens",
        ),
        (
            "model_profiles:\n  answer:\n    service_tier: turbo\n",
            "service_tier",
        ),
        (
            "model_profiles:\n  answer:\n    external_web_access: maybe\n",
            "external_web_access",
        ),
        (
            "model_profiles:\n  answer:\n    search_context_size: huge\n",
            "search_context_size",
        ),
    ] {
        let e = run(Some(yaml), &env(&[]), &Cli::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("expected"), "{yaml}: {e}");
    }
}

#[test]
fn the_default_configuration_warns_of_no_model() {
    let r = run(None, &env(&[]), &Cli::default()).unwrap();
    // 2026-11-26, the day after the old default's shutdown (2026-12-12), and a year on.
    for now in [1_795_651_200, 1_797_033_600, 1_827_187_200] {
        let warnings = responses_mcp_config::startup_warnings(&r, now);
        assert!(
            warnings.iter().all(|w| !w.contains("model")),
            "{warnings:?}"
        );
    }
}

#[test]
fn an_old_binarys_retired_default_is_replaced_and_said_once() {
    // As a binary built before 2026-12-11 would have it: gpt-5-mini as the default.
    let yaml = "model_profiles:\n  answer:\n    model: gpt-5-mini\n";
    let mut r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    r.sources
        .insert("model_profiles.answer.model".into(), Source::Default);
    assert_eq!(r.replace_retired_default("2026-12-10"), None, "not yet");
    let said = r.replace_retired_default("2026-12-11").unwrap();
    assert!(
        said.contains("gpt-5-mini was shut down by OpenAI on 2026-12-11"),
        "{said}"
    );
    assert!(said.contains("using gpt-6.1-terra"), "{said}");
    assert_eq!(
        r.get("model_profiles.answer.model"),
        Some(&json!("gpt-6.1-terra"))
    );
    let sc = r.server_config(true, None, 1);
    assert_eq!(
        sc.profiles.own(Tool::Answer).unwrap().model,
        "gpt-6.1-terra"
    );
    assert_eq!(r.replace_retired_default("2026-12-12"), None, "said once");
    assert!(responses_mcp_config::startup_warnings(&r, 1_797_033_600).is_empty());
    // A model the user chose is theirs: it is refused with advice, never swapped.
    let mut chosen = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    assert_eq!(chosen.replace_retired_default("2026-12-12"), None);
}

#[test]
fn retired_models_warn_at_startup_naming_the_setting() {
    let yaml = "model_profiles:\n  answer:\n    model: gpt-5.6-terra\n  answer_quick:\n    model: o4-mini\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let warnings = responses_mcp_config::startup_warnings(&r, 1_795_000_000);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("o4-mini was shut down by OpenAI on 2026-10-23"));
    assert!(warnings[0].contains("set model_profiles.answer_quick.model to gpt-5.6-terra"));
}

#[test]
fn a_spend_cap_over_a_model_without_a_price_warns_at_startup() {
    let yaml = "server:\n  limits:\n    spend_per_day_usd: 5\nmodel_profiles:\n  answer:\n    model: acme-large-2027\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let warnings = responses_mcp_config::startup_warnings(&r, 1_795_000_000);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("acme-large-2027, which has no price")
                && w.contains("pricing.models.acme-large-2027")),
        "{warnings:?}"
    );
    // Priced, or without a cap: nothing to say.
    let priced = format!("{yaml}pricing:\n  models:\n    acme-large-2027: {{input_per_mtok: 1, output_per_mtok: 2}}\n");
    let r = run(Some(&priced), &env(&[]), &Cli::default()).unwrap();
    assert!(responses_mcp_config::startup_warnings(&r, 1_795_000_000).is_empty());
    let uncapped = "model_profiles:\n  answer:\n    model: acme-large-2027\n";
    let r = run(Some(uncapped), &env(&[]), &Cli::default()).unwrap();
    assert!(responses_mcp_config::startup_warnings(&r, 1_795_000_000).is_empty());
}

#[test]
fn configured_prices_join_the_built_in_ones() {
    use responses_mcp_core::openai::pricing::{Estimate, PriceSource, Prices};
    use responses_mcp_core::openai::Usage;
    let yaml = "pricing:\n  web_search_per_1k_usd: 25\n  models:\n    my-model: {input_per_mtok: 0.4, output_per_mtok: 1.6}\n    gpt-6-luna: {input_per_mtok: 1, cached_input_per_mtok: 0.5, output_per_mtok: 2, long_context_above_tokens: 1000}\n";
    let r = run(Some(yaml), &env(&[]), &Cli::default()).unwrap();
    let prices = r.server_config(true, None, 1).prices;
    let usage = Usage {
        input_tokens: 1_000_000,
        cached_input_tokens: 500_000,
        output_tokens: 100_000,
        web_searches: 2,
        ..Usage::default()
    };
    // No cached rate given: cached tokens at the input rate. 1M × $0.40 + 0.1M × $1.60 + 2 × $0.025.
    let Estimate::Usd(mine) = prices.estimate("my-model", &usage) else {
        panic!()
    };
    assert_eq!(mine.total().usd(), 0.61);
    assert_eq!(mine.source, PriceSource::Configured);
    // Above its own long-context line: (0.5M × $1 + 0.5M × $0.5) × 2 + 0.1M × $2 × 1.5 + searches.
    let Estimate::Usd(luna) = prices.estimate("gpt-6-luna", &usage) else {
        panic!()
    };
    assert_eq!(luna.total().usd(), 1.85);
    assert!(luna.long_context);
    // The other built-in prices stay.
    let builtin = Prices::default();
    assert_eq!(prices.of("gpt-6.1-terra"), builtin.of("gpt-6.1-terra"));
}

#[test]
fn a_bad_price_says_what_a_price_looks_like() {
    for yaml in [
        "pricing:\n  models:\n    m: {input_per_mtok: 1}\n",
        "pricing:\n  models:\n    m: {input_per_mtok: -1, output_per_mtok: 1}\n",
        "pricing:\n  models:\n    m: {input_per_mtok: 1, output_per_mtok: 1, cache: 2}\n",
        "pricing:\n  models:\n    m: {input_per_mtok: 1, output_per_mtok: 1, long_context_above_tokens: 0}\n",
        "pricing:\n  models:\n    m: 3\n",
        "pricing:\n  models: [m]\n",
    ] {
        let err = run(Some(yaml), &env(&[]), &Cli::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("pricing.models"), "{yaml}: {err}");
        assert!(err.contains("input_per_mtok") && err.contains("output_per_mtok"), "{err}");
    }
    let err = run(
        Some("pricing:\n  web_search_per_1k_usd: -5\n"),
        &env(&[]),
        &Cli::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("pricing.web_search_per_1k_usd") && err.contains("dollars"),
        "{err}"
    );
}

#[test]
fn a_data_residency_base_url_prices_built_in_models_with_the_uplift() {
    let at = |url: &str| {
        let r = run(None, &env(&[("OPENAI_BASE_URL", url)]), &Cli::default()).unwrap();
        r.prices().residency
    };
    assert_eq!(at("https://eu.api.openai.com/v1"), Some("eu"));
    assert_eq!(at("https://us.api.openai.com/v1/"), Some("us"));
    assert_eq!(at("https://api.openai.com/v1"), None);
    assert_eq!(at("https://gateway.example/v1"), None);
}

#[test]
fn a_tasks_tier_is_refused_where_it_cannot_apply() {
    let flex = "tasks: {service_tier: flex}\n";
    let r = run(Some(flex), &env(&[]), &Cli::default()).unwrap();
    let config = r.server_config(false, None, 1);
    assert_eq!(
        config.tasks.service_tier,
        Some(responses_mcp_core::vocab::ServiceTier::Flex)
    );
    let windowed = "tasks: {service_tier: flex, completion_window: 2h}\n";
    let why = run(Some(windowed), &env(&[]), &Cli::default())
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("only the standard tier takes a completion window"),
        "{why}"
    );
    let parallel = Cli {
        provider: Some("parallel".into()),
        ..Cli::default()
    };
    let why = run(Some(flex), &env(&[]), &parallel)
        .unwrap_err()
        .to_string();
    assert!(
        why.contains(
            "tasks.service_tier is flex, but Parallel's Responses API has no service tiers"
        ),
        "{why}"
    );
    let why = run(
        Some("tasks: {openai_background: true}\n"),
        &env(&[]),
        &parallel,
    )
    .unwrap_err()
    .to_string();
    assert!(why.contains("no background mode"), "{why}");
    // Perplexity runs background responses.
    let perplexity = Cli {
        provider: Some("perplexity".into()),
        ..Cli::default()
    };
    assert!(run(
        Some("tasks: {openai_background: true}\n"),
        &env(&[]),
        &perplexity
    )
    .is_ok());
}

/// `OPENAI_BASE_URL` moves only the `openai` preset (its own SDKs' variable); every other
/// preset keeps its URL unless the file or `--base-url` sets one, and says what it ignored.
#[test]
fn a_presets_key_goes_only_where_the_operator_pointed_it() {
    let shell = "http://user:s3cret@127.0.0.1:4010/v1/tok_path";
    let cli = |provider: &str| Cli {
        provider: Some(provider.into()),
        ..Cli::default()
    };
    for provider in responses_mcp_config::keys::PROVIDERS {
        let mut vars = vec![("OPENAI_BASE_URL", shell)];
        if *provider == "azure" {
            vars.push(("AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com"));
        }
        let r = run(None, &env(&vars), &cli(provider)).unwrap();
        let url = r.get("openai.base_url").unwrap().as_str().unwrap();
        let warned = r.warnings.iter().find(|w| w.contains("is ignored"));
        if *provider == "openai" {
            assert_eq!(url, shell);
            assert_eq!(
                r.sources["openai.base_url"],
                Source::Env("OPENAI_BASE_URL".into())
            );
            assert!(warned.is_none(), "{:?}", r.warnings);
            continue;
        }
        assert_ne!(url, shell, "{provider}");
        assert_eq!(r.sources["openai.base_url"], Source::Preset(provider));
        let warned = warned.unwrap_or_else(|| panic!("{provider}: {:?}", r.warnings));
        assert!(
            warned.starts_with("OPENAI_BASE_URL (http://127.0.0.1:4010) is ignored")
                && warned.contains(&format!(
                    "provider {provider} sends its key ({}) to {url}, from preset:{provider}.",
                    r.api_key_env()
                ))
                && warned.contains("set openai.base_url in the config file or pass --base-url"),
            "{warned}"
        );
        assert!(
            !warned.contains("s3cret") && !warned.contains("tok_path"),
            "only the origin is shown: {warned}"
        );
    }
    // The file and the command line still point a preset anywhere, the command line first.
    let shell_env = env(&[("OPENAI_BASE_URL", shell)]);
    let yaml = "openai:\n  base_url: https://gw.example/v1\n";
    let r = run(Some(yaml), &shell_env, &cli("perplexity")).unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://gw.example/v1"))
    );
    assert_eq!(r.sources["openai.base_url"], yaml_source());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains(
            "sends its key (PERPLEXITY_API_KEY) to https://gw.example/v1, from yaml:/etc/orm/config.yaml."
        ),
        "{:?}",
        r.warnings
    );
    let pointed = Cli {
        base_url: Some("https://other.example/v1".into()),
        ..cli("parallel")
    };
    let r = run(Some(yaml), &shell_env, &pointed).unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://other.example/v1"))
    );
    assert_eq!(r.sources["openai.base_url"], Source::Cli("--base-url"));
    // However the provider is chosen.
    let both = env(&[
        ("OPENAI_BASE_URL", shell),
        ("OPENAI_PROVIDER", "openrouter"),
    ]);
    let r = run(None, &both, &Cli::default()).unwrap();
    assert_eq!(
        r.get("openai.base_url"),
        Some(&json!("https://openrouter.ai/api/v1"))
    );
    // The variable naming the preset's own URL changes nothing: nothing to warn about.
    let same = env(&[("OPENAI_BASE_URL", "https://api.parallel.ai/v1/")]);
    let r = run(None, &same, &cli("parallel")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Azure without a resource: the variable does not stand in for one, and the error says so.
    let why = run(None, &shell_env, &cli("azure"))
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("neither openai.azure_resource nor")
            && why.contains("OPENAI_BASE_URL is not used for provider azure")
            && !why.contains("s3cret"),
        "{why}"
    );
    // A bad URL on the command line is refused like one in the file.
    let bad = Cli {
        base_url: Some("ftp://gw.example".into()),
        ..cli("perplexity")
    };
    let why = run(None, &env(&[]), &bad).unwrap_err().to_string();
    assert!(
        why.contains("openai.base_url") && why.contains("cli:--base-url"),
        "{why}"
    );
}

/// A key that would cross the network unencrypted is warned about, whoever set the URL.
#[test]
fn a_key_sent_in_plain_http_to_another_machine_is_warned_about() {
    let perplexity = Cli {
        provider: Some("perplexity".into()),
        ..Cli::default()
    };
    let yaml = "openai:\n  base_url: http://gw.example:8080/v1\n";
    let key = env(&[("PERPLEXITY_API_KEY", "pplx-planted-key")]);
    let r = run(Some(yaml), &key, &perplexity).unwrap();
    let warning = r
        .warnings
        .iter()
        .find(|w| w.contains("plain http"))
        .unwrap_or_else(|| panic!("{:?}", r.warnings));
    assert!(
        warning.starts_with("openai.base_url (http://gw.example:8080, from yaml:/etc/orm/config.yaml) is plain http to another machine")
            && warning.contains("PERPLEXITY_API_KEY is sent unencrypted")
            && warning.contains("use an https:// URL"),
        "{warning}"
    );
    assert!(!warning.contains("pplx-planted-key"));
    // No key set: nothing to leak.
    let r = run(Some(yaml), &env(&[]), &perplexity).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // The same machine, or TLS: nothing to say about the clear (only that the key goes
    // to another host than Perplexity's).
    for url in ["http://127.0.0.1:8080/v1", "https://gw.example/v1"] {
        let yaml = format!("openai:\n  base_url: {url}\n");
        let r = run(Some(&yaml), &key, &perplexity).unwrap();
        assert_eq!(r.warnings.len(), 1, "{url}: {:?}", r.warnings);
        assert!(r.warnings[0].contains("is not provider perplexity's own host"));
    }
    // OpenAI's key too, from the variable that may point it.
    let shell = env(&[
        ("OPENAI_BASE_URL", "http://gw.example/v1"),
        ("OPENAI_API_KEY", "sk-planted"),
    ]);
    let r = run(None, &shell, &Cli::default()).unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("from env:OPENAI_BASE_URL")
            && r.warnings[0].contains("OPENAI_API_KEY is sent unencrypted"),
        "{:?}",
        r.warnings
    );
}

/// `OPENAI_BASE_URL` moves OpenAI's own key only: not a key another service issued, however
/// the provider reads (issue 47's review, F2).
#[test]
fn another_services_key_never_follows_openai_base_url() {
    let shell = "https://gateway.example/v1";
    let cases: [(&str, &[(&str, &str)]); 2] = [
        (
            "openai: {api_key_env: PERPLEXITY_API_KEY, base_url: 'https://api.perplexity.ai/v1'}",
            &[],
        ),
        (
            "openai: {provider: perplexity, api_key_env: PERPLEXITY_API_KEY, allow_foreign_key: true}",
            &[("OPENAI_PROVIDER", "openai")],
        ),
    ];
    for (yaml, extra) in cases {
        let mut vars = vec![("OPENAI_BASE_URL", shell), ("PERPLEXITY_API_KEY", "pplx-k")];
        vars.extend_from_slice(extra);
        let r = run(Some(yaml), &env(&vars), &Cli::default()).unwrap();
        assert_ne!(
            r.get("openai.base_url"),
            Some(&json!(shell)),
            "{yaml} {extra:?}: {:?}",
            r.warnings
        );
        assert!(!r.carries_openai_key(), "{yaml} {extra:?}");
        let warned = r.warnings.iter().find(|w| w.contains("is ignored"));
        let warned = warned.unwrap_or_else(|| panic!("{yaml}: {:?}", r.warnings));
        assert!(
            warned.starts_with("OPENAI_BASE_URL (https://gateway.example) is ignored")
                && warned.contains("sends its key (PERPLEXITY_API_KEY)"),
            "{warned}"
        );
    }
    // Without allow_foreign_key the second goes nowhere: its URL is then OpenAI's.
    let yaml = "openai: {provider: perplexity, api_key_env: PERPLEXITY_API_KEY}";
    let vars = env(&[
        ("OPENAI_BASE_URL", shell),
        ("PERPLEXITY_API_KEY", "pplx-k"),
        ("OPENAI_PROVIDER", "openai"),
    ]);
    let e = run(Some(yaml), &vars, &Cli::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("openai.api_key_env is PERPLEXITY_API_KEY"),
        "{e}"
    );
    // OpenAI's own key follows the variable, and says so when it overrides the file's URL.
    let yaml = "openai: {base_url: 'https://eu.api.openai.com/v1'}";
    let vars = env(&[("OPENAI_BASE_URL", shell), ("OPENAI_API_KEY", "sk-k")]);
    let r = run(Some(yaml), &vars, &Cli::default()).unwrap();
    assert_eq!(r.get("openai.base_url"), Some(&json!(shell)));
    assert!(r.carries_openai_key());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].starts_with("OPENAI_BASE_URL (https://gateway.example) overrides openai.base_url (https://eu.api.openai.com, from yaml:/etc/orm/config.yaml)")
            && r.warnings[0].contains("unset OPENAI_BASE_URL to use the file's"),
        "{:?}",
        r.warnings
    );
    // The same URL in both: nothing to say.
    let same = env(&[("OPENAI_BASE_URL", "https://eu.api.openai.com/v1/")]);
    let r = run(Some(yaml), &same, &Cli::default()).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

/// A preset pointed at another host than its service's sends its key there: allowed (a
/// gateway), but said, without the URL's secrets (issue 47's review, F2).
#[test]
fn a_presets_key_sent_to_another_host_is_warned_about() {
    let perplexity = Cli {
        provider: Some("perplexity".into()),
        ..Cli::default()
    };
    // (To OpenAI's own host, another service's key is refused: see
    // another_services_key_bound_for_openais_host_refuses_to_start.)
    let yaml = "openai: {base_url: 'https://u:pw@gateway.example/v1/tok'}";
    let key = env(&[("PERPLEXITY_API_KEY", "pplx-planted")]);
    let r = run(Some(yaml), &key, &perplexity).unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(
        w.starts_with("openai.base_url (https://gateway.example, from yaml:/etc/orm/config.yaml) is not provider perplexity's own host (https://api.perplexity.ai)")
            && w.contains("its key (PERPLEXITY_API_KEY) is sent there"),
        "{w}"
    );
    assert!(!w.contains("pw") && !w.contains("tok") && !w.contains("pplx-planted"));
    // The provider's own host, another path or port: nothing to say.
    let own = "openai: {base_url: 'https://api.perplexity.ai:443/v2'}";
    let r = run(Some(own), &key, &perplexity).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // No key in the variable: nothing goes there.
    let r = run(Some(yaml), &env(&[]), &perplexity).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Azure's own host is the resource's.
    let azure = Cli {
        provider: Some("azure".into()),
        ..Cli::default()
    };
    let vars = env(&[
        ("AZURE_OPENAI_API_KEY", "az"),
        ("AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com"),
    ]);
    let r = run(Some(yaml), &vars, &azure).unwrap();
    assert!(
        r.warnings[0].contains("own host (https://contoso.openai.azure.com)"),
        "{:?}",
        r.warnings
    );
}

/// OpenAI's organization and project go with OpenAI's own key only (issue 47's review, F6).
#[test]
fn openai_ids_go_only_with_openais_own_key() {
    let ids = [("OPENAI_ORG_ID", "org-1"), ("OPENAI_PROJECT_ID", "proj-1")];
    let r = run(None, &env(&ids), &Cli::default()).unwrap();
    assert!(r.carries_openai_key());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let perplexity = Cli {
        provider: Some("perplexity".into()),
        ..Cli::default()
    };
    let r = run(None, &env(&ids), &perplexity).unwrap();
    assert!(!r.carries_openai_key());
    assert_eq!(
        r.warnings,
        ["OPENAI_ORG_ID and OPENAI_PROJECT_ID are not sent: they name an OpenAI organization and project, and provider perplexity's requests carry the key in PERPLEXITY_API_KEY, not OpenAI's own (OPENAI_API_KEY); unset them here to silence this"]
    );
    let other_key = "openai: {api_key_env: GATEWAY_KEY}";
    let r = run(Some(other_key), &env(&ids[..1]), &Cli::default()).unwrap();
    assert!(!r.carries_openai_key());
    assert!(
        r.warnings[0].starts_with("OPENAI_ORG_ID is not sent"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn an_open_metrics_listener_without_a_token_is_refused_naming_its_own_setting() {
    use responses_mcp_config::http::HttpServe;
    let e = env(&[]);
    // From the command line: the flag and its key, not server.http.listen.
    let cli = Cli {
        metrics_listen: Some("0.0.0.0:0".into()),
        ..Cli::default()
    };
    let r = run(None, &e, &cli).unwrap();
    let text = HttpServe::resolve_metrics(&r, &e, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        text.starts_with("--metrics-listen (server.metrics_listen) = 0.0.0.0:0 is reachable"),
        "{text}"
    );
    assert!(!text.contains("server.http.listen"), "{text}");
    assert!(text.contains("MCP_HTTP_TOKEN"), "{text}");
    // From the file: the key.
    let r = run(
        Some("server: {metrics_listen: '0.0.0.0:9100'}"),
        &e,
        &Cli::default(),
    )
    .unwrap();
    let text = HttpServe::resolve_metrics(&r, &e, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        text.starts_with("server.metrics_listen = 0.0.0.0:9100 is reachable"),
        "{text}"
    );
    // The main listener still names its own.
    let r = run(
        Some("server: {http: {listen: '0.0.0.0:9000'}}"),
        &e,
        &Cli::default(),
    )
    .unwrap();
    let text = HttpServe::resolve(&r, &e, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        text.starts_with("server.http.listen = 0.0.0.0:9000 is reachable"),
        "{text}"
    );
    // With a token, the metrics listener opens.
    let e = env(&[("MCP_HTTP_TOKEN", "a-long-random-secret-0123456789")]);
    let r = run(None, &e, &cli).unwrap();
    assert!(HttpServe::resolve_metrics(&r, &e, None).is_ok_and(|m| m.is_some()));
}

/// Another service's key is never sent to OpenAI's host (issue 56): by the variable that
/// holds it, or by how it begins; the message says what to set and shows no key.
#[test]
fn another_services_key_bound_for_openais_host_refuses_to_start() {
    const SECRET: &str = "0123456789abcdef-SECRET";
    let or_key = format!("sk-or-v1-{SECRET}");
    let pplx_key = format!("pplx-{SECRET}");
    /// A configuration, its environment, and what the refusal says.
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "openai: {api_key_env: OPENROUTER_API_KEY}",
            vec![("OPENROUTER_API_KEY", or_key.as_str())],
            "openai.api_key_env is OPENROUTER_API_KEY (from yaml:/etc/orm/config.yaml), OpenRouter's variable, and the requests go to api.openai.com (openai.base_url https://api.openai.com, from default): OpenAI would receive a key that is not its own. Set openai.provider: openrouter",
        ),
        (
            "openai: {api_key_env: PERPLEXITY_API_KEY}",
            vec![],
            "openai.api_key_env is PERPLEXITY_API_KEY (from yaml:/etc/orm/config.yaml), Perplexity's variable",
        ),
        (
            "openai: {api_key_env: MY_GROQ_KEY}",
            vec![],
            "Groq's variable, and the requests go to api.openai.com",
        ),
        (
            "",
            vec![("OPENAI_API_KEY", or_key.as_str())],
            "the key in OPENAI_API_KEY begins as OpenRouter's keys do (sk-or-…), and the requests go to api.openai.com",
        ),
        (
            "openai: {base_url: 'https://eu.api.openai.com/v1'}",
            vec![("OPENAI_API_KEY", pplx_key.as_str())],
            "the key in OPENAI_API_KEY begins as Perplexity's keys do (pplx-…), and the requests go to eu.api.openai.com",
        ),
    ];
    for (yaml, vars, says) in &cases {
        let e = run(Some(yaml), &env(vars), &Cli::default()).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(says), "{yaml}: {text}");
        assert!(
            text.contains("set openai.allow_foreign_key: true"),
            "{text}"
        );
        assert!(
            !text.contains(SECRET) && !text.contains("sk-or-v1"),
            "{text}"
        );
    }
    // Meant: allowed by name. The preset, or another URL, sends it where it belongs.
    for (yaml, vars) in [
        (
            "openai: {api_key_env: OPENROUTER_API_KEY, allow_foreign_key: true}",
            vec![("OPENROUTER_API_KEY", or_key.as_str())],
        ),
        (
            "openai: {allow_foreign_key: true}",
            vec![("OPENAI_API_KEY", or_key.as_str())],
        ),
        (
            "openai: {provider: openrouter}",
            vec![("OPENROUTER_API_KEY", or_key.as_str())],
        ),
        (
            "openai: {api_key_env: OPENROUTER_API_KEY, base_url: 'https://openrouter.ai/api/v1'}",
            vec![("OPENROUTER_API_KEY", or_key.as_str())],
        ),
        ("", vec![("OPENAI_API_KEY", "sk-proj-0123456789")]),
    ] {
        let r = run(Some(yaml), &env(&vars), &Cli::default());
        assert!(r.is_ok(), "{yaml}: {:?}", r.err());
    }
}
