# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP for the Python host tests (registry_test.py, cri_test.py): ok() numbers each
case and says why one failed; run() is a command's exit status and output as text."""
import subprocess
import sys

n_ok = 0
failed = []
out = sys.stdout        # where the lines go (cri_test.py --bench: stderr, its JSON on stdout)


def ok(cond, name, detail=""):
    global n_ok
    n_ok += 1
    print(("ok" if cond else "not ok") + f" {n_ok} - {name}", file=out)
    if not cond:
        failed.append(name)
        for line in str(detail).splitlines()[-25:]:
            print("#   " + line, file=out)
    out.flush()


def run(*args, env=None, check=False):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if check and p.returncode:
        raise RuntimeError(f"{args}: exit {p.returncode}: {p.stderr}")
    return p


def plan():
    print(f"1..{n_ok}", file=out)
