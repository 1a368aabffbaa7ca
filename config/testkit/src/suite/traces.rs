//! Traces over OTLP (platform pack issue): what a collector receives, decoded with the
//! official OTLP messages, for an answered call after a retry and a refused call over
//! stdio, a call over HTTP continuing the `traceparent` header; nothing without the
//! variables; a dead collector changes no reply.

use crate::collector::{attribute, hex, Collector};
use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::{listening, HttpConn};
use crate::*;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const QUERY: &str = "PLANTED-traced-question";
const COLLECTOR_TOKEN: &str = "PLANTED-collector-token";
const TOKEN: &str = "PLANTED-traces-http-token-0123456789";

fn traceparent() -> String {
    format!("00-{TRACE}-{PARENT}-01")
}

fn traced(opts: Opts, collector: &Collector) -> Opts {
    opts.env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.base_url())
        .env("OTEL_SERVICE_NAME", "mcp-under-test")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            &format!("authorization=Bearer%20{COLLECTOR_TOKEN}"),
        )
}

fn kind(span: &Span) -> SpanKind {
    SpanKind::try_from(span.kind).unwrap_or(SpanKind::Unspecified)
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn has_error(span: &Span) -> bool {
    span.status.as_ref().is_some_and(|s| s.code == 2)
}

/// The spans of an answered `answer` (two attempts) and a refused `answer_quick`, once
/// all have arrived.
fn answered_and_refused(collector: &Collector) -> Vec<Span> {
    collector.wait_for(PATIENCE, |spans| {
        !named(spans, "tools/call answer").is_empty()
            && !named(spans, "tools/call answer_quick").is_empty()
            && named(spans, "POST").len() >= 2
    })
}

/// The `answer` call's span, which continues the client's trace.
fn continuing_call(spans: &[Span]) -> &Span {
    let call = named(spans, "tools/call answer")[0];
    assert_eq!(
        (hex(&call.trace_id), hex(&call.parent_span_id)),
        (TRACE.into(), PARENT.into())
    );
    call
}

pub fn a_retried_call_and_a_refused_call_are_traced_over_stdio() {
    // The first attempt meets a 500 (retried), the second answers at a price over the
    // $0.05 a day allowed, so the next call is refused before any request.
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(500, &fixture("error-500-server-error.json")),
        _ => Action::json(200, &super::observability::answered()),
    });
    let collector = Collector::start();
    let opts =
        traced(Opts::upstream(&fake.url), &collector).env("MCP_LIMIT_SPEND_PER_DAY_USD", "0.05");
    let mut mcp = Mcp::spawn(opts);
    mcp.initialize("2025-11-25");
    let (answered, _) = mcp.ask(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"answer","arguments":{"query": QUERY},"_meta":{"traceparent": traceparent()}}}),
    );
    assert!(
        answered["result"]["structuredContent"].is_object(),
        "{answered}"
    );
    let refused = mcp.call(2, "answer_quick", json!({"query": QUERY}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let spans = answered_and_refused(&collector);
    // The call continues the client's trace; each attempt is its child.
    let call = continuing_call(&spans);
    assert_eq!(kind(call), SpanKind::Server);
    let attrs = &call.attributes;
    assert_eq!(
        attribute(attrs, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        attribute(attrs, "jsonrpc.request.id").as_deref(),
        Some("1"),
        "the MCP span conventions require the request id"
    );
    assert_eq!(
        attribute(attrs, "gen_ai.tool.name").as_deref(),
        Some("answer")
    );
    assert_eq!(
        attribute(attrs, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(
        attribute(attrs, "network.transport").as_deref(),
        Some("pipe")
    );
    assert_eq!(
        attribute(attrs, "gen_ai.usage.input_tokens").as_deref(),
        Some("20000")
    );
    assert_eq!(
        attribute(attrs, "gen_ai.usage.output_tokens").as_deref(),
        Some("1000")
    );
    let cost: f64 = attribute(attrs, "openai_responses_mcp.cost_usd")
        .unwrap()
        .parse()
        .unwrap();
    assert!((cost - 0.06025).abs() < 1e-9, "{cost}");
    assert!(!has_error(call) && attribute(attrs, "error.type").is_none());
    let attempts = named(&spans, "POST");
    assert_eq!(attempts.len(), 2, "{spans:#?}");
    let upstream = fake
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap();
    for attempt in &attempts {
        assert_eq!(kind(attempt), SpanKind::Client);
        assert_eq!(
            (&attempt.trace_id, &attempt.parent_span_id),
            (&call.trace_id, &call.span_id)
        );
        assert!(attempt.start_time_unix_nano >= call.start_time_unix_nano);
        assert!(attempt.end_time_unix_nano <= call.end_time_unix_nano);
        let a = &attempt.attributes;
        assert_eq!(attribute(a, "http.request.method").as_deref(), Some("POST"));
        let address = format!(
            "{}:{}",
            attribute(a, "server.address").unwrap(),
            attribute(a, "server.port").unwrap()
        );
        assert_eq!(address, upstream);
    }
    let (first, second) = (attempts[0], attempts[1]);
    assert_eq!(
        attribute(&first.attributes, "http.response.status_code").as_deref(),
        Some("500")
    );
    assert_eq!(
        attribute(&first.attributes, "error.type").as_deref(),
        Some("500")
    );
    assert!(has_error(first) && !has_error(second));
    assert_eq!(
        attribute(&second.attributes, "http.response.status_code").as_deref(),
        Some("200")
    );
    assert_eq!(
        attribute(&second.attributes, "http.request.resend_count").as_deref(),
        Some("1")
    );
    // The refused call: a failed span, a trace of its own (no traceparent), no attempt.
    let refused = named(&spans, "tools/call answer_quick")[0];
    assert!(has_error(refused));
    assert_eq!(
        attribute(&refused.attributes, "error.type").as_deref(),
        Some("tool_error")
    );
    assert!(refused.parent_span_id.is_empty() && refused.trace_id != call.trace_id);
    assert!(spans.iter().all(|s| s.parent_span_id != refused.span_id));
    // The resource, the collector's header, and no secret or content anywhere.
    let (resource, _) = &collector.spans()[0];
    assert_eq!(
        attribute(resource, "service.name").as_deref(),
        Some("mcp-under-test")
    );
    assert_eq!(
        attribute(resource, "deployment.environment").as_deref(),
        Some("test")
    );
    for export in collector.exports() {
        assert_eq!(export.path, "/v1/traces");
        let auth = export.headers.iter().find(|(n, _)| n == "authorization");
        assert_eq!(
            auth.map(|(_, v)| v.as_str()),
            Some(format!("Bearer {COLLECTOR_TOKEN}").as_str())
        );
        let raw = String::from_utf8_lossy(&export.raw);
        for secret in [QUERY, PLANTED_KEY, COLLECTOR_TOKEN] {
            assert!(!raw.contains(secret), "{secret} was exported");
        }
    }
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
    assert!(!mcp.stderr_to_end().contains(COLLECTOR_TOKEN));
}

pub fn an_http_call_continues_the_traceparent_header() {
    // Over HTTP too: a call retried after a 500 and answered, then one the spend limit
    // refuses.
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(500, &fixture("error-500-server-error.json")),
        _ => Action::json(200, &super::observability::answered()),
    });
    let collector = Collector::start();
    let opts = Opts::http(&fake.url)
        .env("MCP_HTTP_TOKEN", TOKEN)
        .env("MCP_LIMIT_SPEND_PER_DAY_USD", "0.05");
    let mcp = Mcp::spawn(traced(opts, &collector));
    let addr = listening(&mcp);
    let auth = format!("Bearer {TOKEN}");
    let post = |id: u64, tool: &str, traceparent: Option<&str>| {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name": tool,"arguments":{"query": QUERY}}});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", auth.as_str()),
        ];
        if let Some(t) = traceparent {
            headers.push(("traceparent", t));
        }
        let response = HttpConn::open(addr).post(&call, &headers);
        assert_eq!(
            response.status,
            200,
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        response.json()
    };
    let answered = post(7, "answer", Some(&traceparent()));
    assert!(
        answered["result"]["structuredContent"].is_object(),
        "{answered}"
    );
    let refused = post(8, "answer_quick", None);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let spans = answered_and_refused(&collector);
    let call = continuing_call(&spans);
    assert_eq!(
        attribute(&call.attributes, "network.transport").as_deref(),
        Some("tcp")
    );
    let attempts = named(&spans, "POST");
    assert_eq!(attempts.len(), 2, "{spans:#?}");
    assert!(attempts.iter().all(|a| a.parent_span_id == call.span_id));
    assert_eq!(
        attribute(&attempts[1].attributes, "http.request.resend_count").as_deref(),
        Some("1")
    );
    let refused = named(&spans, "tools/call answer_quick")[0];
    assert!(has_error(refused) && refused.trace_id != call.trace_id);
    assert_eq!(
        attribute(&refused.attributes, "error.type").as_deref(),
        Some("tool_error")
    );
    drop(mcp);
}

pub fn nothing_is_exported_without_the_variables_or_when_disabled() {
    let fake = FakeOpenAi::fixed(200, super::observability::answered());
    let collector = Collector::start();
    // Every variable but the endpoint: no trace.
    let unset = Opts::upstream(&fake.url)
        .env("OTEL_SERVICE_NAME", "mcp-under-test")
        .env("OTEL_TRACES_SAMPLER", "always_on");
    // The endpoint, but the SDK disabled: no trace either.
    let disabled = traced(Opts::upstream(&fake.url), &collector).env("OTEL_SDK_DISABLED", "true");
    for opts in [unset, disabled] {
        let mut mcp = Mcp::spawn(opts);
        mcp.initialize("2025-11-25");
        let reply = mcp.call(1, "answer", json!({"query": QUERY}));
        assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
        mcp.close_stdin();
        assert!(mcp.wait_exit(PATIENCE).success());
    }
    // The exporter sends a batch at most a second after its first span, and at exit.
    assert!(collector.exports().is_empty(), "{:?}", collector.exports());
}

pub fn a_dead_collector_changes_no_reply() {
    let fake = FakeOpenAi::fixed(200, super::observability::answered());
    let dead = format!("http://127.0.0.1:{}", free_port());
    let mut mcp = Mcp::spawn(
        Opts::upstream(&fake.url)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &dead)
            .env("OTEL_TRACES_SAMPLER", "always_on"),
    );
    mcp.initialize("2025-11-25");
    for id in 1..=3 {
        let reply = mcp.call(id, "answer", json!({"query": QUERY}));
        assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    }
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
}

