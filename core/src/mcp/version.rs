//! The MCP protocol versions we speak, and what each one has.

/// The protocol versions this server negotiates, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05: the baseline.
    V2024_11_05,
    /// 2025-03-26: batches, tool annotations, progress messages.
    V2025_03_26,
    /// 2025-06-18: titles, structured tool output; batches removed.
    V2025_06_18,
    /// 2025-11-25: icons, tasks (not used here).
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];
    /// What we answer when the client asks for a version we do not know.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a version string we support.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
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
}
