#!/usr/bin/python3
"""Hostile layouts: each case is refused by `rootasm check` with exit status 2
and one first line naming FILE:LINE:COLUMN and the key, in under 1 s of CPU
and wall time and under 64 MiB of peak memory (ru_maxrss of the child).

Usage: hostile_layouts.py ROOTASM_BIN   (no privileges needed)
"""
import os
import re
import resource
import json
import stat
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1])
LIMIT_S = 1.0
LIMIT_KB = 64 * 1024

HDR = "version: 1\nlayers:\n  - dir: l1\n"
# what rootasm never prints raw (escape.c): C0 (but the newline between lines), DEL, C1, bidi, separators
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def deep_flow(n):
    return HDR + "mounts: " + "[" * n + "]" * n + "\n"


def deep_block(n):
    s = HDR + "mounts:\n"
    s += "".join("  " * (i + 1) + "- \n" for i in range(n))
    return s


def billion_laughs():
    s = "version: 1\nx0: &a0 [l, l, l, l, l, l, l, l, l, l]\n"
    for i in range(1, 12):
        s += f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
    s += "layers: *a11\n"
    return s


def many_aliases(n):
    return HDR + "anchor: &a l1\nmounts:\n" + "".join(f"  - {{ bind: *a, target: /m{i} }}\n" for i in range(n))


def ranges(n, width=False):
    r = []
    for i in range(n):
        inside = 4000000000 + i * 10 if width else i * 10
        r.append(f'"{inside}:{1000000000 + i * 10}:10"')
    return HDR.replace("  - dir: l1\n", "  - dir: l1\n    idmap:\n      uids: [" + ", ".join(r) +
                       "]\n      gids: [\"0:1:1\"]\n")


def nested_fanout(d):
    """layout A mounts 4096 x layout B, which mounts 4096 x layout B again."""
    body = "".join(f"  - {{ layout: fan.yaml, target: /f{i} }}\n" for i in range(4096))
    with open(os.path.join(d, "fan.yaml"), "w") as f:
        f.write(HDR + "mounts:\n" + body)
    return HDR + "mounts:\n" + body


