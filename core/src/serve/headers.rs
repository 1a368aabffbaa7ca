//! The request metadata headers of 2026-07-28 Streamable HTTP: `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` mirror fields of the body so that load balancers can route
//! on them, and a server that reads the body MUST refuse a request whose headers say
//! something else (400, [`ErrorKind::HeaderMismatch`](crate::jsonrpc::ErrorKind::HeaderMismatch), -32020): otherwise the balancer and the server
//! would act on different truths.

use super::base64;
use crate::mcp::meta::PROTOCOL_VERSION;
use serde_json::Value;

/// Why a modern request's headers were refused; the message names the header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Header mismatch: {0}")]
pub struct HeaderMismatch(String);

/// Methods whose target the `Mcp-Name` header mirrors, and the params field it comes from.
const NAMED: &[(&str, &str)] = &[
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
    // The Tasks extension: a task's requests carry its id, so that a load balancer can
    // send them to the instance that holds it.
    ("tasks/get", "taskId"),
    ("tasks/update", "taskId"),
    ("tasks/cancel", "taskId"),
];

/// Checks the mirrored headers of one modern request (`headers`: lower-case names, values
/// trimmed, as [`crate::http::Request`] holds them) against its body. Notifications
/// carry no required headers in this revision; only requests are checked.
pub fn check(headers: &[(String, String)], message: &Value) -> Result<(), HeaderMismatch> {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Ok(());
    };
    if message.get("id").is_none() {
        return Ok(());
    }
    let params = message.get("params");
    let body_version = declared_version(message).and_then(Value::as_str);
    let version = one(headers, "mcp-protocol-version", "MCP-Protocol-Version")?;
    compare("MCP-Protocol-Version", version, body_version)?;
    let header_method = one(headers, "mcp-method", "Mcp-Method")?;
    compare("Mcp-Method", header_method, Some(method))?;
    if let Some((_, field)) = NAMED.iter().find(|(m, _)| *m == method) {
        let body_name = params.and_then(|p| p.get(*field)).and_then(Value::as_str);
        let header = one(headers, "mcp-name", "Mcp-Name")?;
        let decoded = match header {
            Some(value) => Some(decode(value).ok_or_else(|| {
                HeaderMismatch(format!(
                    "the Mcp-Name header value {} is not valid Base64 of UTF-8 text",
                    quoted(value)
                ))
            })?),
            None => None,
        };
        compare("Mcp-Name", decoded.as_deref(), body_name)?;
    }
    Ok(())
}

/// The protocol version a message's `_meta` declares (a modern request), as sent.
pub fn declared_version(message: &Value) -> Option<&Value> {
    message.get("params")?.get("_meta")?.get(PROTOCOL_VERSION)
}

/// The single value of header `name`, checked for the characters RFC 9110 allows.
fn one<'a>(
    headers: &'a [(String, String)],
    name: &str,
    shown: &str,
) -> Result<Option<&'a str>, HeaderMismatch> {
    let mut values = headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v);
    let first = values.next();
    if values.next().is_some() {
        return Err(HeaderMismatch(format!(
            "the {shown} header is sent more than once"
        )));
    }
    match first {
        Some(v) if !v.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) => Err(
            HeaderMismatch(format!("the {shown} header holds characters outside visible ASCII; send non-ASCII values as =?base64?…?=")),
        ),
        other => Ok(other.map(String::as_str)),
    }
}

fn compare(shown: &str, header: Option<&str>, body: Option<&str>) -> Result<(), HeaderMismatch> {
    match (header, body) {
        (Some(h), Some(b)) if h == b => Ok(()),
        (None, None) => Ok(()),
        (None, Some(b)) => Err(HeaderMismatch(format!(
            "the {shown} header is missing; it must repeat the body's value {}",
            quoted(b)
        ))),
        (Some(h), None) => Err(HeaderMismatch(format!(
            "{shown} header value {} has no counterpart in the body",
            quoted(h)
        ))),
        (Some(h), Some(b)) => Err(HeaderMismatch(format!(
            "{shown} header value {} does not match body value {}",
            quoted(h),
            quoted(b)
        ))),
    }
}

/// A header value, decoded when it uses the `=?base64?…?=` sentinel form.
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(base64::decode(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// `'value'`, cut to a length that keeps an error message readable.
fn quoted(value: &str) -> String {
    const SHOWN: usize = 80;
    match value.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("'{}…'", &value[..cut]),
        None => format!("'{value}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str) -> Value {
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":{},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    const GOOD: &[(&str, &str)] = &[
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "answer"),
    ];

    #[test]
    fn matching_headers_pass() {
        assert_eq!(check(&headers(GOOD), &call("answer")), Ok(()));
        let encoded = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?5aSp5rCX?="),
        ]);
        assert_eq!(check(&encoded, &call("天気")), Ok(()));
        // Notifications carry no required headers.
        let n =
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
        assert_eq!(check(&[], &n), Ok(()));
    }

    #[test]
    fn each_disagreement_is_named() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&GOOD[1..], "MCP-Protocol-Version header is missing"),
            (
                &[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "answer"),
                ],
                "MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'",
            ),
            (
                &[("mcp-protocol-version", "2026-07-28"), ("mcp-name", "answer")],
                "Mcp-Method header is missing",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "TOOLS/CALL"),
                    ("mcp-name", "answer"),
                ],
                "Mcp-Method header value 'TOOLS/CALL' does not match",
            ),
            (&GOOD[..2], "Mcp-Name header is missing"),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "wrong_tool_name"),
                ],
                "Mcp-Name header value 'wrong_tool_name' does not match body value 'answer'",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "=?base64?!!?="),
                ],
                "not valid Base64",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "answér"),
                ],
                "outside visible ASCII",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "answer"),
                ],
                "more than once",
            ),
        ];
        for (pairs, says) in cases {
            let e = check(&headers(pairs), &call("answer")).unwrap_err();
            assert!(e.to_string().contains(says), "{e} should say {says}");
            assert!(e.to_string().starts_with("Header mismatch: "));
        }
    }

    #[test]
    fn resources_are_named_by_uri_and_long_values_are_cut() {
        let read = json!({"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///a",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "resources/read"),
            ("mcp-name", "file:///a"),
        ]);
        assert_eq!(check(&h, &read), Ok(()));
        let long = "x".repeat(500);
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", &long),
        ]);
        let e = check(&h, &call("answer")).unwrap_err().to_string();
        assert!(e.len() < 250, "{e}");
    }
}
