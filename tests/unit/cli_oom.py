#!/usr/bin/python3
"""Every command names an allocation failure: `rootasm check` (text and --json)
with its Nth allocation failing, for every N from the first to the last it
makes. Each run must either print the whole plan and exit 0, or print nothing
on stdout and exactly one error on stderr that says memory ran out (a line
with "memory", or one JSON error with errno ENOMEM) and exit 1. Never a
non-zero exit with nothing said, never a crash.

Usage: cli_oom.py ROOTASM_BIN FAULT_PRELOAD_SO   (no privileges needed)
"""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
PRELOAD = os.path.abspath(sys.argv[2])


def run(args, fault_at=None):
    env = dict(os.environ, LD_PRELOAD=PRELOAD)
    env.pop("ROOTASM_DEBUG", None)
    r, w = os.pipe()
    if fault_at is None:
        env["ROOTASM_FAULT_COUNT_FD"] = str(w)
    else:
        env["ROOTASM_FAULT_AT"] = str(fault_at)
    p = subprocess.run([BIN, *args], capture_output=True, env=env, timeout=30, pass_fds=(w,))
    os.close(w)
    count = os.read(r, 64).decode().strip()
    os.close(r)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), count


def check_mode(args, is_json):
    rc, full, err, count = run(args)
    if rc != 0 or err or not full:
        return [f"{' '.join(args)}: the run without faults failed: exit {rc}: {err.strip()}"], 0
    n = int(count)
    problems = []
    for i in range(1, n + 1):
        rc, out, err, _ = run(args, i)
        what = f"{' '.join(args[:-1])} with allocation {i}/{n} failing"
        if rc == 0:
            if out != full or err:
                problems.append(f"{what}: exit 0 but not the whole plan (or something on stderr: {err.strip()!r})")
            continue
        lines = err.rstrip("\n").split("\n") if err else []
        if rc != 1:
            problems.append(f"{what}: exit {rc}, want 0 or 1: {err.strip()!r}")
        elif len(lines) != 1 or not err.endswith("\n"):
            problems.append(f"{what}: exit 1 with {len(lines)} lines on stderr, want one: {err!r}")
        elif out:
            problems.append(f"{what}: exit 1 after part of the plan on stdout")
        elif is_json:
            try:
                e = json.loads(lines[0])["error"]
                if e.get("errname") != "ENOMEM" or "memory" not in e.get("message", ""):
                    problems.append(f"{what}: the JSON error is not about memory: {lines[0]}")
            except (ValueError, KeyError, TypeError):
                problems.append(f"{what}: not one JSON error: {lines[0]!r}")
        elif "memory" not in lines[0]:
            problems.append(f"{what}: the error does not say memory ran out: {lines[0]!r}")
    return problems, n


def main():
    fail = 0
    with tempfile.TemporaryDirectory(prefix="rootasm-oom-") as d:
        for sub in ("l1", "data"):
            os.mkdir(os.path.join(d, sub))
        for f in ("l2.sqfs", "vol.sqfs"):
            open(os.path.join(d, f), "w").close()
        with open(os.path.join(d, "sub.yaml"), "w") as f:
            f.write("version: 1\nlayers:\n  - dir: l1\n")
        lay = os.path.join(d, "l.yaml")
        with open(lay, "w") as f:
            f.write("version: 1\nlayers:\n  - dir: l1\n  - image: l2.sqfs\nupper: { tmpfs: { size: 64M } }\n"
                    "overlay:\n  override_creds: { uid: 0, gid: 0, capabilities: [CAP_SYS_ADMIN, CAP_DAC_OVERRIDE] }\n"
                    "mounts:\n  - { bind: data, target: /srv/data, options: [ro, nosuid] }\n"
                    "  - { tmpfs: /tmp, options: [size=4M, mode=1777] }\n"
                    "  - { image: vol.sqfs, target: /opt/vol }\n  - { layout: sub.yaml, target: /srv/sub }\n"
                    "attributes: [nosuid, nodev]\nexec: { env: [A=1], hostname: box }\n")
        modes = [(["check", lay], False), (["check", "--json", lay], True), (["check", "--offline", lay], False)]
        for i, (args, is_json) in enumerate(modes):
            problems, n = check_mode(args, is_json)
            if problems:
                fail += 1
                print(f"not ok {i + 1} - {' '.join(args[:-1])}: {len(problems)} of {n} runs wrong")
                for p in problems[:10]:
                    print(f"#   {p}")
            else:
                print(f"ok {i + 1} - {' '.join(args[:-1])}: each of its {n} allocations failed in turn")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
