#!/usr/bin/env node
// Runs the native openai-responses-mcp binary of this platform, installed by npm as one
// of this package's optionalDependencies (no install script, no download). This process
// writes nothing to stdout: the MCP stream belongs to the binary. stdin, stdout and
// stderr are passed through, signals are forwarded, and the binary's exit code (or
// signal) becomes ours.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "linux-x64": "openai-responses-mcp-rs-linux-x64",
  "linux-arm64": "openai-responses-mcp-rs-linux-arm64",
  "darwin-x64": "openai-responses-mcp-rs-darwin-x64",
  "darwin-arm64": "openai-responses-mcp-rs-darwin-arm64",
  "win32-x64": "openai-responses-mcp-rs-win32-x64",
};

function binaryPath() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    return { error: `no prebuilt binary for ${key}` };
  }
  const exe = process.platform === "win32" ? "openai-responses-mcp.exe" : "openai-responses-mcp";
  try {
    const manifest = require.resolve(`${pkg}/package.json`);
    return { path: path.join(path.dirname(manifest), "bin", exe) };
  } catch {
    return { error: `the package ${pkg} is not installed (optional dependencies skipped?)` };
  }
}

const found = binaryPath();
if (found.error) {
  process.stderr.write(
    `openai-responses-mcp: ${found.error}.\n` +
      "Install it another way:\n" +
      "  - a release archive: https://github.com/openai-responses-mcp/openai-responses-mcp/releases\n" +
      "  - with Rust: cargo install openai-responses-mcp\n" +
      "  - or reinstall without --omit=optional / --no-optional so npm adds the platform package.\n",
  );
  process.exit(1);
}

const child = spawn(found.path, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on("error", (err) => {
  process.stderr.write(`openai-responses-mcp: cannot start ${found.path}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever started us sees what happened to the server.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
