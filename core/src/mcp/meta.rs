//! The era of a request, from its `params._meta`: a request that declares
//! `io.modelcontextprotocol/protocolVersion` is modern (2026-07-28) and is served
//! statelessly; any other request belongs to the legacy session that `initialize` opens.

use super::version::ProtocolVersion;
use crate::jsonrpc::kind_of;
use serde_json::{Map, Value};
use std::fmt;

/// `_meta` key: the protocol version of a modern request.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's `Implementation` (name and version), on a modern request.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key on results: who answered.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key on subscription messages: the `subscriptions/listen` request's id.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How a request is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// Within the legacy session (after `initialize`).
    Legacy,
    /// Statelessly, at this modern version.
    Modern(ProtocolVersion),
}

/// Why a modern request's `_meta` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetaError {
    /// The protocol version is not a string.
    VersionNotString {
        /// The JSON type it was.
        got: &'static str,
    },
    /// A version this server does not serve statelessly.
    Unsupported {
        /// The version asked for.
        requested: String,
    },
    /// The client capabilities are missing.
    MissingCapabilities,
    /// The `MCP-Protocol-Version` header names 2026-07-28, the body names no version.
    MissingVersion,
    /// The client capabilities are not an object.
    CapabilitiesNotObject {
        /// The JSON type they were.
        got: &'static str,
    },
}

impl fmt::Display for MetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaError::VersionNotString { got } => write!(
                f,
                "params._meta[\"{PROTOCOL_VERSION}\"] must be a version string such as \"2026-07-28\", got {got}"
            ),
            MetaError::Unsupported { requested } => match ProtocolVersion::parse_legacy(requested) {
                Some(_) => write!(
                    f,
                    "unsupported protocol version {requested:?} in params._meta: it is a legacy version, served after initialize; per-request _meta takes 2026-07-28"
                ),
                None => write!(
                    f,
                    "unsupported protocol version {requested:?}: this server speaks 2026-07-28 per request, and 2024-11-05 to 2025-11-25 after initialize"
                ),
            },
            MetaError::MissingCapabilities => write!(
                f,
                "params._meta[\"{CLIENT_CAPABILITIES}\"] is required on every 2026-07-28 request (an empty object declares no capabilities)"
            ),
            MetaError::MissingVersion => write!(
                f,
                "params._meta[\"{PROTOCOL_VERSION}\"] is required on every 2026-07-28 request (the MCP-Protocol-Version header names 2026-07-28, the body names no version)"
            ),
            MetaError::CapabilitiesNotObject { got } => write!(
                f,
                "params._meta[\"{CLIENT_CAPABILITIES}\"] must be an object, got {got}"
            ),
        }
    }
}

/// The era of a request with these params.
///
/// # Errors
/// A modern request whose version is not a supported modern version, or whose client
/// capabilities are missing or not an object.
pub fn era_of(params: &Map<String, Value>) -> Result<Era, MetaError> {
    let Some(Value::Object(meta)) = params.get("_meta") else {
        return Ok(Era::Legacy);
    };
    let Some(version) = meta.get(PROTOCOL_VERSION) else {
        return Ok(Era::Legacy);
    };
    let Value::String(requested) = version else {
        return Err(MetaError::VersionNotString {
            got: kind_of(version),
        });
    };
    let version = ProtocolVersion::parse(requested)
        .filter(|v| v.is_modern())
        .ok_or_else(|| MetaError::Unsupported {
            requested: requested.clone(),
        })?;
    match meta.get(CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => Ok(Era::Modern(version)),
        None => Err(MetaError::MissingCapabilities),
        Some(other) => Err(MetaError::CapabilitiesNotObject {
            got: kind_of(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn era(params: Value) -> Result<Era, MetaError> {
        era_of(params.as_object().unwrap())
    }

    #[test]
    fn the_version_key_decides_the_era() {
        assert_eq!(era(json!({})), Ok(Era::Legacy));
        assert_eq!(era(json!({"_meta": {"progressToken": 1}})), Ok(Era::Legacy));
        assert_eq!(era(json!({"_meta": 5})), Ok(Era::Legacy));
        assert_eq!(
            era(json!({"_meta": {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}})),
            Ok(Era::Modern(ProtocolVersion::V2026_07_28))
        );
    }

    #[test]
    fn each_problem_is_named() {
        let e = era(json!({"_meta": {PROTOCOL_VERSION: 2026}})).unwrap_err();
        assert_eq!(e, MetaError::VersionNotString { got: "an integer" });
        for v in ["1900-01-01", "2025-06-18", ""] {
            let e = era(json!({"_meta": {PROTOCOL_VERSION: v, CLIENT_CAPABILITIES: {}}}));
            assert_eq!(
                e,
                Err(MetaError::Unsupported {
                    requested: v.into()
                })
            );
        }
        let e = era(json!({"_meta": {PROTOCOL_VERSION: "2026-07-28"}})).unwrap_err();
        assert!(e.to_string().contains(CLIENT_CAPABILITIES), "{e}");
        let e = era(json!({"_meta": {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: []}}));
        assert_eq!(e, Err(MetaError::CapabilitiesNotObject { got: "an array" }));
    }
}
