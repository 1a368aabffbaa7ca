//! The MCP protocol versions we speak, and what each one has.
//!
//! Two eras: the legacy versions (2024-11-05 to 2025-11-25) open a session with
//! `initialize`; the modern one (2026-07-28) declares its version in every request's
//! `_meta` and needs no session. One process serves both.

/// The protocol versions this server speaks, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05: the baseline.
    V2024_11_05,
    /// 2025-03-26: batches, tool annotations, progress messages.
    V2025_03_26,
    /// 2025-06-18: titles, structured tool output; batches removed.
    V2025_06_18,
    /// 2025-11-25: icons, tasks; argument errors become tool results (SEP-1303).
    V2025_11_25,
    /// 2026-07-28: stateless, per-request `_meta`, `server/discover`, `resultType`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The versions `initialize` can negotiate, oldest first.
    pub const LEGACY: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];
    /// What `initialize` answers when the client asks for a version it cannot negotiate.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Its place in [`ProtocolVersion::ALL`] (the variants are declared in that order).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The version string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version string we support.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Parses a version `initialize` can negotiate.
    pub fn parse_legacy(s: &str) -> Option<ProtocolVersion> {
        Self::LEGACY.into_iter().find(|v| v.as_str() == s)
    }

    /// Served statelessly from each request's `_meta` (2026-07-28 on).
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// JSON-RPC batches are part of this version (2025-03-26 only).
    pub fn has_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Tool annotations exist (2025-03-26 on).
    pub fn has_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `title` fields, `outputSchema` and `structuredContent` exist (2025-06-18 on).
    pub fn has_titles_and_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// `message` on progress notifications exists (2025-03-26 on).
    pub fn has_progress_message(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// Tool execution failures (bad arguments, upstream failures, a busy server, a missing
    /// key) are `isError` results rather than JSON-RPC errors (2025-11-25 on, SEP-1303).
    pub fn tool_errors_are_results(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// The session-era `tasks` capability (2025-11-25 only; 2026-07-28 has the
    /// `io.modelcontextprotocol/tasks` extension instead).
    pub fn has_session_tasks(self) -> bool {
        self == ProtocolVersion::V2025_11_25
    }

    /// A JSON-RPC error whose request id could not be read leaves `id` out instead of
    /// sending `null` (the schemas of 2025-11-25 on make it optional, not nullable).
    pub fn omits_unknown_ids(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolVersion;

    #[test]
    fn each_version_is_at_its_index_in_all() {
        for (i, v) in ProtocolVersion::ALL.into_iter().enumerate() {
            assert_eq!(v.index(), i, "{}", v.as_str());
        }
    }
}
