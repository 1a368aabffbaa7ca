//! Building the `POST /responses` body.

use super::options::{Api, CompletionWindow, SearchOptions, WebSearch};
use crate::vocab::{Effort, ServiceTier, Style, Verbosity};

/// Everything that goes into one call's request body, decided when the call starts (and
/// moved inside a model's limits when it refuses a parameter).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestPlan {
    /// The model id.
    pub model: String,
    /// The setting the model came from, such as `model_profiles.answer.model`, for advice.
    pub model_setting: &'static str,
    /// The user message: the query plus hints.
    pub input: String,
    /// `reasoning.effort`, when sent.
    pub effort: Option<Effort>,
    /// `text.verbosity`, when sent.
    pub verbosity: Option<Verbosity>,
    /// Whose API the request goes to.
    pub api: Api,
    /// How the provider searches; [`WebSearch::Unavailable`] sends no tool.
    pub web_search: WebSearch,
    /// `filters.allowed_domains` on the web_search tool; empty means no filter.
    pub allowed_domains: Vec<String>,
    /// The web_search tool's settings (OpenAI's tool only).
    pub search: SearchOptions,
    /// `service_tier`, when sent.
    pub service_tier: Option<ServiceTier>,
    /// `max_output_tokens`, when sent.
    pub max_output_tokens: Option<u64>,
    /// Ask for the answer as an event stream (`"stream": true`).
    pub stream: bool,
    /// OpenAI background mode: the response runs and is stored at OpenAI
    /// (`"background": true, "store": true`), read later by its id; never streamed.
    pub background: bool,
    /// `background_options.completion_window` of a background request, when not the
    /// default (`soonest`).
    pub completion_window: Option<CompletionWindow>,
    /// Which user the call is for, as OpenAI may be told it (never who): sent only to
    /// an API that takes it ([`Api::takes_user_ids`]).
    pub user: Option<UserIds>,
}

/// `safety_identifier` and `prompt_cache_key`: keyed hashes of the caller's identity,
/// made by the server (`server/user_ids.rs`), each at most 64 characters as OpenAI's
/// `safety_identifier` must be (`CreateResponse` in OpenAI's OpenAPI description, and
/// help.openai.com/en/articles/5428082 on safety identifiers, read 2026-11-29).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserIds {
    /// Lets OpenAI tell one abusive user from the organisation.
    pub safety_identifier: String,
    /// Keeps one user's requests on the machines that cached their prefix.
    pub prompt_cache_key: String,
}

/// Hints that go into the user message after the query.
#[derive(Clone, Debug, Default)]
pub struct Hints<'a> {
    /// Today's date in Asia/Tokyo, `YYYY-MM-DD`.
    pub today: String,
    /// Prefer sources from the last N days.
    pub recency_days: Option<u64>,
    /// How many results to consider.
    pub max_results: Option<u64>,
    /// Answer style.
    pub style: Option<Style>,
    /// Domains searched.
    pub domains: &'a [String],
}

impl RequestPlan {
    /// The user message: the query, then the hints.
    pub fn input_text(query: &str, hints: &Hints<'_>) -> String {
        let mut s = String::with_capacity(query.len() + 256);
        s.push_str(query);
        s.push_str("\n\n[context]\n- Today's date (Asia/Tokyo): ");
        s.push_str(&hints.today);
        if let Some(days) = hints.recency_days {
            s.push_str(&format!(
                "\n- Prefer sources published within the last {days} days."
            ));
        }
        if let Some(n) = hints.max_results {
            s.push_str(&format!("\n- Consider at most {n} search results."));
        }
        if !hints.domains.is_empty() {
            s.push_str("\n- Search only these sites: ");
            s.push_str(&hints.domains.join(", "));
        }
        s.push_str("\n- Style: ");
        s.push_str(hints.style.unwrap_or(Style::Summary).as_str());
        s
    }

    /// The JSON body, with `instructions` verbatim.
    pub fn body(&self, instructions: &str) -> Vec<u8> {
        // Serialising a string cannot fail.
        #[allow(clippy::expect_used)]
        let instructions = serde_json::to_vec(instructions).expect("a string is always valid JSON");
        self.body_with(&instructions)
    }

