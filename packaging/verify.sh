#!/usr/bin/env bash
# Builds and checks, on this machine, every artifact a release ships that can be built
# here (the macOS and Windows builds run only in the release workflow):
#   1. the workflows pass actionlint and zizmor (offline: packaging/lint-workflows.sh);
#      every shipped file states the same version;
#   2. static linux x86_64 and aarch64 builds of both runtimes (cargo-zigbuild with Zig
#      from PyPI, through `cargo auditable`), which `file` and `ldd` call static, answering
#      initialize and tools/list (aarch64 under qemu user-mode emulation), each carrying
#      its dependency list (read back with `rust-audit-info`);
#   3. their release archives, each with a CycloneDX SBOM made from its binaries' lists
#      (`auditable2cdx`, merged and validated against the CycloneDX 1.6 schema by the
#      CycloneDX Python library: `packaging/sbom.py`);
#   4. the npm packages: packed, installed offline from the tarballs into an empty
#      prefix, and the README's npx command answering; the launcher's exit codes,
#      signals and its message when no platform package fits;
#   5. the linux-x64 .mcpb bundle, validated by the official MCPB CLI, unpacked and run;
#   6. the registry's server.json filled with the bundle's hash (the test suite checks
#      it against the registry's schema);
#   7. the OCI images (linux/amd64 and linux/arm64, FROM scratch) built with buildah,
#      their configuration inspected and the binary in each unpacked root filesystem
#      answering `initialize` and `/health`, each with its SBOM;
#   8. the Kubernetes pack rendered, validated against Kubernetes 1.37's schemas, and its
#      single overlay run with `podman kube play` on the amd64 image (kubernetes/check.sh);
#   9. `cargo publish --dry-run` of every publishable crate (default features: the
#      released product), and `cargo install --no-default-features` of the packaged server
#      crate (the small build).
#  10. the static x86_64 builds' sizes, tiny (`--no-default-features`) and released,
#      against their budgets (`packaging/sizes.sh`: reports a build over its budget, fails
#      when one grows past its ceiling while the budgets are unmet).
# Signing (cosign, keyless) and provenance attestations need GitHub's OIDC token and run
# only in the release workflow, which actionlint and zizmor check here.
# Tools go under target/packaging (a Python venv from the hashed requirements in
# packaging/tools, cargo-zigbuild, cargo-auditable, rust-audit-info, auditable2cdx, npm
# packages); qemu is
# installed with apt when run as root. Output: target/packaging/dist.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=target/packaging
dist=$out/dist
# Zig and the CycloneDX library come from packaging/tools/{zig,sbom}.txt (every file's
# hash pinned), as in the release workflow; their versions are read from there.
pinned() { sed -n "s/^$1==\([^ ]*\) .*/\1/p" "packaging/tools/$2.txt"; }
ZIGLANG=$(pinned ziglang zig)
ZIGBUILD=0.24.1
# cargo-auditable 0.7.3 and later build through cargo-zigbuild (`cargo auditable zigbuild`).
AUDITABLE=0.7.7
AUDIT_INFO=0.5.4
AUDITABLE2CDX=0.1.0
CYCLONEDX_LIB=$(pinned cyclonedx-python-lib sbom)
pip_hashed() { "$out/venv/bin/pip" install -q --disable-pip-version-check --require-hashes --only-binary=:all: -r "$1"; }
step() { printf '\n== %s\n' "$*"; }

step "tools"
if [ ! -x "$out/venv/bin/python" ]; then
  if ! python3 -m venv "$out/venv" 2>/dev/null; then
    [ "$(id -u)" = 0 ] && apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$out/venv" && python3 -m venv "$out/venv"
  fi
fi
"$out/venv/bin/python" -m ziglang version 2>/dev/null | grep -qx "$ZIGLANG" \
  || pip_hashed packaging/tools/zig.txt
if ! "$out/tools/bin/cargo-zigbuild" --version 2>/dev/null | grep -q " $ZIGBUILD\$"; then
  cargo install -q cargo-zigbuild --version "$ZIGBUILD" --locked --root "$out/tools"
