"""Runs the one-instance overlay's pod for real with `podman kube play`, then checks it:
the pod turns ready (its readiness probe's path through its port) and a `tools/call`
through that port is answered by a fake OpenAI this script serves on loopback.

    python play.py RENDERED.yaml IMAGE PODMAN...

RENDERED.yaml is `kubectl kustomize packaging/kubernetes/single`; IMAGE the loaded image;
PODMAN the podman command with its options. The pod is the Deployment's template as
rendered (image, command, security context, probes, resources, environment names), with
what a cluster would provide and podman cannot given here instead:
- the Secret's values inlined (podman's kube play reads Secrets only from its own store);
- host networking and a free loopback port in place of 0.0.0.0:8787, so the fake OpenAI
  is on loopback for the server (no key crosses the network in plain http) and parallel
  runs do not collide; OPENAI_BASE_URL points at the fake;
- the readiness probe asked from here: podman's kube play has no readiness probes
  (containers/podman#12417) and runs an httpGet liveness probe as `curl` inside the
  container (containers/podman#18318), which a FROM scratch image does not have, so the
  liveness probe is left out and asked from here too, as the kubelet asks both, from
  outside the container.
"""

import http.server
import json
import pathlib
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import yaml

rendered, image, podman = sys.argv[1], sys.argv[2], sys.argv[3:]
root = pathlib.Path(__file__).resolve().parents[2]
answer = (root / "core/testdata/openai/response-no-search.json").read_bytes()
said = json.loads(answer)["output"][0]["content"][0]["text"]


def fail(why):
    sys.exit(f"podman kube play of the single overlay: {why}")


class FakeOpenAi(http.server.BaseHTTPRequestHandler):
    requests = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        FakeOpenAi.requests.append((self.path, self.headers.get("Authorization"), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAi)
threading.Thread(target=fake.serve_forever, daemon=True).start()
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]

docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
deployment = next(d for d in docs if d["kind"] == "Deployment")
template = deployment["spec"]["template"]
container = template["spec"]["containers"][0]
probes = {
    "ready": container.pop("readinessProbe")["httpGet"]["path"],
    "live": container.pop("livenessProbe")["httpGet"]["path"],
}
if container["args"] != ["--http", "--listen", "0.0.0.0:8787"]:
    fail(f"the container's arguments changed: {container['args']}")
container["args"] = ["--http", "--listen", f"127.0.0.1:{port}"]
container["image"] = image
# On the host's network the listen address is the port; podman would publish none.
container["ports"] = []
key, token = "sk-test-" + secrets.token_hex(8), secrets.token_hex(16)
values = {"openai-api-key": key, "http-token": token}
for env in container["env"]:
    ref = env.get("valueFrom", {}).get("secretKeyRef")
    if ref:
        env.pop("valueFrom")
        env["value"] = values[ref["key"]]
container["env"].append({"name": "OPENAI_BASE_URL", "value": f"http://127.0.0.1:{fake.server_port}/v1"})
name = "orm-kube-play-" + secrets.token_hex(4)
pod = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": name, "labels": template["metadata"]["labels"]},
    "spec": {**template["spec"], "hostNetwork": True, "restartPolicy": "Never"},
}
# Podman has no service accounts (and the template mounts no token).
pod["spec"].pop("serviceAccountName", None)
pod_file = pathlib.Path(rendered).with_name(f"{name}.yaml")
pod_file.write_text(yaml.safe_dump(pod))

base = f"http://127.0.0.1:{port}"


def get(path):
    try:
        with urllib.request.urlopen(base + path, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def post(body, session=None):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(base + "/mcp", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=60) as r:
        text = r.read().decode()
        if r.headers.get("Content-Type", "").startswith("text/event-stream"):
            data = [l[6:] for l in text.splitlines() if l.startswith("data: ")]
            text = next(d for d in data if '"id"' in d)
        return r.headers.get("Mcp-Session-Id"), json.loads(text)


started = False
try:
    played = subprocess.run([*podman, "kube", "play", str(pod_file)], capture_output=True, text=True)
    if played.returncode != 0:
        fail(f"podman kube play failed: {played.stderr.strip()}")
    started = True
    # Up to 60 s for the pod to start and say it is ready (the kubelet would ask every
    # periodSeconds; a probe that never answers is the failure this catches).
    deadline = time.monotonic() + 60
    status = None
    while time.monotonic() < deadline:
        try:
            status, body = get(probes["ready"])
            if status == 200:
                break
        except OSError:
            pass
        time.sleep(0.5)
    if status != 200:
        logs = subprocess.run([*podman, "logs", f"{name}-server"], capture_output=True, text=True)
        fail(f"{probes['ready']} never answered 200 (last: {status}); the server said: {logs.stderr.strip()[-2000:]}")
    print(f"pod {name}: ready ({probes['ready']} 200: {body.decode().strip()})")
    status, _ = get(probes["live"])
    if status != 200:
        fail(f"{probes['live']} answered {status}")
    session, init = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "kube-play-check", "version": "1"}}})
    if "result" not in init:
        fail(f"initialize: {init}")
    _, call = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "answer", "arguments": {"query": "a story about a unicorn"}}}, session)
    text = " ".join(c.get("text", "") for c in call.get("result", {}).get("content", []))
    if said[:40] not in text:
        fail(f"tools/call did not carry the fake OpenAI's answer: {json.dumps(call)[:2000]}")
    path, authorization, _ = FakeOpenAi.requests[-1]
    if path != "/v1/responses" or authorization != f"Bearer {key}":
        fail(f"the fake OpenAI got {path} with the wrong credentials")
    print(f"pod {name}: tools/call answered through port {port} by the fake OpenAI ({len(FakeOpenAi.requests)} request)")
finally:
    if started:
        subprocess.run([*podman, "kube", "down", str(pod_file)], capture_output=True)
    pod_file.unlink(missing_ok=True)
    fake.shutdown()
