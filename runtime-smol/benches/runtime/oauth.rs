//! What OAuth mode costs a request: the same server, same run, called 300 times in a row
//! on one kept-alive connection with its static token (the baseline) and with JWT access
//! tokens of a real oidc-provider (started here on loopback; keys cached after the
//! first), one per algorithm: the same token every call (as a client sends it, so its
//! signature is checked once) and a new token every call (each signature checked). The
//! cases' calls are interleaved, one per case per round; the median time per call of
//! each, and the difference.
//! Needs the Node packages `.ci/test` installs under `target/sdk/node`.

use super::harness::*;
use super::http::{read_response, HttpProc};
use responses_mcp_testkit::fake_openai::FakeOpenAi;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const IN_A_ROW: usize = 300;
const STATIC: &str = "bench-static-token-0123456789";

pub fn run() {
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/sdk/node/node_modules");
    if !modules.join("oidc-provider").exists() {
        println!("## OAuth mode: skipped (oidc-provider is not installed: run .ci/test)\n");
        return;
    }
    let idp_port = free_port();
    let mcp_port = free_port();
    let resource = format!("http://127.0.0.1:{mcp_port}/mcp");
    let mut idp = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/testkit/oidc_provider.mjs"))
        .args([&idp_port.to_string(), resource.as_str()])
        .env("NODE_PATH", &modules)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(idp.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let issuer = line.trim().strip_prefix("ready ").unwrap().to_owned();
    // Per algorithm, a token for every call of the new-token run (and the warm-up's).
    let tokens: Vec<(&str, Vec<String>)> = [
        ("RS256", "rs-client"),
        ("PS256", "ps-client"),
        ("ES256", "es-client"),
        ("EdDSA", "ed-client"),
    ]
    .into_iter()
    .map(|(alg, client)| {
        let many = (0..IN_A_ROW + 20)
            .map(|_| token(idp_port, client, &resource))
            .collect();
        (alg, many)
    })
    .collect();
    let mut body: serde_json::Value =
        serde_json::from_slice(&fixture("response-no-search.json")).unwrap();
    body["model"] = "gpt-6.1-terra".into();
    let fake = FakeOpenAi::fixed(200, body.to_string().into_bytes());
    let yaml = format!(
        "server:\n  http:\n    listen: 127.0.0.1:{mcp_port}\n    public_url: http://127.0.0.1:{mcp_port}\n    oauth:\n      issuer: {issuer}\n      scopes: [mcp:answer]\n"
    );
    println!("## OAuth mode: a call with a JWT access token against the static token ({IN_A_ROW} in a row each, keys cached)\n");
    println!("| binary | static token p50 | algorithm | same JWT p50 | overhead | ratio | new JWT each call p50 | overhead | ratio |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, bin) in binaries() {
        let server = HttpProc::start_with(&bin, &fake.url, &yaml, &[("MCP_HTTP_TOKEN", STATIC)]);
        let same = |t: &str| vec![t.to_owned(); IN_A_ROW + 20];
        // Every case on its own connection, their calls interleaved round by round, so a
        // drift in the machine's speed reaches every case alike.
        let mut cases = vec![Case::new(server.addr, same(STATIC))];
        for (_, jwts) in &tokens {
            cases.push(Case::new(server.addr, same(&jwts[0])));
            cases.push(Case::new(server.addr, jwts.clone()));
        }
        for round in 0..IN_A_ROW + 20 {
            for case in &mut cases {
                case.call(server.addr, round);
            }
        }
        let p50s: Vec<f64> = cases.into_iter().map(Case::p50).collect();
        let baseline = p50s[0];
        for (i, (alg, _)) in tokens.iter().enumerate() {
            let (t, fresh) = (p50s[1 + 2 * i], p50s[2 + 2 * i]);
            println!(
                "| {name} | {:.3} ms | {alg} | {:.3} ms | {:+.3} ms | {:.2} | {:.3} ms | {:+.3} ms | {:.2} |",
                baseline * 1e3,
                t * 1e3,
                (t - baseline) * 1e3,
                t / baseline,
                fresh * 1e3,
                (fresh - baseline) * 1e3,
                fresh / baseline
            );
        }
    }
    println!();
    let _ = idp.kill();
    let _ = idp.wait();
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A token from the provider's test endpoint.
fn token(port: u16, client: &str, resource: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET /test/token?client={client}&resource={resource}&scope=mcp:answer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut s, &mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{text}");
    // The body may come chunked: the token is the line with its two dots.
    body.lines()
        .find(|l| l.matches('.').count() == 2)
        .unwrap_or_else(|| panic!("{text}"))
        .trim()
        .to_owned()
}

/// One case: a kept-alive connection, the token of each of its calls, and their times.
struct Case {
    stream: TcpStream,
    tokens: Vec<String>,
    buf: Vec<u8>,
    times: Vec<f64>,
}

impl Case {
    fn new(addr: SocketAddr, tokens: Vec<String>) -> Case {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Case {
            stream,
            tokens,
            buf: Vec::new(),
            times: Vec::with_capacity(IN_A_ROW),
        }
    }

    /// Call `id` with its token; timed after 20 to warm up (the first fetches the keys).
    fn call(&mut self, addr: SocketAddr, id: usize) {
        let request = super::store::call_as(addr, id, Some(&self.tokens[id]));
        let start = Instant::now();
        self.stream.write_all(&request).unwrap();
        let answer = read_response(&mut self.stream, &mut self.buf);
        assert!(
            answer.windows(17).any(|w| w == b"structuredContent"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        if id >= 20 {
            self.times.push(start.elapsed().as_secs_f64());
        }
    }

    /// The median seconds per call.
    fn p50(self) -> f64 {
        percentile(&sorted(self.times), 0.5)
    }
}
