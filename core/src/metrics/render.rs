//! The exposition written at scrape time: the counters kept by [`Metrics`], and the
//! gauges the server knows then ([`Gauges`]).

use super::gauges::{AttemptEnd, Gauges};
use super::text::Exposition;
use super::{health, ErrorType, Metrics, PREFIX};

impl Metrics {
    /// The whole exposition.
    pub fn render(&self, gauges: &Gauges) -> Vec<u8> {
        let mut out = Exposition::default();
        self.write_operations(&mut out);
        self.write_calls(&mut out, gauges);
        self.write_usage(&mut out);
        self.write_store(&mut out);
        health::write_identity(&mut out, gauges.identity);
        health::write_readiness(&mut out, gauges);
        self.write_today(&mut out, gauges.now);
        out.counter_family(
            &format!("{PREFIX}identity_header_ignored_total"),
            "Requests carrying the identity header (server.http.identity_header) from a peer that is not a trusted proxy (server.http.trusted_proxies), or beside a credential that is not the gateway's: the header was ignored. Anything but 0 is a client trying to pass as someone else, or a proxy missing from the list.",
            #[allow(clippy::cast_precision_loss)]
            std::iter::once((Vec::new(), self.identity_headers_ignored as f64)),
        );
        if let Some(dropped) = gauges.spans_dropped {
            out.counter_family(
                &format!("{PREFIX}spans_dropped_total"),
                "Spans dropped before reaching the collector: a queue to the trace exporter was full, or an export failed or timed out (traces on).",
                #[allow(clippy::cast_precision_loss)]
                std::iter::once((Vec::new(), dropped as f64)),
            );
        }
        out.finish()
    }

    /// What each client spent today on this instance (0 for one that spent on an earlier
    /// day): summed over the instances, what the daily limits count.
    fn write_today(&self, out: &mut Exposition, now: u64) {
        if self.today.is_empty() {
            return;
        }
        let day = now / crate::clients::DAY;
        out.gauge_family(
            &format!("{PREFIX}spend_today_usd"),
            "Estimated spend of the current UTC day on this instance in US dollars, by client (sum over instances to compare with the daily limits).",
            self.today.iter().map(|(client, (on, spent))| {
                let usd = if *on == day { spent.usd() } else { 0.0 };
                (vec![("client", client.clone())], usd)
            }),
        );
    }

    /// The shared store's round trips and errors, once it was asked anything.
    fn write_store(&self, out: &mut Exposition) {
        let Some((times, errors)) = &self.store else {
            return;
        };
        let p = PREFIX;
        let name = format!("{p}store_round_trip_seconds");
        out.family(
            &name,
            "histogram",
            "Round trips to the shared store (server.store.url), failed ones included.",
        );
        out.histogram(&name, &[], times);
        out.counter_family(
            &format!("{p}store_errors_total"),
            "Store operations that failed: the store was unreachable or refused them.",
            std::iter::once((Vec::new(), *errors as f64)),
        );
        out.counter_family(
            &format!("{p}tasks_orphaned_total"),
            "Shared tasks this instance found working under a lapsed lease (the instance running them was lost or stopped past its grace) and ended as failed.",
            #[allow(clippy::cast_precision_loss)]
            std::iter::once((Vec::new(), self.tasks_orphaned as f64)),
        );
    }

    /// The OpenTelemetry MCP operation histogram.
    fn write_operations(&self, out: &mut Exposition) {
        out.family(
            "mcp_server_operation_duration_seconds",
            "histogram",
            "MCP request duration as observed on the server, from its receipt until its result is sent.",
        );
        for (op, h) in &self.operations {
            let error = op.error.map(|e| match e {
                ErrorType::Tool => "tool_error".to_owned(),
                ErrorType::Rpc(code) => code.to_string(),
                ErrorType::Cancelled => "cancelled".to_owned(),
            });
            let mut labels = vec![("mcp_method_name", op.method.to_owned())];
            if let Some(tool) = op.tool {
                labels.push(("gen_ai_tool_name", tool.to_owned()));
            }
            if let Some(error) = error {
                labels.push(("error_type", error));
            }
            labels.push(("network_transport", op.transport.to_owned()));
            labels.push(("mcp_protocol_version", op.version.to_owned()));
            out.histogram("mcp_server_operation_duration_seconds", &labels, h);
        }
    }

