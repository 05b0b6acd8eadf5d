#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""rootasm-runtime on kubelet's path: containerd's CRI plugin driven as kubelet drives it.

  cri_test.py ROOTASM-RUNTIME ROOTASM ROOTASMD MKOCI DEPLOY-DIR
  cri_test.py --bench RUNS ROOTASM-RUNTIME ROOTASM ROOTASMD MKOCI DEPLOY-DIR

With --bench (ci/bench/run --cri), the same node times kubelet's calls instead
and prints JSON: a container's start-to-exit (CreateContainer, StartContainer,
ContainerStatus until it exited, RemoveContainer of `true` in a ready pod) of
the default handler (crun) against rootasm's handler (the pod's own image, a
layout, each also through rootasmd), and a pod's (RunPodSandbox until ready,
StopPodSandbox, RemovePodSandbox) of both handlers; RUNS of each, in shuffled
order per round.

containerd 1.6 (Debian's) with its CRI plugin, started here on its own config,
root, state and socket, in a private mount namespace (/run/containerd a tmpfs
of the test's, /sys/fs/cgroup the unified hierarchy as crun wants it). Its
runtime handler "rootasm" is deploy/containerd-rootasm.toml as shipped, with
BinaryName pointed at this build's rootasm-runtime (a wrapper naming the
test's runtime.conf); the default handler runs crun directly. Pods use the
node's network (no CNI) and a pause image built here; images reach containerd
by `ctr images import` (overlayfs snapshotter, the default: a container's
rootfs is an overlay whose upper is its writable layer), rootasm's store by
`rootasm import`.

The client is this file: gRPC (python3-grpcio) to runtime.v1.RuntimeService
with the messages encoded by hand from cri-api's api.proto (field numbers
below). The calls, as kubelet makes them for a pod: Version,
RunPodSandbox, CreateContainer (with the pod's sandbox config), StartContainer,
ContainerStatus (until it exited), ExecSync, StopContainer, RemoveContainer,
ListContainers, StopPodSandbox, RemovePodSandbox, ListPodSandbox.

Cases: a pod of the default handler (crun); one of "rootasm" without
annotations (rootasm's tree of its own image, whose writes containerd's
snapshot of the container has: `ctr snapshots diff`; with unannotated = pass,
passed through); a pod annotated
org.rootasm.layout (its containers on rootasm's tree, the pause container
passed through, ExecSync inside the tree, one warning line in the shim's
runtime log); a pod annotated org.rootasm.image;
refusals (each in StartContainer's error, a YAML layout's typo as `rootasm
check` says it); org.rootasm.via with a YAML layout (rootasmd, started here,
assembles); ten pods at once, half through rootasmd. After each: nothing
mounted under the fixture, no loop device, no state of rootasm-runtime's, no
pod.

TAP output; exit 77 (skip) without root. containerd, ctr, crun and python3-grpcio
missing is a failure (ci/deps installs them).
"""
import fcntl
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import yaml

sys.dont_write_bytecode = True          # (nothing written beside the sources)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap                              # noqa: E402
from tap import ok, run                 # noqa: E402


def sh(cmd, check=True):
    return run("sh", "-ec", cmd, check=check)


# ---------------------------------------------------------------- protobuf, by hand

def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb(*fields):
    """A message from (field number, value) pairs: int -> varint, str -> string, bytes -> an
    encoded message, list -> repeated, dict -> map<string, string>; None is left out."""
    out = b""
    for num, v in fields:
        if v is None:
            continue
        if isinstance(v, (bool, int)):
            out += _varint(num << 3) + _varint(int(v))
        elif isinstance(v, (str, bytes)):
            b = v.encode() if isinstance(v, str) else v
            out += _varint(num << 3 | 2) + _varint(len(b)) + b
        elif isinstance(v, list):
            out += pb(*[(num, x) for x in v])
        elif isinstance(v, dict):
            out += pb(*[(num, pb((1, k), (2, x))) for k, x in v.items()])
        else:
            raise TypeError(v)
    return out


def _read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def unpb(data):
    """A message's fields: number -> list of values (int, or bytes for length-delimited ones)."""
    f, i = {}, 0
    while i < len(data):
        key, i = _read_varint(data, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _read_varint(data, i)
        elif wt == 2:
            n, i = _read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wt == 1:
            v, i = data[i:i + 8], i + 8
        elif wt == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        f.setdefault(num, []).append(v)
    return f


def one(f, num, default=None):
    return f[num][0] if num in f else default


def text(f, num):
    return one(f, num, b"").decode()


# runtime.v1 (cri-api pkg/apis/runtime/v1/api.proto): the field numbers used here
NODE, CONTAINER = 2, 1                                 # NamespaceMode
CONTAINER_EXITED = 2                                    # ContainerState
SANDBOX_READY = 0                                       # PodSandboxState


def namespace_options(network, pid):                     # NamespaceOption: network 1, pid 2
    return pb((1, network), (2, pid))


def pod_config(T, name, annotations):
    # PodSandboxConfig: metadata 1 (name 1, uid 2, namespace 3, attempt 4), log_directory 3,
    # annotations 7, linux 8 (LinuxPodSandboxConfig: security_context 2 (namespace_options 1))
    return pb((1, pb((1, name), (2, f"uid-{name}"), (3, "rootasm-test"), (4, 0))),
              (3, f"{T}/logs/{name}"), (7, annotations),
              (8, pb((2, pb((1, namespace_options(NODE, CONTAINER)))))))


def container_config(name, image, cmd, annotations=None):
    # ContainerConfig: metadata 1 (name 1), image 2 (ImageSpec: image 1), command 3, annotations 10,
    # log_path 11, linux 15 (LinuxContainerConfig: security_context 2 (namespace_options 3))
    return pb((1, pb((1, name))), (2, pb((1, image))), (3, cmd), (10, annotations or {}), (11, f"{name}.log"),
              (15, pb((2, pb((3, namespace_options(NODE, CONTAINER)))))))


class CRIError(Exception):
    pass


class CRI:
    def __init__(self, sock, transcript=None):
        import grpc
        self.grpc = grpc
        self.ch = grpc.insecure_channel(f"unix://{sock}")
        self.transcript = transcript

    def call(self, method, req, timeout=120):
        fn = self.ch.unary_unary(f"/runtime.v1.RuntimeService/{method}")
        try:
            resp = unpb(fn(req, timeout=timeout))
        except self.grpc.RpcError as e:
            if self.transcript is not None:
                self.transcript.append(f"{method} -> {e.code().name}: {e.details()}")
            raise CRIError(f"{method}: {e.code().name}: {e.details()}") from None
        return resp

    def log(self, line):
        if self.transcript is not None:
            self.transcript.append(line)

    def version(self):
        r = self.call("Version", pb((1, "v1")))        # VersionResponse: runtime_name 2, runtime_api_version 4
        return text(r, 2), text(r, 3), text(r, 4)

    def run_pod(self, T, name, handler, annotations):
        cfg = pod_config(T, name, annotations)
        os.makedirs(f"{T}/logs/{name}", exist_ok=True)
        pid = text(self.call("RunPodSandbox", pb((1, cfg), (2, handler))), 1)
        self.log(f"RunPodSandbox(name={name}, runtime_handler={handler!r}, annotations={annotations}) -> {pid[:12]}")
        return pid, cfg

    def create(self, pod, cfg, name, image, cmd, annotations=None):
        cid = text(self.call("CreateContainer", pb((1, pod), (2, container_config(name, image, cmd, annotations)),
                                                     (3, cfg))), 1)
        self.log(f"CreateContainer(pod={pod[:12]}, name={name}, image={image}, command={cmd}"
                 + (f", annotations={annotations}" if annotations else "") + f") -> {cid[:12]}")
        return cid

    def start(self, cid):
        self.call("StartContainer", pb((1, cid)))
        self.log(f"StartContainer({cid[:12]})")

    def status(self, cid):
        # ContainerStatusResponse: status 1 (ContainerStatus: state 3, exit_code 7, reason 10, message 11)
        s = unpb(one(self.call("ContainerStatus", pb((1, cid))), 1, b""))
        return one(s, 3, 0), one(s, 7, 0), text(s, 10), text(s, 11)

    def wait(self, cid, timeout=60):
        end = time.monotonic() + timeout
        while True:
            st = self.status(cid)
            if st[0] == CONTAINER_EXITED or time.monotonic() > end:
                self.log(f"ContainerStatus({cid[:12]}) -> state {st[0]}, exit_code {st[1]}, reason {st[2]!r}")
                return st
            time.sleep(0.05)

    def exec_sync(self, cid, cmd):
        r = self.call("ExecSync", pb((1, cid), (2, cmd), (3, 30)))   # stdout 1, stderr 2, exit_code 3
        out = one(r, 1, b"").decode()
        self.log(f"ExecSync({cid[:12]}, {cmd}) -> exit {one(r, 3, 0)}, stdout {out!r}")
        return one(r, 3, 0), out, one(r, 2, b"").decode()

    def stop_container(self, cid):
        self.call("StopContainer", pb((1, cid), (2, 0)))
        self.log(f"StopContainer({cid[:12]}, timeout=0)")

    def remove_container(self, cid):
        self.call("RemoveContainer", pb((1, cid)))
        self.log(f"RemoveContainer({cid[:12]})")

    def list_containers(self, pod=None):
        # ListContainersRequest: filter 1 (ContainerFilter: pod_sandbox_id 3); Container: id 1, state 6
        r = self.call("ListContainers", pb((1, pb((3, pod)))) if pod else b"")
        return [(text(c, 1), one(c, 6, 0)) for c in map(unpb, r.get(1, []))]

    def image_id(self, image):
        # ImageService.ImageStatus: ImageStatusRequest image 1 (ImageSpec); response image 1 (Image: id 1)
        fn = self.ch.unary_unary("/runtime.v1.ImageService/ImageStatus")
        return text(unpb(one(unpb(fn(pb((1, pb((1, image)))), timeout=30)), 1, b"")), 1)

    def remove_image(self, image):
        # ImageService.RemoveImage: RemoveImageRequest image 1 (ImageSpec: image 1); as kubelet's image GC
        # removes one (every reference of it, its ID's too)
        self.ch.unary_unary("/runtime.v1.ImageService/RemoveImage")(pb((1, pb((1, image)))), timeout=30)

    def list_pods(self):
        return [text(unpb(p), 1) for p in self.call("ListPodSandbox", b"").get(1, [])]

    def pod_state(self, pod):
        return one(unpb(one(self.call("PodSandboxStatus", pb((1, pod))), 1, b"")), 3, 0)

    def remove_pod(self, pod):
        self.call("StopPodSandbox", pb((1, pod)))
        self.call("RemovePodSandbox", pb((1, pod)))
        self.log(f"StopPodSandbox({pod[:12]}); RemovePodSandbox({pod[:12]})")


def fake_containerd(path, kind):
    """A listening socket at @path that answers each gRPC call (HTTP/2 with prior knowledge, one stream) as containerd
    would answer an error (@kind "error": a trailers-only answer, grpc-status 14) or an empty list ("none": one empty
    message, grpc-status 0); HPACK without Huffman or indexing. Closed by the caller."""
    def frame(kind_, flags, payload):
        return len(payload).to_bytes(3, "big") + bytes([kind_, flags]) + (1).to_bytes(4, "big") + payload

    def field(name, value):
        return bytes([0, len(name)]) + name + bytes([len(value)]) + value

    def serve_one(conn):
        with conn:
            buf = b""
            while len(buf) < 24:
                got = conn.recv(65536)
                if not got:
                    return
                buf += got
            buf = buf[24:]
            conn.sendall(b"\0\0\0\x04\0\0\0\0\0")
            while True:
                while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                    n, t, fl = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
                    buf = buf[9 + n:]
                    if t == 4 and not fl & 1:
                        conn.sendall(b"\0\0\0\x04\x01\0\0\0\0")
                    if t == 0 and fl & 1:
                        status = b"\x88"       # :status 200
                        ctype = field(b"content-type", b"application/grpc")
                        if kind == "error":
                            conn.sendall(frame(1, 5, status + ctype + field(b"grpc-status", b"14") +
                                               field(b"grpc-message", b"unavailable")))
                        else:
                            conn.sendall(frame(1, 4, status + ctype) + frame(0, 0, b"\0\0\0\0\0") +
                                         frame(1, 5, field(b"grpc-status", b"0")))
                        while conn.recv(65536):     # (until the client hangs up, as a server would)
                            pass
                        return
                got = conn.recv(65536)
                if not got:
                    return
                buf += got

    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)

    def loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return srv


def run_bytes(*args):
    """A command's standard output as bytes (b"" when it failed)."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p.stdout if p.returncode == 0 else b""


def cri_log(path):
    """A container's output from containerd's CRI log (TIMESTAMP STREAM TAG TEXT per line)."""
    try:
        with open(path) as f:
            return "".join(line.split(" ", 3)[3] for line in f if line.count(" ") >= 3)
    except OSError as e:
        return f"<{e}>"


# ---------------------------------------------------------------- the test

def main():
    runs = 0
    if len(sys.argv) == 8 and sys.argv[1] == "--bench" and sys.argv[2].isdigit():
        runs = int(sys.argv[2])
    elif len(sys.argv) != 6:
        sys.exit("usage: cri_test.py [--bench RUNS] ROOTASM-RUNTIME ROOTASM ROOTASMD MKOCI DEPLOY-DIR")
    rt, cli, daemon, mkoci, deploy = (os.path.abspath(a) for a in sys.argv[-5:])
    if os.geteuid() != 0:
        print("1..0 # SKIP needs root")
        sys.exit(77)
    missing = [t for t in ("containerd", "ctr", "crun") if not shutil.which(t)]
    try:
        import grpc  # noqa: F401
    except ImportError:
        missing.append("python3-grpcio")
    if missing:
        print(f"Bail out! missing {', '.join(missing)} (ci/deps installs them)")
        sys.exit(1)
    if not os.environ.get("_CRI_TEST_NS"):
        os.environ["_CRI_TEST_NS"] = "1"
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable] + sys.argv)
    T = tempfile.mkdtemp(prefix="rootasm-cri-", dir=os.environ.get("TMPDIR") or "/tmp")
    os.chmod(T, 0o755)
    procs = []
    t_all = time.monotonic()
    try:
        try:
            rc = (bench(T, rt, cli, daemon, mkoci, deploy, procs, runs) if runs else
                  test(T, rt, cli, daemon, mkoci, deploy, procs))
        except Exception as e:                  # noqa: BLE001 (a CRI call failed: reported with containerd's log)
            try:
                log = open(f"{T}/containerd.log").read()
            except OSError:
                log = ""
            ok(False, f"the test stopped: {e!r}", log)
            rc = 1
    finally:
        if os.path.exists(f"{T}/ctd.sock"):     # a test that stopped midway: its pods go the CRI's way first
            try:
                c = CRI(f"{T}/ctd.sock")
                for pod in c.list_pods():
                    c.remove_pod(pod)
            except Exception:                   # noqa: BLE001 (best effort; the shims are killed below)
                pass
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # shims still there (a test that stopped midway): their containers (the shims' children), then them
        shims = run("pgrep", "-f", f"-address {T}/ctd.sock").stdout.split()
        for pid in shims:
            kids = run("sh", "-c", f"cat /proc/{pid}/task/*/children").stdout.split()
            subprocess.run(["kill", "-KILL", *kids, pid], stderr=subprocess.DEVNULL)
        subprocess.run(["sh", "-c", f"grep -o ' {T}[^ ]*' /proc/self/mountinfo | sort -r | xargs -r umount -l"],
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(T, ignore_errors=True)
    if runs:
        sys.exit(1 if tap.failed or rc else 0)
    print(f"# whole test {time.monotonic() - t_all:.1f} s")
    tap.plan()
    sys.exit(1 if tap.failed or rc else 0)


def bench(T, rt, cli, daemon, mkoci, deploy, procs, runs):
    """ci/bench/run --cri: JSON on stdout (the TAP lines of a failed setup on stderr)."""
    tap.out = sys.stderr                # (ok()'s lines; the JSON goes to stdout)
    load0 = os.getloadavg()
    c = node(T, rt, cli, mkoci, deploy, procs, direct=True)
    if c is None:
        return 1
    start_rootasmd(T, daemon, procs)
    via = f"{T}/rootasmd.sock"
    pods = {}
    methods = {"crun": ("", {}), "own": ("rootasm", {}), "layout": ("rootasm", {"org.rootasm.layout": "small.json"}),
               "via-own": ("rootasm", {"org.rootasm.via": via}),
               "via-layout": ("rootasm", {"org.rootasm.layout": "small.json", "org.rootasm.via": via})}
    for m, (handler, ann) in methods.items():
        pods[m] = c.run_pod(T, f"bench-{m}", handler, ann)

    def container(m, i):
        pod, cfg = pods[m]
        t0 = time.monotonic()
        cid = c.create(pod, cfg, f"c{i}", "localhost/rtimg:v1", ["true"])
        c.start(cid)
        while c.status(cid)[0] != CONTAINER_EXITED:
            time.sleep(0.002)
        c.remove_container(cid)
        return (time.monotonic() - t0) * 1000

    def pod_cycle(handler, i):
        t0 = time.monotonic()
        pod, cfg = c.run_pod(T, f"bench-pod-{handler or 'crun'}-{i}", handler, {})
        c.remove_pod(pod)
        return (time.monotonic() - t0) * 1000

    timers = {m: (lambda i, m=m: container(m, i)) for m in methods}
    timers["pod-crun"] = lambda i: pod_cycle("", i)
    timers["pod-rootasm"] = lambda i: pod_cycle("rootasm", i)
    for m in timers:                    # warm-up: the own image imported, rootasmd's cache filled
        timers[m](-1)
    res = {m: [] for m in timers}
    import random
    for i in range(runs):
        order = list(timers)
        random.shuffle(order)
        for m in order:
            res[m].append(timers[m](i))
    for pod, _ in pods.values():
        c.remove_pod(pod)
    print(json.dumps({"runs": runs, "ms": res, "containerd": run("containerd", "--version").stdout.split()[-1],
                    "load": [load0, os.getloadavg()]}))
    return 0


def mounts_under(T):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(T + "/")]


def loops_of(T):
    return [line for line in run("losetup", "-a").stdout.splitlines() if T in line]


def node(T, rt, cli, mkoci, deploy, procs, direct=False):
    """The node: images, layouts, rootasm-runtime's handlers, containerd with its CRI plugin. The CRI client, or
    None (said). @direct (the bench): the handler "rootasm" runs rootasm-runtime itself, no shell wrapper (its
    runtime.conf named in containerd's environment, which the shim passes on)."""
    # the node: /run/containerd private, the unified cgroup hierarchy as crun wants it
    sh("mkdir -p /run/containerd && mount -t tmpfs -o mode=0700 rootasm-cri /run/containerd")
    if run("stat", "-f", "-c", "%T", "/sys/fs/cgroup").stdout.strip() != "cgroup2fs":
        sh("umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup")

    # images: a busybox tree; the pod's image says hello-from-the-bundle, rootasm's store's image
    # hello-from-rootasm, and the pause image sleeps
    sh(f"cd {T} && mkdir -p tree/bin tree/etc tree/proc tree/dev tree/sys tree/scratch && cp /bin/busybox tree/bin/ && "
       "for x in sh cat echo grep sleep true; do ln -s busybox tree/bin/$x; done")
    for name, msg, conf in (("pimg", "hello-from-the-bundle", '{"Cmd": ["/bin/sh"]}'),
                            ("other", "hello-from-another-image", '{"Cmd": ["/bin/sh"]}'),
                            ("pause", "pause", '{"Entrypoint": ["/bin/sleep", "2147483647"]}'),
                            ("img", "hello-from-rootasm", '{"Cmd": ["/bin/sh"]}')):
        sh(f"cd {T} && echo {msg} >tree/etc/msg && echo 'PRETTY_NAME=\"{msg}\"' >tree/etc/os-release && tar -C tree --numeric-owner -cf {name}.tar . && "
           f"{sys.executable} {mkoci} layout {name} --tag v1 --config '{conf}' {name}.tar:gzip "
           # (the other image behind an index, with a manifest for another platform beside this one's)
           f"{'--nested' if name == 'other' else ''} >/dev/null")
    p = run(cli, "import", "--json", "--tag", "rt-test/img:v1", "--store", f"{T}/st", f"oci:{T}/img")
    ok(p.returncode == 0, "rootasm import: the store's image", p.stderr)
    layout = json.loads(p.stdout)["layout"]
    lay = json.load(open(layout))
    lay["mounts"] = [{"tmpfs": "/scratch", "options": ["size=8m"]}]
    os.makedirs(f"{T}/layouts")
    json.dump(lay, open(f"{T}/layouts/small.json", "w"))
    # the same layout in YAML, as `rootasm check` takes it
    with open(f"{T}/layouts/small.yaml", "w") as f:
        f.write("# the layout of small.json, in YAML\n" + yaml.safe_dump(lay, sort_keys=False))

    # containerd: the CRI plugin on, deploy/'s handler with this build's binary, crun for the default handler
    os.makedirs(f"{T}/bin")
    # the handlers' rootasm-runtime: a copy of this build's and its twin (a case takes the twin away)
    os.makedirs(f"{T}/rtbin")
    for b in (rt, f"{os.path.dirname(rt)}/rootasm-runtime-full"):
        shutil.copy2(b, f"{T}/rtbin/{os.path.basename(b)}")
    with open(f"{T}/bin/crun-nocg", "w") as f:
        # no cgroups (the sandbox this test may run in cannot give crun its own): the handler's
        # SystemdCgroup = true becomes the shim's --systemd-cgroup, dropped here
        f.write('#!/bin/sh\nfor a; do shift; [ "$a" = --systemd-cgroup ] || set -- "$@" "$a"; done\n'
                'exec crun --cgroup-manager=disabled "$@"\n')
    # (the handler rootasm's: a pod's image staged at most 32 MiB a layer, one import at a time: case 11)
    for conf, extra in (("runtime", "import_layer_max = 32M\nimports = 1\n"), ("runtime-pass", "unannotated = pass\n"),
                        ("runtime-nocd", f"containerd = {T}/none.sock\n")):
        wrapper = f"{T}/bin/rootasm-{conf}"
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexport ROOTASM_RUNTIME_CONFIG={T}/{conf}.conf\nexec {T}/rtbin/rootasm-runtime \"$@\"\n")
        os.chmod(wrapper, 0o755)
        with open(f"{T}/{conf}.conf", "w") as f:
            f.write(f"delegate = {T}/bin/crun-nocg\nlayouts = {T}/layouts\nstore = {T}/st\nsocket = {T}/rootasmd.sock\n"
                    + extra)
    os.chmod(f"{T}/bin/crun-nocg", 0o755)
    handler = open(f"{deploy}/containerd-rootasm.toml").read()
    ok('BinaryName = "/usr/bin/rootasm-runtime"' in handler, "deploy/'s handler names /usr/bin/rootasm-runtime",
       handler)
    # the handler as shipped; two more whose runtime.conf says unannotated = pass, or names no containerd
    handler = "".join(handler.replace('runtimes.rootasm', f'runtimes.rootasm{sfx}')
                      .replace('BinaryName = "/usr/bin/rootasm-runtime"',
                               f'BinaryName = "{rt if direct and not sfx else f"{T}/bin/rootasm-runtime{sfx}"}"')
                      for sfx in ("", "-pass", "-nocd"))
    cri = '[plugins."io.containerd.grpc.v1.cri"]'
    os.makedirs(f"{T}/cni")
    with open(f"{T}/containerd.toml", "w") as f:
        f.write(f'version = 2\nroot = "{T}/ctd/root"\nstate = "{T}/ctd/state"\n'
                'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", '
                '"io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", '
                '"io.containerd.snapshotter.v1.aufs"]\n'
                f'[grpc]\n  address = "{T}/ctd.sock"\n'            # ttrpc: its default, ctd.sock.ttrpc
                f'{cri}\n  sandbox_image = "localhost/pause:v1"\n  disable_cgroup = true\n  disable_apparmor = true\n  restrict_oom_score_adj = true\n'
                '  stream_server_address = "127.0.0.1"\n  stream_server_port = "0"\n'
                f'{cri[:-1]}.cni]\n  bin_dir = "{T}/cni"\n  conf_dir = "{T}/cni"\n'
                f'{cri[:-1]}.containerd]\n  snapshotter = "overlayfs"\n  default_runtime_name = "crun"\n'
                f'{cri[:-1]}.containerd.runtimes.crun]\n  runtime_type = "io.containerd.runc.v2"\n'
                f'{cri[:-1]}.containerd.runtimes.crun.options]\n  BinaryName = "{T}/bin/crun-nocg"\n'
                + handler)
    log = open(f"{T}/containerd.log", "w")
    ctd = subprocess.Popen(["containerd", "--config", f"{T}/containerd.toml"], stdout=log, stderr=log,
                           env=dict(os.environ, ROOTASM_RUNTIME_CONFIG=f"{T}/runtime.conf") if direct else None)
    procs.append(ctd)
    for _ in range(500):
        if os.path.exists(f"{T}/ctd.sock") or ctd.poll() is not None:
            break
        time.sleep(0.02)
    ctr = ["ctr", "-a", f"{T}/ctd.sock", "-n", "k8s.io"]
    for name, base in (("pause", "localhost/pause"), ("pimg", "localhost/rtimg"), ("other", "localhost/other")):
        sh(f"tar -C {T}/{name} -cf {T}/{name}-oci.tar .")
        p = run(*ctr, "images", "import", "--snapshotter", "overlayfs", "--base-name", base, f"{T}/{name}-oci.tar")
        if p.returncode:
            ok(False, f"ctr images import {base}", p.stderr + open(f"{T}/containerd.log").read())
            return None
    return CRI(f"{T}/ctd.sock")


def assembled(T):
    """How many trees rootasmd at T/rootasmd.sock has assembled (its status: counters.assembled)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.settimeout(10)
        s.connect(f"{T}/rootasmd.sock")
        s.send(b'{"rootasm": 1, "op": "status"}')
        return json.loads(s.recv(1 << 20))["counters"]["assembled"]
    finally:
        s.close()


def start_rootasmd(T, daemon, procs):
    """rootasmd on T/rootasmd.sock (no rule in its policy: root is served as an administrator)."""
    with open(f"{T}/policy.json", "w") as f:
        f.write('{"rootasmd-policy": 1, "rules": []}\n')
    dlog = open(f"{T}/rootasmd.log", "w")
    d = subprocess.Popen([daemon, "--socket", f"{T}/rootasmd.sock", "--policy", f"{T}/policy.json"],
                         stdout=dlog, stderr=dlog)
    procs.append(d)
    for _ in range(500):
        if "serving on" in open(f"{T}/rootasmd.log").read() or d.poll() is not None:
            break
        time.sleep(0.02)
    return d


def test(T, rt, cli, daemon, mkoci, deploy, procs):
    c = node(T, rt, cli, mkoci, deploy, procs)
    if c is None:
        return 1
    ctr = ["ctr", "-a", f"{T}/ctd.sock", "-n", "k8s.io"]
    lay = json.load(open(f"{T}/layouts/small.json"))
    transcript = []
    state_dir = "/run/containerd/runc/k8s.io"     # the shim's --root: rootasm-runtime's private state beneath

    def rootasm_state():
        try:
            return sorted(os.listdir(f"{state_dir}/.rootasm"))
        except FileNotFoundError:
            return []

    def nothing_left(what):
        for _ in range(100):            # a detached mount's last reference goes after its fd's close returned
            left = (mounts_under(T), loops_of(T), rootasm_state(), c.list_pods())
            if left == ([], [], [], []):
                break
            time.sleep(0.02)
        ok(left == ([], [], [], []), f"{what}: nothing left (mounts under the fixture, loop devices, "
           "rootasm-runtime's state, pods)", repr(left))

    def start_error(cid):
        """StartContainer of @cid, which must fail: its error (or "started")."""
        try:
            c.start(cid)
            return "started"
        except CRIError as e:
            return str(e)

    def one_shot(pod, cfg, name, cmd, annotations=None, image="localhost/rtimg:v1"):
        cid = c.create(pod, cfg, name, image, cmd, annotations)
        c.start(cid)
        st = c.wait(cid)
        return cid, st, cri_log(f"{T}/logs/{cfg_name(cfg)}/{name}.log")

    def cfg_name(cfg):
        return text(unpb(one(unpb(cfg), 1)), 1)

    try:
        name, version, api = c.version()
    except CRIError as e:
        ok(False, "CRI Version", f"{e}\n" + open(f"{T}/containerd.log").read())
        return 1
    ok(name == "containerd" and api == "v1", f"CRI Version: {name} {version}, API {api}", (name, version, api))

    # 1. the default handler: crun alone, the pod's own image
    pod, cfg = c.run_pod(T, "plain", "", {})
    cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"])
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-the-bundle\n",
       "default handler (crun): the pod's image", (st, out))
    c.remove_pod(pod)
    nothing_left("default handler")

    # 2. handler rootasm, no annotation: rootasm's tree of the pod's own image, imported from containerd's
    # content store into rootasm's once (its manifest digest containerd's); the engine's rootfs is
    # containerd's overlay (lowerdir=), rootasm's tree an overlay whose layers went by fd (lowerdir+=)
    on_overlay = "cat /etc/msg; grep ' / / ' /proc/self/mountinfo | grep -c 'lowerdir+=' || true"
    ctd_digest = run(*ctr, "images", "ls", "name==localhost/rtimg:v1").stdout.split("\n")[1].split()[2]
    t0 = time.monotonic()
    pod, cfg = c.run_pod(T, "own-image", "rootasm", {})
    cid, st, out = one_shot(pod, cfg, "c", ["sh", "-c", on_overlay + "; echo new >/etc/written; rm /etc/os-release"])
    t_first = time.monotonic() - t0
    # what it wrote is in containerd's snapshot of the container: `ctr snapshots diff` (its writable layer
    # against its image's, the layer written to its standard output) has the new file and the removal's whiteout
    layer = run_bytes(*ctr, "snapshots", "--snapshotter", "overlayfs", "diff", cid)
    try:
        diff = sorted(tarfile.open(fileobj=io.BytesIO(layer)).getnames())
    except tarfile.TarError as e:
        diff = repr(e)
    upper = run(*ctr, "snapshots", "--snapshotter", "overlayfs", "mounts", "/m", cid).stdout
    # (and the mount points crun made for CRI's /etc/hosts, hostname, resolv.conf, as on containerd's own rootfs)
    ok(isinstance(diff, list) and {"etc/.wh.os-release", "etc/written"} <= set(diff) and
       not {"etc/msg", "bin/busybox"} & set(diff),
       "what the container wrote on rootasm's tree is containerd's snapshot of it (ctr snapshots diff: "
       "etc/written and the whiteout of etc/os-release)", (diff, upper))
    p = run(cli, "images", "--store", f"{T}/st/engine", "--json")
    stored = ({n: i.get("manifest") for i in json.loads(p.stdout or "[]") for n in i.get("names", [])}
              if p.returncode == 0 else p.stderr)
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-the-bundle\n1\n" and
       isinstance(stored, dict) and stored.get("localhost/rtimg:v1") == ctd_digest,
       "handler rootasm without an annotation: rootasm's tree of the pod's own image, imported from containerd's "
       "content store into the engine's store under its name and containerd's manifest digest",
       (st, out, stored, ctd_digest))
    before = sorted(os.listdir(f"{T}/st/engine/layers/sha256"))
    t0 = time.monotonic()
    # (named by the image's ID, as kubelet names it: containerd's annotation still has its name)
    iid = c.image_id("localhost/rtimg:v1")
    cid, st, out = one_shot(pod, cfg, "c2", ["sh", "-c", on_overlay], image=iid)
    t_second = time.monotonic() - t0
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-the-bundle\n1\n" and
       sorted(os.listdir(f"{T}/st/engine/layers/sha256")) == before and iid.startswith("sha256:"),
       f"its second container, the image named by its ID {iid[:19]}... as kubelet names it: from the store, "
       f"nothing imported again (first {t_first:.2f} s with the pod, second {t_second:.2f} s)", (st, out))
    c.remove_pod(pod)
    nothing_left("handler rootasm, the pod's own image")
    # runtime.conf's unannotated = pass: the engine's rootfs as it came
    pod, cfg = c.run_pod(T, "passthrough", "rootasm-pass", {})
    cid, st, out = one_shot(pod, cfg, "c", ["sh", "-c", on_overlay])
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-the-bundle\n0\n" and rootasm_state() == [],
       "unannotated = pass: passed through to crun (the engine's rootfs, no state of rootasm's)",
       (st, out, rootasm_state()))
    c.remove_pod(pod)
    nothing_left("unannotated = pass")
    # a containerd= that is not there: a refusal at once (ctr would wait for it)
    pod, cfg = c.run_pod(T, "nocd", "rootasm-nocd", {})
    cid = c.create(pod, cfg, "c", "localhost/rtimg:v1", ["true"])
    t0 = time.monotonic()
    try:
        c.start(cid)
        err = "started"
    except CRIError as e:
        err = str(e)
    t_err = time.monotonic() - t0
    ok(f"the engine's image localhost/rtimg:v1: containerd's socket {T}/none.sock: not found (ENOENT)" in err
       and t_err < 2, f"containerd's socket not there: StartContainer's error, in {t_err:.2f} s", err)
    c.remove_pod(pod)
    nothing_left("containerd not there")
    # a containerd= that answers every call with an error (trailers-only, grpc-status 14): an error of containerd's,
    # not "no such image" (which the engine's store's prune would act on); one that lists no image: no such image
    for kind, want in (("error", "ask containerd at " + f"{T}/none.sock: Protocol error"),
                       ("none", f"containerd ({T}/none.sock, namespace k8s.io) has no such image")):
        srv = fake_containerd(f"{T}/none.sock", kind)
        pod, cfg = c.run_pod(T, f"nocd-{kind}", "rootasm-nocd", {})
        err = start_error(c.create(pod, cfg, "c", "localhost/rtimg:v1", ["true"]))
        c.remove_pod(pod)
        srv.close()
        os.unlink(f"{T}/none.sock")
        ok(f"the engine's image localhost/rtimg:v1: {want}" in err,
           f"a containerd whose answer is {'an error' if kind == 'error' else 'no image'}: {want.split(':')[-1].strip()}",
           err)
    nothing_left("containerd's errors")

    # 3. a pod annotated org.rootasm.layout: its containers on rootasm's tree, its pause container passed through
    c.transcript = transcript
    pod, cfg = c.run_pod(T, "layout", "rootasm", {"org.rootasm.layout": "small.json"})
    ok(c.pod_state(pod) == SANDBOX_READY and rootasm_state() == [],
       "the annotated pod's sandbox is ready, its pause container passed through (no state of rootasm's)",
       rootasm_state())
    cid, st, out = one_shot(pod, cfg, "c1", ["sh", "-c", "cat /etc/msg; grep -c ' /scratch ' /proc/self/mountinfo"])
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-rootasm\n1\n",
       "org.rootasm.layout on the pod: the container runs on the layout's tree (its tmpfs volume too)", (st, out))
    cid2 = c.create(pod, cfg, "c2", "localhost/rtimg:v1", ["sleep", "1000"])
    c.start(cid2)
    ok(cid2 in rootasm_state() and pod not in rootasm_state(),
       "while it runs, rootasm-runtime holds its state (and none for the sandbox)", rootasm_state())
    # (the tree over the engine's rootfs in crun's namespace: neither rootasm's config for crun nor a private bundle)
    ran_as = sorted(os.listdir(f"{state_dir}/.rootasm/{cid2}"))
    ok("delegate.json" not in ran_as and "engine-bundle" not in ran_as,
       "crun runs containerd's bundle as it came, the tree over its rootfs (its IPC namespace joined by /proc path)",
       ran_as)
    try:
        said = [json.loads(x) for x in open(f"{T}/ctd/state/io.containerd.runtime.v2.task/k8s.io/{cid2}/log.json")]
    except OSError as e:
        said = repr(e)
    ok(isinstance(said, list) and [x.get("level") for x in said] == ["warning"] and
       "annotation org.rootasm.layout 'small.json' replaces the engine's image: what the container writes goes to "
       "rootasm's tree, not to the engine's writable layer" in said[0].get("msg", ""),
       "a layout replaces the image: one warning line in the runtime log the shim gave, saying the engine's "
       "writable layer is not written", said)
    rc, out, err = c.exec_sync(cid2, ["sh", "-c", "cat /etc/msg; test -d /scratch && echo scratch"])
    ok(rc == 0 and out == "hello-from-rootasm\nscratch\n", "ExecSync runs inside rootasm's tree", (rc, out, err))
    c.stop_container(cid2)
    st = c.wait(cid2)
    c.remove_container(cid2)
    ok(st[0] == CONTAINER_EXITED and cid2 not in rootasm_state() and
       sorted(x for x, _ in c.list_containers(pod)) == [cid],
       "StopContainer + RemoveContainer: its tree and state gone", (st, rootasm_state(), c.list_containers(pod)))
    c.remove_pod(pod)
    c.transcript = None
    nothing_left("annotated pod")

    # org.rootasm.image on a pod: the store's image
    pod, cfg = c.run_pod(T, "image", "rootasm", {"org.rootasm.image": "rt-test/img:v1"})
    cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"])
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-rootasm\n",
       "org.rootasm.image on the pod: its containers on the store's image", (st, out))
    c.remove_pod(pod)
    nothing_left("org.rootasm.image")

    # the example Pod of deploy/ as kubelet makes it: its RuntimeClass's handler, its annotations (none: the
    # pod's own image), its container's name and command; the image is the test's (no registry here)
    ex = yaml.safe_load(open(f"{deploy}/example-pod.yaml"))
    rclass = yaml.safe_load(open(f"{deploy}/runtimeclass.yaml"))
    ann = ex["metadata"].get("annotations", {})
    spec = ex["spec"]["containers"][0]
    ok(ex["spec"]["runtimeClassName"] == rclass["metadata"]["name"], "deploy/example-pod.yaml names the RuntimeClass")
    pod, cfg = c.run_pod(T, ex["metadata"]["name"], rclass["handler"], ann)
    cid = c.create(pod, cfg, spec["name"], "localhost/rtimg:v1", spec["command"])
    c.start(cid)
    for _ in range(200):
        out = cri_log(f"{T}/logs/{ex['metadata']['name']}/{spec['name']}.log")
        if out.strip():
            break
        time.sleep(0.05)
    st = c.status(cid)
    ok(st[0] == 1 and out == 'PRETTY_NAME="hello-from-the-bundle"\n' and cid in rootasm_state() and not ann,
       f"deploy/example-pod.yaml (handler {rclass['handler']!r}, no annotation): its command on rootasm's tree of "
       "its own image, running", (st, out, ann))
    c.remove_pod(pod)
    nothing_left("the example pod")

    # 4. refusals: each StartContainer's error, nothing left; a YAML layout's error is `rootasm check`'s
    with open(f"{T}/layouts/typo.yaml", "w") as f:
        f.write(f"version: 1\nlayers:\n  - image: {lay['layers'][0]['image']}\n    tpye: erofs\n")
    p = run(cli, "check", f"{T}/layouts/typo.yaml")
    check_says = p.stderr.strip().removeprefix("rootasm: ")
    ok(p.returncode == 2 and check_says.endswith("layers[0]: unknown key 'tpye' (expected one of: image, dir, type, "
                                                  "idmap, trusted)"), "rootasm check: the typo's error", p.stderr)
    for ann, want in (({"org.rootasm.layout": "/etc/passwd"},
                       "annotation org.rootasm.layout '/etc/passwd': open layout /etc/passwd: Operation not permitted (the layout file lies in /etc, in none of the layout directories allowed to administrator ("),
                      ({"org.rootasm.layout": "missing.json"},
                       "annotation org.rootasm.layout 'missing.json': open "),
                      ({"org.rootasm.layout": "small.json", "org.rootasm.image": "rt-test/img:v1"},
                       "annotations org.rootasm.layout and org.rootasm.image: give one of them, not both"),
                      # (an image the engine pulled for another pod, imported into the engine's store: not the
                      # administrator's store, which is where an annotation looks)
                      ({"org.rootasm.image": "localhost/rtimg:v1"},
                       "annotation org.rootasm.image 'localhost/rtimg:v1': "),
                      ({"org.rootasm.image": ctd_digest},
                       f"annotation org.rootasm.image '{ctd_digest}': "),
                      ({"org.rootasm.layout": "typo.yaml"}, check_says)):
        pod, cfg = c.run_pod(T, "refused", "rootasm", ann)
        err = start_error(c.create(pod, cfg, "c", "localhost/rtimg:v1", ["true"]))
        ok(err.startswith("StartContainer: ") and want in err and "command not found" not in err,
           f"{ann}: refused, the refusal in StartContainer's error", err)
        c.remove_pod(pod)
        nothing_left("refused")

    # 5. org.rootasm.via: rootasmd assembles (no rule in its policy: root is served as an administrator)
    d = start_rootasmd(T, daemon, procs)
    pod, cfg = c.run_pod(T, "via", "rootasm",
                         {"org.rootasm.layout": "small.yaml", "org.rootasm.via": f"{T}/rootasmd.sock"})
    n0 = assembled(T)
    cid = c.create(pod, cfg, "c", "localhost/rtimg:v1", ["sleep", "1000"])
    c.start(cid)
    rc, out, err = c.exec_sync(cid, ["cat", "/etc/msg"])
    # (over the engine's rootfs, rootasmd's tree is attached only in the delegate's namespace: no state of it here)
    via = assembled(T) - n0
    left = sorted(os.listdir(f"{state_dir}/.rootasm/{cid}"))
    ok(rc == 0 and out == "hello-from-rootasm\n" and via == 1 and "bundle" not in left and "via.mnt" not in left,
       "org.rootasm.via with a YAML layout: the tree assembled by rootasmd, ExecSync inside it; nothing of it "
       "attached in the runtime's namespace", (rc, out, err, via, left))
    c.remove_pod(pod)
    # org.rootasm.via alone: the pod's own image, assembled by rootasmd
    pod, cfg = c.run_pod(T, "via-own", "rootasm", {"org.rootasm.via": f"{T}/rootasmd.sock"})
    n0 = assembled(T)
    cid = c.create(pod, cfg, "c", "localhost/rtimg:v1", ["sleep", "1000"])
    c.start(cid)
    rc, out, err = c.exec_sync(cid, ["sh", "-c", "cat /etc/msg; echo via >/etc/written-via"])
    via = assembled(T) - n0 == 1
    ok(rc == 0 and out == "hello-from-the-bundle\n" and via,
       "org.rootasm.via alone: the pod's own image, its tree assembled by rootasmd", (rc, out, err, via))
    # its upper is containerd's writable layer too, sent as the request's "upper"
    layer = run_bytes(*ctr, "snapshots", "--snapshotter", "overlayfs", "diff", cid)
    try:
        diff = sorted(tarfile.open(fileobj=io.BytesIO(layer)).getnames())
    except tarfile.TarError as e:
        diff = repr(e)
    ok(isinstance(diff, list) and "etc/written-via" in diff and "etc/msg" not in diff,
       "through rootasmd too, what the container wrote is containerd's snapshot of it (the request's upper)", diff)
    c.remove_pod(pod)

    # 6. ten pods at once, each with a container on rootasm's tree: four of an image rootasm's store does not
    # have yet (unannotated: all four ask for its import at once; an index, resolved to this platform's
    # manifest), six of a layout (YAML or JSON), half of those through rootasmd
    results = {}
    # what a create killed during an import would leave in its slot (and an older runtime's export): the next
    # import removes it
    os.makedirs(f"{T}/st/engine/.engine-export/3f/oci/blobs")
    os.makedirs(f"{T}/st/engine/.engine-export/oci/blobs")

    def want(i):
        return f"hello-from-{'another-image' if i % 3 == 0 else 'rootasm'}\n{i}\n"

    def pod_of(i):
        ann = {} if i % 3 == 0 else {"org.rootasm.layout": "small.yaml" if i % 4 < 2 else "small.json"}
        if ann and i % 2:
            ann["org.rootasm.via"] = f"{T}/rootasmd.sock"
        try:
            pod, cfg = c.run_pod(T, f"many-{i}", "rootasm", ann)
            cid, st, out = one_shot(pod, cfg, "c", ["sh", "-c", f"cat /etc/msg; echo {i}"],
                                    image="localhost/other:v1" if i % 3 == 0 else "localhost/rtimg:v1")
            results[i] = (st[:2], out)
            c.remove_pod(pod)
        except Exception as e:                  # noqa: BLE001 (reported below)
            results[i] = repr(e)
    t0 = time.monotonic()
    threads = [threading.Thread(target=pod_of, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_many = time.monotonic() - t0
    bad = {i: r for i, r in results.items() if r != ((CONTAINER_EXITED, 0), want(i))}
    p = run(cli, "images", "--store", f"{T}/st/engine", "--json")
    named = [n for i in json.loads(p.stdout or "[]") for n in i.get("names", [])]
    other = {n: i.get("manifest") for i in json.loads(p.stdout or "[]") for n in i.get("names", [])}.get(
        "localhost/other:v1")
    target = run(*ctr, "images", "ls", "name==localhost/other:v1").stdout.split("\n")[1].split()
    ok(len(results) == 10 and not bad and named.count("localhost/other:v1") == 1 and "index" in target[1] and
       other and other != target[2],
       f"ten pods at once on rootasm's trees: the new image (an index in containerd) imported once for four, "
       f"as this platform's manifest; half the layouts' through rootasmd ({t_many:.1f} s, run to removed)",
       (bad, named, target, other))
    top = f"{T}/st/engine/.engine-export"
    left = {n: os.listdir(f"{top}/{n}") for n in (os.listdir(top) if os.path.isdir(top) else [])}
    ok(all(len(n) == 2 and not v for n, v in left.items()),
       "the export an import unpacked is gone, and so is what a killed one left (empty slots only)", left)
    # rootasmd keeps one mount per image it served (its loop device) until it stops
    d.terminate()
    ok(d.wait(10) == 0, "rootasmd stops on SIGTERM", open(f"{T}/rootasmd.log").read())
    nothing_left("ten pods, rootasmd stopped")

    # 7. the image's tag moved between CreateContainer and StartContainer (to an image another pod's author
    # chose): containerd made the container's rootfs of the image it resolved then, and rootasm-runtime goes
    # by that (its snapshot's parent, the image's chain id), not by what the name gives at create
    pod, cfg = c.run_pod(T, "moved", "rootasm", {})
    cid = c.create(pod, cfg, "c", "localhost/rtimg:v1", ["cat", "/etc/msg"])
    run(*ctr, "images", "tag", "localhost/rtimg:v1", "localhost/rtimg:kept")
    run(*ctr, "images", "tag", "--force", "localhost/other:v1", "localhost/rtimg:v1")
    try:
        c.start(cid)
        err = "started"
    except CRIError as e:
        err = str(e)
    run(*ctr, "images", "tag", "--force", "localhost/rtimg:kept", "localhost/rtimg:v1")
    run(*ctr, "images", "rm", "localhost/rtimg:kept")
    ok(err.startswith("StartContainer: ") and "containerd made container" in err and "refused" in err,
       "the image's tag moved after CreateContainer: refused at StartContainer, not run on the other image", err)
    c.remove_pod(pod)
    nothing_left("moved tag")
    # and with the tag back, the same pod's image runs again
    pod, cfg = c.run_pod(T, "moved-back", "rootasm", {})
    cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"])
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-the-bundle\n", "the tag back: the pod's own image",
       (st, out))
    c.remove_pod(pod)
    nothing_left("tag back")

    # 8. the engine's store follows containerd's: an image containerd no longer has (kubelet's image garbage
    # collection: CRI's RemoveImage) goes from it at the next import, with its layer images; one that
    # containerd still has stays
    def engine_images():
        p = run(cli, "images", "--store", f"{T}/st/engine", "--json")
        return {n: i for i in json.loads(p.stdout or "[]") for n in i.get("names", [])}

    def layer_files(im):
        return {ly["image"] for ly in json.load(open(im["layout"]))["layers"]} if im and im.get("layout") else set()

    before = engine_images()
    kept, gone = layer_files(before.get("localhost/rtimg:v1")), layer_files(before.get("localhost/other:v1"))
    gone -= kept
    c.remove_image("localhost/other:v1")
    sh(f"tar -C {T}/img -cf {T}/img-oci.tar .")
    run(*ctr, "images", "import", "--snapshotter", "overlayfs", "--base-name", "localhost/third", f"{T}/img-oci.tar")
    pod, cfg = c.run_pod(T, "gc", "rootasm", {})
    cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"], image="localhost/third:v1")
    after = engine_images()
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-rootasm\n" and gone and kept and
       sorted(after) == ["localhost/rtimg:v1", "localhost/third:v1"] and
       not any(os.path.exists(f) for f in gone) and all(os.path.exists(f) for f in kept),
       "the engine's store follows containerd's: the image containerd no longer has removed at the next import, "
       "with its layer images; the one it has kept", (st, out, sorted(before), sorted(after), gone, kept))
    c.remove_pod(pod)
    nothing_left("the engine's store pruned")

    # 9. one import of an image at a time, different images' at once: with the slot of image X's import held
    # (as a long import of X would hold it), a pod of X waits and a pod of Y, in another slot, runs
    def ctr_import(name, tar):
        """The layer tar T/@tar as containerd's image localhost/@name:v1 (an OCI layout of mkoci's, gzip)."""
        sh(f"cd {T} && rm -rf {name} && {sys.executable} {mkoci} layout {name} --tag v1 --config "
           f"'{{\"Cmd\": [\"/bin/sh\"]}}' {tar}:gzip >/dev/null && tar -C {T}/{name} -cf {T}/{name}-oci.tar .")
        run(*ctr, "images", "import", "--snapshotter", "overlayfs", "--base-name", f"localhost/{name}", f"{T}/{name}-oci.tar")

    def pod_error(name, image):
        """A pod of one container of @image that must not start: CRI's error (or "started")."""
        pod, cfg = c.run_pod(T, name, "rootasm", {})
        try:
            one_shot(pod, cfg, "c", ["true"], image=image)
            err = "started"
        except CRIError as e:
            err = str(e)
        c.remove_pod(pod)
        return err

    def image(name, msg):
        sh(f"cd {T} && echo {msg} >tree/etc/msg && tar -C tree --numeric-owner -cf {name}.tar .")
        ctr_import(name, f"{name}.tar")
        digest = run(*ctr, "images", "ls", f"name==localhost/{name}:v1").stdout.split("\n")[1].split()[2]
        return int(digest[7:9], 16) % 64

    slot_x = image("slotx", "hello-from-x")
    for i in range(8):
        if image("sloty", f"hello-from-y{i}") != slot_x:
            break
    want_y = f"hello-from-y{i}\n"
    slot_dir = f"{T}/st/engine/.engine-export/{slot_x:02x}"
    os.makedirs(slot_dir, exist_ok=True)
    res = {}

    def pod_with(tag):
        try:
            pod, cfg = c.run_pod(T, f"slot-{tag}", "rootasm", {})
            cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"], image=f"localhost/slot{tag}:v1")
            res[tag] = (st[:2], out)
            c.remove_pod(pod)
        except Exception as e:                  # noqa: BLE001 (reported below)
            res[tag] = repr(e)

    def blocked_on(path, n):
        """Whether @n flock()s wait for @path (/proc/locks' "->" lines of its inode), within 60 s."""
        st = os.stat(path)
        key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} "
        for _ in range(600):
            with open("/proc/locks") as f:
                if sum(1 for line in f if "->" in line and "FLOCK" in line and key in line) >= n:
                    return True
            time.sleep(0.1)
        return False

    def while_held(path, waits, runs=""):
        """Pods of the images slotT for each T of @waits and @runs, started while @path is flock()ed: whether
        @waits' waited for that very lock (blocked on it, by /proc/locks) and still did once @runs' had run."""
        held = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if os.path.isdir(path) else 0))
        fcntl.flock(held, fcntl.LOCK_EX)
        ts = {t: threading.Thread(target=pod_with, args=(t,)) for t in waits + runs}
        for t in ts.values():
            t.start()
        for t in runs:
            ts[t].join(100)
        waited = blocked_on(path, len(waits)) and all(ts[t].is_alive() and t not in res for t in waits)
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
        for t in waits:
            ts[t].join(100)
        return waited

    x_waited = while_held(slot_dir, "x", "y")
    ok(res.get("y") == ((CONTAINER_EXITED, 0), want_y) and x_waited and
       res.get("x") == ((CONTAINER_EXITED, 0), "hello-from-x\n"),
       "imports of different images at once (Y's ran while X's slot was held), one of an image at a time (X's "
       "waited for its slot)", (res, x_waited))
    # a runtime of before the slots holds the store directory's flock for its import: a new one waits for it
    image("slotz", "hello-from-z")
    z_waited = while_held(f"{T}/st/engine", "z")
    ok(z_waited and res.get("z") == ((CONTAINER_EXITED, 0), "hello-from-z\n"),
       "an import waits while the store directory's flock is held (as an older runtime's import holds it)",
       (res, z_waited))
    nothing_left("imports in their slots")

    # 10. an image behind an index larger than HTTP/2's default window (65535 bytes: an image's author may pad its
    # index): its pod runs on rootasm's tree; and the image the engine's store held under that name before, which
    # containerd no longer has, is pruned at that import (without a window of its own the client waited 5 s for the
    # rest of the index: the pod failed, and every prune kept every image of that name)
    image("pad", "hello-from-a")
    # (and an image containerd no longer has goes at an import that fails too: its room is what that import lacked)
    image("stale", "hello-from-stale")
    pod, cfg = c.run_pod(T, "stale", "rootasm", {})
    one_shot(pod, cfg, "c", ["true"], image="localhost/stale:v1")
    c.remove_pod(pod)
    c.remove_image("localhost/stale:v1")
    sh(f"cd {T} && {sys.executable} {mkoci} hostile dotdot dotdot.tar")
    ctr_import("dotdot", "dotdot.tar")
    err = pod_error("dotdot", "localhost/dotdot:v1")
    ok("'..'" in err and "localhost/stale:v1" not in engine_images(),
       "an image whose import fails (a layer's '..'): refused, and the image containerd no longer has pruned all the "
       "same", (err, sorted(engine_images())))
    # (but not after an import whose export containerd failed, a layer's blob gone from its content store: its
    # answers are then no ground to remove images by)
    image("stale2", "hello-from-stale2")
    pod, cfg = c.run_pod(T, "stale2", "rootasm", {})
    one_shot(pod, cfg, "c", ["true"], image="localhost/stale2:v1")
    c.remove_pod(pod)
    c.remove_image("localhost/stale2:v1")
    image("lost", "hello-from-lost")
    lost_top = json.load(open(f"{T}/lost/index.json"))["manifests"][0]["digest"]
    lost_layer = json.load(open(f"{T}/lost/blobs/sha256/{lost_top[7:]}"))["layers"][0]["digest"]
    run(*ctr, "content", "rm", lost_layer)
    err = pod_error("lost", "localhost/lost:v1")
    ok("the engine's image export: ctr: failed to get reader" in err and "localhost/stale2:v1" in engine_images(),
       "an image containerd cannot export (a layer's blob gone): refused, and no image pruned on its answers",
       (err, sorted(engine_images())))
    pod, cfg = c.run_pod(T, "pad-a", "rootasm", {})
    cid, st, out = one_shot(pod, cfg, "c", ["cat", "/etc/msg"], image="localhost/pad:v1")
    c.remove_pod(pod)
    a = engine_images().get("localhost/pad:v1", {}).get("manifest")
    c.remove_image("localhost/pad:v1")
    sh(f"cd {T} && echo hello-from-b >tree/etc/msg && tar -C tree --numeric-owner -cf padb.tar . && rm -rf padb && "
       f"{sys.executable} {mkoci} layout padb --tag v1 --nested --config '{{\"Cmd\": [\"/bin/sh\"]}}' padb.tar:gzip "
       f">/dev/null")
    top = json.load(open(f"{T}/padb/index.json"))
    idx_path = f"{T}/padb/blobs/sha256/{top['manifests'][0]['digest'][7:]}"
    idx = json.load(open(idx_path))
    os.unlink(idx_path)
    idx["annotations"] = {"pad": "x" * 90000}
    body = json.dumps(idx).encode()
    digest = hashlib.sha256(body).hexdigest()
    with open(f"{T}/padb/blobs/sha256/{digest}", "wb") as f:
        f.write(body)
    top["manifests"][0].update(digest=f"sha256:{digest}", size=len(body))
    with open(f"{T}/padb/index.json", "w") as f:
        json.dump(top, f)
    sh(f"tar -C {T}/padb -cf {T}/padb-oci.tar .")
    run(*ctr, "images", "import", "--snapshotter", "overlayfs", "--base-name", "localhost/pad", f"{T}/padb-oci.tar")
    pod, cfg = c.run_pod(T, "pad-b", "rootasm", {})
    try:
        cid, st2, out2 = one_shot(pod, cfg, "c", ["cat", "/etc/msg"], image="localhost/pad:v1")
    except CRIError as e:
        st2, out2 = (None, None), str(e)
    c.remove_pod(pod)
    after = {i.get("manifest"): n for n, i in engine_images().items()}
    ok(st[:2] == (CONTAINER_EXITED, 0) and out == "hello-from-a\n" and a and
       st2[:2] == (CONTAINER_EXITED, 0) and out2 == "hello-from-b\n" and len(body) > 65535 and
       a not in after and after.get(engine_images().get("localhost/pad:v1", {}).get("manifest")) == "localhost/pad:v1",
       f"an index of {len(body)} bytes: the pod runs on rootasm's tree of its image, and the image of that name "
       "before (containerd no longer has it) is pruned", (st, out, st2, out2, a, after))
    nothing_left("an index larger than HTTP/2's default window")
    # an index containerd gives no answer for (its blob gone from the content store, the image's name still
    # there): no ground to remove the engine's store's image of that name at the next import's prune
    # (and CRI's name of its ID, the config's digest, which the prune asks first)
    pad_man = json.load(open(f"{T}/padb/blobs/sha256/{idx['manifests'][0]['digest'][7:]}"))
    run(*ctr, "images", "rm", pad_man["config"]["digest"])
    run(*ctr, "content", "rm", f"sha256:{digest}")
    image("trig", "hello-from-trig")
    pod, cfg = c.run_pod(T, "trig", "rootasm", {})
    cid, st3, out3 = one_shot(pod, cfg, "c", ["cat", "/etc/msg"], image="localhost/trig:v1")
    c.remove_pod(pod)
    ok(st3[:2] == (CONTAINER_EXITED, 0) and out3 == "hello-from-trig\n" and "localhost/pad:v1" in engine_images(),
       "an image whose index containerd no longer gives: kept by the next import's prune",
       (st3, out3, sorted(engine_images())))
    nothing_left("an index containerd does not give")

    # a pod's image of two layers, in the engine's store from its first container on: each later container's
    # layers are checked against containerd's snapshot by their chain (SHA-256 of the diff IDs), which the static
    # rootasm-runtime computes itself (sha256.c; without it the chain was none: the second container refused as
    # if the tag had moved). Only the first, the import, is handed to rootasm-runtime-full: the second runs with
    # the twin taken away.
    sh(f"cd {T} && rm -rf l2 two && mkdir l2 && echo second-layer >l2/second && tar -C l2 --numeric-owner -cf l2.tar . && "
       f"echo hello-from-two >tree/etc/msg && tar -C tree --numeric-owner -cf two1.tar . && "
       f"{sys.executable} {mkoci} layout two --tag v1 --config '{{\"Cmd\": [\"/bin/sh\"]}}' two1.tar:gzip l2.tar:gzip "
       f">/dev/null && tar -C {T}/two -cf {T}/two-oci.tar .")
    run(*ctr, "images", "import", "--snapshotter", "overlayfs", "--base-name", "localhost/two", f"{T}/two-oci.tar")
    outs = []
    twin = f"{T}/rtbin/rootasm-runtime-full"
    for n in range(2):
        pod, cfg = c.run_pod(T, f"two{n}", "rootasm", {})
        if n == 1:
            os.rename(twin, twin + ".away")
        try:
            cid, st4, out4 = one_shot(pod, cfg, "c", ["cat", "/etc/msg", "/second"], image="localhost/two:v1")
            outs.append((st4[:2], out4))
        except CRIError as e:
            outs.append(str(e))
        finally:
            if n == 1:
                os.rename(twin + ".away", twin)
        c.remove_pod(pod)
    ok(outs == [((CONTAINER_EXITED, 0), "hello-from-two\nsecond-layer\n")] * 2,
       "an image of two layers: its first container (the import) and its second (the store's, its chain checked by "
       "the static runtime alone)",
       outs)
    nothing_left("an image of two layers")

    # 11. what a pod's image costs the node's memory: its layers are staged in memory (a tmpfs) one at a time
    # before their images are made, each at most runtime.conf's import_layer_max (32M here: a layer of 48 MiB of
    # zeros, 49 KB of gzip, within the expansion's 64 MiB, is refused), and at most `imports` (1 here) imports of
    # pods' images stage at once on the node (with its token held, a pod's import waits)
    sh(f"cd {T} && rm -rf zeros && cp -a tree zeros && echo hello-from-zeros >zeros/etc/msg && "
       f"head -c 48M /dev/zero >zeros/zeros && tar -C zeros --numeric-owner -cf zeros.tar .")
    ctr_import("zimg", "zeros.tar")
    err = pod_error("zeros", "localhost/zimg:v1")
    ok("the layer would exceed 33554432 bytes" in err and "import_layer_max" in err and
       "localhost/zimg:v1" not in engine_images(),
       "a layer whose tree is larger than import_layer_max (48 MiB of zeros, 32M): refused, nothing stored", err)
    # and what a tmpfs takes beyond what is counted (an inode for each entry, a page for each small file): 20000
    # empty files count 20 MB (1 KiB an entry) and take 20000 inodes, more than the stage's 16384 (32M / 2 KiB)
    sh(f"cd {T} && rm -rf many && cp -a tree many && mkdir many/many && (cd many/many && seq 20000 | xargs touch) && "
       f"tar -C many --numeric-owner -cf many.tar .")
    ctr_import("mimg", "many.tar")
    err = pod_error("many", "localhost/mimg:v1")
    ok("more than the 33554432 bytes or 16384 inodes a layer may stage in memory" in err and
       "import_layer_max" in err and "localhost/mimg:v1" not in engine_images(),
       "a layer of 20000 empty files (counted 20 MB, under 32M): refused by the stage's inodes", err)
    nothing_left("a layer over import_layer_max")
    image("slott", "hello-from-t")
    token = f"{T}/st/engine/.engine-imports/0"
    os.makedirs(os.path.dirname(token), exist_ok=True)
    open(token, "a").close()
    t_waited = while_held(token, "t")
    ok(t_waited and res.get("t") == ((CONTAINER_EXITED, 0), "hello-from-t\n"),
       "imports = 1: with the node's one import token held, a pod's import waits, then runs", (res, t_waited))
    # a token that is no regular file (a FIFO planted there): refused, not opened as one
    os.unlink(token)
    os.mkfifo(token)
    image("slotf", "hello-from-f")
    err = pod_error("fifo-token", "localhost/slotf:v1")
    os.unlink(token)
    ok(".engine-imports/0: not a regular file" in err, "an import token that is a FIFO: refused", err)
    nothing_left("the import token")

    print("# the CRI calls of the annotated pod (case 3):")
    for line in transcript:
        print(f"#   {line}")
    return 0


if __name__ == "__main__":
    main()
