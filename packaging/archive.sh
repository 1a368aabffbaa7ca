#!/usr/bin/env bash
# Packs one target's release archive: archive.sh TARGET VERSION BIN_DIR OUT_DIR
# -> OUT_DIR/openai-responses-mcp-VERSION-TARGET.tar.gz (.zip for Windows), holding the
# directory openai-responses-mcp-VERSION-TARGET/ with both binaries, README.md, LICENSE
# and config.yaml.example (the layout cargo-binstall's metadata expects).
set -euo pipefail
target=$1 version=$2 bins=$3 out=$4
root=$(cd "$(dirname "$0")/.." && pwd)
name="openai-responses-mcp-$version-$target"
ext=""
case "$target" in *windows*) ext=".exe" ;; esac
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
for bin in openai-responses-mcp openai-responses-mcp-blocking; do
  cp "$bins/$bin$ext" "$stage/$name/"
done
cp "$root/README.md" "$root/LICENSE" "$root/config/config.yaml.example" "$stage/$name/"
out=$(cd "$out" && pwd)
case "$target" in
  *windows*) (cd "$stage" && 7z a -tzip -bso0 "$out/$name.zip" "$name") ;;
  *) tar -C "$stage" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name" 2>/dev/null \
       || tar -C "$stage" -czf "$out/$name.tar.gz" "$name" ;;
esac
ls "$out" | grep -F "$name"
