#!/usr/bin/env bash
# The static x86_64 musl builds' sizes against their budgets (issue 50), each build made as
# the release makes it: `cargo auditable zigbuild --release --locked`, one package at a
# time (a joint build unifies features), stripped by the release profile.
#
#   bash packaging/sizes.sh                  the tiny build (--no-default-features) and the
#                                            released one (default features), both runtimes
#   bash packaging/sizes.sh --released DIR   the released binaries already in DIR (as
#                                            packaging/verify.sh leaves them), not rebuilt
#   bash packaging/sizes.sh --capabilities   also each capability added to the tiny build
#                                            on its own (the table in docs/benchmarks.md)
#
# Prints a table (variant, runtime, bytes, MiB, budget, margin). Issue 50's budgets are not
# met yet (docs/benchmarks.md says by how much and why); until they are met or moved, a build
# over its budget is reported, and the script exits 1 when a build grows past its ceiling:
# the size measured when the budgets were found unmet, plus 1 %. A ceiling never stands
# above its budget once the budget is met: lower it to the budget then. The binaries are kept in target/sizes/<variant>/. Needs cargo-auditable,
# cargo-zigbuild and Zig on PATH (packaging/verify.sh installs them under target/packaging).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=x86_64-unknown-linux-musl
# 2.9 MiB and 3.4 MiB.
tiny_budget=3040870
released_budget=3565158
# Measured 2026-12-08 at issue 56's close (tiny smol 3,180,216, blocking 3,289,896;
# released smol 3,683,320, blocking 3,786,032), plus 1 %: the spend holds, the bounded
# roster, the gateway's credential and the HTTP and seed hardening added 76-81 KB
# (+2.2-2.5 %) over issue 48's close (docs/benchmarks.md).
ceiling() {
  case "$1/$2" in
    tiny/smol) echo 3212018 ;;
    tiny/blocking) echo 3322795 ;;
    released/smol) echo 3720153 ;;
    released/blocking) echo 3823892 ;;
  esac
}
released_dir=""
capabilities=false
while [ $# -gt 0 ]; do
  case "$1" in
    --released) released_dir=$2; shift 2 ;;
    --capabilities) capabilities=true; shift ;;
    *) echo "usage: $0 [--released DIR] [--capabilities]" >&2; exit 2 ;;
  esac
done
out=target/sizes
mkdir -p "$out"
bins=(openai-responses-mcp openai-responses-mcp-blocking)
runtime() { case "$1" in openai-responses-mcp) echo smol ;; *) echo blocking ;; esac; }

# Builds both runtimes with cargo's feature flags "$2..." into target/sizes/$1.
build() {
  local variant=$1
  shift
  for pkg in openai-responses-mcp responses-mcp-blocking; do
    cargo auditable zigbuild -q --release --locked --target "$target" -p "$pkg" "$@"
  done
  mkdir -p "$out/$variant"
  for bin in "${bins[@]}"; do cp "target/$target/release/$bin" "$out/$variant/"; done
}

# The released binaries first: a build of another variant replaces target/$target/release.
if [ -n "$released_dir" ]; then
  mkdir -p "$out/released"
  for bin in "${bins[@]}"; do cp "$released_dir/$bin" "$out/released/"; done
else
  build released
fi
build tiny --no-default-features
variants=(tiny)
if $capabilities; then
  for feature in traces store oauth; do
    build "+$feature" --no-default-features --features "$feature"
    variants+=("+$feature")
  done
fi
variants+=(released)

over=0
grown=0
printf '| build | runtime | bytes | MiB | budget | margin |\n|---|---|---:|---:|---:|---:|\n'
for variant in "${variants[@]}"; do
  case "$variant" in
    tiny) budget=$tiny_budget ;;
    released) budget=$released_budget ;;
    *) budget="" ;;
  esac
  for bin in "${bins[@]}"; do
    bytes=$(stat -c %s "$out/$variant/$bin")
    mib=$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1048576 }')
    if [ -z "$budget" ]; then
      added=$((bytes - $(stat -c %s "$out/tiny/$bin")))
      printf '| %s | %s | %d | %s | - | %+d over tiny |\n' "$variant" "$(runtime "$bin")" "$bytes" "$mib" "$added"
      continue
    fi
    margin=$((budget - bytes))
    verdict="under by $margin"
    if [ "$margin" -lt 0 ]; then
      verdict="**over by $((-margin))**"
      over=1
    fi
    held=$(ceiling "$variant" "$(runtime "$bin")")
    if [ "$bytes" -gt "$held" ]; then
      verdict="$verdict, **above its ceiling $held**"
      grown=1
    fi
    printf '| %s | %s | %d | %s | %d | %s |\n' "$variant" "$(runtime "$bin")" "$bytes" "$mib" "$budget" "$verdict"
  done
done
if [ "$over" = 1 ]; then
  echo "a static build is over its size budget (docs/benchmarks.md, issue 50: not met yet)" >&2
fi
if [ "$grown" = 1 ]; then
  echo "a static build grew past its ceiling (the size when the budgets were found unmet, plus 1 %)" >&2
  exit 1
fi