fi
# A crates.io tool at an exact version (these print no version of their own).
tool() {
  local crate=$1 version=$2 bin=$3
  if [ ! -x "$out/tools/bin/$bin" ] || [ "$(cat "$out/tools/$bin.version" 2>/dev/null)" != "$version" ]; then
    cargo install -q "$crate" --version "$version" --locked --force --root "$out/tools"
    echo "$version" > "$out/tools/$bin.version"
  fi
}
tool cargo-auditable "$AUDITABLE" cargo-auditable
tool rust-audit-info "$AUDIT_INFO" rust-audit-info
tool auditable2cdx "$AUDITABLE2CDX" auditable2cdx
"$out/venv/bin/python" -c "import cyclonedx.validation.json" 2>/dev/null \
  && "$out/venv/bin/pip" show cyclonedx-python-lib 2>/dev/null | grep -qx "Version: $CYCLONEDX_LIB" \
  || pip_hashed packaging/tools/sbom.txt
export PATH="$root/$out/tools/bin:$root/$out/venv/bin:$PATH"
rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl >/dev/null 2>&1
if ! command -v qemu-aarch64 >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq qemu-user >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq qemu-user >/dev/null; }
fi
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 is missing: apt-get install qemu-user" >&2; exit 1; }
mkdir -p "$out/node"
cp packaging/tools/package.json packaging/tools/package-lock.json "$out/node/"
if ! cmp -s packaging/tools/package-lock.json "$out/node/node_modules/.package-lock.json.copy" 2>/dev/null; then
  (cd "$out/node" && npm ci --no-audit --no-fund --loglevel=error)
  cp packaging/tools/package-lock.json "$out/node/node_modules/.package-lock.json.copy"
fi
export MCPB="$root/$out/node/node_modules/.bin/mcpb"

step "workflows (actionlint, zizmor --offline) and versions"
bash packaging/lint-workflows.sh
bash packaging/release.sh --check
version=$(bash packaging/release.sh --version)

step "static linux builds (cargo auditable), their dependency lists, archives and SBOMs"
rm -rf "$dist" && mkdir -p "$dist"
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
  # Each package on its own, as the release does (a joint build unifies rustls features),
  # with its default features: the released product (the store's client and OAuth mode,
  # which the dependency-list check below finds in each binary).
  for pkg in openai-responses-mcp responses-mcp-blocking; do
    cargo auditable zigbuild -q --release --locked --target "$target" -p "$pkg"
  done
  for bin in openai-responses-mcp openai-responses-mcp-blocking; do
    path="target/$target/release/$bin"
    description=$(file -b "$path")
    echo "$path: $description ($(stat -c %s "$path") bytes)"
    case "$description" in *"statically linked"* | *"static-pie linked"*) ;; *) echo "not static" >&2; exit 1 ;; esac
    if ldd "$path" >/dev/null 2>&1; then echo "ldd finds dynamic libraries in $path" >&2; exit 1; fi
    # The list cargo auditable embedded, read back as cargo audit and Trivy read it.
    rust-audit-info "$path" > "$out/$bin-$target.audit.json"
    python3 - "$out/$bin-$target.audit.json" "$bin" <<'PY'
import json, sys
names = {p["name"] for p in json.load(open(sys.argv[1]))["packages"]}
package = {"openai-responses-mcp": "openai-responses-mcp", "openai-responses-mcp-blocking": "responses-mcp-blocking"}[sys.argv[2]]
missing = {package, "responses-mcp-core", "responses-mcp-config", "responses-mcp-host", "rustls", "ring", "redis", "jsonwebtoken"} - names
if missing:
    sys.exit(f"{sys.argv[2]}: its embedded dependency list lacks {sorted(missing)}")
# Token signatures are ring's (config/host/src/oauth/signatures.rs), not RustCrypto's.
rust_crypto = {"rsa", "p256", "p384", "ed25519-dalek"} & names
if rust_crypto:
    sys.exit(f"{sys.argv[2]}: RustCrypto's {sorted(rust_crypto)} is linked; jsonwebtoken must verify on ring")
