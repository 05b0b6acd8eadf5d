#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""rootasm import docker:// against registries, as root, in a private mount namespace.

  registry_test.py ROOTASM MKOCI

- a real registry: Debian's docker-registry on 127.0.0.1 (plain HTTP, a random
  port, storage in a temporary directory), filled with `skopeo copy`; the image
  pulled from it gives the layout, records and tree that `import oci:DIR` of the
  same image gives (same manifest digest -> same layout); by tag, by digest, a
  Docker manifest list (the platform picked), a second pull writes nothing;
- the same registry with `auth: token`, its tokens (RS256 JWTs, openssl) from a
  small token endpoint this test serves: anonymous pulls refused, credentials
  from $REGISTRY_AUTH_FILE accepted, and as containers-auth.json(5) says:
  the files in order until one has the registry, the longest entry, --authfile,
  --creds, credential helpers (credHelpers, credsStore: docker-credential-*);
  rootasm login/logout writing the entry podman login writes; with TLS, its own CA and a client certificate: --cert-dir and
  /etc/containers/certs.d as containers-certs.d(5) says;
- a registry that lies (this test's http.server): a blob with a wrong digest,
  a truncated blob, a redirect loop, a huge manifest, a config with a wrong
  digest -> one line naming the reference, exit 2, nothing in the store; a
  connection dropped in the middle of a layer -> resumed with Range; one
  closed before the manifest's answer -> asked again; a slow one (never still) -> pulled.

TAP output; exit 77 (skip) without root, docker-registry, skopeo or openssl.
"""
import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True          # (nothing written beside the sources)
sys.path.insert(0, here)
import tap                              # noqa: E402
from tap import ok, run                 # noqa: E402
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def files(store):
    """What the store holds, less its lock file (STORE/lock: no part of any image)."""
    out = []
    for root, _, names in os.walk(store):
        out += [os.path.relpath(os.path.join(root, n), store) for n in names]
    return sorted(f for f in out if f != "lock")


def records(store):
    """The store's JSON files by name (its names are another test's), the layouts with the store's path taken out; a layer
    record's "image" digest is the sha256 of the layer image made (mkfs.erofs writes a new
    UUID and times each time), so it is left out: the same input, not the same bytes."""
    out = {}
    for f in files(store):
        if f.endswith(".json") and f != "names.json":
            with open(os.path.join(store, f)) as fh:
                text = fh.read().replace(store, "STORE")
            if f.startswith("layers/"):
                j = json.loads(text)
                if isinstance(j.get("image"), dict):
                    j["image"].pop("digest", None)
                text = json.dumps(j, sort_keys=True)
            out[f] = text
    return out


# ---------------------------------------------------------------- registries

class Registry:
    """Debian's docker-registry on 127.0.0.1:PORT, plain HTTP, storage in @tmp."""

    def __init__(self, tmp, auth=None, tls=None):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        os.makedirs(os.path.join(tmp, "data"), exist_ok=True)
        cfg = {"version": 0.1, "log": {"level": "error", "accesslog": {"disabled": True}},
               "storage": {"filesystem": {"rootdirectory": os.path.join(tmp, "data")}},
               "http": {"addr": self.host}}
        if tls:
            cfg["http"]["tls"] = tls
        if auth:
            cfg["auth"] = auth
        with open(os.path.join(tmp, "config.yml"), "w") as f:
            json.dump(cfg, f)	# YAML takes JSON
        self.log = open(os.path.join(tmp, "log"), "w")
        self.proc = subprocess.Popen(["docker-registry", "serve", os.path.join(tmp, "config.yml")],
                                     stdout=self.log, stderr=self.log)
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://{self.host}/v2/", timeout=1)
                return
            except urllib.error.HTTPError:
                return		# 401: up, with auth
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("docker-registry did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.log.close()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass		# a client that hung up on a lie


def serve(handler):
    srv = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token_handler(tmp, user, password):
    """A token endpoint (docker distribution's token auth): RS256 JWTs with the x5c chain, for @user only."""
    der = subprocess.run(["openssl", "x509", "-in", f"{tmp}/cert.pem", "-outform", "DER"],
                         stdout=subprocess.PIPE, check=True).stdout
    want = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            if self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            access = []
            for s in q.get("scope", []):
                for one in s.split(" "):
                    typ, name, actions = one.split(":")
                    access.append({"type": typ, "name": name, "actions": actions.split(",")})
            now = int(time.time())
            hdr = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
            claims = {"iss": "rootasm-test", "sub": user, "aud": q.get("service", [""])[0], "exp": now + 600,
                      "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(), "access": access}
            signing = b64url(json.dumps(hdr).encode()) + "." + b64url(json.dumps(claims).encode())
            sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", f"{tmp}/key.pem"], input=signing.encode(),
                                 stdout=subprocess.PIPE, check=True).stdout
            body = json.dumps({"token": signing + "." + b64url(sig)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return H


def push(host, repo, tag, layout):
    """An OCI layout's blobs and manifests into a registry as they are (skopeo would convert a Docker list)."""
    blobs = os.path.join(layout, "blobs", "sha256")

    def req(method, url, data=None, ctype=None):
        r = urllib.request.Request(url, data=data, method=method)
        if ctype:
            r.add_header("Content-Type", ctype)
        return urllib.request.urlopen(r, timeout=30)
    docs = {}
    for hexd in os.listdir(blobs):
        data = open(os.path.join(blobs, hexd), "rb").read()
        try:
            mt = json.loads(data).get("mediaType", "")
        except (ValueError, UnicodeDecodeError, AttributeError):
            mt = ""
        if "manifest" in mt:
            docs["sha256:" + hexd] = (mt, data)
            continue
        loc = req("POST", f"http://{host}/v2/{repo}/blobs/uploads/").headers["Location"]
        loc = urllib.parse.urljoin(f"http://{host}/", loc)
        req("PUT", loc + ("&" if "?" in loc else "?") + "digest=sha256:" + hexd, data, "application/octet-stream")
    # the manifests first, then the lists that name them
    for dg, (mt, data) in sorted(docs.items(), key=lambda kv: "list" in kv[1][0] or "index" in kv[1][0]):
        req("PUT", f"http://{host}/v2/{repo}/manifests/{dg}", data, mt)
    with open(os.path.join(layout, "index.json")) as f:
        top = json.load(f)["manifests"][0]
    mt, data = docs[top["digest"]]
    req("PUT", f"http://{host}/v2/{repo}/manifests/{tag}", data, mt)


def make_bomb(layout, mib, tail=0):
    """An OCI layout whose one layer is a gzip bomb: a tar of one file of @mib MiB of zeros (about 1000:1); then,
    with @tail, a file of @tail MiB of random bytes (an honest layer that begins with a disk image of zeros)."""
    import gzip
    import tarfile
    blobs = os.path.join(layout, "blobs", "sha256")
    os.makedirs(blobs)
    raw, gz = hashlib.sha256(), hashlib.sha256()
    tmp = os.path.join(layout, "layer.tmp")

    class Tee:
        def __init__(self, f):
            self.f = f

        def write(self, b):
            raw.update(b)
            return self.f.write(b)

        def tell(self):
            return self.f.tell()

    class Zeros:
        def __init__(self, n):
            self.n = n

        def read(self, k=-1):
            k = self.n if k < 0 else min(k, self.n)
            self.n -= k
            return bytes(k)
    with open(tmp, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0) as z:
            with tarfile.open(fileobj=Tee(z), mode="w|", format=tarfile.PAX_FORMAT) as t:
                ti = tarfile.TarInfo("zero")
                ti.size = mib << 20
                t.addfile(ti, Zeros(ti.size))
                if tail:
                    ti = tarfile.TarInfo("random")
                    ti.size = tail << 20
                    t.addfile(ti, io.BytesIO(os.urandom(ti.size)))
    data = open(tmp, "rb").read()
    os.unlink(tmp)
    gz.update(data)

    def put(b):
        d = hashlib.sha256(b).hexdigest()
        with open(os.path.join(blobs, d), "wb") as f:
            f.write(b)
        return {"digest": "sha256:" + d, "size": len(b)}
    layer = put(data)
    layer["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
    config = put(json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                             "rootfs": {"type": "layers", "diff_ids": ["sha256:" + raw.hexdigest()]}}).encode())
    config["mediaType"] = "application/vnd.oci.image.config.v1+json"
    manifest = put(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": config, "layers": [layer]}).encode())
    manifest["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [manifest]}, f)
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    return len(data)


def sink_handler(seen):
    """Another origin that asks everything for a Bearer token of its own realm; @seen gets each request's
    Authorization header (None without one)."""
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            port = self.server.server_address[1]
            self.send_response(401)
            self.send_header("WWW-Authenticate", f'Bearer realm="http://127.0.0.1:{port}/token",service="sink"')
            self.send_header("Content-Length", "0")
            self.end_headers()
    return H


def redirect_handler(elsewhere):
    """A registry that sends every request to the origin @elsewhere (http://HOST:PORT), /v2/ too."""
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(307)
            self.send_header("Location", f"{elsewhere}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
    return H


def liar_handler(layout, elsewhere=None):
    """A registry that lies, by repository name; its image is @layout's (one manifest). Case "elsewhere":
    its layers are redirected to the origin @elsewhere (http://HOST:PORT)."""
    blobs = os.path.join(layout, "blobs", "sha256")
    with open(os.path.join(layout, "index.json")) as f:
        mdesc = json.load(f)["manifests"][0]
    manifest = open(os.path.join(blobs, mdesc["digest"][7:]), "rb").read()
    man = json.loads(manifest)
    dropped = set()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, code, body=b"", ctype="application/octet-stream", headers=()):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def drip(self, body, n, ctype="application/octet-stream", head=0):
            """@body (from a Range's start), up to byte @head at once, then @n bytes every 100 ms: never still
            (curl's 30 s at 1 byte/s), never done soon."""
            rng = self.headers.get("Range")
            start = int(rng.split("=")[1].split("-")[0]) if rng else 0
            self.send_response(206 if start else 200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.end_headers()
            try:
                head = max(start, head)
                self.wfile.write(body[start:head])
                self.wfile.flush()
                for i in range(head, len(body), n):
                    self.wfile.write(body[i:i + n])
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            self.close_connection = True

        def do_GET(self):
            parts = self.path.split("/")
            if self.path == "/v2/":
                return self.send(200, b"{}", "application/json")
            if self.path.startswith("/token?"):
                # case "driptoken"'s token, a byte every 100 ms (a valid answer, in about 5 minutes)
                return self.drip(json.dumps({"token": "t" * 3000}).encode(), 1, "application/json")
            if self.path.startswith("/v2/driptoken/") and not self.headers.get("Authorization"):
                # the manifest's 401, its body a byte every 100 ms (5 s): the token's request must have
                # only what is left of the manifest's patience
                body = b"x" * 50
                self.send_response(401)
                self.send_header("WWW-Authenticate", f'Bearer realm="http://{self.headers.get("Host")}/token",'
                                 'service="liar",scope="repository:driptoken:pull"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(0.1)
                except OSError:
                    pass
                return
            if len(parts) != 5 or parts[1] != "v2":
                return self.send(404)
            case, kind, ref = parts[2], parts[3], parts[4]
            if kind == "manifests":
                if case == "huge":
                    big = json.dumps({"schemaVersion": 2, "pad": "x" * (5 << 20)}).encode()
                    return self.send(200, big, mdesc["mediaType"])
                if case == "flaky" and "manifest" not in dropped:
                    dropped.add("manifest")		# the first answer: a connection closed without a word
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if case == "dripdoc":
                    # the manifest a byte every 100 ms: never still for 30 s, never done soon (about 2 minutes)
                    return self.drip(manifest, 1, mdesc["mediaType"])
                if case == "claim":
                    # each layer claimed 1 GiB: a limit made of that word would let it fill the stage
                    m2 = dict(man, layers=[dict(ly, size=1 << 30) for ly in man["layers"]])
                    return self.send(200, json.dumps(m2).encode(), mdesc["mediaType"])
                return self.send(200, manifest, mdesc["mediaType"])
            data = open(os.path.join(blobs, ref[7:]), "rb").read()
            is_layer = any(ly["digest"] == ref for ly in man["layers"])
            if case == "badconfig" and ref == man["config"]["digest"]:
                data = data.replace(b'"os"', b'"OS"')
            if case == "baddigest" and is_layer and data[:2] == b"\x1f\x8b":
                data = data[:4] + bytes([data[4] ^ 1]) + data[5:]	# gzip's MTIME: still decompresses
            if case == "elsewhere" and is_layer:
                return self.send(307, headers=[("Location", f"{elsewhere}/storage/{ref}?sig=secret")])
            if case == "claim" and is_layer:
                # what the manifest claims (1 GiB) as the length; the blob; then nothing, the connection open
                self.send_response(200)
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                    time.sleep(20)
                except OSError:
                    pass
                self.close_connection = True
                return
            if case == "loop" and is_layer:
                return self.send(302, headers=[("Location", self.path)])
            if case == "endless" and is_layer:
                # no length: the blob, then zeros until the client hangs up
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    self.wfile.write(data)
                    for _ in range(4096):
                        self.wfile.write(bytes(65536))
                except OSError:
                    pass
                return
            if case == "truncated" and is_layer and len(data) > 1000:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:len(data) // 2])
                self.close_connection = True
                return
            if case == "slow" and is_layer and len(data) < 1000:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for i in range(0, len(data), 32):		# 32 bytes every 50 ms: slow, never still
                    self.wfile.write(data[i:i + 32])
                    self.wfile.flush()
                    time.sleep(0.05)
                return
            if case == "dripblob" and is_layer and len(data) > 4096:
                # 256 bytes every 100 ms (2.5 KB/s): never still, a big layer never done soon
                return self.drip(data, 256)
            if case == "frontdrip" and is_layer and len(data) > 4096:
                # all but its last 4 KB at once (its average high for minutes), then 1 byte every 100 ms
                return self.drip(data, 1, head=len(data) - 4096)
            if case == "drop" and is_layer and len(data) > 1000:
                rng = self.headers.get("Range")
                if rng:
                    start = int(rng.split("=")[1].split("-")[0])
                    return self.send(206, data[start:], headers=[
                        ("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")])
                if ref not in dropped:
                    dropped.add(ref)
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:len(data) // 3])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
            return self.send(200, data)
    return H


# ---------------------------------------------------------------- the test

def main():
    if len(sys.argv) != 3:
        sys.exit("usage: registry_test.py ROOTASM MKOCI")
    bin_, mkoci = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        print("1..0 # SKIP needs root")
        sys.exit(77)
    for tool in ("docker-registry", "skopeo", "openssl"):
        if not shutil.which(tool):
            print(f"1..0 # SKIP no {tool} (apt-get install {tool})")
            sys.exit(77)
    if not os.environ.get("_REGISTRY_TEST_NS"):
        os.environ["_REGISTRY_TEST_NS"] = "1"
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable] + sys.argv)
    T = tempfile.mkdtemp(prefix="rootasm-registry-")
    env = dict(os.environ, HOME=f"{T}/home", XDG_RUNTIME_DIR=f"{T}/xdg")
    env.pop("REGISTRY_AUTH_FILE", None)
    os.makedirs(env["HOME"])
    os.makedirs(env["XDG_RUNTIME_DIR"])
    stopped = []
    try:
        t_all = time.monotonic()
        # the image: a lower layer, an upper one implying its directories (made with the layers below),
        # a bigger gzip layer (several socket buffers) and a small one (skopeo copy to a registry keeps
        # compressed layers as they are, so the manifest digest stays)
        run(sys.executable, mkoci, "case", "implied-lower", f"{T}/l1.tar", check=True)
        run(sys.executable, mkoci, "case", "implied", f"{T}/l2.tar", check=True)
        os.makedirs(f"{T}/big/opt")
        with open(f"{T}/big/opt/random", "wb") as f:
            f.write(os.urandom(6 << 20))
        with open(f"{T}/big/opt/zeros", "wb") as f:
            f.write(b"\0" * (8 << 20))
        run("tar", "-C", f"{T}/big", "--owner=0", "--group=0", "-cf", f"{T}/l3.tar", ".", check=True)
        os.makedirs(f"{T}/mark/etc")
        with open(f"{T}/mark/etc/marker", "wb") as f:
            f.write(b"marker\n" * 100)
        run("tar", "-C", f"{T}/mark", "--owner=0", "--group=0", "-cf", f"{T}/l4.tar", ".", check=True)
        tars = [f"{T}/l1.tar:gzip", f"{T}/l2.tar:zstd", f"{T}/l3.tar:gzip", f"{T}/l4.tar:gzip"]
        run(sys.executable, mkoci, "layout", f"{T}/img", "--tag", "v1", *tars, check=True)
        run(sys.executable, mkoci, "layout", f"{T}/list", "--tag", "v1", "--docker", "--nested", *tars,
            check=True)

        # a layer refused by its first entry, with 24 MiB behind it
        with open(f"{T}/bad.tar", "wb") as f:
            import tarfile
            import io
            with tarfile.open(fileobj=f, mode="w") as t:
                ti = tarfile.TarInfo("a/../../escaped")
                ti.size = 1
                t.addfile(ti, io.BytesIO(b"x"))
                ti = tarfile.TarInfo("big")
                ti.size = 24 << 20
                t.addfile(ti, io.BytesIO(os.urandom(ti.size)))
        run(sys.executable, mkoci, "layout", f"{T}/bad", "--tag", "v1", tars[0], f"{T}/bad.tar:gzip", check=True)

        # the reference: import oci:, which never loads libcurl
        t0 = time.monotonic()
        ref = run(bin_, "import", "--quiet", "--store", f"{T}/ref", f"oci:{T}/img:v1", check=True)
        t_oci = time.monotonic() - t0
        p = run(bin_, "import", "--quiet", "--store", f"{T}/ref-ld", f"oci:{T}/img:v1",
                env=dict(os.environ, LD_DEBUG="files"))
        ok(p.returncode == 0 and "libarchive" in p.stderr and "libcurl" not in p.stderr,
           "import oci: does not load libcurl", p.returncode)
        ref_layout = ref.stdout.strip().splitlines()[-1]
        os.makedirs(f"{T}/mref")
        run(bin_, "assemble", ref_layout, "--attach", f"{T}/mref", check=True)

        reg = Registry(f"{T}/reg")
        stopped.append(reg)
        t0 = time.monotonic()
        p = run("skopeo", "copy", "--quiet", "--dest-tls-verify=false", f"oci:{T}/img:v1",
                f"docker://{reg.host}/test/img:v1")
        t_push = time.monotonic() - t0
        ok(p.returncode == 0, "skopeo copy fills docker-registry", p.stderr)
        run("skopeo", "copy", "--quiet", "--dest-tls-verify=false", f"oci:{T}/bad:v1",
            f"docker://{reg.host}/test/bad:v1", check=True)
        push(reg.host, "test/list", "v1", f"{T}/list")

        # 0. inspect: what skopeo inspect says, from the registry and from the layout, nothing stored
        fields = ("Name", "Digest", "Architecture", "Os", "Layers", "Labels", "Env", "Created")

        def manifest_sizes(digest):
            # the layers' sizes in the manifest (this skopeo has no LayersData)
            try:
                with open(f"{T}/img/blobs/sha256/{digest.split(':')[-1]}") as f:
                    return [ly["size"] for ly in json.load(f)["layers"]]
            except (OSError, ValueError, KeyError):
                return None
        sk = run("skopeo", "inspect", "--tls-verify=false", f"docker://{reg.host}/test/img:v1")
        p = run(bin_, "inspect", "--tls-verify=false", f"docker://{reg.host}/test/img:v1", env=env)
        try:
            mine, theirs = json.loads(p.stdout), json.loads(sk.stdout)
        except ValueError:
            mine, theirs = {}, {"skopeo": sk.stderr}
        diff = {k: (mine.get(k), theirs.get(k)) for k in fields if mine.get(k) != theirs.get(k)}
        ok(p.returncode == 0 and sk.returncode == 0 and not diff and
           [d["Digest"] for d in mine.get("LayersData", [])] == theirs.get("Layers") and
           [d["Size"] for d in mine.get("LayersData", [])] == manifest_sizes(mine.get("Digest", "")) and
           len(mine.get("DiffIDs", [])) == len(theirs.get("Layers", [])) and not os.path.exists(f"{T}/none"),
           "inspect docker:// says what skopeo inspect says (Name, Digest, Architecture, Os, Layers, sizes, "
           "Labels, Env, Created)", json.dumps(diff) + p.stderr)
        p2 = run(bin_, "inspect", f"oci:{T}/img:v1")
        mine2 = json.loads(p2.stdout) if p2.returncode == 0 else {}
        ok(p2.returncode == 0 and mine2.get("Digest") == mine.get("Digest") and
           mine2.get("Layers") == mine.get("Layers") and mine2.get("Name") == f"oci:{T}/img:v1",
           "inspect oci: names the same manifest and layers as the registry's copy", p2.stderr)
        p3 = run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", bin_, "--json", "inspect",
                 "--tls-verify=false", f"docker://{reg.host}/test/img:v1",
                 env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"})
        ok(p3.returncode == 0 and len(p3.stdout.splitlines()) == 1 and json.loads(p3.stdout).get("Digest") ==
           mine.get("Digest"), "inspect needs no privilege (nobody); --json: one line", p3.stderr)
        raw = run(bin_, "inspect", "--raw", "--tls-verify=false", f"docker://{reg.host}/test/img:v1", env=env)
        skraw = run("skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{reg.host}/test/img:v1")
        ok(raw.returncode == 0 and raw.stdout == skraw.stdout and
           "sha256:" + hashlib.sha256(raw.stdout.encode()).hexdigest() == mine.get("Digest"),
           "inspect --raw: the manifest's bytes, as skopeo inspect --raw prints them (its sha256 the Digest)",
           raw.stderr)
        # a docker save archive (docker has no zstd: the gzip layers only), against its OCI layout
        before = set(os.listdir("/tmp"))
        run(sys.executable, mkoci, "layout", f"{T}/gz", "--tag", "v1", tars[0], tars[2], check=True)
        run("skopeo", "copy", "--quiet", f"oci:{T}/gz:v1", f"docker-archive:{T}/gz.tar:test/gz:v1", check=True)
        pa = run(bin_, "inspect", f"docker-archive:{T}/gz.tar")
        po = run(bin_, "inspect", f"oci:{T}/gz:v1")
        arch = json.loads(pa.stdout) if pa.returncode == 0 else {}
        lay = json.loads(po.stdout) if po.returncode == 0 else {}
        left = [f for f in set(os.listdir("/tmp")) - before if f.startswith("rootasm-inspect-")]
        ok(pa.returncode == 0 and po.returncode == 0 and arch.get("DiffIDs") == lay.get("DiffIDs") and
           len(arch.get("Layers", [])) == 2 and arch.get("Os") == lay.get("Os") and not left,
           "inspect docker-archive: the diff ids of its OCI layout, its unpacked copy removed",
           pa.stderr + po.stderr + str(left))
        # one image, one record: the archive's manifest is not the layout's, its config is
        sa = f"{T}/s-alias"
        pi1 = run(bin_, "--json", "import", "--store", sa, "--tag", "test/gz:layout", f"oci:{T}/gz:v1")
        pi2 = run(bin_, "--json", "import", "--store", sa, f"docker-archive:{T}/gz.tar")
        j1 = json.loads(pi1.stdout) if pi1.returncode == 0 else {}
        j2 = json.loads(pi2.stdout) if pi2.returncode == 0 else {}
        pim = run(bin_, "--json", "images", "--store", sa)
        ims = json.loads(pim.stdout) if pim.returncode == 0 else []
        recs = [f for f in os.listdir(f"{sa}/images/sha256") if f.endswith(".json") and len(f) == 69] \
            if os.path.isdir(f"{sa}/images/sha256") else []
        ok(pi1.returncode == 0 and pi2.returncode == 0 and j1.get("manifest") and
           j2.get("manifest") not in (None, j1.get("manifest")) and j1.get("config") == j2.get("config") and
           j2.get("stored_as") == j1.get("manifest") and j2.get("layout") == j1.get("layout") and
           len(ims) == 1 and sorted(ims[0].get("names", [])) == ["docker.io/test/gz:v1", "test/gz:layout"]
           and len(recs) == 1,
           "one image under every name: oci: and docker-archive: of the same config are one record with both "
           "names (the archive's manifest digest an alias of it)",
           json.dumps([{k: j.get(k) for k in ("manifest", "config", "name", "stored_as", "layout")} for j in (j1, j2)]
                      + [ims, recs]) + pi1.stderr + pi2.stderr)
        lk = [run(bin_, "inspect", "--store", sa, r_) for r_ in
              ("test/gz:layout", "docker.io/test/gz:v1", j1.get("manifest", "x"), j2.get("manifest", "x"))]
        lks = [json.loads(x.stdout).get("Layout") if x.returncode == 0 else x.stderr for x in lk]
        ok(len(set(lks)) == 1 and lks[0] == j1.get("layout"),
           "the image is found by either name and by either manifest digest (the alias too)", json.dumps(lks))
        r1 = run(bin_, "rmi", "--store", sa, "docker.io/test/gz:v1")
        r2 = run(bin_, "inspect", "--store", sa, "test/gz:layout")
        r3 = run(bin_, "rmi", "--store", sa, j2.get("manifest", "x"))
        r4 = run(bin_, "--json", "images", "--store", sa)
        with open(f"{sa}/names.json") as f:
            left_names = json.load(f)
        ok(r1.returncode == 0 and r2.returncode == 0 and r3.returncode == 0 and r4.stdout.strip() == "[]" and
           left_names.get("names") == {} and not left_names.get("aliases") and not os.listdir(f"{sa}/images/sha256"),
           "rmi of one name keeps the image for the other; rmi by the alias digest removes the image, its names "
           "and its alias", r1.stderr + r2.stderr + r3.stderr + r4.stdout + json.dumps(left_names))
        p4 = run(bin_, "inspect", "--tls-verify=false", f"docker://{reg.host}/test/nosuch:v1", env=env)
        ok(p4.returncode != 0 and len(p4.stderr.strip().splitlines()) == 1 and "nosuch" in p4.stderr,
           "inspect of an image the registry does not have: one line", p4.stderr)

        # 1. the same image, by tag
        t0 = time.monotonic()
        p = run(bin_, "import", "--store", f"{T}/s1", "--tls-verify=false", f"docker://{reg.host}/test/img:v1",
                env=env)
        t_pull = time.monotonic() - t0
        out = p.stdout.strip().splitlines()
        ok(p.returncode == 0 and out and out[-1].replace(f"{T}/s1", "") == ref_layout.replace(f"{T}/ref", ""),
           "import docker:// gives the layout import oci: gives (same manifest digest)", p.stdout + p.stderr)
        ok(records(f"{T}/s1") == records(f"{T}/ref"), "the store's records are those of import oci:",
           json.dumps([records(f"{T}/s1"), records(f"{T}/ref")], indent=1))
        p2 = run(bin_, "images", "--store", f"{T}/s1")
        ok(p2.returncode == 0 and f"{reg.host}/test/img:v1" in p2.stdout,
           "a pull by tag is named HOST/REPO:TAG in the store, as podman names it", p2.stdout + p2.stderr)
        p2 = run(bin_, "inspect", "--store", f"{T}/s1", f"{reg.host}/test/img:v1")
        st = json.loads(p2.stdout) if p2.returncode == 0 else {}
        ok(p2.returncode == 0 and st.get("Digest") == mine.get("Digest") and st.get("Layers") == mine.get("Layers")
           and st.get("DiffIDs") == mine.get("DiffIDs") and st.get("Layout", "").startswith(f"{T}/s1/"),
           "inspect of a stored image by name: its digest, layers and layout", p2.stderr)
        # LAST USE: set by a use (a lookup: exec --store NAME), not by a look (inspect), whatever the mount's atime
        layout_file = st.get("Layout", f"{T}/none")
        old = time.time() - 3 * 86400
        record = os.path.join(os.path.dirname(layout_file), st.get("Digest", ":").split(":")[1] + ".json")
        for f in (layout_file, record):		# as if imported and last used days ago
            if os.path.exists(f):
                os.utime(f, (old, old))

        def last_used():
            q = run(bin_, "images", "--json", "--store", f"{T}/s1")
            return max((i["last_used"] for i in json.loads(q.stdout)), default=0) if q.returncode == 0 else 0

        seen = last_used()
        run(bin_, "inspect", "--store", f"{T}/s1", f"{reg.host}/test/img:v1")
        looked = last_used()
        px = run(bin_, "exec", "--store", f"{T}/s1", f"{reg.host}/test/img:v1", "--", "/no/such/command")
        used = last_used()
        ok(abs(seen - old) < 5 and abs(looked - old) < 5 and used > time.time() - 60 and px.returncode == 127,
           "exec --store NAME: the image found in that store and its LAST USE now (inspect left it)",
           f"{seen} {looked} {used} {px.returncode} {px.stderr}")
        if p.returncode == 0:
            os.makedirs(f"{T}/m1")
            run(bin_, "assemble", out[-1], "--attach", f"{T}/m1", check=True)
            c = run(sys.executable, os.path.join(here, "treecmp.py"), f"{T}/m1", f"{T}/mref")
            ok(c.returncode == 0, "the assembled tree is entry by entry that of import oci:", c.stdout + c.stderr)
            run("umount", "-R", f"{T}/m1")
        before = {f: os.stat(os.path.join(f"{T}/s1", f)).st_ino for f in files(f"{T}/s1")}
        p = run(bin_, "import", "--store", f"{T}/s1", "--tls-verify=false", f"docker://{reg.host}/test/img:v1",
                env=env)
        after = {f: os.stat(os.path.join(f"{T}/s1", f)).st_ino for f in files(f"{T}/s1")}
        ok(p.returncode == 0 and before == after and p.stderr.count("in the store") == 4,
           "a second pull writes nothing", p.stderr)

        # progress: --json events, a bar on a terminal, nothing with --quiet
        p = run(bin_, "import", "--json", "--store", f"{T}/p1", "--tls-verify=false",
                f"docker://{reg.host}/test/img:v1", env=env)
        ev = [json.loads(line) for line in p.stderr.splitlines()]
        dl = {e["digest"]: e for e in ev if e.get("event") == "download"}
        with open(f"{T}/img/blobs/sha256/" + os.path.basename(ref_layout).split(".")[0]) as f:
            want = {ly["digest"]: ly["size"] for ly in json.load(f)["layers"]}
        ok(p.returncode == 0 and json.loads(p.stdout)["layout"].endswith(os.path.basename(ref_layout)) and
           {d: e["bytes"] for d, e in dl.items()} == want and
           len([e for e in ev if e.get("event") == "layer"]) == 4,
           "--json: one download event per line and step, the last of each layer complete", p.stderr)
        p = run("script", "-qec", f"{bin_} import --store {T}/p2 --tls-verify=false docker://{reg.host}/test/img:v1",
                "/dev/null", env=env)
        lines = p.stdout.split("\n")		# (text mode: each \r is a \n)
        ok(p.returncode == 0 and "\033[Krootasm: import: [" in p.stdout and "MB downloaded" in p.stdout and
           [x for x in lines if x][-1].endswith(os.path.basename(ref_layout)),
           "on a terminal: a progress bar, then the layout path as the last line", repr(p.stdout[-600:]))
        # a 50-column terminal: each redraw fits on its line (it never wraps), layers named by blob digest
        p = run("script", "-qec", f"stty cols 50; {bin_} import --store {T}/p4 --tls-verify=false "
                f"docker://{reg.host}/test/img:v1", "/dev/null", env=env)
        draws = [d for d in p.stdout.replace("\n", "\r").split("\r") if d.startswith("\033[K") and "downloaded" in d]
        widest = max((len(d) - 3 for d in draws), default=0)
        # and every line of progress (a layer's, compact there), all but the result (the layout's path)
        shown = [x.replace("\033[K", "") for x in p.stdout.replace("\n", "\r").split("\r")]
        shown = [x for x in shown if x.strip() and not x.endswith(".layout.json")]
        widest = max([widest] + [len(x) for x in shown])
        blob = sorted(want)[0][:19]
        ok(p.returncode == 0 and draws and widest <= 49 and all("[" in d for d in draws) and
           f"{blob}" in p.stdout,
           f"on a 50-column terminal: {len(draws)} redraws and {len(shown)} lines, the widest {widest} columns; "
           "layers by blob digest",
           repr(p.stdout[-400:]))
        p = run(bin_, "import", "--quiet", "--store", f"{T}/p3", "--tls-verify=false",
                f"docker://{reg.host}/test/img:v1", env=env)
        ok(p.returncode == 0 and p.stderr == "" and len(p.stdout.splitlines()) == 1, "--quiet: no progress",
           p.stderr)

        # 2. by digest; a manifest list; errors of a real registry
        digest = "sha256:" + os.path.basename(ref_layout).split(".")[0]
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s2", "--tls-verify=false",
                f"docker://{reg.host}/test/img@{digest}", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)), "import by digest",
           p.stdout + p.stderr)
        with open(f"{T}/list/index.json") as f:
            top = json.load(f)["manifests"][0]["digest"][7:]
        with open(f"{T}/list/blobs/sha256/{top}") as f:
            amd64 = [m for m in json.load(f)["manifests"] if m["platform"]["architecture"] == "amd64"][0]
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s2l", "--tls-verify=false",
                f"docker://{reg.host}/test/list:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(amd64["digest"][7:] + ".erofs.layout.json"),
           "a Docker manifest list: the linux/amd64 manifest is pulled", p.stdout + p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s3", "--tls-verify=false",
                f"docker://{reg.host}/test/img:nope", env=env)
        ok(p.returncode == 2 and "docker://" in p.stderr and "not found" in p.stderr and
           len(p.stderr.strip().splitlines()) == 1 and files(f"{T}/s3") == [],
           "an unknown tag: exit 2, one line naming the reference, nothing stored", p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s3", f"docker://{reg.host}/test/img:v1", env=env)
        ok(p.returncode == 1 and "--tls-verify=false" in p.stderr and files(f"{T}/s3") == [],
           "TLS is verified by default: a plain HTTP registry is refused, with a hint", p.stderr)
        t0 = time.monotonic()
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s3", "--tls-verify=false",
                f"docker://{reg.host}/test/bad:v1", env=env)
        dt = time.monotonic() - t0
        ok(p.returncode == 2 and "'..'" in p.stderr and f"docker://{reg.host}/test/bad@sha256:" in p.stderr and
           files(f"{T}/s3") == [] and dt < 5,
           f"a layer refused by its first entry: its download stops, nothing stored ({dt:.2f} s)", p.stderr)
        reg.stop()
        stopped.remove(reg)

        # 3. bearer tokens from our token endpoint; credentials from the auth file
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{T}/key.pem", "-out",
            f"{T}/cert.pem", "-days", "1", "-subj", "/CN=rootasm-test", check=True)
        tok = serve(token_handler(T, "alice", "s3cret"))
        auth = {"token": {"realm": f"http://127.0.0.1:{tok.server_address[1]}/token", "service": "rootasm-test",
                          "issuer": "rootasm-test", "rootcertbundle": f"{T}/cert.pem"}}
        areg = Registry(f"{T}/areg", auth)
        stopped.append(areg)
        p = run("skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--dest-creds", "alice:s3cret",
                f"oci:{T}/img:v1", f"docker://{areg.host}/test/img:v1")
        ok(p.returncode == 0, "skopeo copy to the registry with token auth", p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s4", "--tls-verify=false",
                f"docker://{areg.host}/test/img:v1", env=env)
        ok(p.returncode != 0 and "authenticate" in p.stderr and files(f"{T}/s4") == [],
           "token auth without credentials: refused, nothing stored", p.stderr)
        with open(f"{T}/auth.json", "w") as f:
            json.dump({"auths": {areg.host: {"auth": base64.b64encode(b"alice:s3cret").decode()}}}, f)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s4", "--tls-verify=false",
                f"docker://{areg.host}/test/img:v1", env=dict(env, REGISTRY_AUTH_FILE=f"{T}/auth.json"))
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)),
           "token auth with credentials from $REGISTRY_AUTH_FILE", p.stdout + p.stderr)
        os.makedirs(f"{T}/xdg/containers")
        shutil.copy(f"{T}/auth.json", f"{T}/xdg/containers/auth.json")
        p = run(bin_, "import", "--quiet", "--store", f"{T}/s5", "--tls-verify=false",
                f"docker://{areg.host}/test/img:v1", env=env)
        ok(p.returncode == 0, "credentials from $XDG_RUNTIME_DIR/containers/auth.json", p.stderr)

        # containers-auth.json(5): the files in order until one has an entry for the image
        good = {"auth": base64.b64encode(b"alice:s3cret").decode()}
        wrong = {"auth": base64.b64encode(b"alice:wrong").decode()}

        def pull(store, extra=(), env_=None):
            return run(bin_, "import", "--quiet", "--store", f"{T}/{store}", "--tls-verify=false", *extra,
                       f"docker://{areg.host}/test/img:v1", env=env_ or env)

        def write(path, doc):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                json.dump(doc, f)

        # (b) the XDG file names only another registry: the right entry is in ~/.docker/config.json
        write(f"{T}/xdg/containers/auth.json", {"auths": {"other.example:5000": wrong}})
        write(f"{T}/home/.docker/config.json", {"auths": {areg.host: good}})
        p = pull("s5b")
        ok(p.returncode == 0, "an auth file without the registry is passed over: ~/.docker/config.json's entry",
           p.stderr)
        os.unlink(f"{T}/home/.docker/config.json")
        # (c) only in ~/.config/containers/auth.json
        write(f"{T}/home/.config/containers/auth.json", {"auths": {areg.host: good}})
        p = pull("s5c")
        ok(p.returncode == 0, "credentials only in ~/.config/containers/auth.json", p.stderr)
        os.unlink(f"{T}/home/.config/containers/auth.json")
        # (c2) a namespace that only looks like an API version ("test/v1") is a namespace: not this image's
        write(f"{T}/xdg/containers/auth.json", {"auths": {f"{areg.host}/test/v1": wrong}})
        write(f"{T}/home/.docker/config.json", {"auths": {areg.host: good}})
        p = pull("s5c2")
        ok(p.returncode == 0, "an entry for the namespace test/v1 is not one for test/img (the next file's is)",
           p.stderr)
        os.unlink(f"{T}/home/.docker/config.json")
        # (d) in one file, the longest match: the namespace's entry before the registry's
        write(f"{T}/xdg/containers/auth.json", {"auths": {areg.host: wrong, f"{areg.host}/test": good,
                                                          f"{areg.host}/tes": wrong}})
        p = pull("s5d")
        ok(p.returncode == 0, "the longest matching entry wins (REGISTRY/NAMESPACE before REGISTRY)", p.stderr)
        # (a) podman login as root without XDG_RUNTIME_DIR writes /run/containers/0/auth.json
        run0 = f"/run/containers/{os.getuid()}/auth.json"
        saved = open(run0, "rb").read() if os.path.exists(run0) else None
        try:
            write(run0, {"auths": {areg.host: good}})
            noxdg = dict(env)
            noxdg.pop("XDG_RUNTIME_DIR")
            p = pull("s5a", env_=noxdg)
            ok(p.returncode == 0, f"without XDG_RUNTIME_DIR: {run0}", p.stderr)
        finally:
            if saved is None:
                os.unlink(run0)
            else:
                with open(run0, "wb") as f:
                    f.write(saved)
        # (e) --authfile: that file alone (the XDG file's wrong entry is not read), and it must exist
        write(f"{T}/xdg/containers/auth.json", {"auths": {areg.host: wrong}})
        write(f"{T}/given.json", {"auths": {f"{areg.host}/test/img": good}})
        p = pull("s5e", ("--authfile", f"{T}/given.json"))
        ok(p.returncode == 0, "--authfile FILE (an entry for the repository itself)", p.stderr)
        p = pull("s5e2", ("--authfile", f"{T}/missing.json"))
        ok(p.returncode == 2 and "missing.json" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
           "--authfile of a file that is not there: one line, exit 2", p.stderr)
        # (f) --creds USER:PASS over every file; wrong ones are refused
        p = pull("s5f", ("--creds", "alice:s3cret"))
        ok(p.returncode == 0, "--creds USER:PASS", p.stderr)
        p = pull("s5f2", ("--creds", "alice:nope", "--authfile", f"{T}/given.json"))
        ok(p.returncode != 0 and "authenticate" in p.stderr and files(f"{T}/s5f2") == [],
           "--creds wins over --authfile: wrong credentials refused, nothing stored", p.stderr)
        p = subprocess.run([bin_, "import", "--quiet", "--store", f"{T}/s5f3", "--tls-verify=false", "--creds",
                            "alice", f"docker://{areg.host}/test/img:v1"], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        ok(p.returncode == 2 and "no terminal" in p.stderr, "--creds USER without a terminal: asked for, refused",
           p.stderr)
        # (g) credential helpers (Docker's protocol: `docker-credential-NAME get`, the server on stdin):
        # credHelpers for the registry, credsStore (before the file's own entries), a helper that has
        # nothing (then the entries), one that fails, one not on PATH, one named by another user's file
        os.makedirs(f"{T}/helpers")
        with open(f"{T}/helpers/docker-credential-rootasmtest", "w") as f:
            f.write(f"#!/bin/sh\nserver=$(cat)\necho \"$1 $server\" >>{T}/helpers/log\n"
                    f"[ \"$1\" = get ] || exit 2\n"
                    f"if [ \"$server\" = {areg.host} ]; then\n"
                    '  printf \'{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}\' "$server"\n'
                    "else\n  echo 'credentials not found in native keychain'; exit 1\nfi\n")
        with open(f"{T}/helpers/docker-credential-broken", "w") as f:
            f.write("#!/bin/sh\ncat >/dev/null\necho 'the keychain is locked' >&2\nexit 3\n")
        for h in ("rootasmtest", "broken"):
            os.chmod(f"{T}/helpers/docker-credential-{h}", 0o755)
        henv = dict(env, PATH=f"{T}/helpers:" + env.get("PATH", "/usr/bin:/bin"))
        write(f"{T}/xdg/containers/auth.json", {"auths": {areg.host: wrong}, "credHelpers": {areg.host: "rootasmtest"}})
        p = pull("s5g1", env_=henv)
        log = open(f"{T}/helpers/log").read() if os.path.exists(f"{T}/helpers/log") else ""
        ok(p.returncode == 0 and log == f"get {areg.host}\n",
           "credHelpers: the registry's helper asked (get, the registry on stdin), before the file's entry",
           p.stderr + log)
        write(f"{T}/xdg/containers/auth.json", {"credsStore": "rootasmtest"})
        p = pull("s5g2", env_=henv)
        ok(p.returncode == 0, "credsStore: the default helper's credentials", p.stderr)
        # a store with nothing for the registry: the file's entry (the helper says "not found" for another host)
        write(f"{T}/xdg/containers/auth.json", {"credsStore": "rootasmtest", "credHelpers": {"other.example": "broken"},
                                               "auths": {f"{areg.host}/test": good}})
        os.unlink(f"{T}/helpers/log")
        p = pull("s5g3", env_=dict(henv, XDG_RUNTIME_DIR=f"{T}/xdg"))
        ok(p.returncode == 0 and open(f"{T}/helpers/log").read() == f"get {areg.host}\n",
           "credsStore asked first; another registry's credHelpers entry not run", p.stderr)
        write(f"{T}/xdg/containers/auth.json", {"credHelpers": {areg.host: "broken"}})
        p = pull("s5g4", env_=henv)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode != 0 and len(lines) == 1 and "docker-credential-broken" in lines[0] and
           "the keychain is locked" in lines[0] and files(f"{T}/s5g4") == [],
           "a helper that fails: one line with its words, nothing stored", p.stderr)
        write(f"{T}/xdg/containers/auth.json", {"credHelpers": {areg.host: "absent"}})
        p = pull("s5g5", env_=henv)
        ok(p.returncode == 2 and "docker-credential-absent is not on PATH" in p.stderr,
           "a helper that is not there: a usage error naming it", p.stderr)
        write(f"{T}/xdg/containers/auth.json", {"credHelpers": {areg.host: "../../bin/sh"}})
        p = pull("s5g6", env_=henv)
        ok(p.returncode == 2 and "not a helper's name" in p.stderr, "a helper name with a path: refused", p.stderr)
        write(f"{T}/xdg/containers/auth.json", {"credHelpers": {areg.host: "rootasmtest"}})
        os.chown(f"{T}/xdg/containers/auth.json", 1000, 1000)
        p = pull("s5g7", env_=henv)
        ok(p.returncode != 0 and "names a credential helper, and it is uid 1000's" in p.stderr,
           "a helper named by another user's file is not run", p.stderr)
        os.unlink(f"{T}/xdg/containers/auth.json")

        # (h) rootasm login / logout: the file podman login writes, the password checked first
        def login(*extra, password="s3cret\n", env_=None):
            return subprocess.run([bin_, "login", "--tls-verify=false", *extra, areg.host], input=password,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_ or env,
                                  start_new_session=True)
        xauth = f"{T}/xdg/containers/auth.json"
        write(xauth, {"auths": {"other.example:5000": wrong}})
        p = login("-u", "alice", "--password-stdin")
        doc = json.load(open(xauth))
        ok(p.returncode == 0 and p.stdout == "Login Succeeded!\n" and doc["auths"].get(areg.host) == good and
           doc["auths"].get("other.example:5000") == wrong and os.stat(xauth).st_mode & 0o777 == 0o600,
           "login: the registry's entry in $XDG_RUNTIME_DIR/containers/auth.json (0600), the others kept",
           p.stdout + p.stderr + json.dumps(doc))
        p = pull("s5h1")
        ok(p.returncode == 0, "an import with what login kept", p.stderr)
        pp = run("podman", "login", "--tls-verify=false", "--authfile", f"{T}/podman-auth.json", "-u", "alice",
                 "-p", "s3cret", areg.host)
        theirs = json.load(open(f"{T}/podman-auth.json")) if pp.returncode == 0 else {}
        ok(pp.returncode == 0 and theirs.get("auths", {}).get(areg.host) == doc["auths"][areg.host],
           "podman login writes the same entry", pp.stderr + json.dumps(theirs))
        before = open(xauth).read()
        p = login("-u", "alice", "--password-stdin", "--authfile", f"{T}/bad-login.json", password="nope\n")
        lines = p.stderr.strip().splitlines()
        ok(p.returncode != 0 and len(lines) == 1 and areg.host in lines[0] and
           not os.path.exists(f"{T}/bad-login.json") and open(xauth).read() == before,
           "login with a wrong password: one line, nothing written", p.stderr)
        p = login("--password-stdin", env_=dict(env))
        ok(p.returncode == 2 and "no --username given, and no terminal" in p.stderr,
           "login without a user and without a terminal: a usage error", p.stderr)
        p = run(bin_, "logout", areg.host, env=env)
        doc = json.load(open(xauth))
        ok(p.returncode == 0 and areg.host not in doc["auths"] and "other.example:5000" in doc["auths"],
           "logout: the registry's entry gone, the others kept", p.stdout + p.stderr)
        p = run(bin_, "logout", areg.host, env=env)
        ok(p.returncode == 1 and f"not logged in to {areg.host}" in p.stderr, "logout again: not logged in, exit 1",
           p.stderr)
        p = run(bin_, "logout", "--all", env=env)
        ok(p.returncode == 0 and "auths" not in json.load(open(xauth)), "logout --all", p.stderr)
        os.unlink(xauth)
        areg.stop()
        stopped.remove(areg)
        tok.shutdown()

        # 3b. HTTP Basic (htpasswd, bcrypt): the auth file's credentials as they are
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import crypt
            hashed = crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4))	# cost 4: it is checked per request
        except (ImportError, ValueError):
            hashed = None
        if hashed and hashed.startswith("$2"):
            with open(f"{T}/htpasswd", "w") as f:
                f.write(f"alice:{hashed}\n")
            breg = Registry(f"{T}/breg", {"htpasswd": {"realm": "rootasm-test", "path": f"{T}/htpasswd"}})
            stopped.append(breg)
            p = run("skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--dest-creds", "alice:s3cret",
                    f"oci:{T}/img:v1", f"docker://{breg.host}/test/img:v1")
            with open(f"{T}/auth-basic.json", "w") as f:
                json.dump({"auths": {breg.host: {"auth": base64.b64encode(b"alice:s3cret").decode()}}}, f)
            q = run(bin_, "import", "--quiet", "--store", f"{T}/s6", "--tls-verify=false",
                    f"docker://{breg.host}/test/img:v1", env=dict(env, REGISTRY_AUTH_FILE=f"{T}/auth-basic.json"))
            ok(p.returncode == 0 and q.returncode == 0 and q.stdout.strip().endswith(os.path.basename(ref_layout)),
               "HTTP Basic (htpasswd) with credentials from the auth file", p.stderr + q.stdout + q.stderr)
            breg.stop()
            stopped.remove(breg)
        else:
            print("ok - # SKIP HTTP Basic: no bcrypt in this Python")

        # 3c. TLS as containers-certs.d(5): a registry with a certificate of its own CA that asks for a
        # client certificate; --cert-dir, /etc/containers/certs.d/HOST:PORT, a client cert without its key
        c = f"{T}/tls"
        os.makedirs(c)
        with open(f"{c}/san", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        for cmd in (f"req -x509 -newkey rsa:2048 -nodes -keyout {c}/ca.key -out {c}/ca.crt -days 1 -subj /CN=rootasm-ca",
                    f"req -newkey rsa:2048 -nodes -keyout {c}/srv.key -out {c}/srv.csr -subj /CN=127.0.0.1",
                    f"x509 -req -in {c}/srv.csr -CA {c}/ca.crt -CAkey {c}/ca.key -CAcreateserial -out {c}/srv.crt "
                    f"-days 1 -extfile {c}/san",
                    f"req -newkey rsa:2048 -nodes -keyout {c}/client.key -out {c}/client.csr -subj /CN=client",
                    f"x509 -req -in {c}/client.csr -CA {c}/ca.crt -CAkey {c}/ca.key -CAcreateserial "
                    f"-out {c}/client.cert -days 1"):
            run("openssl", *cmd.split(), check=True)
        certs = f"{T}/certs"
        os.makedirs(certs)
        for n in ("ca.crt", "client.cert", "client.key"):
            shutil.copy(f"{c}/{n}", f"{certs}/{n}")
        treg = Registry(f"{T}/treg", tls={"certificate": f"{c}/srv.crt", "key": f"{c}/srv.key",
                                          "clientcas": [f"{c}/ca.crt"]})
        stopped.append(treg)
        p = run("skopeo", "copy", "--quiet", "--dest-cert-dir", certs, f"oci:{T}/img:v1",
                f"docker://{treg.host}/test/img:v1")
        ok(p.returncode == 0, "skopeo copy to a TLS registry with a client certificate", p.stderr)

        def tpull(store, extra=()):
            return run(bin_, "import", "--quiet", "--store", f"{T}/{store}", *extra,
                       f"docker://{treg.host}/test/img:v1", env=env)

        p = tpull("t1")
        ok(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and files(f"{T}/t1") == [],
           "a registry whose CA is not trusted: refused in one line, nothing stored", p.stderr)
        p = tpull("t2", ("--cert-dir", certs))
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)),
           "--cert-dir: its *.crt trusted, its client.cert/client.key presented", p.stderr)
        # /etc/containers/certs.d/HOST:PORT: a copy of /etc/containers over it, in this test's mount namespace
        etc = f"{T}/etc-containers"
        shutil.copytree("/etc/containers", etc, symlinks=True)
        os.makedirs(f"{etc}/certs.d/{treg.host}")
        for n in ("ca.crt", "client.cert", "client.key"):
            shutil.copy(f"{c}/{n}", f"{etc}/certs.d/{treg.host}/{n}")
        run("mount", "--bind", etc, "/etc/containers", check=True)
        try:
            p = tpull("t3")
            ok(p.returncode == 0, f"/etc/containers/certs.d/{treg.host}: used without an option", p.stderr)
            p = run(bin_, "inspect", f"docker://{treg.host}/test/img:v1", env=env)
            ok(p.returncode == 0 and json.loads(p.stdout).get("Layers"), "inspect over it too", p.stderr)
            os.unlink(f"{etc}/certs.d/{treg.host}/client.key")
            p = tpull("t4")
            ok(p.returncode == 2 and "client.cert" in p.stderr and "without its key" in p.stderr and
               len(p.stderr.strip().splitlines()) == 1, "a client certificate without its key: one line, exit 2",
               p.stderr)
            os.unlink(f"{etc}/certs.d/{treg.host}/client.cert")
            p = tpull("t5")
            ok(p.returncode != 0 and files(f"{T}/t5") == [],
               "the CA alone, where the registry asks for a client certificate: refused", p.stderr)
        finally:
            run("umount", "/etc/containers")
        treg.stop()
        stopped.remove(treg)

        # 4. a registry that lies
        liar = serve(liar_handler(f"{T}/img"))
        lhost = f"127.0.0.1:{liar.server_address[1]}"
        for case, words, code in [("baddigest", "its sha256 is", 2), ("truncated", "truncated", 2),
                                  ("loop", "redirect", 2), ("huge", "larger than 4194304", 2),
                                  ("badconfig", "its sha256 is", 2),
                                  ("endless", "more than its descriptor's", 2)]:
            store = f"{T}/lie-{case}"
            t0 = time.monotonic()
            p = run(bin_, "import", "--quiet", "--store", store, "--tls-verify=false",
                    f"docker://{lhost}/{case}:v1", env=env)
            dt = time.monotonic() - t0
            lines = p.stderr.strip().splitlines()
            ok(p.returncode == code and len(lines) == 1 and f"docker://{lhost}/{case}:v1" in lines[0] and
               words in lines[0] and files(store) == [],
               f"a registry that lies ({case}): exit {code}, one line, nothing stored ({dt:.1f} s)",
               f"exit {p.returncode}: {p.stderr} files: {files(store)}")
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-drop", "--tls-verify=false",
                f"docker://{lhost}/drop:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)) and
           records(f"{T}/lie-drop") == records(f"{T}/ref"),
           "a connection dropped mid-layer: the download resumes (Range) and the image is the same",
           p.stdout + p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-slow", "--tls-verify=false",
                f"docker://{lhost}/slow:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)),
           "a slow registry (32 bytes per 50 ms): slow is not dead", p.stdout + p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-flaky", "--tls-verify=false",
                f"docker://{lhost}/flaky:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)),
           "a connection closed before the manifest's answer: asked again", p.stdout + p.stderr)
        # a manifest the registry does not have: the error names what was asked of whom, not the tag alone
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-none", "--tls-verify=false",
                f"docker://{lhost}/nosuch/repo:v9", env=env)
        ok(p.returncode == 2 and f"{lhost}/nosuch/repo:v9: not found (HTTP 404)" in p.stderr,
           "a manifest not there: the error names HOST/REPO:TAG", p.stderr)
        # a registry that drips, below its patience (ROOTASM_REGISTRY_TIMEOUT=2): a manifest that is not all there
        # after 2 s, a layer below 16 KiB/s after 2 s of its download, refused then, not when they end (minutes)
        penv = dict(env, ROOTASM_REGISTRY_TIMEOUT="2")
        for case, words in [("dripdoc", "v1: not all of it within 2 s, its tries together"),
                            ("dripblob", "slower than 4096 bytes/s after 2 s, its tries together"),
                            ("frontdrip", "4 tries")]:
            store = f"{T}/lie-{case}"
            t0 = time.monotonic()
            try:
                p = subprocess.run([bin_, "import", "--quiet", "--store", store, "--tls-verify=false",
                                    f"docker://{lhost}/{case}:v1"], capture_output=True, text=True, env=penv,
                                   timeout=40)
                res = (p.returncode, p.stderr)
            except subprocess.TimeoutExpired:
                res = (None, "still running after 40 s")
            dt = time.monotonic() - t0
            lines = res[1].strip().splitlines()
            # (the dripping document and layer: the patience, 2 s; the front-loaded one: 4 tries, each 2 s below the floor)
            ok(res[0] == 1 and len(lines) == 1 and words in lines[0] and f"docker://{lhost}/{case}:v1" in lines[0]
               and dt < (25 if case == "frontdrip" else 7) and files(store) == [],
               f"a registry that drips ({case}): refused after its patience ({dt:.1f} s), one line, nothing stored",
               f"{res} files: {files(store)}")
        # a document's token: asked within the document's patience (6 s), not a patience of its own after a
        # 401 that took 5 s (11 s then)
        store = f"{T}/lie-driptoken"
        t0 = time.monotonic()
        p = run(bin_, "import", "--quiet", "--store", store, "--tls-verify=false", f"docker://{lhost}/driptoken:v1",
                env=dict(env, ROOTASM_REGISTRY_TIMEOUT="6"))
        dt = time.monotonic() - t0
        ok(p.returncode == 1 and p.stderr.count("\n") == 1 and "within 6 s" in p.stderr and dt < 8.5 and
           files(store) == [], f"a 401 that took 5 s, then a token that drips: refused at the manifest's patience "
           f"({dt:.1f} s of 6), one line, nothing stored", p.stderr)
        # (a registry of its own: the first's dropped each layer once already)
        liar2 = serve(liar_handler(f"{T}/img"))
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-drop2", "--tls-verify=false",
                f"docker://127.0.0.1:{liar2.server_address[1]}/drop:v1", env=dict(env, ROOTASM_REGISTRY_TIMEOUT="2"))
        liar2.shutdown()
        ok(p.returncode == 0 and records(f"{T}/lie-drop2") == records(f"{T}/ref"),
           "with a patience of 2 s, a registry that answers at once: imported (resumed too)", p.stdout + p.stderr)
        p = run(bin_, "import", "--quiet", "--store", f"{T}/lie-badenv", "--tls-verify=false",
                f"docker://{lhost}/drop:v1", env=dict(env, ROOTASM_REGISTRY_TIMEOUT="1m"))
        ok(p.returncode == 2 and p.stderr.count("\n") == 1 and "ROOTASM_REGISTRY_TIMEOUT" in p.stderr and
           "'1m' is not a number of seconds" in p.stderr and files(f"{T}/lie-badenv") == [],
           "ROOTASM_REGISTRY_TIMEOUT=1m: one line naming it, exit 2", (p.returncode, p.stderr))
        liar.shutdown()
        # a registry that redirects its blob to another origin, which answers 401 with a realm of its own: the
        # registry's credentials go to the registry alone (not to that realm), and its signed URL is not quoted
        seen = []
        sink = serve(sink_handler(seen))
        shost = f"127.0.0.1:{sink.server_address[1]}"
        red = serve(liar_handler(f"{T}/img", f"http://{shost}"))
        p = run(bin_, "import", "--quiet", "--store", f"{T}/elsewhere", "--tls-verify=false", "--creds", "alice:s3cret",
                f"docker://127.0.0.1:{red.server_address[1]}/elsewhere:v1", env=env)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode != 0 and len(lines) == 1 and f"HTTP 401 from http://{shost}, where the registry redirected"
           in lines[0] and "sig=" not in lines[0] and seen and not any(seen) and files(f"{T}/elsewhere") == [],
           "a 401 of another origin the registry redirected to: not answered with the registry's credentials "
           "(nothing sent there but the redirected request)", (p.returncode, p.stderr, seen))
        red.shutdown()
        # the same for its ping: /v2/ redirected there
        seen.clear()
        red = serve(redirect_handler(f"http://{shost}"))
        p = run(bin_, "import", "--quiet", "--store", f"{T}/elsewhere2", "--tls-verify=false", "--creds",
                "alice:s3cret", f"docker://127.0.0.1:{red.server_address[1]}/x:v1", env=env)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode != 0 and len(lines) == 1 and f"GET /v2/: HTTP 401 from http://{shost}, where the registry "
           "redirected" in lines[0] and seen and not any(seen),
           "the registry's ping redirected to another origin that answers 401: not answered either",
           (p.returncode, p.stderr, seen))
        red.shutdown()
        sink.shutdown()

        # 5. a layer that is a compression bomb: 128 MiB of zeros in about 130 KB of gzip
        bsize = make_bomb(f"{T}/bomb", 128)
        bomb = serve(liar_handler(f"{T}/bomb"))
        bhost = f"127.0.0.1:{bomb.server_address[1]}"
        p = run(bin_, "import", "--quiet", "--store", f"{T}/bomb-s1", "--tls-verify=false",
                f"docker://{bhost}/bomb:v1", env=env)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 2 and len(lines) == 1 and "compression bomb" in lines[0] and
           f"docker://{bhost}/bomb@sha256:" in lines[0] and files(f"{T}/bomb-s1") == [],
           f"a gzip bomb ({bsize} bytes of layer, 128 MiB unpacked): refused, exit 2, one line, nothing stored",
           f"exit {p.returncode}: {p.stderr} files: {files(f'{T}/bomb-s1')}")
        # a bigger bomb (512 MiB) under a layer size claimed 1 GiB (a limit of 64 GiB by that word), the rest never
        # sent: refused by what arrived (at most 256 MiB and 64 times the bytes received are staged)
        make_bomb(f"{T}/bomb512", 512)
        bomb512 = serve(liar_handler(f"{T}/bomb512"))
        t0 = time.monotonic()
        p = run(bin_, "import", "--quiet", "--store", f"{T}/bomb-s3", "--tls-verify=false",
                f"docker://127.0.0.1:{bomb512.server_address[1]}/claim:v1", env=env)
        bomb512.shutdown()
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 2 and len(lines) == 1 and "more than 256 MiB and 64 times the" in lines[0] and
           "bytes of its blob received" in lines[0] and files(f"{T}/bomb-s3") == [],
           f"a 512 MiB bomb under a claimed size of 1 GiB: refused by the bytes received, before it fills the stage "
           f"({time.monotonic() - t0:.1f} s)",
           f"exit {p.returncode}: {p.stderr} files: {files(f'{T}/bomb-s3')}")
        # an honest layer that begins with 70 MiB of zeros (then 8 MiB of random bytes: 9 times its blob in all)
        make_bomb(f"{T}/front", 70, tail=8)
        front = serve(liar_handler(f"{T}/front"))
        p = run(bin_, "import", "--quiet", "--store", f"{T}/front-s", "--tls-verify=false",
                f"docker://127.0.0.1:{front.server_address[1]}/front:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(".layout.json"),
           "an honest layer from a registry that begins with 70 MiB of zeros: imported", p.stdout + p.stderr)
        front.shutdown()
        p = run(bin_, "import", "--quiet", "--store", f"{T}/bomb-s2", "--tls-verify=false", "--max-expansion", "4000",
                f"docker://{bhost}/bomb:v1", env=env)
        ok(p.returncode == 0 and p.stdout.strip().endswith(".layout.json"),
           "the same layer with --max-expansion 4000: imported", p.stdout + p.stderr)
        bomb.shutdown()
        # 6. registries.conf(5): short names, aliases, mirrors, blocked registries
        reg6 = Registry(f"{T}/reg")	# the first registry again (its storage kept)
        stopped.append(reg6)
        rc = f"{T}/rc/registries.conf"
        dropins = f"{env['HOME']}/.config/containers/registries.conf.d"
        os.makedirs(f"{T}/rc")
        os.makedirs(dropins)
        dead = f"127.0.0.1:{free_port()}"
        renv = dict(env, CONTAINERS_REGISTRIES_CONF=rc)

        def conf(text, dropin=None):
            with open(rc, "w") as f:
                f.write(text)
            for n in os.listdir(dropins):
                os.unlink(os.path.join(dropins, n))
            if dropin:
                with open(f"{dropins}/50-test.conf", "w") as f:
                    f.write(dropin)

        def rimport(store, ref, extra=()):
            return run(bin_, "import", "--quiet", "--store", f"{T}/{store}", *extra, ref, env=renv)

        insecure = f'[[registry]]\nlocation = "{reg6.host}"\ninsecure = true\n'
        conf(f'unqualified-search-registries = ["{reg6.host}"]\n' + insecure)
        p = rimport("rc1", "docker://test/img:v1")
        ok(p.returncode == 0 and p.stdout.strip().endswith(os.path.basename(ref_layout)) and
           f"rootasm: import: docker://test/img:v1 resolved to docker://{reg6.host}/test/img:v1 "
           f"(unqualified-search-registries in {rc})" in p.stderr,
           "a short name: the search registry's, said on stderr (and insecure = true: plain HTTP)", p.stderr)
        p = run(bin_, "--json", "import", "--quiet", "--store", f"{T}/rc1", "docker://test/img:v1", env=renv)
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        ok(j.get("source") == f"docker://{reg6.host}/test/img:v1" and j.get("name") == f"{reg6.host}/test/img:v1",
           "--json: the source pulled, and the image named by it", p.stdout + p.stderr)
        conf(f'unqualified-search-registries = ["{dead}", "{reg6.host}"]\n' + insecure)
        p = rimport("rc2", "docker://test/img:v1")
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 2 and len(lines) == 1 and "short-name-mode is enforcing" in lines[0] and
           files(f"{T}/rc2") == [], "two search registries, enforcing (the default): refused, one line", p.stderr)
        conf(f'short-name-mode = "permissive"\nunqualified-search-registries = ["{dead}", "{reg6.host}"]\n' + insecure)
        p = rimport("rc3", "docker://test/img:v1")
        ok(p.returncode == 0 and f"resolved to docker://{reg6.host}/test/img:v1" in p.stderr,
           "permissive: the first search registry down, the second's", p.stderr)
        conf(insecure, f'# a drop-in\n[aliases]\n  "myimg" = "{reg6.host}/test/img"\n')
        p = rimport("rc4", "docker://myimg:v1")
        ok(p.returncode == 0 and f"resolved to docker://{reg6.host}/test/img:v1 (an alias in {dropins}/50-test.conf)"
           in p.stderr, "an alias of a drop-in (registries.conf.d)", p.stderr)
        conf(f'[[registry]]\nprefix = "mirrored.example/test"\nlocation = "{dead}/test"\n'
             f'[[registry.mirror]]\nlocation = "{reg6.host}/test"\ninsecure = true\n'
             '[[registry]]\nprefix = "blocked.example"\nblocked = true\n')
        p = run(bin_, "--json", "import", "--quiet", "--store", f"{T}/rc5", "docker://mirrored.example/test/img:v1",
                env=renv)
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        ok(j.get("name") == "mirrored.example/test/img:v1" and j.get("manifest") == mine.get("Digest"),
           "a mirror serves the image, which keeps its own name (the location is down)", p.stdout + p.stderr)
        p = rimport("rc6", "docker://blocked.example/test/img:v1")
        ok(p.returncode != 0 and "blocked by registries.conf" in p.stderr and files(f"{T}/rc6") == [],
           "a blocked registry: refused", p.stderr)
        conf(f'[[registry]]\nprefix = "mirrored.example/test"\nlocation = "{dead}/test"\n'
             f'[[registry.mirror]]\nlocation = "{reg6.host}/test"\ninsecure = true\npull-from-mirror = "digest-only"\n')
        p = rimport("rc7", "docker://mirrored.example/test/img:v1")
        ok(p.returncode != 0 and f"port {dead.split(':')[1]}" in p.stderr and "tried before" not in p.stderr and
           files(f"{T}/rc7") == [],
           "pull-from-mirror = digest-only: a tag is pulled from the location only", p.stderr)
        p = rimport("rc7", f"docker://mirrored.example/test/img@{mine.get('Digest')}")
        ok(p.returncode == 0, "... and a digest from the mirror", p.stderr)
        conf('unqualified-search-registries = ["a"\n[[registry]\n')
        p = rimport("rc8", "docker://test/img:v1")
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 2 and len(lines) == 1 and f"{rc}: " in lines[0] and "line 2" in lines[0],
           "a broken registries.conf: one line naming the file and the line", p.stderr)
        reg6.stop()
        stopped.remove(reg6)
        print(f"# import oci: {t_oci:.2f} s; skopeo copy oci: -> docker-registry {t_push:.2f} s; "
              f"import docker:// {t_pull:.2f} s (4 layers, {os.path.getsize(f'{T}/l3.tar') >> 20} MiB tar); "
              f"whole test {time.monotonic() - t_all:.1f} s")
    finally:
        for r in stopped:
            r.stop()
        for m in ("mref", "m1"):
            subprocess.run(["umount", "-R", f"{T}/{m}"], stderr=subprocess.DEVNULL)
        shutil.rmtree(T, ignore_errors=True)
    tap.plan()
    sys.exit(1 if tap.failed else 0)


if __name__ == "__main__":
    main()
