//! Building the `POST /responses` body.

use crate::vocab::{Effort, Style, Verbosity};

/// What a model accepts, by its id (spec 5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// `text.verbosity` (gpt-5 family).
    pub verbosity: bool,
    /// `reasoning.effort` (gpt-5, o3, o4 families).
    pub reasoning: bool,
}

/// The parameters `model` accepts, judged from its id.
pub fn model_supports(model: &str) -> Capabilities {
    let m = model.to_ascii_lowercase();
    // Tolerate provider prefixes such as `openai/gpt-5`.
    let m = m.rsplit('/').next().unwrap_or(&m);
    Capabilities {
        verbosity: m.starts_with("gpt-5"),
        reasoning: m.starts_with("gpt-5") || m.starts_with("o3") || m.starts_with("o4"),
    }
}

/// Everything that goes into one call's request body, decided once when the call starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestPlan {
    /// The model id.
    pub model: String,
    /// The user message: the query plus hints.
    pub input: String,
    /// `reasoning.effort`, when sent.
    pub effort: Option<Effort>,
    /// `text.verbosity`, when sent.
    pub verbosity: Option<Verbosity>,
    /// `filters.allowed_domains` on the web_search tool; empty means no filter.
    pub allowed_domains: Vec<String>,
    /// Ask for the answer as an event stream (`"stream": true`).
    pub stream: bool,
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
        b.extend_from_slice(br#","tools":[{"type":"web_search""#);
        if !self.allowed_domains.is_empty() {
            b.extend_from_slice(br#","filters":{"allowed_domains":["#);
            for (i, d) in self.allowed_domains.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                string(&mut b, d);
            }
            b.extend_from_slice(b"]}");
        }
        b.extend_from_slice(br#"}],"include":["web_search_call.action.sources"]"#);
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
        if self.stream {
            // Obfuscation pads every delta with random text to hide its length from the
            // network; over TLS to a trusted endpoint it only costs bandwidth.
            b.extend_from_slice(
                br#","stream":true,"stream_options":{"include_obfuscation":false}"#,
            );
        }
        b.push(b'}');
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn capabilities_by_model_family() {
        assert_eq!(
            model_supports("gpt-5-mini"),
            Capabilities {
                verbosity: true,
                reasoning: true
            }
        );
        assert_eq!(
            model_supports("o3"),
            Capabilities {
                verbosity: false,
                reasoning: true
            }
        );
        assert_eq!(
            model_supports("o4-mini"),
            Capabilities {
                verbosity: false,
                reasoning: true
            }
        );
        assert_eq!(
            model_supports("gpt-4.1"),
            Capabilities {
                verbosity: false,
                reasoning: false
            }
        );
        assert_eq!(
            model_supports("openai/gpt-5"),
            Capabilities {
                verbosity: true,
                reasoning: true
            }
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
            stream: false,
        };
        let v: Value = serde_json::from_slice(&plan.body("POLICY")).unwrap();
        assert_eq!(
            v,
            json!({"model":"gpt-5","instructions":"POLICY","input":"q",
                   "tools":[{"type":"web_search","filters":{"allowed_domains":["jma.go.jp"]}}],
                   "include":["web_search_call.action.sources"],
                   "text":{"verbosity":"high"},"reasoning":{"effort":"low"}})
        );
        let bare = RequestPlan {
            effort: None,
            verbosity: None,
            allowed_domains: vec![],
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
}
