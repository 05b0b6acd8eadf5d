#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compare two directory trees entry by entry: paths, types, modes (setuid
too), owners, sizes, contents (sha256), symlink targets, device numbers,
xattrs and hard-link groups. Directory sizes and times are not compared (they
are the filesystem's). Prints the differences and a count of what was
compared; exit 1 if anything differs.

  treecmp.py A B
"""
import hashlib
import os
import stat
import sys


def walk(top):
    out = {}
    for root, dirs, files in os.walk(top):
        for name in [""] if root == top else []:
            pass
        for p in [root] + [os.path.join(root, n) for n in dirs + files]:
            rel = os.path.relpath(p, top)
            if rel in out:
                continue
            st = os.lstat(p)
            e = {"type": stat.S_IFMT(st.st_mode), "mode": stat.S_IMODE(st.st_mode), "uid": st.st_uid,
                 "gid": st.st_gid, "ino": (st.st_dev, st.st_ino), "nlink": st.st_nlink}
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for b in iter(lambda: f.read(1 << 20), b""):
                        h.update(b)
                e["size"] = st.st_size
                e["sha256"] = h.hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                e["target"] = os.readlink(p)
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                e["rdev"] = (os.major(st.st_rdev), os.minor(st.st_rdev))
            try:
                names = os.listxattr(p, follow_symlinks=False)
            except OSError:
                names = []
            e["xattrs"] = {n: os.getxattr(p, n, follow_symlinks=False) for n in sorted(names)}
            out[rel] = e
    return out


def groups(tree):
    by = {}
    for rel, e in tree.items():
        if e["type"] == stat.S_IFREG and e["nlink"] > 1:
            by.setdefault(e["ino"], []).append(rel)
    return sorted(sorted(g) for g in by.values() if len(g) > 1)


def main():
    a, b = walk(sys.argv[1]), walk(sys.argv[2])
    diffs = []
    for rel in sorted(set(a) | set(b)):
        if rel not in a or rel not in b:
            diffs.append("%s: only in %s" % (rel, sys.argv[1] if rel in a else sys.argv[2]))
            continue
        for k in ("type", "mode", "uid", "gid", "size", "sha256", "target", "rdev", "xattrs"):
            if a[rel].get(k) != b[rel].get(k):
                diffs.append("%s: %s %r != %r" % (rel, k, a[rel].get(k), b[rel].get(k)))
    ga, gb = groups(a), groups(b)
    if ga != gb:
        diffs.append("hard-link groups differ: %d vs %d" % (len(ga), len(gb)))
    for d in diffs[:50]:
        print("DIFF", d)
    kinds = {}
    for e in a.values():
        kinds[e["type"]] = kinds.get(e["type"], 0) + 1
    names = {stat.S_IFREG: "files", stat.S_IFDIR: "dirs", stat.S_IFLNK: "symlinks", stat.S_IFCHR: "char devices",
             stat.S_IFBLK: "block devices", stat.S_IFIFO: "fifos", stat.S_IFSOCK: "sockets"}
    print("compared %d paths: %s; %d bytes of file content; %d with xattrs (%d xattrs); %d setuid/setgid; "
          "%d hard-link groups; %d differences" % (
              len(a), ", ".join("%d %s" % (n, names.get(t, t)) for t, n in sorted(kinds.items(), key=lambda x: -x[1])),
              sum(e.get("size", 0) for e in a.values()), sum(1 for e in a.values() if e["xattrs"]),
              sum(len(e["xattrs"]) for e in a.values()), sum(1 for e in a.values() if e["mode"] & 0o6000),
              len(ga), len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