/// The identity provider's key fetches (OAuth mode) are client spans of traces of their
/// own, and a verified caller's call is traced as any other.
pub fn key_fetches_of_the_identity_provider_are_traced() {
    let fake = FakeOpenAi::fixed(200, super::observability::answered());
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(provider) = super::oauth::Provider::start(free_port(), &resource) else {
        return;
    };
    let collector = Collector::start();
    let opts = super::oauth::server_opts(
        &fake,
        port,
        &provider.issuer,
        "[mcp:answer]",
        "",
        "traces-oauth",
    );
    let mcp = Mcp::spawn(traced(opts, &collector));
    listening(&mcp);
    let token = provider.token("ed-client", &resource);
    let mut c = HttpConn::open(([127, 0, 0, 1], port).into());
    let reply = super::oauth::call(&mut c, 1, &token);
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let provider_port = provider
        .issuer
        .trim_start_matches("http://")
        .split(['/', ':'])
        .nth(1);
    let spans = collector.wait_for(PATIENCE, |spans| {
        spans.iter().filter(|s| s.name == "GET").count() >= 2
            && !named(spans, "tools/call answer").is_empty()
    });
    let fetches: Vec<&Span> = spans.iter().filter(|s| s.name == "GET").collect();
    for fetch in &fetches {
        assert_eq!(kind(fetch), SpanKind::Client);
        assert!(
            fetch.parent_span_id.is_empty(),
            "a trace of its own: {fetch:?}"
        );
        assert_eq!(
            attribute(&fetch.attributes, "http.request.method").as_deref(),
            Some("GET")
        );
        assert_eq!(
            attribute(&fetch.attributes, "server.port").as_deref(),
            provider_port
        );
        assert_eq!(
            attribute(&fetch.attributes, "http.response.status_code").as_deref(),
            Some("200")
        );
    }
    // Metadata, then keys: each its own trace.
    assert_ne!(fetches[0].trace_id, fetches[1].trace_id);
    let raw: Vec<u8> = collector
        .exports()
        .iter()
        .flat_map(|e| e.raw.clone())
        .collect();
    assert!(
        !String::from_utf8_lossy(&raw).contains(&token),
        "the bearer token was exported"
    );
    drop(mcp);
}

