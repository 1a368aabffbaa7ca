#!/usr/bin/env bash
# Builds the OCI image of one architecture from a static binary with buildah (Debian's
# package), and writes it as an OCI archive:
#   packaging/container/build.sh ARCH BINARY VERSION OUT.tar     (ARCH: amd64 or arm64)
# The labels say where it comes from and, for the MCP registry's ownership check, the
# server's name in packaging/registry/server.json.
set -euo pipefail
arch=$1 binary=$2 version=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
name=$(node -p 'require(process.argv[1]).name' "$here/../registry/server.json")
repository=$(node -p 'require(process.argv[1]).repository.url' "$here/../registry/server.json")
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$binary" "$context/openai-responses-mcp"
cp "$here/Containerfile" "$context/"
tag="localhost/openai-responses-mcp:$version-$arch"
# vfs storage: works wherever buildah runs (no overlay or fuse needed).
b=(buildah --storage-driver vfs)
"${b[@]}" rmi -f "$tag" >/dev/null 2>&1 || true
"${b[@]}" bud -q --arch "$arch" --os linux -f "$context/Containerfile" -t "$tag" \
  --label "org.opencontainers.image.title=openai-responses-mcp" \
  --label "org.opencontainers.image.description=MCP server with web-search-backed answers from the OpenAI Responses API" \
  --label "org.opencontainers.image.source=$repository" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.licenses=MIT" \
  --label "io.modelcontextprotocol.server.name=$name" \
  "$context" >/dev/null
rm -f "$out"
"${b[@]}" push -q "$tag" "oci-archive:$out" >/dev/null
echo "$out"
