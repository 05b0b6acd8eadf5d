#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No circle of any length among assembler/'s source files (calls go one way).

For every object file the build makes of assembler/ (library, CLI, daemon,
runtime, tools), nm(1) says which functions and data it defines and which it
uses: file A uses file B when A uses something B defines. The strongly
connected components of that graph (Tarjan) must each be one file: a
component of more is a circle (A uses B uses ... uses A), printed with the
symbols of each edge in it, and fails the test.

The files are also parts of the architecture (PARTS below, the table of
assembler/ARCHITECTURE.md), and some parts never call others directly
(FORBIDDEN): the plan is built without the engine or the probe (needs.c asks
the probe for it), the parser knows nothing of the engine, and no part of the
library calls the command line. Usage: calls_one_way.py BUILD_DIR
"""
import collections
import fnmatch
import os
import re
import subprocess
import sys

build = sys.argv[1]

# file -> part, the first pattern that matches (assembler/ARCHITECTURE.md)
PARTS = [
    ("CLI", ["assembler/cli/*"]),
    ("Daemon", ["assembler/daemon/*"]),
    ("Runtime", ["assembler/runtime/*"]),
    ("Tools", ["assembler/tools/*"]),
    ("OCI", ["assembler/lib/oci/*"]),
    ("Bundle", ["assembler/lib/bundle*.c"]),
    ("Parse", ["assembler/lib/layout*.c", "assembler/lib/yaml.c", "assembler/lib/model.c"]),
    ("Open", ["assembler/lib/open.c", "assembler/lib/open-file.c", "assembler/lib/chase.c", "assembler/lib/mntinfo.c"]),
    ("Authorize", ["assembler/lib/authorize.c", "assembler/lib/principal.c", "assembler/lib/passwd.c"]),
    ("Plan", ["assembler/lib/plan.c", "assembler/lib/plan-print.c", "assembler/lib/emit.c"]),
    ("Kinds", ["assembler/lib/volume*.c"]),
    ("Engine", ["assembler/lib/engine*.c", "assembler/lib/mount.c", "assembler/lib/idmap.c", "assembler/lib/lock.c"]),
    ("Deliver", ["assembler/lib/deliver.c", "assembler/lib/exec*.c", "assembler/lib/client.c",
                 "assembler/lib/watch.c"]),
    ("Probe", ["assembler/lib/probe*.c"]),
    ("API", ["assembler/lib/*"]),
]
LIB = {"OCI", "Bundle", "Parse", "Open", "Authorize", "Plan", "Kinds", "Engine", "Deliver", "Probe", "API"}
FORBIDDEN = {("Plan", "Engine"), ("Plan", "Probe"), ("Parse", "Engine")} | {(p, "CLI") for p in LIB}


def part(f):
    for name, pats in PARTS:
        if any(fnmatch.fnmatch(f, p) for p in pats):
            return name
    return "?"

objs = set()
for line in open(os.path.join(build, "build.ninja")):
    m = re.match(r"build (CMakeFiles/[^ :]+\.dir/(assembler/[^ :]+\.c)\.o):", line)
    if m:
        objs.add((m.group(1), m.group(2)))
if len(objs) < 40:
    sys.exit("FAIL: only %d object files of assembler/ in %s/build.ninja" % (len(objs), build))

defs = collections.defaultdict(set)   # symbol -> sources
uses = collections.defaultdict(set)   # source -> symbols
for obj, src in sorted(objs):
    out = subprocess.run(["nm", os.path.join(build, obj)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRV":
            defs[f[2]].add(src)
        elif len(f) == 2 and f[0] == "U":
            uses[src].add(f[1])

calls = collections.defaultdict(set)
for src, syms in uses.items():
    for s in syms:
        for d in defs.get(s, ()):
            if d != src:
                calls[src].add((d, s))

# Tarjan's strongly connected components, iteratively (no recursion limit)
graph = {a: sorted({d for d, _ in calls[a]}) for a in calls}
nodes = sorted({src for _, src in objs})
index, low, onstack, stack, comps = {}, {}, set(), [], []
counter = 0
for root in nodes:
    if root in index:
        continue
    work = [(root, 0)]
    while work:
        v, i = work.pop()
        if i == 0:
            index[v] = low[v] = counter
            counter += 1
            stack.append(v)
            onstack.add(v)
        succ = graph.get(v, [])
        if i < len(succ):
            work.append((v, i + 1))
            w = succ[i]
            if w not in index:
                work.append((w, 0))
            elif w in onstack:
                low[v] = min(low[v], index[w])
            continue
        # all successors done: fold the children's low links, then maybe pop a component
        for w in succ:
            if w in onstack:
                low[v] = min(low[v], low[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

bad = 0
for comp in sorted(c for c in comps if len(c) > 1):
    bad += 1
    print("FAIL: a circle of %d files: %s" % (len(comp), " ".join(comp)))
    inside = set(comp)
    for a in comp:
        for b in graph.get(a, []):
            if b in inside:
                print("    %s -> %s (%s)" % (a, b, ", ".join(sorted(s for d, s in calls[a] if d == b))))
for a in sorted(calls):
    for d, sym in sorted(calls[a]):
        if (part(a), part(d)) in FORBIDDEN:
            print("FAIL: %s (%s) calls %s (%s): %s -> %s never" % (a, part(a), d, part(d), part(a), part(d)))
            print("    %s" % sym)
            bad += 1
print("calls: %d source files, %d calling others, %d problems: circles (strongly connected components of more "
      "than one file), calls across a forbidden edge (%s)" %
      (len(nodes), len(calls), bad, ", ".join("%s -> %s" % e for e in sorted(FORBIDDEN) if e[1] != "CLI") +
       ", the library -> CLI"))
sys.exit(1 if bad else 0)