# name, text (or a function of the directory), expected line, expected key (prefix after line:col)
CASES = [
    ("deep flow sequences (40k levels)", deep_flow(40000), 4, "syntax"),
    ("deep block sequences", deep_block(100), 36, "syntax"),
    ("billion laughs (refused at its first unknown key)", billion_laughs(), 2, "(top level)"),
    ("more than 1024 aliases", many_aliases(1100), 1030, "syntax"),
    ("a second document", HDR + "---\nversion: 1\n", 4, "syntax"),
    ("JSON string with \\u0000", '{"version": 1, "layers": [{"dir": "l1\\u0000/etc"}]}\n', 1, "layers[0].dir"),
    ("raw NUL byte", HDR.encode() + b"mounts: []\x00\n", 0, None),
    ("control character in a path", HDR + 'mounts:\n  - { tmpfs: "/t\\x01mp" }\n', 5, "mounts[0].tmpfs"),
    ("capability with a newline", HDR + 'upper: {tmpfs: {}}\noverlay:\n  override_creds: { uid: 0, gid: 0, capabilities: ["CAP_CHOWN\\n"] }\n', 6, "overlay.override_creds.capabilities[0]"),
    ("tmpfs size that wraps (16777216t)", HDR + "upper: { tmpfs: { size: 16777216t } }\n", 4, "upper.tmpfs.size"),
    ("tmpfs size beyond 64 bits", HDR + "upper: { tmpfs: { size: 18446744073709551616 } }\n", 4, "upper.tmpfs.size"),
    ("tmpfs size 0 (unlimited)", HDR + "mounts:\n  - { tmpfs: /t, options: [size=0] }\n", 5, "mounts[0].options[0]"),
    ("tmpfs nr_inodes 0", HDR + "upper: { tmpfs: { nr_inodes: 0 } }\n", 4, "upper.tmpfs.nr_inodes"),
    ("tmpfs size 0%", HDR + "upper: { tmpfs: { size: 0% } }\n", 4, "upper.tmpfs.size"),
    ("tmpfs size 101%", HDR + "upper: { tmpfs: { size: 101% } }\n", 4, "upper.tmpfs.size"),
    ("tmpfs size with a sign", HDR + "upper: { tmpfs: { size: +5M } }\n", 4, "upper.tmpfs.size"),
    ("tmpfs mode too large", HDR + "mounts:\n  - { tmpfs: /t, options: [mode=17777] }\n", 5, "mounts[0].options[0]"),
    ("tmpfs empty size=", HDR + "mounts:\n  - { tmpfs: /t, options: [size=] }\n", 5, "mounts[0].options[0]"),
    ("uid 4294967295", HDR + "exec: { uid: 4294967295, gid: 0 }\n", 4, "exec.uid"),
    ("uid in hex", HDR + "exec: { uid: 0x10, gid: 0 }\n", 4, "exec.uid"),
    ("uid with a sign", HDR + "exec: { uid: +5, gid: 0 }\n", 4, "exec.uid"),
    ("uid as a float", HDR + "exec: { uid: 1e3, gid: 0 }\n", 4, "exec.uid"),
    ("idmap range with a fourth field", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:100000:65536:99999"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[0]"),
    ("idmap range with a trailing colon", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:0:1:"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[0]"),
    ("idmap range with two fields", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:0"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[0]"),
    ("idmap range of count 0", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:0:0"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[0]"),
    ("idmap range past 2^32-1", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["4294967295:0:1"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[0]"),
    ("idmap ranges overlapping inside", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:1000:10", "5:2000:10"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[1]"),
    ("idmap ranges overlapping outside", HDR.replace("  - dir: l1\n", '  - dir: l1\n    idmap: { uids: ["0:1000:10", "100:1005:10"], gids: ["0:1:1"] }\n'), 4, "layers[0].idmap.uids[1]"),
    ("341 idmap ranges", ranges(341), 5, "layers[0].idmap.uids"),
    ("340 long idmap ranges past one page", ranges(340, width=True), 5, "layers[0].idmap.uids"),
    ("duplicate key", HDR + "upper: {tmpfs: {}}\nupper: {tmpfs: {}}\n", 5, "(top level)"),
    ("duplicate key in JSON", '{"version": 1, "version": 1, "layers": [{"dir": "l1"}]}\n', 1, "(top level)"),
    ("unknown key", HDR + "mounst: []\n", 4, "(top level)"),
    ("a list as a key", HDR + "? [a]\n: 1\n", 4, "(top level)"),
    ("501 layers", "version: 1\nlayers:\n" + "  - dir: l1\n" * 501, 3, "layers"),
    ("4097 mounts", HDR + "mounts:\n" + "".join(f"  - {{ tmpfs: /t{i} }}\n" for i in range(4097)), 5, "mounts"),
    ("a path of 4096 bytes", HDR + "mounts:\n  - { tmpfs: /" + "a" * 4096 + " }\n", 5, "mounts[0].tmpfs"),
    ("target with ..", HDR + "mounts:\n  - { tmpfs: /a/../../etc }\n", 5, "mounts[0].tmpfs"),
    ("target /", HDR + "mounts:\n  - { tmpfs: //./ }\n", 5, "mounts[0].tmpfs"),
    ("257 groups", HDR + "exec: { groups: [" + ", ".join(["1"] * 257) + "] }\n", 4, "exec.groups"),
    ("unknown capability", HDR + "exec: { capabilities: [CAP_FLY] }\n", 4, "exec.capabilities[0]"),
    ("capability by number", HDR + "exec: { capabilities: [\"21\"] }\n", 4, "exec.capabilities[0]"),
    ("capability with a space", HDR + "exec: { capabilities: [\"cap_chown \"] }\n", 4, "exec.capabilities[0]"),
    ("two propagation options", HDR + "mounts:\n  - { tmpfs: /t, options: [private, shared] }\n", 5, "mounts[0].options[1]"),
    ("empty file", "", 0, ""),
    ("only whitespace", "   \n\n", 0, ""),
    ("null document", "~\n", 1, "(top level)"),
    ("invalid UTF-8 (libyaml checks the whole input first)", HDR.encode() + b"mounts:\n  - { tmpfs: /\xff\xfe }\n", 1, "syntax"),
    ("tab indentation", "version: 1\nlayers:\n\t- dir: l1\n", 3, "syntax"),
    ("alias without an anchor", HDR + "mounts: *nothing\n", 4, "syntax"),
    ("recursive alias", HDR + "mounts: &r [*r]\n", 4, "syntax"),
    ("262145 YAML nodes", HDR + "x: [" + ",".join(["1"] * 262145) + "]\n", 4, "syntax"),
    ("bool spelled yes", HDR + "exec: { privileged: yes }\n", 4, "exec.privileged"),
    ("env without =", HDR + "exec: { env: [FOO] }\n", 4, "exec.env[0]"),
    ("env with a bad name", HDR + "exec: { env: [\"A-B=1\"] }\n", 4, "exec.env[0]"),
    ("hostname with a slash", HDR + "exec: { hostname: a/b }\n", 4, "exec.hostname"),
    ("network nonsense", HDR + "exec: { network: bridge }\n", 4, "exec.network"),
    ("uid without gid", HDR + "exec: { uid: 1 }\n", 4, "exec"),
    ("nested layouts 4096 x 4096 (named in the nested file)", nested_fanout, 5, "mounts", False, "fan.yaml"),
    ("target with ESC", HDR + 'mounts:\n  - { tmpfs: "/t\\e[2Jmp" }\n', 5, "mounts[0].tmpfs"),
    ("bind target with ESC", HDR + 'mounts:\n  - { bind: l1, target: "/a\\x1b]0;x\\x07" }\n', 5, "mounts[0].target"),
    ("target with U+202E (right-to-left override)", HDR + 'mounts:\n  - { tmpfs: "/t\\u202Elmy.exe" }\n', 5, "mounts[0].tmpfs"),
    ("bind target with U+2066 (left-to-right isolate)", HDR + 'mounts:\n  - { bind: l1, target: "/a\\u2066b" }\n', 5, "mounts[0].target"),
    ("target with U+200F (right-to-left mark)", HDR + 'mounts:\n  - { tmpfs: "/a\\u200Fb" }\n', 5, "mounts[0].tmpfs"),
    ("target with U+009B (C1 CSI)", HDR + 'mounts:\n  - { tmpfs: "/a\\u009B2Jb" }\n', 5, "mounts[0].tmpfs"),
    ("target with DEL", HDR + 'mounts:\n  - { tmpfs: "/a\\x7fb" }\n', 5, "mounts[0].tmpfs"),
    ("userns is a FIFO", HDR.replace("  - dir: l1\n", "  - dir: l1\n    idmap: { userns: fifo }\n"), 4, "layers[0].idmap.userns"),
    ("userns is a regular file", HDR.replace("  - dir: l1\n", "  - dir: l1\n    idmap: { userns: plain }\n"), 4, "layers[0].idmap.userns"),
    ("userns is another namespace", HDR.replace("  - dir: l1\n", "  - dir: l1\n    idmap: { userns: /proc/self/ns/mnt }\n"), 4, "layers[0].idmap.userns"),
    ("image is a FIFO", "version: 1\nlayers:\n  - image: fifo\n", 3, "layers[0].image"),
    ("layer dir is a symlink to /etc", "version: 1\nlayers:\n  - dir: etc-link\n", 3, "layers[0].dir"),
]


def run_case(d, i, name, text, line, key, fifo_layout=False, named=None):
    path = os.path.join(d, f"case{i}.yaml")
    if callable(text):
        text = text(d)
    if isinstance(text, str):
        text = text.encode()
    if fifo_layout:
        os.mkfifo(path)
    else:
        with open(path, "wb") as f:
            f.write(text)
    t0 = time.monotonic()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.close(r)
        resource.setrlimit(resource.RLIMIT_CPU, (5, 5))
        os.execv(BIN, [BIN, "check", path])
    os.close(w)
    err = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        err += chunk
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    first = err.decode(errors="replace").split("\n")[0]
    problems = []
    if rc != 2:
        problems.append(f"exit {rc}, want 2")
    want = re.escape(os.path.join(d, named) if named else path) + (r":%d:\d+: " % line if line else r"(:\d+:\d+)?: ")
    if fifo_layout:
        want = r"open layout " + re.escape(path) + r": is a FIFO"
    if not re.match(r"^rootasm: " + want, first):
        problems.append(f"does not name {path}:{line}:COLUMN")
    elif key and not re.match(r"^rootasm: " + want + re.escape(key) + r"[: ]", first):
        problems.append(f"does not name the key {key}")
    # the error names what is wrong without printing it: no control or bidi character reaches the terminal
    if UNSAFE.search(err.decode(errors="replace").rstrip("\n")):
        problems.append("raw control or bidirectional formatting characters in the error")
    cpu = ru.ru_utime + ru.ru_stime
    if wall > LIMIT_S or cpu > LIMIT_S:
        problems.append(f"took {wall:.2f} s wall, {cpu:.2f} s CPU")
    if ru.ru_maxrss > LIMIT_KB:
        problems.append(f"peak memory {ru.ru_maxrss} KiB")
    return problems, first, wall, ru.ru_maxrss


def escaped_host_paths(d):
    """A layout in a directory whose name holds ESC, a C1 CSI and U+202E: the plan (text
    and JSON) and the error lines show them escaped. Returns a list of problems."""
    problems = []
    name = "x\x1b[31mred\u009b2J\u202eevil"
    want = "x\\x1b[31mred\\u009b2J\\u202eevil"
    hd = os.path.join(d, name)
    os.mkdir(hd)
    lay = os.path.join(hd, "l.yaml")
    with open(lay, "w") as f:
        f.write("version: 1\nlayers:\n  - dir: l1\n  - image: base.sqfs\nmounts:\n  - { bind: data, target: /d }\n")

    def run(*args):
        p = subprocess.run([BIN, *args], capture_output=True, timeout=10)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    rc, out, err = run("check", "--offline", lay)
    if rc != 0:
        problems.append(f"check --offline: exit {rc}: {err.strip()}")
    if UNSAFE.search(out.replace("\n", "")):
        problems.append("check --offline printed raw control or bidi characters")
    for what in ("layout " + os.path.join(d, want, "l.yaml"), "dir " + os.path.join(d, want, "l1"),
                 "image " + os.path.join(d, want, "base.sqfs"), "bind " + os.path.join(d, want, "data") + " -> /d"):
        if what not in out:
            problems.append(f"check --offline: no '{what}' in: {out!r}")
    rc, out, err = run("check", "--offline", "--json", lay)
    if rc != 0 or not out.isascii() or "x\\u001b[31mred\\u009b2j\\u202eevil" not in out.lower():
        problems.append(f"check --offline --json: exit {rc}, {out[:300]!r}")
    elif json.loads(out)["layout"] != lay:
        problems.append("check --offline --json: the layout's name does not read back")
    # errors: each line names the path escaped, and nothing raw
    rc, out, err = run("check", lay)
    lines = err.rstrip("\n").split("\n")
    if rc != 2 or len(lines) != 3 or UNSAFE.search(err.rstrip("\n").replace("\n", "")):
        problems.append(f"check: exit {rc}, want 2 and 3 escaped lines: {err!r}")
    elif not all(os.path.join(d, want, "l.yaml") + ":" in line for line in lines):
        problems.append(f"check: the layout file is not named escaped: {err!r}")
    return problems


def main():
    fail = 0
    worst_t, worst_m = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="rootasm-hostile-") as d:
        os.mkdir(os.path.join(d, "l1"))
        os.mkfifo(os.path.join(d, "fifo"))
        open(os.path.join(d, "plain"), "w").close()
        os.symlink("/etc", os.path.join(d, "etc-link"))
        cases = list(CASES) + [("the layout file is a FIFO", "", 0, None, True)]
        for i, c in enumerate(cases):
            name, text, line, key = c[:4]
            problems, first, wall, mem = run_case(d, i, name, text, line, key, len(c) > 4 and c[4],
                                                  c[5] if len(c) > 5 else None)
            worst_t, worst_m = max(worst_t, wall), max(worst_m, mem)
            if problems:
                fail += 1
                print(f"not ok {i + 1} - {name}: {'; '.join(problems)}\n#   {first}")
            else:
                print(f"ok {i + 1} - {name} ({wall * 1000:.0f} ms, {mem // 1024} MiB)")
        problems = escaped_host_paths(d)
        if problems:
            fail += 1
            print(f"not ok {len(cases) + 1} - host paths with ESC, CSI and U+202E escaped: {'; '.join(problems)}")
        else:
            print(f"ok {len(cases) + 1} - host paths with ESC, CSI and U+202E escaped in the plan and errors")
        cases.append(None)
        print(f"{len(cases) - fail} passed, {fail} failed; slowest {worst_t * 1000:.0f} ms, largest {worst_m // 1024} MiB")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
