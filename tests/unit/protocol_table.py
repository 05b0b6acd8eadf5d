#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table of PROTOCOL.md's requests, made from `rootasmd --protocol` (JSON on stdin): what
daemon_usage.sh checks the document against."""
import json, sys
d = json.load(sys.stdin)
rows = ["| request | key | type | meaning |", "|---|---|---|---|"]
for k in d["common_keys"]:
    rows.append(f"| every one | `{k['name']}` | {k['type']} | {k['doc']} |")
for r in d["requests"]:
    rows.append(f"| `{r['op']}` | | | {r['doc']}; fd: {r.get('fd') or 'none'} |")
    for k in r["keys"]:
        rows.append(f"| `{r['op']}` | `{k['name']}` | {k['type']} | {k['doc']} |")
print("\n".join(rows))
