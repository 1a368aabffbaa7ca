#!/usr/bin/env bash
# Builds the npm packages: the launcher, and one package per platform whose binary is
# given. Usage: pack.sh OUT_DIR [PLATFORM=BINARY ...], e.g.
#   pack.sh target/packaging/npm linux-x64=target/x86_64-unknown-linux-musl/release/openai-responses-mcp
# Writes OUT_DIR/<name>-<version>.tgz for each package (npm pack), nothing else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The launcher, with the repository's README and LICENSE.
cp -r "$here/launcher" "$stage/launcher"
cp "$root/LICENSE" "$stage/launcher/LICENSE"
cp "$here/README.md" "$stage/launcher/README.md"
(cd "$stage/launcher" && npm pack --silent --pack-destination "$out" >/dev/null)

for spec in "$@"; do
  platform=${spec%%=*}
  binary=${spec#*=}
  dir="$stage/$platform"
  mkdir -p "$dir/bin"
  node - "$here" "$platform" "$dir" <<'JS'
const fs = require("node:fs");
const path = require("node:path");
const [here, platform, dir] = process.argv.slice(2);
const launcher = JSON.parse(fs.readFileSync(path.join(here, "launcher/package.json"), "utf8"));
const p = JSON.parse(fs.readFileSync(path.join(here, "platforms.json"), "utf8"))[platform];
if (!p) throw new Error(`unknown platform ${platform}`);
const name = `${launcher.name}-${platform}`;
if (!launcher.optionalDependencies[name]) throw new Error(`${name} is not a dependency of the launcher`);
const pkg = {
  name,
  version: launcher.version,
  description: `The ${platform} binary of ${launcher.name} (installed by it; not meant to be used directly)`,
  license: launcher.license,
  repository: launcher.repository,
  os: [p.os],
  cpu: [p.cpu],
  files: [`bin/${p.exe}`],
  preferUnplugged: true,
};
fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
fs.writeFileSync(path.join(dir, "README.md"), `# ${name}\n\nThe ${platform} (${p.target}) binary of [${launcher.name}](https://www.npmjs.com/package/${launcher.name}). Install that package instead.\n`);
fs.writeFileSync(path.join(dir, "exe"), p.exe);
JS
  exe=$(cat "$dir/exe") && rm "$dir/exe"
  cp "$binary" "$dir/bin/$exe"
  chmod 755 "$dir/bin/$exe"
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done
ls "$out"
