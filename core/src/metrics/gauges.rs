//! What the server knows at scrape time beyond the counters ([`Gauges`]), handed to the
//! exposition as it is written.

use super::tally::Tally;

/// What the server knows at scrape time, beyond the counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Calls running upstream.
    pub running: usize,
    /// Calls waiting for a slot.
    pub queued: usize,
    /// Tasks kept, by state name.
    pub tasks: Vec<(&'static str, usize)>,
    /// Upstream attempts ended, by how.
    pub attempts: Tally<AttemptEnd, u64>,
    /// Retries scheduled.
    pub retries: u64,
    /// OAuth mode: whether a verified key set is at hand, and whether the identity
    /// provider answered its last fetch.
    pub identity: Option<(bool, bool)>,
    /// Whether `/ready` would answer 200 now (a call can work).
    pub ready: bool,
    /// Unix seconds now: the UTC day whose spend is reported.
    pub now: u64,
    /// With traces on: spans dropped, whichever queue lost them (the core's to the
    /// host, the exporter's, or a failed export).
    pub spans_dropped: Option<u64>,
    /// With a shared store: whether it answers.
    pub store_up: Option<bool>,
    /// Behind a gateway or in OAuth mode: the identities of their own told apart now.
    pub identities: Option<usize>,
    /// The spend limits per UTC day in US dollars: the instance's (`None`), and each
    /// named client's own under its metrics label.
    pub spend_limits: Vec<(Option<String>, crate::money::Picodollars)>,
}

/// One upstream attempt's end, as `openai_responses_mcp_upstream_attempts_total` labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptEnd {
    /// A reply with this HTTP status.
    Status(u16),
    /// No reply: the transport failure's kind (`timeout`, `connect`, `tls`, …).
    Transport(&'static str),
}
