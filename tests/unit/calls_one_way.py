#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No two source files call each other (the architecture's calls go one way).

For every object file the build makes of assembler/ (library, CLI, daemon,
runtime, tools), nm(1) says which functions and data it defines and which it
uses; a pair of files where each uses something the other defines is a
circle, and fails the test. Usage: calls_one_way.py BUILD_DIR
"""
import collections
import os
import re
import subprocess
import sys

build = sys.argv[1]
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

bad = 0
for a in sorted(calls):
    for b in sorted({d for d, _ in calls[a]}):
        if a < b:
            fwd = sorted(s for d, s in calls[a] if d == b)
            back = sorted(s for d, s in calls.get(b, ()) if d == a)
            if back:
                print("FAIL: %s calls %s (%s) and %s calls %s (%s)" % (a, b, ", ".join(fwd), b, a, ", ".join(back)))
                bad += 1
print("calls: %d source files, %d calling others, %d circles of two" %
      (len({s for _, s in objs}), len(calls), bad))
sys.exit(1 if bad else 0)
