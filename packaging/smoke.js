#!/usr/bin/env node
// Smoke test of a packaged server: runs `smoke.js COMMAND [ARGS...]`, sends `initialize`
// and `tools/list` over stdio, and checks the two replies: the protocol version, the three
// tools, and nothing on stdout but JSON-RPC lines (a launcher must add nothing).
"use strict";
const { spawn } = require("node:child_process");

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, OPENAI_API_KEY: "" } });
const timer = setTimeout(() => fail("no replies within 60 s"), 60_000);
let out = "";

function fail(why) {
  process.stderr.write(`smoke: ${command}: ${why}\nstdout so far:\n${out}\n`);
  child.kill("SIGKILL");
  process.exit(1);
}

child.stdout.on("data", (chunk) => {
  out += chunk;
  const lines = out.split("\n").filter((l) => l.trim());
  const replies = [];
  for (const line of lines) {
    try {
      replies.push(JSON.parse(line));
    } catch {
      if (out.endsWith("\n")) fail(`not a JSON line on stdout: ${line}`);
      return;
    }
  }
  const init = replies.find((r) => r.id === 1);
  const list = replies.find((r) => r.id === 2);
  if (!init || !list) return;
  if (init.result?.protocolVersion !== "2025-06-18") fail(`initialize: ${JSON.stringify(init)}`);
  const names = (list.result?.tools ?? []).map((t) => t.name).sort();
  if (names.join(",") !== "answer,answer_detailed,answer_quick") fail(`tools/list: ${JSON.stringify(list)}`);
  clearTimeout(timer);
  child.removeAllListeners("exit");
  child.stdin.end();
  child.on("exit", (code, signal) => {
    if (code !== 0) fail(`exited with ${code ?? signal} after stdin closed`);
    console.log(`smoke ok: ${[command, ...args].join(" ")} answered initialize (${init.result.serverInfo.name} ${init.result.serverInfo.version}) and tools/list (${names.join(", ")})`);
  });
});
child.on("error", (e) => fail(e.message));
child.on("exit", (code, signal) => {
  if (timer.hasRef()) fail(`exited with ${code ?? signal} before answering`);
});

const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "smoke", version: "0" } } });
send({ jsonrpc: "2.0", method: "notifications/initialized" });
send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