    /// Calls, refusals, upstream attempts and what runs and waits now.
    fn write_calls(&self, out: &mut Exposition, gauges: &Gauges) {
        let p = PREFIX;
        out.counter_family(
            &format!("{p}calls_total"),
            "tools/call requests that ended, by tool, client and outcome (ok, upstream_<kind>, refused_<why>).",
            self.calls.iter().map(|((tool, client, outcome), n)| {
                let labels = vec![
                    ("tool", (*tool).to_owned()),
                    ("client", client.clone()),
                    ("outcome", outcome.label()),
                ];
                (labels, *n as f64)
            }),
        );
        out.counter_family(
            &format!("{p}refusals_total"),
            "Calls refused before any upstream request, by reason.",
            self.refusals
                .iter()
                .map(|(why, n)| (vec![("reason", why.label().to_owned())], *n as f64)),
        );
        out.counter_family(
            &format!("{p}upstream_attempts_total"),
            "Upstream attempts that ended, by HTTP status (or none) and transport failure.",
            gauges.attempts.iter().map(|(end, n)| {
                let labels = match end {
                    AttemptEnd::Status(s) => {
                        vec![("status", s.to_string()), ("failure", String::new())]
                    }
                    AttemptEnd::Transport(kind) => {
                        vec![
                            ("status", "none".to_owned()),
                            ("failure", (*kind).to_owned()),
                        ]
                    }
                };
                (labels, *n as f64)
            }),
        );
        out.counter_family(
            &format!("{p}upstream_retries_total"),
            "Upstream attempts repeated after a failure that may pass.",
            std::iter::once((Vec::new(), gauges.retries as f64)),
        );
        out.gauge_family(
            &format!("{p}calls_in_flight"),
            "Calls running upstream now.",
            std::iter::once((Vec::new(), gauges.running as f64)),
        );
        out.gauge_family(
            &format!("{p}calls_queued"),
            "Calls waiting for a slot now.",
            std::iter::once((Vec::new(), gauges.queued as f64)),
        );
        out.gauge_family(
            &format!("{p}tasks"),
            "Tasks kept in this instance's memory, by state.",
            gauges
                .tasks
                .iter()
                .map(|(state, n)| (vec![("state", (*state).to_owned())], *n as f64)),
        );
    }

    /// Tokens, web searches and estimated cost.
    fn write_usage(&self, out: &mut Exposition) {
        let p = PREFIX;
        let kinds = ["input", "cached_input", "output", "reasoning"];
        out.counter_family(
            &format!("{p}tokens_total"),
            "Tokens OpenAI reported, by model and kind (cached_input and reasoning are parts of input and output).",
            self.usage.iter().flat_map(|(model, counts)| {
                kinds.iter().zip(counts).map(move |(kind, n)| {
                    (vec![("model", model.clone()), ("kind", (*kind).to_owned())], *n as f64)
                })
            }),
        );
        out.counter_family(
            &format!("{p}web_searches_total"),
            "Web search calls the model made, by model.",
            self.usage
                .iter()
                .map(|(model, counts)| (vec![("model", model.clone())], counts[4] as f64)),
        );
        out.counter_family(
            &format!("{p}estimated_cost_usd_total"),
            "Estimated cost of the calls in US dollars, by model and client (see pricing.*).",
            self.cost.iter().map(|((model, client), usd)| {
                (
                    vec![("model", model.clone()), ("client", client.clone())],
                    usd.usd(),
                )
            }),
        );
    }
}
