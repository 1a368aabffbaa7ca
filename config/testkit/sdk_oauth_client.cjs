// An official TypeScript MCP SDK client authenticating with OAuth client credentials
// and nothing else: the server's URL, a client id and its secret. It follows the
// server's 401 to the protected resource's metadata and on to the authorization server,
// gets a token, then lists the tools and calls one; prints a JSON report on its last
// line.
//
// Usage: node sdk_oauth_client.cjs <v2|v1> <url> <client_id> <client_secret> [scope]
// (SDK 1.x asks for its configured scope only in client credentials, whatever the
// server's challenge names, so a server that requires one needs it given.)
"use strict";

const [sdk, url, clientId, clientSecret, scope] = process.argv.slice(2);

function load() {
  if (sdk === "v2") {
    const m = require("@modelcontextprotocol/client");
    const client = new m.Client({ name: "e2e-ts-v2-oauth", version: "1.0.0" });
    return { client, Transport: m.StreamableHTTPClientTransport, Provider: m.ClientCredentialsProvider };
  }
  const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { ClientCredentialsProvider } = require("@modelcontextprotocol/sdk/client/auth-extensions.js");
  const client = new Client({ name: "e2e-ts-v1-oauth", version: "1.0.0" });
  return { client, Transport: StreamableHTTPClientTransport, Provider: ClientCredentialsProvider };
}

async function main() {
  const { client, Transport, Provider } = load();
  const authProvider = new Provider(scope ? { clientId, clientSecret, scope } : { clientId, clientSecret });
  await client.connect(new Transport(new URL(url), { authProvider }));
  const tools = await client.listTools();
  const result = await client.callTool({ name: "answer", arguments: { query: "what changed?" } });
  const tokens = authProvider.tokens();
  console.log(JSON.stringify({
    tools: tools.tools.map((t) => t.name),
    structured: result.structuredContent ?? null,
    isError: result.isError ?? false,
    scope: tokens && tokens.scope,
  }));
  await client.close();
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String((e && e.stack) || e) }));
  process.exit(1);
});
