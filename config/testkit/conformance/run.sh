#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# package-lock.json here) in server mode against both binaries serving --http, for the
# 2025-11-25 and 2026-07-28 requirement sets. Scenarios that cannot apply to a tools-only
# server are listed, with the reason, in expected-failures-<revision>.yml; any other
# failure, or a listed one that starts passing, fails the run.
#
# Installs the suite and the Node it needs (>= 22, from the npm package `node`) under
# target/conformance; run from anywhere: bash config/testkit/conformance/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work="$root/target/conformance"
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
node="$work/node_modules/.bin/node"
suite="$work/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: $("$node" "$suite" --version) on node $("$node" --version)"

(cd "$root" && cargo build --locked --bins --quiet)

server_pid=
stop() {
    if [[ -n "$server_pid" ]]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap stop EXIT

for bin in openai-responses-mcp openai-responses-mcp-blocking; do
    home=$(mktemp -d)
    log="$work/$bin.log"
    # Made here, not by the server's redirection: the first look below may come before the
    # background shell has opened it, and a sed that cannot read it ends the run (set -e).
    : >"$log"
    # No upstream is reached: the suite calls only tools this server does not have.
    env -i PATH="$PATH" HOME="$home" OPENAI_API_KEY=conformance-unused \
        OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
        "$root/target/debug/$bin" --http --listen 127.0.0.1:0 2>"$log" &
    server_pid=$!
    url=
    for _ in $(seq 1 200); do
        url=$(sed -n 's/^listening on \(http:.*\)$/\1/p' "$log")
        [[ -n "$url" ]] && break
        sleep 0.05
    done
    [[ -n "$url" ]] || { cat "$log"; echo "conformance: $bin did not start" >&2; exit 1; }
    for revision in 2025-11-25 2026-07-28; do
        echo "conformance: $bin, requirements $revision, $url"
        out="$work/$bin-$revision.txt"
        if ! "$node" "$suite" server --url "$url" --requirements "$revision" \
            --expected-failures "$here/expected-failures-$revision.yml" >"$out" 2>&1; then
            sed -n '/=== SUMMARY ===/,$p' "$out"
            echo "conformance: $bin fails the $revision requirements (full output: $out)" >&2
            exit 1
        fi
        grep -E "^Total:|Baseline check" "$out" | sed 's/\x1b\[[0-9;]*m//g'
    done
    stop
    rm -rf "$home"
done
echo "conformance: both binaries pass"
