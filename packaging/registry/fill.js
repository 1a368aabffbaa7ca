#!/usr/bin/env node
// Writes server.json with the SHA-256 of each .mcpb bundle from a SHA256SUMS file:
//   node fill.js SHA256SUMS OUT_FILE [--drop-missing]
// The committed server.json carries zeros there; the registry requires the real hashes.
// --drop-missing leaves out bundles the file has no hash for (a partial, local build).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const [sums, out, flag] = process.argv.slice(2);
const dropMissing = flag === "--drop-missing";
const hashes = new Map(
  fs.readFileSync(sums, "utf8").split("\n").filter(Boolean).map((l) => {
    const [hash, file] = l.trim().split(/\s+\*?/);
    return [path.basename(file), hash];
  }),
);
const server = JSON.parse(fs.readFileSync(path.join(__dirname, "server.json"), "utf8"));
server.packages = server.packages.filter(
  (p) => !dropMissing || p.registryType !== "mcpb" || hashes.has(path.basename(p.identifier)),
);
for (const p of server.packages) {
  if (p.registryType !== "mcpb") continue;
  const hash = hashes.get(path.basename(p.identifier));
  if (!hash) {
    console.error(`no hash in ${sums} for ${path.basename(p.identifier)}`);
    process.exit(1);
  }
  p.fileSha256 = hash;
}
fs.writeFileSync(out, JSON.stringify(server, null, 2) + "\n");