print(f"{sys.argv[2]}: {len(names)} crates listed in the binary")
PY
    case "$target" in
      x86_64-*) node packaging/smoke.js "$path" --stdio 2>/dev/null ;;
      aarch64-*) node packaging/smoke.js qemu-aarch64 "$path" --stdio 2>/dev/null ;;
    esac
  done
  bash packaging/archive.sh "$target" "$version" "target/$target/release" "$dist"
  python3 packaging/sbom.py "$dist/openai-responses-mcp-$version-$target.cdx.json" \
    "openai-responses-mcp-$version-$target" "$version" \
    "target/$target/release/openai-responses-mcp" "target/$target/release/openai-responses-mcp-blocking"
done
x64=target/x86_64-unknown-linux-musl/release/openai-responses-mcp
arm64=target/aarch64-unknown-linux-musl/release/openai-responses-mcp

step "npm packages, installed offline into an empty prefix"
bash packaging/npm/pack.sh "$dist/npm" "linux-x64=$x64" "linux-arm64=$arm64"
prefix=$(mktemp -d)
bare=$(mktemp -d)
trap 'rm -rf "$prefix" "$bare"' EXIT
offline=(--offline --no-audit --no-fund --loglevel=error --cache "$prefix/.cache")
echo '{"name":"empty","private":true}' > "$prefix/package.json"
(cd "$prefix" && npm install "${offline[@]}" \
  "$root/$dist/npm/openai-responses-mcp-rs-$version.tgz" \
  "$root/$dist/npm/openai-responses-mcp-rs-linux-x64-$version.tgz")
# The README's command, run where the packages are installed, with no network.
(cd "$prefix" && npm_config_offline=true npm_config_cache="$prefix/.cache" \
  node "$root/packaging/smoke.js" npx -y openai-responses-mcp-rs --stdio 2>/dev/null)
