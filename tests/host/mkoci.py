#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Make small OCI image layouts for the host tests.

  mkoci.py layout OUT [--tag T] [--nested] [--docker] [--layer-type N=MT] [--config JSON] TAR[:none|:gzip|:zstd] ...
      an image layout at OUT whose layers are the given uncompressed tar files
      (bottom first), compressed as asked; --nested puts the manifest behind a
      nested index (with a second, foreign-architecture manifest beside it);
      --docker writes Docker's schema 2 media types (manifest, manifest list,
      config, layers: what skopeo --format v2s2, crane and ctr export write);
      --layer-type gives layer N (from 0) the media type MT; --config JSON is
      the image config's "config" (Env, Entrypoint, Cmd, WorkingDir, User;
      default {"Cmd": ["/bin/sh"]}).
  mkoci.py docker-archive OUT.tar [--image TAGS CONFIG TAR,TAR...]... [--gzip] [--bad-diffid]
      what `docker save` writes: for each image (TAGS: comma-separated
      RepoTags, or "-" for none; CONFIG: its "config" as JSON; its layer tars),
      ID/layer.tar per layer (a layer two images share is written once, the
      second a symlink to the first, as Docker before 25 did), CONFIGHEX.json,
      manifest.json and repositories; --gzip compresses the whole archive.
  mkoci.py hostile KIND OUT.tar
      a tar that a layer must not be: dotdot, absolute, symlink-then-file,
      hardlink-outside, huge-sparse, overlay-xattr, reserved-whiteout;
      hardlink-data, xattr-bomb, symlink-bomb, deep-dirs, skip-bomb (what a layer
      makes beyond its limit: a hard link's data, xattrs, link targets,
      directories paths imply, a tar stream of skipped data);
      cut-padding (ends after the last entry's data: accepted, as umoci
      writes it), cut-data (ends inside it: refused); user-overlay-xattr.
  mkoci.py case KIND OUT.tar
      a layer tar for a fidelity case, a lower ("-lower") and an upper layer:
      own-whiteout-lower/own-whiteout (a whiteout of a file of its own layer
      and of a lower one), whiteout-then-dir (a whiteout, then a directory of
      that name), implied-lower/implied (directories an upper layer implies by
      its paths alone), hardlink-lower/hardlink (a hard link to a lower
      layer's file).
"""
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile


def blob(out, data):
    d = hashlib.sha256(data).hexdigest()
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}


OCI = {"index": "application/vnd.oci.image.index.v1+json", "manifest": "application/vnd.oci.image.manifest.v1+json",
       "config": "application/vnd.oci.image.config.v1+json", "layer": "application/vnd.oci.image.layer.v1.tar",
       "gzip": "+gzip", "zstd": "+zstd"}
DOCKER = {"index": "application/vnd.docker.distribution.manifest.list.v2+json",
          "manifest": "application/vnd.docker.distribution.manifest.v2+json",
          "config": "application/vnd.docker.container.image.v1+json",
          "layer": "application/vnd.docker.image.rootfs.diff.tar", "gzip": ".gzip", "zstd": ".zstd"}


def compress(data, how, mt):
    if how == "gzip":
        return gzip.compress(data, mtime=0), mt["layer"] + mt["gzip"]
    if how == "zstd":
        z = subprocess.run(["zstd", "-q", "-c", "-3"], input=data, stdout=subprocess.PIPE, check=True).stdout
        return z, mt["layer"] + mt["zstd"]
    return data, mt["layer"]


def layout(args):
    out, tag, nested, bad, tars, mt, types, run = args[0], None, False, False, [], OCI, {}, {"Cmd": ["/bin/sh"]}
    i = 1
    while i < len(args):
        if args[i] == "--tag":
            tag = args[i + 1]
            i += 2
        elif args[i] == "--config":
            run = json.loads(args[i + 1])
            i += 2
        elif args[i] == "--docker":
            mt = DOCKER
            i += 1
        elif args[i] == "--layer-type":
            n, _, t = args[i + 1].partition("=")
            types[int(n)] = t
            i += 2
        elif args[i] == "--bad-diffid":
            bad = True
            i += 1
        elif args[i] == "--nested":
            nested = True
            i += 1
        else:
            tars.append(args[i])
            i += 1
    os.makedirs(out, exist_ok=True)
    layers, diff_ids = [], []
    for t in tars:
        path, _, how = t.partition(":")
        data = open(path, "rb").read()
        diff_ids.append("sha256:" + hashlib.sha256(data).hexdigest())
        c, lt = compress(data, how or "none", mt)
        layers.append(dict(mediaType=types.get(len(layers), lt), **blob(out, c)))
    if bad:
        diff_ids[0] = "sha256:" + "0" * 64
    cfg = {"architecture": "amd64", "os": "linux", "config": run,
           "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    cdesc = dict(mediaType=mt["config"], **blob(out, json.dumps(cfg).encode()))
    man = {"schemaVersion": 2, "mediaType": mt["manifest"], "config": cdesc, "layers": layers}
    mdesc = dict(mediaType=mt["manifest"], **blob(out, json.dumps(man).encode()))
    if nested:
        mdesc["platform"] = {"architecture": "amd64", "os": "linux"}
        other = dict(mediaType=mt["manifest"], **blob(out, json.dumps(dict(man, layers=[])).encode()))
        other["platform"] = {"architecture": "s390x", "os": "linux"}
        idx = {"schemaVersion": 2, "mediaType": mt["index"], "manifests": [other, mdesc]}
        mdesc = dict(mediaType=mt["index"], **blob(out, json.dumps(idx).encode()))
    if tag:
        mdesc["annotations"] = {"org.opencontainers.image.ref.name": tag}
    top = {"schemaVersion": 2, "manifests": [mdesc]}
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(top, f)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)


def hostile(kind, out):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        def add(name, data=b"x", **kw):
            ti = tarfile.TarInfo(name)
            for k, v in kw.items():
                setattr(ti, k, v)
            if ti.type == tarfile.REGTYPE:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            else:
                t.addfile(ti)
        if not kind.startswith("case:"):
            add("ok", b"fine")
        if kind == "case:own-whiteout-lower":
            add("d", type=tarfile.DIRTYPE, mode=0o755)
            add("d/a", b"lower a\n")
            add("d/low", b"low\n")
        elif kind == "case:own-whiteout":
            add("d", type=tarfile.DIRTYPE, mode=0o755)
            add("d/a", b"mine\n")
            add("d/.wh.a")
            add("d/.wh.low")
        elif kind == "case:whiteout-then-dir":
            add(".wh.d")
            add("d", type=tarfile.DIRTYPE, mode=0o711)
            add("d/new", b"new\n")
        elif kind == "case:implied-lower":
            ti = tarfile.TarInfo("etc")
            ti.type, ti.mode, ti.uid, ti.gid = tarfile.DIRTYPE, 0o750, 0, 42
            ti.pax_headers = {"SCHILY.xattr.user.lower": "kept"}
            t.addfile(ti)
            add("etc/a", b"a\n")
            add("usr", type=tarfile.DIRTYPE, mode=0o755)
            add("usr/lib", type=tarfile.DIRTYPE, mode=0o700, uid=7, gid=8)
            add("./", type=tarfile.DIRTYPE, mode=0o751, uid=0, gid=5)
        elif kind == "case:implied":
            add("etc/x", b"x\n")
            add("usr/lib/new/y", b"y\n")
        elif kind == "case:hardlink-lower":
            add("bin", type=tarfile.DIRTYPE, mode=0o755)
            ti = tarfile.TarInfo("bin/tool")
            ti.mode, ti.uid, ti.gid, ti.size = 0o4751, 3, 4, 5
            ti.pax_headers = {"SCHILY.xattr.user.t": "tv"}
            t.addfile(ti, io.BytesIO(b"tool\n"))
        elif kind == "case:hardlink":
            add("bin", type=tarfile.DIRTYPE, mode=0o755)
            add("bin/alias", type=tarfile.LNKTYPE, linkname="bin/tool")
            add("other/alias2", type=tarfile.LNKTYPE, linkname="bin/tool")
        elif kind == "user-overlay-xattr":
            ti = tarfile.TarInfo("redirected")
            ti.type = tarfile.DIRTYPE
            ti.pax_headers = {"SCHILY.xattr.user.overlay.redirect": "/etc"}
            t.addfile(ti)
        elif kind == "dotdot":
            add("a/../../escaped")
        elif kind == "absolute":
            add("/etc/escaped")
        elif kind == "symlink-then-file":
            add("link", type=tarfile.SYMTYPE, linkname="/tmp")
            add("link/escaped")
        elif kind == "symlink-dir-then-file":
            add("d", type=tarfile.DIRTYPE, mode=0o755)
            add("d/link", type=tarfile.SYMTYPE, linkname="../..")
            add("d/link/escaped")
        elif kind == "hardlink-outside":
            add("hl", type=tarfile.LNKTYPE, linkname="../../etc/passwd")
        elif kind == "hardlink-absent":
            add("hl", type=tarfile.LNKTYPE, linkname="etc/passwd")
        elif kind == "huge-sparse":
            # a PAX 1.0 sparse file claiming 1 TiB of (apparent) size with 512 bytes of data
            ti = tarfile.TarInfo("GNUSparseFile.0/big")
            ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "big",
                              "GNU.sparse.realsize": str(1 << 40)}
            data = b"1\n0\n512\n".ljust(512, b"\0") + b"y" * 512
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        elif kind == "hardlink-data":
            # a pax hard link that carries data (80 MiB of zeros): the same inode's, counted as a file's
            add("a", b"")
            ti = tarfile.TarInfo("b")
            ti.type, ti.linkname, ti.size = tarfile.LNKTYPE, "a", 80 << 20
            ti.pax_headers = {"comment": "a hard link with data"}
            t.addfile(ti, io.BytesIO(bytes(80 << 20)))
        elif kind == "xattr-bomb":
            # 600 files, each with two xattrs of about 64 KB: 77 MB in kernel memory of the stage's tmpfs
            for i in range(600):
                ti = tarfile.TarInfo(f"f{i}")
                ti.pax_headers = {f"SCHILY.xattr.trusted.x{j}": f"{i:08d}{j:04d}" + "A" * 64000 for j in range(2)}
                t.addfile(ti, io.BytesIO(b""))
        elif kind == "symlink-bomb":
            # 17000 symbolic links with targets of 4000 bytes: 68 MB
            for i in range(17000):
                add(f"s{i}", type=tarfile.SYMTYPE, linkname=f"{i:08d}/" + "a" * 3990)
        elif kind == "deep-dirs":
            # 200 empty files, each 400 directories deep: 80000 directories their paths imply, in a few KB
            for i in range(200):
                add(f"d{i}/" + "a/" * 400 + "f", b"")
        elif kind == "skip-bomb":
            pass                    # (below: a FIFO whose header says it has 80 MiB of data, which follow)
        elif kind == "overlay-xattr":
            ti = tarfile.TarInfo("redirected")
            ti.type = tarfile.DIRTYPE
            ti.pax_headers = {"SCHILY.xattr.trusted.overlay.redirect": "/etc"}
            t.addfile(ti)
        elif kind == "reserved-whiteout":
            add(".wh..wh.plnk")
        elif kind in ("cut-padding", "cut-data"):
            pass
        else:
            sys.exit("unknown kind " + kind)
    data = buf.getvalue()
    if kind == "skip-bomb":
        ti = tarfile.TarInfo("fifo")
        ti.type = tarfile.FIFOTYPE
        h = bytearray(ti.tobuf(format=tarfile.USTAR_FORMAT))
        h[124:136] = b"%011o\0" % (80 << 20)
        h[148:156] = b"        "
        h[148:156] = b"%06o\0 " % sum(h)
        data = data[:-1024] + bytes(h) + bytes(80 << 20) + bytes(1024)
    if kind == "cut-padding":
        data = data[:512 + 4]      # "ok": its header and its 4 bytes, no padding, no end blocks
    elif kind == "cut-data":
        data = data[:512 + 2]      # in the middle of its data
    open(out, "wb").write(data)


def docker_archive(args):
    out, images, gz, bad, i = args[0], [], False, False, 1
    while i < len(args):
        if args[i] == "--image":
            images.append((args[i + 1], json.loads(args[i + 2]), args[i + 3].split(",")))
            i += 4
        elif args[i] == "--gzip":
            gz = True
            i += 1
        elif args[i] == "--bad-diffid":
            bad = True
            i += 1
        else:
            sys.exit("docker-archive: unknown argument " + args[i])
    buf = io.BytesIO()
    tf = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)

    def add(name, data=None, link=None):
        ti = tarfile.TarInfo(name)
        ti.mtime = 0
        if link is not None:
            ti.type, ti.linkname = tarfile.SYMTYPE, link
            tf.addfile(ti)
        else:
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))

    written, manifest, repos = {}, [], {}
    for tags, run, tars in images:
        diff_ids, names = [], []
        for t in tars:
            data = open(t, "rb").read()
            h = hashlib.sha256(data).hexdigest()
            diff_ids.append("sha256:" + h)
            lid = hashlib.sha256((t + str(len(names))).encode() + str(len(manifest)).encode()).hexdigest()
            if h in written:
                tinfo = tarfile.TarInfo(lid)
                tinfo.type = tarfile.DIRTYPE
                tf.addfile(tinfo)
                add(lid + "/layer.tar", link="../" + written[h] + "/layer.tar")
            else:
                tinfo = tarfile.TarInfo(lid)
                tinfo.type = tarfile.DIRTYPE
                tf.addfile(tinfo)
                add(lid + "/VERSION", b"1.0")
                add(lid + "/layer.tar", data)
                written[h] = lid
            names.append(lid + "/layer.tar")
        if bad:
            diff_ids[0] = "sha256:" + "0" * 64
        cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": run,
                          "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
        chex = hashlib.sha256(cfg).hexdigest()
        add(chex + ".json", cfg)
        rt = [] if tags == "-" else tags.split(",")
        manifest.append({"Config": chex + ".json", "RepoTags": rt, "Layers": names})
        for t in rt:
            n, _, tag = t.rpartition(":")
            repos.setdefault(n, {})[tag] = names[-1].split("/")[0]
    add("manifest.json", json.dumps(manifest).encode())
    add("repositories", json.dumps(repos).encode())
    tf.close()
    data = buf.getvalue()
    with open(out, "wb") as f:
        f.write(gzip.compress(data, mtime=0) if gz else data)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == "layout":
        layout(sys.argv[2:])
    elif sys.argv[1] == "docker-archive":
        docker_archive(sys.argv[2:])
    elif sys.argv[1] == "hostile":
        hostile(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "case":
        hostile("case:" + sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
