//! The `drift` fuzz target.

use responses_mcp_core::openai::classify_reply;
use serde_json::Value;

/// Arbitrary 400 bodies read as a model's limits: reading never panics, fitting a full
/// plan inside a limit changes it at most once (so a call's retries to fit always end),
/// and the body still classifies. The first byte picks the status.
pub fn drift(data: &[u8]) {
    use responses_mcp_core::openai::drift::{fit, ParamRejection};
    use responses_mcp_core::openai::RequestPlan;
    use responses_mcp_core::vocab::{Effort, SearchContextSize, ServiceTier, Verbosity};
    use responses_mcp_core::{SearchOptions, UserLocation};
    let body = data.get(1..).unwrap_or_default();
    let _ = classify_reply(400, &[], body);
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let error = value.get("error").unwrap_or(&value);
    let Some(rejection) = ParamRejection::from_error(error) else {
        return;
    };
    let effort = Effort::ALL[usize::from(data[0]) % Effort::ALL.len()];
    let mut plan = RequestPlan {
        model: "m".into(),
        effort: Some(effort),
        verbosity: Some(Verbosity::Low),
        search: SearchOptions {
            context_size: Some(SearchContextSize::High),
            user_location: Some(UserLocation {
                country: Some("JP".into()),
                ..UserLocation::default()
            }),
            external_web_access: Some(false),
        },
        service_tier: Some(ServiceTier::Priority),
        max_output_tokens: Some(100_000),
        ..RequestPlan::default()
    };
    if let Some(adjustment) = fit(&mut plan, rejection.param, &rejection.limit) {
        assert_eq!(adjustment.param, rejection.param);
        assert_ne!(adjustment.to.as_deref(), Some(adjustment.from.as_str()));
        assert!(
            fit(&mut plan, rejection.param, &rejection.limit).is_none(),
            "a second fit inside the same limit changes nothing"
        );
    }
}
