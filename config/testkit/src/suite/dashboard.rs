//! What a platform team installs beside the server (platform pack issue): the Grafana
//! dashboard's every query and the alert rules, against a real Prometheus (Debian's,
//! which `.ci/test` installs) that scrapes a running server through its bearer-authorized
//! metrics listener while it answers, retries, refuses and lists.

use crate::fake_openai::{Action, FakeOpenAi};
use crate::http_client::HttpConn;
use crate::*;
use std::net::SocketAddr;
use std::path::Path;

const TOKEN: &str = "PLANTED-dashboard-token-0123456789";

/// The panels that must show data once the server answered a call (after one retry),
/// refused one by its spend limit and listed its tools. The shared store's and the
/// identity provider's panels stay empty: this server has neither.
const MUST_HAVE_DATA: &[&str] = &[
    "Ready instances",
    "Calls in flight",
    "Error ratio by tool",
    "Calls per second by tool and outcome",
    "tools/call latency",
    "Requests per second by method",
    "Errors by type",
    "Refusals by reason",
    "p95 latency by method",
    "Upstream attempts by status",
    "Upstream retries",
    "Tokens per minute by model and kind",
    "Web searches per minute",
    "Estimated cost per hour by model and client",
    "Spend today against the daily limits",
    "Tasks by state",
];

fn observability(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../packaging/observability")
        .join(file)
}

/// A Prometheus on a loopback port, scraping `target` every second with `TOKEN`, with the
/// alert rules loaded; killed on drop.
struct Prometheus {
    child: std::process::Child,
    addr: SocketAddr,
    /// Its configuration, data and stderr, removed after it ends.
    dir: TempDir,
}

