#!/usr/bin/env python3
"""What the release workflow must hold to, beyond what zizmor checks (run by
packaging/lint-workflows.sh; standard library only, so it reads the workflows by their
layout: two-space indents, one job per `  name:` line under `jobs:`).

  python3 packaging/workflow_policy.py RELEASE_YML DEPLOYMENT_MD [OTHER_WORKFLOW...]

Prints each breach and exits 1 if there is any:
  - every action is pinned by a 40-hex commit SHA with its version in a comment;
  - every job of the release workflow that holds a write permission runs in a GitHub
    environment of its own, except `package`, which only signs and attests; each such
    job and environment is in the table of docs/deployment.md;
  - the crates.io token is only in a job whose `cargo publish` has `--no-verify`, and that
    job needs one that runs `cargo publish --dry-run` holding no write permission;
  - pip installs only with --require-hashes; nothing comes from a `releases/latest` URL;
    npm is never installed over Node's; no download is piped into tar or a shell, and a
    downloaded file's SHA-256 is checked before it is unpacked;
  - every cosign identity in docs/deployment.md is release.yml at a v* tag.
"""
import re
import sys

USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$")
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"^\s+#\s+v\d+(\.\d+)*\b")
SIGNING_ONLY = {"package"}


def jobs(text):
    """The release workflow's jobs: name -> its lines (the job's own block)."""
    lines = text.splitlines()
    try:
        start = lines.index("jobs:")
    except ValueError:
        return {}
    found, name = {}, None
    for line in lines[start + 1 :]:
        header = re.match(r"^  ([A-Za-z0-9_-]+):\s*$", line)
        if header:
            name = header.group(1)
            found[name] = []
        elif name is not None and (line.startswith("    ") or not line.strip()):
            found[name].append(line)
        elif line.strip() and not line.startswith(" "):
            break
    return found


def key(block, name):
    """A job-level `name: value` (four spaces in)."""
    for line in block:
        m = re.match(rf"^    {re.escape(name)}:\s*(.*?)\s*$", line)
        if m:
            return m.group(1)
    return None


def writes(block):
    """The permissions a job holds with `write`."""
    held, inside = set(), False
    for line in block:
        if re.match(r"^    permissions:\s*$", line):
            inside = True
            continue
        if inside:
            m = re.match(r"^      ([a-z-]+):\s*(\w+)", line)
            if m:
                if m.group(2) == "write":
                    held.add(m.group(1))
                continue
            if line.strip().startswith("#"):
                continue
            inside = False
    return held


def needs(block):
    value = key(block, "needs") or ""
    return set(re.findall(r"[A-Za-z0-9_-]+", value))


def check_uses(path, text, breaches):
    for number, line in enumerate(text.splitlines(), 1):
        m = USES.match(line)
        if not m or m.group(1).startswith("./"):
            continue
        if not PINNED.match(m.group(1)) or not VERSION_COMMENT.match(m.group(2)):
            breaches.append(
                f"{path}:{number}: `{m.group(1)}` is not pinned by a commit SHA with its"
                " version in a comment (`owner/repo@<40 hex> # vX.Y.Z`)"
            )


def check_commands(path, text, breaches):
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(r"\bpip3?\"?\s+install\b", line) and "--require-hashes" not in line:
            breaches.append(f"{path}:{number}: pip installs without --require-hashes")
        if "/releases/latest" in line:
            breaches.append(f"{path}:{number}: downloads from a moving `releases/latest` URL")
        if re.search(r"\bnpm\s+(install|i)\b.*\s-g\b", line):
            breaches.append(f"{path}:{number}: installs npm packages globally, outside a lockfile")
        if re.search(r"\bcurl\b.*\|\s*(sudo\s+)?(tar|sh|bash)\b", line):
            breaches.append(f"{path}:{number}: pipes a download into tar or a shell, unchecked")


def check_downloads(name, block, breaches):
    """In a job, a file curl writes is checked by sha256sum before tar reads it."""
    text = "\n".join(block)
    for m in re.finditer(r"\bcurl\b[^\n]*?\s-o\s+\"?([^\s\"]+)", text):
        fetched = m.group(1)
        checked = text.find("sha256sum --check", m.end())
        unpacked = text.find("tar ", m.end())
        if checked < 0 or (0 <= unpacked < checked):
            breaches.append(
                f"release job `{name}`: {fetched} is unpacked or used before sha256sum --check"
            )


def check_release(text, deployment, breaches):
    found = jobs(text)
    if not found:
        breaches.append("release workflow: no jobs found (is `jobs:` at the top level?)")
        return
    table = dict(re.findall(r"^\| `([a-z-]+)` \| `([a-z-]+)` \|", deployment, re.M))
    environments = {}
    for name, block in found.items():
        environment = key(block, "environment")
        held = writes(block)
        if held and name not in SIGNING_ONLY:
            if not environment:
                breaches.append(
                    f"release job `{name}` holds {', '.join(sorted(held))}: write but runs in"
                    " no environment"
                )
            elif table.get(name) != environment:
                breaches.append(
                    f"release job `{name}` runs in environment `{environment}`, which"
                    " docs/deployment.md's table does not give it"
                )
        if environment:
            if environment in environments:
                breaches.append(
                    f"release jobs `{environments[environment]}` and `{name}` share the"
                    f" environment `{environment}`"
                )
            environments[environment] = name
        check_downloads(name, block, breaches)

    for name, block in found.items():
        body = "\n".join(block)
        if "CARGO_REGISTRY_TOKEN" not in body:
            continue
        publishes = re.findall(r"cargo publish[^\n]*", body)
        if not publishes or any("--no-verify" not in p for p in publishes):
            breaches.append(
                f"release job `{name}` holds the crates.io token and runs `cargo publish`"
                " without --no-verify (it would build every dependency beside the token)"
            )
        verified = [
            need
            for need in needs(block)
            if need in found
            and re.search(r"cargo publish[^\n]*--dry-run", "\n".join(found[need]))
            and not writes(found[need])
            and "CARGO_REGISTRY_TOKEN" not in "\n".join(found[need])
        ]
        if not verified:
            breaches.append(
                f"release job `{name}` publishes crates without needing a job that runs"
                " `cargo publish --dry-run` with no token and no write permission"
            )


def check_identities(deployment, breaches):
    for number, line in enumerate(deployment.splitlines(), 1):
        m = re.search(r"--certificate-identity-regexp\s+\"([^\"]+)\"", line)
        if m and not m.group(1).endswith(r"/\.github/workflows/release\.yml@refs/tags/v"):
            breaches.append(
                f"docs/deployment.md:{number}: the identity `{m.group(1)}` accepts more"
                " than release.yml at a v* tag"
            )


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: workflow_policy.py RELEASE_YML DEPLOYMENT_MD [OTHER_WORKFLOW...]", file=sys.stderr)
        return 2
    release_path, deployment_path, others = argv[1], argv[2], argv[3:]
    with open(release_path, encoding="utf-8") as f:
        release = f.read()
    with open(deployment_path, encoding="utf-8") as f:
        deployment = f.read()
    breaches = []
    for path in dict.fromkeys([release_path, *others]):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check_uses(path, text, breaches)
        check_commands(path, text, breaches)
    check_release(release, deployment, breaches)
    check_identities(deployment, breaches)
    for breach in breaches:
        print(breach)
    print(f"workflow policy: {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
