// Drives a server already listening (--http) with an official TypeScript MCP SDK client
// over Streamable HTTP: lists the tools, calls one with progress, cancels a second call
// mid-way, and prints a JSON report on its last line.
//
// Usage: node sdk_http_client.cjs <v2|v1> <auto|modern|legacy> <url>
// The packages come from NODE_PATH (.ci/test installs them under target/sdk/node).
"use strict";

const [sdk, mode, url] = process.argv.slice(2);

function load() {
  if (sdk === "v2") {
    const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");
    const negotiation = { legacy: "legacy", auto: "auto", modern: { pin: "2026-07-28" } }[mode];
    const client = new Client(
      { name: "e2e-ts-v2-http", version: "1.0.0" },
      { versionNegotiation: { mode: negotiation } },
    );
    const call = (params, options) => client.callTool(params, options);
    return { client, Transport: StreamableHTTPClientTransport, call };
  }
  const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "e2e-ts-v1-http", version: "1.0.0" });
  const call = (params, options) => client.callTool(params, undefined, options);
  return { client, Transport: StreamableHTTPClientTransport, call };
}

async function main() {
  const { client, Transport, call } = load();
  await client.connect(new Transport(new URL(url)));
  const tools = await client.listTools();
  const progress = [];
  const result = await call(
    { name: "answer", arguments: { query: "Today's Tokyo weather" } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  // A call cancelled mid-way: the SDK sends notifications/cancelled on its own POST.
  const abort = new AbortController();
  const cancelled = call(
    { name: "answer", arguments: { query: "please-hang-forever" } },
    {
      signal: abort.signal,
      // The first progress comes as the upstream attempt starts; give its request a
      // moment to reach the fake, which then sees the connection close.
      onprogress: () => setTimeout(() => abort.abort("the test cancels"), 300),
    },
  ).then(
    () => "answered",
    (e) => (abort.signal.aborted ? "cancelled" : `failed: ${e}`),
  );
  const cancel = await cancelled;
  // The session survives the cancel.
  const after = await client.listTools();
  const report = {
    version:
      typeof client.getNegotiatedProtocolVersion === "function"
        ? client.getNegotiatedProtocolVersion()
        : null,
    tools: tools.tools.map((t) => t.name),
    progress,
    is_error: Boolean(result.isError),
    text: result.content[0].text,
    structured: result.structuredContent ?? null,
    cancel,
    tools_after_cancel: after.tools.length,
  };
  await client.close();
  console.log(JSON.stringify(report));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