    /// The JSON body, given `instructions` already encoded as a JSON string. The policy is
    /// the largest part of every body, so the server escapes it once, not per attempt.
    pub fn body_with(&self, instructions_json: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(instructions_json.len() + self.input.len() + 256);
        let string = |b: &mut Vec<u8>, s: &str| {
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *b, s);
        };
        b.extend_from_slice(br#"{"model":"#);
        string(&mut b, &self.model);
        b.extend_from_slice(br#","instructions":"#);
        b.extend_from_slice(instructions_json);
        b.extend_from_slice(br#","input":"#);
        string(&mut b, &self.input);
        self.write_tools(&mut b);
        if let Some(v) = self.verbosity {
            b.extend_from_slice(br#","text":{"verbosity":""#);
            b.extend_from_slice(v.as_str().as_bytes());
            b.extend_from_slice(br#""}"#);
        }
        if let Some(e) = self.effort {
            b.extend_from_slice(br#","reasoning":{"effort":""#);
            b.extend_from_slice(e.as_str().as_bytes());
            b.extend_from_slice(br#""}"#);
        }
        if let Some(tier) = self.service_tier {
            b.extend_from_slice(br#","service_tier":""#);
            b.extend_from_slice(tier.as_str().as_bytes());
            b.push(b'"');
        }
        if let Some(n) = self.max_output_tokens {
            b.extend_from_slice(format!(r#","max_output_tokens":{n}"#).as_bytes());
        }
        if let Some(user) = self.user.as_ref().filter(|_| self.api.takes_user_ids()) {
            b.extend_from_slice(br#","safety_identifier":"#);
            string(&mut b, &user.safety_identifier);
            b.extend_from_slice(br#","prompt_cache_key":"#);
            string(&mut b, &user.prompt_cache_key);
        }
        if self.background {
            b.extend_from_slice(br#","background":true"#);
            if self.api == Api::OpenAi {
                // OpenAI keeps a background response only when asked to store it.
                b.extend_from_slice(br#","store":true"#);
            }
            if let Some(window) = self.completion_window {
                b.extend_from_slice(br#","background_options":{"completion_window":""#);
                b.extend_from_slice(window.as_str().as_bytes());
                b.extend_from_slice(br#""}"#);
            }
        } else if self.stream {
            // Obfuscation pads every delta with random text to hide its length from the
            // network; over TLS to a trusted endpoint it only costs bandwidth.
            b.extend_from_slice(
                br#","stream":true,"stream_options":{"include_obfuscation":false}"#,
            );
        }
        b.push(b'}');
        b
    }

    /// `"tools"` and `"include"` for the provider's search, or nothing without one.
    fn write_tools(&self, b: &mut Vec<u8>) {
        let string = |b: &mut Vec<u8>, s: &str| {
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *b, s);
        };
        match self.web_search {
            WebSearch::Unavailable | WebSearch::Always => {}
            WebSearch::Perplexity => self.write_perplexity_tool(b),
            // OpenRouter's server tool takes no OpenAI options; the domains are in the
            // input's hints.
            WebSearch::OpenRouter => {
                b.extend_from_slice(br#","tools":[{"type":"openrouter:web_search"}]"#)
            }
            WebSearch::OpenAi => {
                b.extend_from_slice(br#","tools":[{"type":"web_search""#);
                if !self.allowed_domains.is_empty() {
                    b.extend_from_slice(br#","filters":{"allowed_domains":["#);
                    for (i, d) in self.allowed_domains.iter().enumerate() {
                        if i > 0 {
                            b.push(b',');
                        }
                        string(b, d);
                    }
                    b.extend_from_slice(b"]}");
                }
                if let Some(size) = self.search.context_size {
                    b.extend_from_slice(br#","search_context_size":""#);
                    b.extend_from_slice(size.as_str().as_bytes());
                    b.push(b'"');
                }
                if let Some(at) = &self.search.user_location {
                    b.extend_from_slice(br#","user_location":{"type":"approximate""#);
                    let fields = [
                        ("country", &at.country),
                        ("region", &at.region),
                        ("city", &at.city),
                        ("timezone", &at.timezone),
                    ];
                    for (name, value) in fields {
                        if let Some(value) = value {
                            b.extend_from_slice(format!(r#","{name}":"#).as_bytes());
                            string(b, value);
                        }
                    }
                    b.push(b'}');
                }
                if let Some(live) = self.search.external_web_access {
                    b.extend_from_slice(br#","external_web_access":"#);
                    b.extend_from_slice(if live { b"true" } else { b"false" });
                }
                b.extend_from_slice(br#"}],"include":["web_search_call.action.sources"]"#);
            }
        }
    }

    /// Perplexity's `web_search` tool: the domains as `filters.search_domain_filter`
    /// (at most 20, its limit) and the location without a time zone; no `include`.
    fn write_perplexity_tool(&self, b: &mut Vec<u8>) {
        let string = |b: &mut Vec<u8>, s: &str| {
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *b, s);
        };
        b.extend_from_slice(br#","tools":[{"type":"web_search""#);
        if !self.allowed_domains.is_empty() {
            b.extend_from_slice(br#","filters":{"search_domain_filter":["#);
            for (i, d) in self.allowed_domains.iter().take(20).enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                string(b, d);
            }
            b.extend_from_slice(b"]}");
        }
        if let Some(at) = &self.search.user_location {
            let fields = [
                ("country", &at.country),
                ("region", &at.region),
                ("city", &at.city),
            ];
            if fields.iter().any(|(_, v)| v.is_some()) {
                b.extend_from_slice(br#","user_location":{"#);
                let mut first = true;
                for (name, value) in fields {
                    if let Some(value) = value {
                        if !first {
                            b.push(b',');
                        }
                        first = false;
                        b.extend_from_slice(format!(r#""{name}":"#).as_bytes());
                        string(b, value);
                    }
                }
                b.push(b'}');
            }
        }
        b.extend_from_slice(b"}]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn perplexity_and_parallel_bodies_carry_their_own_search() {
        let domains: Vec<String> = (0..25).map(|i| format!("d{i}.example")).collect();
        let plan = RequestPlan {
            model: "openai/gpt-5.5".into(),
            input: "q".into(),
            api: Api::Perplexity,
            web_search: WebSearch::Perplexity,
            allowed_domains: domains,
            search: SearchOptions {
                user_location: Some(super::super::options::UserLocation {
                    country: Some("JP".into()),
                    city: Some("Tokyo".into()),
                    timezone: Some("Asia/Tokyo".into()),
                    ..Default::default()
                }),
                ..SearchOptions::default()
            },
            background: true,
            ..RequestPlan::default()
        };
        let v: Value = serde_json::from_slice(&plan.body("P")).unwrap();
        let tool = &v["tools"][0];
        assert_eq!(tool["type"], "web_search");
        // Perplexity's limit, and no time zone (its location has none).
        assert_eq!(
            tool["filters"]["search_domain_filter"]
                .as_array()
                .unwrap()
                .len(),
            20
        );
        assert_eq!(
            tool["user_location"],
            json!({"country": "JP", "city": "Tokyo"})
        );
        assert!(v.get("include").is_none());
        // Background without OpenAI's `store`.
        assert_eq!(
            (v["background"].clone(), v.get("store")),
            (json!(true), None)
        );
        let parallel = RequestPlan {
            model: "parallel".into(),
            api: Api::Parallel,
            web_search: WebSearch::Always,
            background: false,
            ..plan
        };
        let v: Value = serde_json::from_slice(&parallel.body("P")).unwrap();
        assert!(
            v.get("tools").is_none() && v.get("include").is_none(),
            "{v}"
        );
    }

    #[test]
    fn body_has_every_field() {
        let plan = RequestPlan {
            model: "gpt-5".into(),
            input: "q".into(),
            effort: Some(Effort::Low),
            verbosity: Some(Verbosity::High),
            allowed_domains: vec!["jma.go.jp".into()],
            ..RequestPlan::default()
        };
        let v: Value = serde_json::from_slice(&plan.body("POLICY")).unwrap();
        assert_eq!(
            v,
            json!({"model":"gpt-5","instructions":"POLICY","input":"q",
                   "tools":[{"type":"web_search","filters":{"allowed_domains":["jma.go.jp"]},
                             "user_location":{"type":"approximate"}}],
                   "include":["web_search_call.action.sources"],
                   "text":{"verbosity":"high"},"reasoning":{"effort":"low"}})
        );
        // A location configured `null` (or refused by the provider) is not sent at all.
        let bare = RequestPlan {
            effort: None,
            verbosity: None,
            allowed_domains: vec![],
            search: SearchOptions {
                user_location: None,
                ..SearchOptions::default()
            },
            ..plan
        };
        let v: Value = serde_json::from_slice(&bare.body("P")).unwrap();
        assert_eq!(v["tools"], json!([{"type":"web_search"}]));
        assert!(v.get("text").is_none() && v.get("reasoning").is_none());
        assert!(v.get("stream").is_none());
        let streamed = RequestPlan {
            stream: true,
            ..bare
        };
        let v: Value = serde_json::from_slice(&streamed.body("P")).unwrap();
        assert_eq!(
            (v["stream"].clone(), v["stream_options"].clone()),
            (json!(true), json!({"include_obfuscation": false}))
        );
    }

    #[test]
    fn the_user_ids_go_to_openai_only() {
        let user = UserIds {
            safety_identifier: "u-1".into(),
            prompt_cache_key: "c-1".into(),
        };
        let plan = RequestPlan {
            model: "gpt-5".into(),
            user: Some(user),
            ..RequestPlan::default()
        };
        let v: Value = serde_json::from_slice(&plan.body("P")).unwrap();
        assert_eq!(
            (
                v["safety_identifier"].clone(),
                v["prompt_cache_key"].clone()
            ),
            (json!("u-1"), json!("c-1"))
        );
        for api in [Api::Perplexity, Api::Parallel] {
            let other = RequestPlan {
                api,
                ..plan.clone()
            };
            let v: Value = serde_json::from_slice(&other.body("P")).unwrap();
            assert!(v.get("safety_identifier").is_none(), "{v}");
            assert!(v.get("prompt_cache_key").is_none(), "{v}");
        }
    }

    #[test]
    fn profile_tuning_goes_on_the_tool_and_the_body() {
        use crate::openai::options::UserLocation;
        use crate::vocab::SearchContextSize;
        let plan = RequestPlan {
            model: "gpt-5.6-terra".into(),
            input: "q".into(),
            search: SearchOptions {
                context_size: Some(SearchContextSize::High),
                user_location: Some(UserLocation {
                    country: Some("JP".into()),
                    city: Some("Minato \"Tokyo\"".into()),
                    timezone: Some("Asia/Tokyo".into()),
                    region: None,
                }),
                external_web_access: Some(false),
            },
            service_tier: Some(ServiceTier::Flex),
            max_output_tokens: Some(2048),
            ..RequestPlan::default()
        };
        let v: Value = serde_json::from_slice(&plan.body("P")).unwrap();
        assert_eq!(
            v["tools"],
            json!([{"type":"web_search","search_context_size":"high",
                    "user_location":{"type":"approximate","country":"JP",
                                     "city":"Minato \"Tokyo\"","timezone":"Asia/Tokyo"},
                    "external_web_access":false}])
        );
        assert_eq!(
            (v["service_tier"].clone(), v["max_output_tokens"].clone()),
            (json!("flex"), json!(2048))
        );
    }

    #[test]
    fn providers_without_openai_search_get_their_own_tool_or_none() {
        let plan = RequestPlan {
            model: "gpt-oss:20b".into(),
            input: "q".into(),
            allowed_domains: vec!["example.com".into()],
            web_search: WebSearch::Unavailable,
            ..RequestPlan::default()
        };
        let v: Value = serde_json::from_slice(&plan.body("P")).unwrap();
        assert!(
            v.get("tools").is_none() && v.get("include").is_none(),
            "{v}"
        );
        let routed = RequestPlan {
            web_search: WebSearch::OpenRouter,
            ..plan
        };
        let v: Value = serde_json::from_slice(&routed.body("P")).unwrap();
        assert_eq!(v["tools"], json!([{"type":"openrouter:web_search"}]));
        assert!(v.get("include").is_none());
    }
}
