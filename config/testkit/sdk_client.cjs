// Drives the server binary with an official TypeScript MCP SDK client and prints a JSON
// report on its last line.
//
// Usage: node sdk_client.cjs <v2|v1> <auto|modern|legacy> <server-binary>
// The packages come from NODE_PATH (.ci/test installs them under target/sdk/node).
"use strict";

const [sdk, mode, binary] = process.argv.slice(2);

function load() {
  if (sdk === "v2") {
    const { Client } = require("@modelcontextprotocol/client");
    const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");
    const negotiation = { legacy: "legacy", auto: "auto", modern: { pin: "2026-07-28" } }[mode];
    const client = new Client(
      { name: "e2e-ts-v2", version: "1.0.0" },
      { versionNegotiation: { mode: negotiation } },
    );
    return { client, StdioClientTransport };
  }
  const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
  return { client: new Client({ name: "e2e-ts-v1", version: "1.0.0" }), StdioClientTransport };
}

async function main() {
  const { client, StdioClientTransport } = load();
  const transport = new StdioClientTransport({
    command: binary,
    args: ["--stdio"],
    env: process.env,
    stderr: "ignore",
  });
  await client.connect(transport);
  const tools = await client.listTools();
  const result = await client.callTool({
    name: "answer",
    arguments: { query: "Today's Tokyo weather" },
  });
  const report = {
    era: typeof client.getProtocolEra === "function" ? client.getProtocolEra() : "legacy",
    version:
      typeof client.getNegotiatedProtocolVersion === "function"
        ? client.getNegotiatedProtocolVersion()
        : null,
    tools: tools.tools.map((t) => t.name),
    is_error: Boolean(result.isError),
    text: result.content[0].text,
    structured: result.structuredContent ?? null,
  };
  await client.close();
  console.log(JSON.stringify(report));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