impl Prometheus {
    fn start(binary: &Path, target: SocketAddr) -> Prometheus {
        let dir = temp_dir("prometheus");
        std::fs::write(dir.join("token"), TOKEN).unwrap();
        let config = format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             rule_files: [{rules:?}]\n\
             scrape_configs:\n\
             \x20 - job_name: openai-responses-mcp\n\
             \x20   authorization: {{type: Bearer, credentials_file: {token:?}}}\n\
             \x20   static_configs: [{{targets: [\"{target}\"]}}]\n",
            rules = observability("alerts.yml").display().to_string(),
            token = dir.join("token").display().to_string(),
        );
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new(binary)
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("start prometheus");
        let prometheus = Prometheus { child, addr, dir };
        prometheus.wait_for("ready", |p| {
            std::net::TcpStream::connect(p.addr).is_ok()
                && HttpConn::open(p.addr).get("/-/ready").status == 200
        });
        prometheus
    }

    /// Waits until `done` (asked every 100 ms), failing with Prometheus's log after
    /// `PATIENCE`.
    fn wait_for(&self, what: &str, done: impl Fn(&Prometheus) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < PATIENCE,
                "Prometheus: not {what} in time; its log:\n{}",
                std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// `GET path` answered with 200 and a JSON body whose `status` is `success`: its `data`.
    fn api(&self, path: &str) -> Value {
        let response = HttpConn::open(self.addr).get(path);
        let body = response.json();
        assert_eq!(
            (response.status, &body["status"]),
            (200, &json!("success")),
            "{path}: {body}"
        );
        body["data"].clone()
    }

    /// The instant vector `expr` evaluates to now.
    fn query(&self, expr: &str) -> Vec<Value> {
        let data = self.api(&format!("/api/v1/query?query={}", encode(expr)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The sum of the values of `expr`'s series (0 when it has none).
    fn sum(&self, expr: &str) -> f64 {
        self.query(expr)
            .iter()
            .filter_map(|s| s["value"][1].as_str()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encodes a query parameter (RFC 3986 unreserved characters kept).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every panel of the dashboard with its queries, Grafana's variables filled as Grafana
/// would for one instance over a short range.
fn panels() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(observability("dashboard.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] != "row")
        .map(|p| {
            let exprs = p["targets"]
                .as_array()
                .unwrap_or_else(|| panic!("a panel without targets: {p}"))
                .iter()
                .map(|t| {
                    t["expr"]
                        .as_str()
                        .unwrap()
                        .replace("$__rate_interval", "1m")
                        .replace("$instance", ".*")
                })
                .collect();
            (p["title"].as_str().unwrap().to_owned(), exprs)
        })
        .collect()
}

pub fn every_dashboard_query_runs_on_prometheus_and_the_panels_have_data() {
    let Some(binary) = system_program("prometheus") else {
        return;
    };
    // The first attempt meets a 500 (retried), the second answers at a price
    // (`observability::answered`: $0.06025, over the $0.05 a day allowed).
    let fake = FakeOpenAi::start(|_, i| match i {
        0 => Action::json(500, &fixture("error-500-server-error.json")),
        _ => Action::json(200, &super::observability::answered()),
    });
    let opts = Opts::upstream(&fake.url)
        .arg("--metrics-listen")
        .arg("127.0.0.1:0")
        .env("MCP_HTTP_TOKEN", TOKEN)
        .env("MCP_LIMIT_SPEND_PER_DAY_USD", "0.05");
    let mut mcp = Mcp::spawn(opts);
    let metrics = crate::http_client::metrics_listening(&mcp);
    let prometheus = Prometheus::start(&binary, metrics);
    mcp.initialize("2025-11-25");
    let answered = mcp.call(1, "answer", json!({"query": "what changed?"}));
    assert!(
        answered["result"]["structuredContent"].is_object(),
        "{answered}"
    );
    let refused = mcp.call(2, "answer", json!({"query": "and since?"}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let listed = mcp.request(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    // Scraped after the calls, twice at least, so that every rate has two samples.
    prometheus.wait_for("scraped after the calls", |p| {
        p.sum(r#"count_over_time(openai_responses_mcp_calls_total{outcome="refused_limit_spend_per_day"}[1m])"#)
            >= 2.0
    });
    assert_eq!(
        prometheus.sum(r#"openai_responses_mcp_calls_total{tool="answer"}"#),
        2.0
    );
    let mut empty = Vec::new();
    for (title, exprs) in panels() {
        let series: usize = exprs.iter().map(|e| prometheus.query(e).len()).sum();
        if series == 0 {
            empty.push(title);
        }
    }
    let must_be_full: Vec<&String> = empty
        .iter()
        .filter(|t| MUST_HAVE_DATA.contains(&t.as_str()))
        .collect();
    assert!(
        must_be_full.is_empty(),
        "panels without data: {must_be_full:?}"
    );
    for title in MUST_HAVE_DATA {
        assert!(
            panels().iter().any(|(t, _)| t == title),
            "no panel {title:?} in the dashboard"
        );
    }
    assert_eq!(
        empty,
        ["Shared store", "Identity provider"],
        "only the panels of what this server lacks are empty"
    );
    // The figures the panels draw from are the calls made.
    // The answer cost $0.06025 (observability::answered, by hand), all of it today.
    let spent = prometheus.sum(r#"sum(openai_responses_mcp_spend_today_usd)"#);
    assert!((spent - 0.06025).abs() < 1e-9, "{spent}");
    assert_eq!(
        prometheus.sum(r#"openai_responses_mcp_spend_limit_usd{scope="instance"}"#),
        0.05
    );
    assert_eq!(
        prometheus.sum("openai_responses_mcp_upstream_retries_total"),
        1.0
    );
    // The alert rules load and evaluate in a real Prometheus.
    prometheus.wait_for("evaluating the rules", |p| {
        let data = p.api("/api/v1/rules");
        let rules: Vec<Value> = data["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
            .collect();
        rules.len() == 14 && rules.iter().all(|r| r["health"] == "ok")
    });
    mcp.close_stdin();
    assert!(mcp.wait_exit(PATIENCE).success());
}
