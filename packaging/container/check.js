#!/usr/bin/env node
// Checks an OCI archive of the image: its configuration (entrypoint, command, a non-root
// user, the exposed port, the labels and the platform), then unpacks its root filesystem
// and runs the binary in it: `initialize` and `tools/list` over stdio (packaging/smoke.js)
// and `GET /health` with the image's own command on a loopback port. Prints the sizes.
//   node packaging/container/check.js IMAGE.tar ARCH VERSION [RUNNER]
// RUNNER runs a foreign binary (qemu-aarch64 for arm64).
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync, spawn } = require("node:child_process");

const [archive, arch, version, runner] = process.argv.slice(2);
const fail = (why) => { console.error(`image ${arch}: ${why}`); process.exit(1); };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oci-"));
execFileSync("tar", ["-xf", archive, "-C", dir]);
const blob = (digest) => path.join(dir, "blobs", ...digest.split(":"));
const json = (digest) => JSON.parse(fs.readFileSync(blob(digest), "utf8"));
const index = JSON.parse(fs.readFileSync(path.join(dir, "index.json"), "utf8"));
const manifest = json(index.manifests[0].digest);
const image = json(manifest.config.digest);
const c = image.config;
const server = require("../registry/server.json");
const expect = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(`${what} is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
};
expect("architecture", image.architecture, arch);
expect("os", image.os, "linux");
expect("entrypoint", c.Entrypoint, ["/openai-responses-mcp"]);
expect("command", c.Cmd, ["--http", "--listen", "0.0.0.0:8787"]);
expect("exposed ports", Object.keys(c.ExposedPorts || {}), ["8787/tcp"]);
if (!c.User || /^(0|root)(:|$)/.test(c.User)) fail(`runs as ${JSON.stringify(c.User)}, not a non-root user`);
const labels = c.Labels || {};
expect("version label", labels["org.opencontainers.image.version"], version);
expect("source label", labels["org.opencontainers.image.source"], server.repository.url);
expect("MCP registry name label", labels["io.modelcontextprotocol.server.name"], server.name);
const rootfs = path.join(dir, "rootfs");
fs.mkdirSync(rootfs);
let compressed = 0;
for (const layer of manifest.layers) {
  compressed += layer.size;
  execFileSync("tar", ["-xzf", blob(layer.digest), "-C", rootfs]);
}
const files = execFileSync("find", [rootfs, "-mindepth", "1"], { encoding: "utf8" }).trim().split("\n");
expect("files in the image", files.map((f) => path.relative(rootfs, f)), ["openai-responses-mcp"]);
const binary = path.join(rootfs, "openai-responses-mcp");
const uncompressed = fs.statSync(binary).size;
const command = runner ? [runner, binary] : [binary];
execFileSync("node", [path.join(__dirname, "../smoke.js"), ...command, "--stdio"], { stdio: ["ignore", "inherit", "ignore"] });

// The image's own command, on a loopback port instead of 0.0.0.0:8787 (no token needed).
const args = [...c.Cmd.slice(0, -1), "127.0.0.1:0"];
const child = spawn(command[0], [...command.slice(1), ...args], { stdio: ["ignore", "ignore", "pipe"], env: { HOME: "/" } });
const timer = setTimeout(() => { child.kill("SIGKILL"); fail("no /health answer within 60 s"); }, 60_000);
let stderr = "";
child.stderr.on("data", async (chunk) => {
  stderr += chunk;
  const m = /listening on (http:\/\/[^\s]+)\/mcp/.exec(stderr);
  if (!m || child.asked) return;
  child.asked = true;
  const r = await fetch(`${m[1]}/health`);
  const body = await r.json();
  clearTimeout(timer);
  child.kill("SIGTERM");
  if (r.status !== 200 || body.status !== "ok") fail(`/health said ${r.status} ${JSON.stringify(body)}`);
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`image ${arch}: configuration ok (user ${c.User}, port 8787, labels), initialize and /health answered; ${compressed} B compressed, ${uncompressed} B unpacked`);
});
child.on("exit", (code) => { if (!child.asked) fail(`exited (${code}) before listening: ${stderr}`); });