/// A collector that accepts an export and never answers holds one batch for the export
/// timeout, not every batch after it: the exporter gives up on that connection, the next
/// batch arrives, and the abandoned one is counted in `spans_dropped_total` (issue 47).
pub fn a_collector_that_never_answers_costs_one_batch_and_it_is_counted() {
    let fake = FakeOpenAi::fixed(200, super::observability::answered());
    let collector = Collector::silent_first();
    let opts = Opts::http(&fake.url)
        .env("MCP_HTTP_TOKEN", TOKEN)
        .env("OTEL_TRACES_SAMPLER", "always_on")
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1000");
    let mcp = Mcp::spawn(traced(opts, &collector));
    let addr = listening(&mcp);
    let auth = format!("Bearer {TOKEN}");
    let call = |id: u64| {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name": "answer","arguments":{"query": QUERY}}});
        let headers = [
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", auth.as_str()),
        ];
        let reply = HttpConn::open(addr).post(&call, &headers).json();
        assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    };
    // The first call's spans go in the export the collector never answers.
    call(1);
    super::http::waits_for("the first export", || !collector.exports().is_empty());
    // Sent after that export began, the second call's spans are a batch of their own,
    // which reaches the collector once the exporter gives up on the first.
    call(2);
    let by_request = |spans: &[Span], id: &str| {
        spans
            .iter()
            .filter(|s| attribute(&s.attributes, "jsonrpc.request.id").as_deref() == Some(id))
            .count()
    };
    collector.wait_for(PATIENCE, |spans| by_request(spans, "2") > 0);
    assert_eq!(
        collector.abandoned(),
        [0],
        "the exporter closed the unanswered export's connection"
    );
    let hung = &collector.exports()[0].request;
    let lost: usize = hung
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .map(|s| s.spans.len())
        .sum();
    assert!(lost > 0);
    let mut c = HttpConn::open(addr);
    let metrics = super::http::get_with_token(&mut c, "/metrics", TOKEN);
    let text = String::from_utf8_lossy(&metrics.body);
    let line = format!("openai_responses_mcp_spans_dropped_total {lost}");
    assert!(
        text.lines().any(|l| l == line),
        "want {line}: the unanswered export's spans\n{text}"
    );
    drop(mcp);
}
