#!/usr/bin/env bash
# Builds one platform's Claude Desktop bundle: build.sh PLATFORM BINARY OUT_DIR
# (PLATFORM: linux-x64, linux-arm64, darwin-x64, darwin-arm64 or win32-x64), with the
# manifest validated by the official MCPB CLI (`mcpb`, on PATH or MCPB=path).
# -> OUT_DIR/openai-responses-mcp-VERSION-PLATFORM.mcpb
set -euo pipefail
platform=$1 binary=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mcpb=${MCPB:-mcpb}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/server" "$out"
exe=openai-responses-mcp
case "$platform" in win32-*) exe=openai-responses-mcp.exe ;; esac
cp "$binary" "$stage/server/$exe"
chmod 755 "$stage/server/$exe"
cp "$root/LICENSE" "$root/README.md" "$stage/"
version=$(node - "$here/manifest.json" "$stage/manifest.json" "$platform" "$exe" <<'JS'
const fs = require("node:fs");
const [src, dst, platform, exe] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(src, "utf8"));
m.compatibility.platforms = [platform.split("-")[0]];
m.server.entry_point = `server/${exe}`;
m.server.mcp_config.command = `\${__dirname}/server/${exe}`;
fs.writeFileSync(dst, JSON.stringify(m, null, 2) + "\n");
console.log(m.version);
JS
)
"$mcpb" validate "$stage/manifest.json"
file="$(cd "$out" && pwd)/openai-responses-mcp-$version-$platform.mcpb"
"$mcpb" pack "$stage" "$file" >/dev/null
echo "$file"
