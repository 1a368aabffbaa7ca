use super::*;

fn op(method: &'static str, error: Option<ErrorType>) -> Operation {
    Operation {
        method,
        tool: (method == "tools/call").then_some("answer"),
        error,
        transport: "pipe",
        version: "2025-11-25",
    }
}

#[test]
fn a_histogram_is_cumulative_and_ends_at_inf() {
    let mut m = Metrics::default();
    for s in [0.005, 0.01, 0.3, 400.0] {
        m.operation(op("tools/call", None), Duration::from_secs_f64(s));
    }
    let text = String::from_utf8(m.render(&Gauges::default())).unwrap();
    let labels = r#"mcp_method_name="tools/call",gen_ai_tool_name="answer",network_transport="pipe",mcp_protocol_version="2025-11-25""#;
    for (le, n) in [("0.01", 2), ("0.2", 2), ("0.5", 3), ("300", 3), ("+Inf", 4)] {
        let line =
            format!("mcp_server_operation_duration_seconds_bucket{{{labels},le=\"{le}\"}} {n}\n");
        assert!(text.contains(&line), "{line} in\n{text}");
    }
    assert!(text.contains(&format!(
        "mcp_server_operation_duration_seconds_count{{{labels}}} 4\n"
    )));
    assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram\n"));
}

#[test]
fn errors_and_label_values_are_written_safely() {
    let mut m = Metrics::default();
    m.operation(op("tools/call", Some(ErrorType::Tool)), Duration::ZERO);
    m.operation(
        op("initialize", Some(ErrorType::Rpc(-32602))),
        Duration::ZERO,
    );
    let usage = Usage {
        input_tokens: 10,
        ..Usage::default()
    };
    m.usage(
        "odd\"model\\\n",
        "default",
        &usage,
        &Estimate::Unknown(crate::openai::pricing::Unpriced::Model),
    );
    let text = String::from_utf8(m.render(&Gauges::default())).unwrap();
    assert!(text.contains(r#"error_type="tool_error""#), "{text}");
    assert!(text.contains(r#"error_type="-32602""#), "{text}");
    assert!(
        text.contains(r#"model="odd\"model\\\n",kind="input"} 10"#),
        "{text}"
    );
    // An unknown price adds no cost series.
    assert!(!text.contains("estimated_cost_usd_total{"), "{text}");
    // Every line is a comment or `name{labels} value`.
    for line in text.lines() {
        assert!(
            line.starts_with("# ")
                || line
                    .rsplit_once(' ')
                    .is_some_and(|(_, v)| v.parse::<f64>().is_ok() || v == "+Inf"),
            "{line}"
        );
    }
}

#[test]
fn models_beyond_the_cap_count_as_other() {
    let mut m = Metrics::default();
    let usage = Usage {
        output_tokens: 1,
        ..Usage::default()
    };
    let none = Estimate::Unknown(crate::openai::pricing::Unpriced::Model);
    for i in 0..MAX_MODELS + 5 {
        m.usage(&format!("model-{i}"), "default", &usage, &none);
    }
    m.usage("model-0", "default", &usage, &none);
    assert_eq!(m.usage.len(), MAX_MODELS + 1);
    let of = |name: &str| m.usage.iter().find(|(n, _)| n == name).map(|(_, c)| c[2]);
    assert_eq!((of(OTHER), of("model-0")), (Some(5), Some(2)));
}
