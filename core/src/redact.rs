//! Removing what looks like a credential from text that came from elsewhere: an upstream
//! error message such as OpenAI's "Incorrect API key provided: sk-proj-abc…***xyz" is
//! passed on to the model, the call log and traces, and none of them may carry a piece
//! of a key, masked or not.
//!
//! [`crate::http::scrub`] removes the one key the request carried, exactly; this removes
//! anything of a key's shape, including a masked fragment or another service's key:
//! - a word that starts as a provider's key does (`sk-`, `sk_`, `pplx-`, `xai-`,
//!   `gsk_`, `AIza`, `hf_`, GitHub's and GitLab's, Slack's `xox`, a JWT's `eyJ`);
//! - the word after `Bearer` or `Basic` (a credential in a quoted header);
//! - a run of at least 32 letters and digits (base64, hex) holding both, unless it
//!   starts as one of OpenAI's public ids does (`resp_`, `req_`, `file-`…), which a
//!   reader needs to report a problem.
//!
//! Each becomes `[redacted]`; the rest of the text is kept as it was.

use std::borrow::Cow;

/// What a removed fragment is replaced with.
pub const REDACTED: &str = "[redacted]";

/// How keys of known services begin (case as the services write them).
const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "pplx-",
    "xai-",
    "gsk_",
    "AIza",
    "hf_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "eyJ",
];

/// How OpenAI's public ids begin: long, but no secret, and what support asks for.
const PUBLIC_ID_PREFIXES: &[&str] = &[
    "resp_",
    "req_",
    "msg_",
    "rs_",
    "ws_",
    "fc_",
    "call_",
    "file-",
    "vs_",
    "org-",
    "proj_",
    "batch_",
    "run_",
    "asst_",
    "thread_",
    "chatcmpl-",
    "task-",
];

/// Shortest run of letters and digits taken for a key or token by its length alone.
const LONG_RUN: usize = 32;

/// `text` with every fragment of a key's shape replaced by [`REDACTED`] (borrowed when
/// there is none).
pub fn key_fragments(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    // Bytes of `text` already copied to `out` (once something was replaced).
    let mut copied = 0;
    let mut after_scheme = false;
    for (start, word) in words(text) {
        let secret = (after_scheme && is_credential(word)) || is_key_shaped(word);
        after_scheme = word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("basic");
        if secret {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = start + word.len();
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The words of `text` with where each starts: runs of the characters keys, tokens and
/// their masked forms are made of (a sentence's full stop after one is not part of it).
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let is_part = |c: char| c.is_ascii_alphanumeric() || "-_+/=*.~…".contains(c);
    let mut rest = 0;
    std::iter::from_fn(move || {
        let start = rest + text[rest..].find(is_part)?;
        let len = text[start..]
            .find(|c| !is_part(c))
            .unwrap_or(text.len() - start);
        rest = start + len;
        let word = text[start..start + len].trim_end_matches('.');
        Some((start, word))
    })
    .filter(|(_, w)| !w.is_empty())
}

/// A word that looks like a key: a known key's start, or a long run of letters and
/// digits that is not one of OpenAI's public ids.
fn is_key_shaped(word: &str) -> bool {
    if KEY_PREFIXES
        .iter()
        .any(|p| word.len() > p.len() + 2 && word.starts_with(p))
    {
        return true;
    }
    let alphanumeric = word
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(LONG_RUN)
        .count();
    alphanumeric >= LONG_RUN
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
        && !PUBLIC_ID_PREFIXES.iter().any(|p| word.starts_with(p))
        && !word.contains("//")
}

/// The word after `Bearer` or `Basic`: a credential unless it reads as a plain word
/// ("the Bearer token").
fn is_credential(word: &str) -> bool {
    word.len() >= 24 || (word.len() >= 8 && word.chars().any(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_fragments_of_every_shape_are_removed() {
        let cases = [
            (
                "Incorrect API key provided: sk-proj-abc…***xyz. You can find your API key at https://platform.openai.com/account/api-keys.",
                "Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.",
            ),
            (
                "Incorrect API key provided: sk-abc12***************************************xyz9.",
                "Incorrect API key provided: [redacted].",
            ),
            ("key sk-or-v1-0123456789abcdef is not valid", "key [redacted] is not valid"),
            ("pplx-AbCdEf0123 rejected", "[redacted] rejected"),
            ("(sk_live_51Habc)", "([redacted])"),
            ("Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [redacted]"),
            ("authorization: bearer 0123456789", "authorization: bearer [redacted]"),
            ("Basic dXNlcjpwYXNzd29yZDEyMw==", "Basic [redacted]"),
            (
                "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig expired",
                "token [redacted] expired",
            ),
            (
                "hash 0123456789abcdef0123456789abcdef0123 seen",
                "hash [redacted] seen",
            ),
            (
                "AIzaSyA-0123456789abcdefghijklmnopqrstu and AIzaSyB",
                "[redacted] and [redacted]",
            ),
            ("xai-abcdef and gsk_abcdef", "[redacted] and [redacted]"),
        ];
        for (text, want) in cases {
            assert_eq!(key_fragments(text), want, "{text}");
        }
    }

    #[test]
    fn plain_text_and_public_ids_are_kept_as_they_are() {
        for text in [
            "The model `gpt-6.1-terra` does not exist or you do not have access to it.",
            "Rate limit reached for gpt-5 in organization org-abc123 on tokens per min (TPM): Limit 30000, Used 29000.",
            "Please include the request ID req_0123456789abcdef0123456789abcdef in your message.",
            "Previous response with id 'resp_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607' not found.",
            "the Bearer token is missing",
            "See https://docs.perplexity.ai/guides/getting-started-2024/authentication-keys",
            "risk-based and desk-top and task-0123",
            "",
        ] {
            assert!(matches!(key_fragments(text), Cow::Borrowed(t) if t == text), "{text}");
        }
    }

    #[test]
    fn text_of_any_script_is_cut_only_between_characters() {
        let text = "ключ sk-proj-XYZ123 неверен… 鍵 pplx-abc123";
        assert_eq!(
            key_fragments(text),
            "ключ [redacted] неверен… 鍵 [redacted]"
        );
    }
}
