#!/usr/bin/env bash
# One version for everything that ships. Usage:
#   packaging/release.sh X.Y.Z     set X.Y.Z everywhere, move the changelog's Unreleased
#                                  section under "## [X.Y.Z] - <today in Asia/Tokyo>", check
#   packaging/release.sh --check   check that every place agrees (run by verify.sh and CI)
#   packaging/release.sh --version print the workspace version
#   packaging/release.sh --notes X.Y.Z
#                                  print that version's changelog section (release notes)
# The places: the workspace version and the pinned path dependencies (Cargo.toml), the
# crates in Cargo.lock, `--version` of the binary, the npm launcher and its platform
# dependencies, the registry's server.json, the MCPB manifest, and the image tags of the
# Kubernetes pack and the ToolHive and Docker entries.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

workspace_version() {
  sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml
}

# Every version the shipped files state, one "place: version" per line.
versions() {
  echo "Cargo.toml workspace: $(workspace_version)"
  sed -n 's/^responses-mcp-\(core\|config\|host\) = .*version = "=\([^"]*\)".*/Cargo.toml pin \1: \2/p' Cargo.toml
  for crate in responses-mcp-core responses-mcp-config responses-mcp-host openai-responses-mcp responses-mcp-blocking; do
    echo "Cargo.lock $crate: $(awk -v n="$crate" '$0=="name = \""n"\"" {getline; gsub(/version = |"/,""); print}' Cargo.lock)"
  done
  node - <<'JS'
const fs = require("node:fs");
const read = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const npm = read("packaging/npm/launcher/package.json");
console.log(`npm ${npm.name}: ${npm.version}`);
for (const [name, v] of Object.entries(npm.optionalDependencies)) console.log(`npm dependency ${name}: ${v}`);
const server = read("packaging/registry/server.json");
console.log(`server.json: ${server.version}`);
for (const p of server.packages) {
  if (p.version) console.log(`server.json ${p.registryType} ${p.identifier}: ${p.version}`);
  if (p.registryType === "oci") console.log(`server.json oci image tag: ${p.identifier.split(":").pop()}`);
  const m = /\/download\/v([^/]+)\/openai-responses-mcp-([^-]+(?:-[^-]+)?)-(?:linux|darwin|win32)/.exec(p.identifier);
  if (m) console.log(`server.json mcpb URL tag: ${m[1]}`), console.log(`server.json mcpb file: ${m[2]}`);
}
console.log(`mcpb manifest: ${read("packaging/mcpb/manifest.json").version}`);
const toolhive = read("packaging/toolhive/registry.json").data.servers[0];
console.log(`toolhive registry.json: ${toolhive.version}`);
for (const p of toolhive.packages) console.log(`toolhive registry.json image tag: ${p.identifier.split(":").pop()}`);
for (const k of Object.keys(toolhive._meta["io.modelcontextprotocol.registry/publisher-provided"]["io.github.stacklok"]))
  console.log(`toolhive registry.json extension's image tag: ${k.split(":").pop()}`);
JS
  # The image tags of the Kubernetes pack, ToolHive's MCPServer and Docker's entry.
  sed -n 's/^    newTag: "\(.*\)"$/packaging\/kubernetes\/base\/kustomization.yaml: \1/p' packaging/kubernetes/base/kustomization.yaml
  for f in packaging/toolhive/mcpserver.yaml packaging/docker-mcp/openai-responses-mcp/server.yaml; do
    sed -n "s|^ *image: ghcr.io/openai-responses-mcp/openai-responses-mcp:\(.*\)$|$f: \1|p" "$f"
  done
}

check() {
  local want bad=0 binary
  want=$(workspace_version)
  while IFS= read -r line; do
    if [ "${line##*: }" != "$want" ]; then
      echo "version mismatch: $line (want $want)" >&2
      bad=1
    fi
  done < <(versions)
  binary=$(cargo run -q --locked -p openai-responses-mcp -- --version)
  if [ "$binary" != "openai-responses-mcp $want" ]; then
    echo "version mismatch: the binary says '$binary' (want $want)" >&2
    bad=1
  fi
  grep -q '^## \[Unreleased\]' docs/changelog.md || { echo "docs/changelog.md has no ## [Unreleased] section" >&2; bad=1; }
  grep -q "mcp-name: $(node -p 'require("./packaging/registry/server.json").name')" README.md \
    || { echo "README.md lacks the mcp-name: line of server.json's name" >&2; bad=1; }
  [ "$bad" = 0 ] && echo "every shipped file says version $want"
  return "$bad"
}

notes() {
  local v=$1
  awk -v v="$v" '
    $0 ~ "^## \\[" v "\\]" { on = 1; next }
    on && /^## \[/ { exit }
    on { print }
  ' docs/changelog.md | sed -e '/./,$!d'
}

set_version() {
  local new=$1 old today
  [[ $new =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "not a version: $new" >&2; exit 2; }
  old=$(workspace_version)
  [ "$new" != "$old" ] || { echo "already at $new" >&2; exit 2; }
  grep -q '^## \[Unreleased\]' docs/changelog.md || { echo "no ## [Unreleased] section to release" >&2; exit 2; }
  today=$(TZ=Asia/Tokyo date +%F)
  sed -i "/^\[workspace.package\]/,/^\[/s/^version = \".*\"/version = \"$new\"/" Cargo.toml
  sed -i "s/^\(responses-mcp-\(core\|config\|host\) = .*version = \"=\)[^\"]*\"/\1$new\"/" Cargo.toml
  node - "$old" "$new" <<'JS'
const fs = require("node:fs");
const [oldV, newV] = process.argv.slice(2);
const edit = (p, f) => { const v = JSON.parse(fs.readFileSync(p, "utf8")); f(v); fs.writeFileSync(p, JSON.stringify(v, null, 2) + "\n"); };
edit("packaging/npm/launcher/package.json", (p) => {
  p.version = newV;
  for (const k of Object.keys(p.optionalDependencies)) p.optionalDependencies[k] = newV;
});
edit("packaging/registry/server.json", (s) => {
  s.version = newV;
  for (const p of s.packages) {
    if (p.version) p.version = newV;
    p.identifier = p.identifier.split(`v${oldV}/`).join(`v${newV}/`).split(`-${oldV}-`).join(`-${newV}-`);
    if (p.registryType === "oci" && p.identifier.endsWith(`:${oldV}`)) p.identifier = p.identifier.slice(0, -oldV.length) + newV;
    if (p.fileSha256) p.fileSha256 = "0".repeat(64); // filled from SHA256SUMS at release
  }
});
edit("packaging/mcpb/manifest.json", (m) => { m.version = newV; });
edit("packaging/toolhive/registry.json", (r) => {
  for (const s of r.data.servers) {
    s.version = newV;
    for (const p of s.packages) p.identifier = p.identifier.slice(0, -oldV.length) + newV;
    const ours = s._meta["io.modelcontextprotocol.registry/publisher-provided"]["io.github.stacklok"];
    for (const k of Object.keys(ours)) { ours[k.slice(0, -oldV.length) + newV] = ours[k]; delete ours[k]; }
  }
});
JS
  sed -i "s/^    newTag: \".*\"$/    newTag: \"$new\"/" packaging/kubernetes/base/kustomization.yaml
  sed -i "s|^\( *image: ghcr.io/openai-responses-mcp/openai-responses-mcp:\).*$|\1$new|" \
    packaging/toolhive/mcpserver.yaml packaging/docker-mcp/openai-responses-mcp/server.yaml
  awk -v v="$new" -v d="$today" '
    /^## \[Unreleased\]/ && !done { print; print ""; print "## [" v "] - " d; done = 1; next }
    { print }
  ' docs/changelog.md > docs/changelog.md.new && mv docs/changelog.md.new docs/changelog.md
  cargo update --workspace --offline --quiet
  echo "version $old -> $new; changelog section dated $today (Asia/Tokyo)"
  check
}

case "${1:-}" in
  --check) check ;;
  --version) workspace_version ;;
  --notes) notes "${2:?--notes needs a version}" ;;
  "" | -h | --help) sed -n '2,12p' "$0" ;;
  *) set_version "$1" ;;
esac