status=0
(cd "$prefix" && npm_config_offline=true npx -y openai-responses-mcp-rs --bogus >/dev/null 2>&1) || status=$?
[ "$status" = 2 ] || { echo "the launcher turned exit status 2 into $status" >&2; exit 1; }
launcher="$prefix/node_modules/openai-responses-mcp-rs/bin/openai-responses-mcp.js"
mkfifo "$prefix/stdin"
node "$launcher" --stdio < "$prefix/stdin" >/dev/null 2>&1 &
pid=$!
exec 9>"$prefix/stdin"
server="$prefix/node_modules/openai-responses-mcp-rs-linux-x64"
for _ in $(seq 100); do pgrep -f "$server" >/dev/null && break; sleep 0.1; done
pgrep -f "$server" >/dev/null || { echo "the launcher did not start the server" >&2; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
exec 9>&-
pgrep -f "$server" >/dev/null \
  && { echo "the server outlived the launcher's SIGTERM" >&2; exit 1; }
echo "launcher: SIGTERM forwarded, exit status $status, no server left"
echo '{"name":"bare","private":true}' > "$bare/package.json"
(cd "$bare" && npm install "${offline[@]}" "$root/$dist/npm/openai-responses-mcp-rs-$version.tgz" >/dev/null 2>&1) || true
status=0
message=$(cd "$bare" && node node_modules/openai-responses-mcp-rs/bin/openai-responses-mcp.js --stdio 2>&1 >"$bare/stdout") || status=$?
[ "$status" = 1 ] && [ ! -s "$bare/stdout" ] && grep -q "Install it another way" <<<"$message" \
  || { echo "without a platform package the launcher should say how else to install (status $status): $message" >&2; exit 1; }
echo "launcher without a platform package: exit 1, nothing on stdout, says how else to install"

step ".mcpb bundle (linux-x64)"
bundle=$(bash packaging/mcpb/build.sh linux-x64 "$x64" "$dist" | tail -1)
"$MCPB" info "$bundle" | sed -n '1,6p'
unpacked=$(mktemp -d)
"$MCPB" unpack "$bundle" "$unpacked" >/dev/null
command=$(node -p 'require(process.argv[1]).server.mcp_config.command.replace("${__dirname}", process.argv[2])' "$unpacked/manifest.json" "$unpacked")
node packaging/smoke.js "$command" --stdio 2>/dev/null
rm -rf "$unpacked"

step "server.json with the bundle's hash"
(cd "$dist" && sha256sum ./*.tar.gz ./*.mcpb > SHA256SUMS && cat SHA256SUMS)
# Only the linux bundles' platform is built here: the others are left out of this copy.
node packaging/registry/fill.js "$dist/SHA256SUMS" "$dist/server.json" --drop-missing
grep -q "$(sha256sum "$bundle" | cut -d' ' -f1)" "$dist/server.json"
echo "$dist/server.json names the bundle with its hash"

step "OCI images (buildah from Debian's packages; linux/amd64 and linux/arm64)"
if ! command -v buildah >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq buildah >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq buildah >/dev/null; }
fi
command -v buildah >/dev/null || { echo "buildah is missing: apt-get install buildah" >&2; exit 1; }
for arch in amd64 arm64; do
  case "$arch" in amd64) binary=$x64 runner= ;; arm64) binary=$arm64 runner=qemu-aarch64 ;; esac
  image=$(bash packaging/container/build.sh "$arch" "$binary" "$version" "$dist/openai-responses-mcp-$version-oci-$arch.tar")
  node packaging/container/check.js "$image" "$arch" "$version" $runner
  # FROM scratch: the image holds the one binary, so its SBOM is that binary's list.
  python3 packaging/sbom.py "$dist/openai-responses-mcp-$version-oci-$arch.cdx.json" \
    "ghcr.io/openai-responses-mcp/openai-responses-mcp:$version-$arch" "$version" "$binary"
done

step "Kubernetes pack: every overlay rendered and validated (Kubernetes 1.37), the single one run with podman kube play"
bash packaging/kubernetes/check.sh --image "$dist/openai-responses-mcp-$version-oci-amd64.tar"

step "crates: cargo publish --dry-run, then cargo install from the packaged crate"
# The dry run verifies each crate against the others' packaged copies, which cargo unpacks
# into its home under a folder named for the overlay's path and reuses if present, and
# builds as registry crates, whose builds it takes as never changing: a CI that clones to
# the same path every time, or a second run in one tree, would compile against an older
# commit's copy. So the dry run builds in its own fresh folder, and the unpacked copies
# go (these names are ours alone: none is fetched from crates.io).
publish_target=target/packaging/publish
rm -rf "$publish_target"
for crate in $(cargo metadata --no-deps --format-version 1 \
    | node -e 'for (const p of JSON.parse(require("fs").readFileSync(0)).packages) console.log(p.name)'); do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
cargo publish --workspace --dry-run --locked --target-dir "$publish_target" > "$out/publish.log" 2>&1 \
  || { cat "$out/publish.log" >&2; exit 1; }
grep -E "Packaged|Verifying" "$out/publish.log"
crates=$(mktemp -d)
trap 'rm -rf "$prefix" "$bare" "$crates"' EXIT
for crate in responses-mcp-alloc responses-mcp-core responses-mcp-config responses-mcp-host openai-responses-mcp; do
  tar -xzf "$publish_target/package/tmp-crate/$crate-$version.crate" -C "$crates"
done
# Built in the dry run's folder, whose dependency builds it shares, then the folder goes:
# nothing reads it again, and it is the largest thing this script leaves. The dry run
# built the default features (the released product, what `cargo install` gives); this is
# the small build from the same package.
cargo install -q --locked --debug --force --no-default-features --root "$out/install" --target-dir "$publish_target" \
  --path "$crates/openai-responses-mcp-$version" \
  --config "patch.crates-io.responses-mcp-alloc.path='$crates/responses-mcp-alloc-$version'" \
  --config "patch.crates-io.responses-mcp-core.path='$crates/responses-mcp-core-$version'" \
  --config "patch.crates-io.responses-mcp-config.path='$crates/responses-mcp-config-$version'" \
  --config "patch.crates-io.responses-mcp-host.path='$crates/responses-mcp-host-$version'"
rm -rf "$crates" "$publish_target"
"$out/install/bin/openai-responses-mcp" --version
node packaging/smoke.js "$out/install/bin/openai-responses-mcp" --stdio 2>/dev/null

step "static x86_64 sizes against their budgets (packaging/sizes.sh): the released builds above, the tiny ones built now"
# Last, since the tiny builds replace the released binaries in target/<target>/release.
bash packaging/sizes.sh --released target/x86_64-unknown-linux-musl/release

step "verified"
ls -l "$dist" "$dist/npm"
