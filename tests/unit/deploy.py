#!/usr/bin/python3
"""deploy/ against itself and against what rootasm installs.

The Kubernetes objects (RuntimeClass, DaemonSet) have the fields their API
requires (node.k8s.io/v1 RuntimeClass: handler, a DNS label; apps/v1
DaemonSet: a selector matching the template's labels, containers with a name
and an image) -- the schema's required fields, checked here since kubectl
--dry-run needs a server; the containerd handler is the RuntimeClass's
handler, runs the runc v2 shim with BinaryName the installed rootasm-runtime
and passes the org.rootasm.* pod annotations on; the DaemonSet runs the
installed rootasmd on the socket runtime.conf allows and on the nodes the
RuntimeClass schedules to, ready when `rootasm probe --via` on that socket
answers; the example Pod names the RuntimeClass and no annotation but those
rootasm-runtime reads; runtime.conf has only keys rootasm-runtime knows.
Usage: deploy.py SOURCE-DIR
"""
import re
import sys
import tomllib

import yaml

src = sys.argv[1]
fails = []


def ok(cond, msg):
    if not cond:
        fails.append(msg)


def load_yaml(name):
    with open(f"{src}/deploy/{name}") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    ok(len(docs) == 1, f"{name}: {len(docs)} documents, want 1")
    return docs[0] if docs else {}


dns_label = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

rc = load_yaml("runtimeclass.yaml")
ok(rc.get("apiVersion") == "node.k8s.io/v1" and rc.get("kind") == "RuntimeClass",
   "runtimeclass.yaml: not a node.k8s.io/v1 RuntimeClass")
ok(dns_label.match(rc.get("metadata", {}).get("name", "")), "runtimeclass.yaml: metadata.name is not a DNS label")
handler = rc.get("handler", "")
ok(dns_label.match(handler), "runtimeclass.yaml: handler is not a DNS label")
node_selector = rc.get("scheduling", {}).get("nodeSelector", {})

with open(f"{src}/deploy/containerd-rootasm.toml", "rb") as f:
    ctd = tomllib.load(f)
runtimes = ctd.get("plugins", {}).get("io.containerd.grpc.v1.cri", {}).get("containerd", {}).get("runtimes", {})
ok(list(runtimes) == [handler], f"containerd-rootasm.toml: runtimes {list(runtimes)}, want the RuntimeClass handler {handler}")
h = runtimes.get(handler, {})
ok(h.get("runtime_type") == "io.containerd.runc.v2", "containerd-rootasm.toml: runtime_type is not io.containerd.runc.v2")
ok("org.rootasm.*" in h.get("pod_annotations", []), "containerd-rootasm.toml: pod_annotations lacks org.rootasm.*")
ok(h.get("options", {}).get("BinaryName") == "/usr/bin/rootasm-runtime",
   "containerd-rootasm.toml: options.BinaryName is not /usr/bin/rootasm-runtime (where the package installs it)")

conf = {}
with open(f"{src}/deploy/runtime.conf") as f:
    for n, line in enumerate(f, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        k, eq, v = line.partition("=")
        ok(eq and k.strip() in ("delegate", "delegate_config", "layouts", "store", "socket", "root", "unannotated",
                              "containerd", "import_layer_max", "imports"),
           f"runtime.conf:{n}: not a KEY = VALUE rootasm-runtime knows")
        conf[k.strip()] = v.strip()

ds = load_yaml("rootasmd-daemonset.yaml")
ok(ds.get("apiVersion") == "apps/v1" and ds.get("kind") == "DaemonSet", "rootasmd-daemonset.yaml: not an apps/v1 DaemonSet")
ok(dns_label.match(ds.get("metadata", {}).get("name", "")), "rootasmd-daemonset.yaml: metadata.name is not a DNS label")
spec = ds.get("spec", {})
tmpl = spec.get("template", {})
sel = spec.get("selector", {}).get("matchLabels", {})
labels = tmpl.get("metadata", {}).get("labels", {})
ok(sel and all(labels.get(k) == v for k, v in sel.items()), "rootasmd-daemonset.yaml: the selector does not match the template's labels")
pod = tmpl.get("spec", {})
ok(pod.get("nodeSelector") == node_selector, "rootasmd-daemonset.yaml: nodeSelector is not the RuntimeClass's")
containers = pod.get("containers", [])
ok(len(containers) == 1 and all(c.get("name") and c.get("image") for c in containers),
   "rootasmd-daemonset.yaml: one container with a name and an image")
cmd = containers[0].get("command", []) if containers else []
ok("/usr/sbin/rootasmd" in cmd, "rootasmd-daemonset.yaml: does not run /usr/sbin/rootasmd (where the package installs it)")
ok("--socket" in cmd and cmd[cmd.index("--socket") + 1:][:1] == [conf.get("socket")],
   f"rootasmd-daemonset.yaml: --socket is not runtime.conf's socket {conf.get('socket')}")
ok(cmd[:5] == ["nsenter", "-t", "1", "-m", "--"] and pod.get("hostPID") is True,
   "rootasmd-daemonset.yaml: rootasmd must run in the node's mount namespace (hostPID, nsenter -t 1 -m)")

probe = (containers[0].get("readinessProbe", {}).get("exec", {}).get("command", []) if containers else [])
ok(probe[:5] == ["nsenter", "-t", "1", "-m", "--"] and probe[5:9] == ["/usr/bin/rootasm", "probe", "--via", conf.get("socket")],
   "rootasmd-daemonset.yaml: the readiness probe is not `rootasm probe --via` on runtime.conf's socket in the node's "
   "mount namespace")

ex = load_yaml("example-pod.yaml")
ok(ex.get("apiVersion") == "v1" and ex.get("kind") == "Pod", "example-pod.yaml: not a v1 Pod")
ok(ex.get("spec", {}).get("runtimeClassName") == rc.get("metadata", {}).get("name"),
   "example-pod.yaml: runtimeClassName is not the RuntimeClass's name")
ann = ex.get("metadata", {}).get("annotations", {})
ok(all(k in ("org.rootasm.layout", "org.rootasm.image", "org.rootasm.via") for k in ann),
   "example-pod.yaml: annotations other than org.rootasm.layout/image/via (what rootasm-runtime reads)")
ok(all(re.fullmatch(p.replace(".", r"\.").replace("*", ".*"), k) for k in ann for p in h.get("pod_annotations", [])[:1]),
   "example-pod.yaml: an annotation the handler's pod_annotations does not pass on")
ok(all(c.get("name") and c.get("image") for c in ex.get("spec", {}).get("containers", [])) and
   ex.get("spec", {}).get("containers"), "example-pod.yaml: containers with a name and an image")

for m in fails:
    print(f"FAIL: {m}")
sys.exit(1 if fails else 0)
