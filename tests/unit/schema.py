#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The layout JSON Schema (layouts/layout.schema.json) against the parser.

    schema.py SOURCE-DIR ROOTASM

- the schema is a valid draft 2020-12 schema;
- every example layout (layouts/, the fuzz corpus' good-*) validates, and
  `rootasm check --offline` accepts it;
- layouts that must be refused are refused by both, with the parser naming
  the key the schema names; a few valid variants are accepted by both;
- the keys agree both ways, mapping by mapping: the parser's own list (the
  "expected one of" of its unknown-key error, for a key placed in each
  mapping) equals the schema's properties there, and every object of the
  schema is probed; the option words, image types and capability names
  agree the same way; every string of a keys[] table in layout.c is a key
  of the schema; FORMAT.md (and so rootasm.layout(5)) names every key.

YAML is read with PyYAML's safe loader into JSON values, as a program that
generates layouts would write them.
"""
import glob
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml

SRC, ROOTASM = sys.argv[1], sys.argv[2]
SCHEMA = json.load(open(os.path.join(SRC, "layouts/layout.schema.json")))
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(doc):
    """rootasm --json check --offline on @doc (a JSON value or YAML text): (status, [error objects])."""
    text = doc if isinstance(doc, str) else json.dumps(doc)
    p = subprocess.run([ROOTASM, "--json", "check", "--offline", "-"], input=text.encode(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    errs = []
    for line in p.stderr.decode().splitlines():
        try:
            errs.append(json.loads(line)["error"])
        except (ValueError, KeyError):
            errs.append({"message": line, "detail": line, "op": ""})
    return p.returncode, errs


jsonschema.Draft202012Validator.check_schema(SCHEMA)
V = jsonschema.Draft202012Validator(SCHEMA)


def schema_errors(doc):
    return sorted(e.message for e in V.iter_errors(doc))


# ------------------------------------------------------------ the examples
examples = sorted(glob.glob(os.path.join(SRC, "layouts/*.yaml")) + glob.glob(os.path.join(SRC, "layouts/*.json")) +
                  glob.glob(os.path.join(SRC, "tests/fuzz/corpus/good-*")))
examples = [e for e in examples if not e.endswith("layout.schema.json")]
check(len(examples) >= 5, "found %d example layouts" % len(examples))
for path in examples:
    name = os.path.relpath(path, SRC)
    with open(path) as f:
        text = f.read()
    check(schema_errors(yaml.safe_load(text)) == [], "%s: valid by the schema: %s" % (name, schema_errors(yaml.safe_load(text))))
    rc, errs = run(text)
    check(rc == 0, "%s: rootasm check --offline accepts it: %s" % (name, [e["message"] for e in errs]))

# ------------------------------------------------- valid and invalid cases
BASE = {"version": 1, "layers": [{"image": "base.sqfs"}]}


def with_(**kw):
    d = json.loads(json.dumps(BASE))
    d.update(kw)
    return d


valid = {
    "ids as strings": with_(upper={"tmpfs": None}, overlay={"override_creds": {"uid": "0", "gid": "0", "groups": ["10"]}}),
    "version as a string": {"version": "1", "layers": [{"dir": "l"}]},
    "capability spellings": with_(upper={"dir": "u"}, overlay={"override_creds": {
        "uid": 0, "gid": 0, "capabilities": ["CAP_SYS_ADMIN", "dac_override", "cap_chown", "FOWNER"]}}),
    "tmpfs sizes": with_(upper={"tmpfs": {"size": "50%", "nr_inodes": "10k", "mode": "0755"}},
                         mounts=[{"tmpfs": "/t", "options": ["size=1G", "nr_inodes=100", "mode=1777", "shared"]}]),
    "numbers for sizes": with_(upper={"tmpfs": {"size": 1048576, "mode": 755}}),
    "idmaps": with_(layers=[{"dir": "l", "idmap": {"uids": ["0:1000:1"], "gids": ["0:1000:1"]}}],
                    mounts=[{"bind": "b", "target": "/b", "idmap": {"userns": "/proc/1/ns/user"}, "options": ["recursive", "ro"]}]),
    "every mount kind": with_(mounts=[{"bind": "b", "target": "/b"}, {"tmpfs": "/t"},
                                      {"image": "i.erofs", "target": "/i", "type": "erofs", "options": ["ro"]},
                                      {"layout": "sub.yaml", "target": "/s"}]),
    "normalized target": with_(mounts=[{"tmpfs": "//srv/./data/"}]),
    "exec": with_(exec={"deny_mount_api": False}),
    "exec sandbox": with_(exec={"uid": 1000, "gid": "1000", "groups": [100], "capabilities": ["CAP_NET_BIND_SERVICE"],
                                "env": ["LANG=C.UTF-8", "EMPTY="], "hostname": "web-1.example", "network": "none",
                                "privileged": False}),
    "null upper": with_(upper=None),
    "an engine's upperdir and workdir": with_(upper={"upperdir": "/var/lib/e/fs", "workdir": "/var/lib/e/work"}),
}
for name, doc in valid.items():
    check(schema_errors(doc) == [], "valid '%s': the schema accepts it: %s" % (name, schema_errors(doc)))
    rc, errs = run(doc)
    check(rc == 0, "valid '%s': rootasm accepts it: %s" % (name, [e["message"] for e in errs]))

# name -> (layout, a word the parser's error must contain)
invalid = {
    "no version": ({"layers": [{"dir": "l"}]}, "version"),
    "version 2": ({"version": 2, "layers": [{"dir": "l"}]}, "version"),
    "no layers": ({"version": 1}, "layers"),
    "empty layers": ({"version": 1, "layers": []}, "layers"),
    "unknown top-level key": (with_(layer=[]), "unknown key 'layer'"),
    "image and dir": (with_(layers=[{"image": "a", "dir": "b"}]), "exactly one"),
    "type on a dir layer": (with_(layers=[{"dir": "a", "type": "erofs"}]), "type"),
    "unknown image type": (with_(layers=[{"image": "a", "type": "ext4"}]), "ext4"),
    "empty path": (with_(layers=[{"dir": ""}]), "non-empty"),
    "control character in a path": (with_(layers=[{"dir": "a\tb"}]), "control character"),
    "upper with both": (with_(upper={"tmpfs": None, "dir": "u"}), "exactly one"),
    "upperdir without workdir": (with_(upper={"upperdir": "/u"}), "go together"),
    "upperdir and dir": (with_(upper={"dir": "u", "upperdir": "/u", "workdir": "/w"}), "exactly one"),
    "tmpfs size 0": (with_(upper={"tmpfs": {"size": "0"}}), "size"),
    "tmpfs size junk": (with_(upper={"tmpfs": {"size": "12q"}}), "size"),
    "octal mode with 8": (with_(upper={"tmpfs": {"mode": "0855"}}), "octal"),
    "override_creds without gid": (with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": 0}}), "gid"),
    "negative uid": (with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": -1, "gid": 0}}), "uid"),
    "uid 4294967295": (with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": 4294967295, "gid": 0}}), "uid"),
    "unknown capability": (with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": 0, "gid": 0, "capabilities": ["CAP_FROBNICATE"]}}), "capability"),
    "capability twice": (with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": 0, "gid": 0, "capabilities": ["CAP_CHOWN", "CAP_CHOWN"]}}), "twice"),
    "relative target": (with_(mounts=[{"bind": "b", "target": "srv"}]), "absolute"),
    "target with ..": (with_(mounts=[{"bind": "b", "target": "/srv/../etc"}]), ".."),
    "target /": (with_(mounts=[{"tmpfs": "/./"}]), "rootfs itself"),
    "mount without target": (with_(mounts=[{"bind": "b"}]), "target"),
    "two mount kinds": (with_(mounts=[{"bind": "b", "tmpfs": "/t"}]), "exactly one"),
    "tmpfs with target": (with_(mounts=[{"tmpfs": "/t", "target": "/t"}]), "target"),
    "options on a nested layout": (with_(mounts=[{"layout": "s.yaml", "target": "/s", "options": ["ro"]}]), "options"),
    "recursive on a tmpfs": (with_(mounts=[{"tmpfs": "/t", "options": ["recursive"]}]), "recursive"),
    "size= on a bind": (with_(mounts=[{"bind": "b", "target": "/b", "options": ["size=1M"]}]), "size=1M"),
    "two propagation types": (with_(attributes=["shared", "private"]), "propagation"),
    "unknown attribute": (with_(attributes=["noreadahead"]), "noreadahead"),
    "idmap on a tmpfs": (with_(mounts=[{"tmpfs": "/t", "idmap": {"userns": "/proc/1/ns/user"}}]), "idmap"),
    "idmap userns and uids": (with_(layers=[{"dir": "l", "idmap": {"userns": "/u", "uids": ["0:1:1"], "gids": ["0:1:1"]}}]), "either"),
    "idmap without gids": (with_(layers=[{"dir": "l", "idmap": {"uids": ["0:1:1"]}}]), "gids"),
    "bad id range": (with_(layers=[{"dir": "l", "idmap": {"uids": ["0-1-1"], "gids": ["0:1:1"]}}]), "range"),
    "exec yes": (with_(exec={"deny_mount_api": "yes"}), "true or false"),
    "unknown exec key": (with_(exec={"deny_mount": True}), "deny_mount"),
    "exec uid without gid": (with_(exec={"uid": 1}), "both"),
    "exec env without =": (with_(exec={"env": ["LANG"]}), "KEY=VALUE"),
    "exec env name with a dash": (with_(exec={"env": ["A-B=1"]}), "KEY=VALUE"),
    "exec hostname with _": (with_(exec={"hostname": "a_b"}), "hostname"),
    "exec hostname starting with -": (with_(exec={"hostname": "-a"}), "hostname"),
    "exec network bridge": (with_(exec={"network": "bridge"}), "bridge"),
    "exec privileged yes": (with_(exec={"privileged": "yes"}), "true or false"),
}
for name, (doc, word) in invalid.items():
    check(schema_errors(doc) != [], "invalid '%s': the schema refuses it" % name)
    rc, errs = run(doc)
    text = " ".join("%s %s" % (e.get("op") or "", e.get("message") or "") for e in errs)
    check(rc == 2 and word in text, "invalid '%s': rootasm refuses it (status %d) naming '%s': %s" % (name, rc, word, text))

# ------------------------------------------------------ keys, both ways
# Each mapping of the format, as a layout with the key "zzz" placed in it.
Z = {"zzz": 1}
PROBES = {
    "#": {"version": 1, "layers": [{"dir": "l"}], **Z},
    "#/$defs/layer": {"version": 1, "layers": [{"dir": "l", **Z}]},
    "#/$defs/idmap": {"version": 1, "layers": [{"dir": "l", "idmap": {"userns": "/u", **Z}}]},
    "#/$defs/upper": {"version": 1, "layers": [{"dir": "l"}], "upper": {"dir": "u", **Z}},
    "#/$defs/tmpfs": {"version": 1, "layers": [{"dir": "l"}], "upper": {"tmpfs": {**Z}}},
    "#/$defs/overlay": {"version": 1, "layers": [{"dir": "l"}], "overlay": {**Z}},
    "#/$defs/creds": {"version": 1, "layers": [{"dir": "l"}], "overlay": {"override_creds": {"uid": 0, "gid": 0, **Z}}},
    "#/$defs/mount": {"version": 1, "layers": [{"dir": "l"}], "mounts": [{"tmpfs": "/t", **Z}]},
    "#/$defs/exec": {"version": 1, "layers": [{"dir": "l"}], "exec": {**Z}},
}


def resolve(ptr):
    node = SCHEMA
    for part in ptr.lstrip("#").strip("/").split("/"):
        if part:
            node = node[part]
    return node


def object_schemas(node, ptr):
    """Every (pointer, schema) of the schema that lists properties."""
    out = []
    if isinstance(node, dict):
        if "properties" in node and (node.get("type") == "object" or node.get("additionalProperties") is False):
            out.append((ptr, node))
        for k, v in node.items():
            out += object_schemas(v, ptr + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += object_schemas(v, ptr + "/" + str(i))
    return out


def expected_list(errs, what):
    for e in errs:
        m = re.search(r"\(expected (?:one of: )?(.*)\)$", e.get("detail") or e.get("message") or "")
        if m and what in (e.get("message") or ""):
            return {w.strip() for w in re.split(r",| or ", m.group(1)) if w.strip()}
    return None


probed = set()
for ptr, doc in PROBES.items():
    node = resolve(ptr)
    if "anyOf" in node:  # tmpfs: null or the mapping
        node = [s for s in node["anyOf"] if "properties" in s][0]
    probed.add(ptr)
    rc, errs = run(doc)
    parser = expected_list(errs, "unknown key 'zzz'")
    schema = set(node["properties"])
    check(parser is not None, "%s: the parser refuses the key zzz with its list: %s" % (ptr, [e["message"] for e in errs]))
    check(parser == schema, "%s: the parser's keys %s == the schema's %s" % (ptr, sorted(parser or []), sorted(schema)))
    check(node.get("additionalProperties") is False, "%s: the schema refuses unknown keys" % ptr)
# every mapping of the schema is probed (a new one needs a probe here)
for ptr, node in object_schemas(SCHEMA, "#"):
    check(re.sub(r"/anyOf/\d+$", "", ptr) in probed, "%s: an object of the schema with no probe in tests/unit/schema.py" % ptr)

# option words and image types
ATTR_ENUM = set(SCHEMA["properties"]["attributes"]["items"]["enum"])
mount_branches = {b["required"][0]: b for b in resolve("#/$defs/mount")["oneOf"]}


def opts_enum(branch):
    items = branch["properties"]["options"]["items"]
    return set(items["enum"] if "enum" in items else [w for s in items["anyOf"] if "enum" in s for w in s["enum"]])


word_probes = {
    "attributes": (with_(attributes=["zzz"]), ATTR_ENUM),
    "bind options": (with_(mounts=[{"bind": "b", "target": "/b", "options": ["zzz"]}]), opts_enum(mount_branches["bind"])),
    "image options": (with_(mounts=[{"image": "i", "target": "/i", "options": ["zzz"]}]), opts_enum(mount_branches["image"])),
    "tmpfs options": (with_(mounts=[{"tmpfs": "/t", "options": ["zzz"]}]),
                      opts_enum(mount_branches["tmpfs"]) | {"size=", "mode=", "nr_inodes="}),
    "image types": (with_(layers=[{"image": "i", "type": "zzz"}]), set(resolve("#/$defs/fstype")["enum"])),
}
for name, (doc, schema) in word_probes.items():
    rc, errs = run(doc)
    parser = expected_list(errs, "'zzz'")
    check(parser == schema, "%s: the parser's %s == the schema's %s" % (name, sorted(parser or []), sorted(schema)))
check("layout" not in mount_branches or "options" not in mount_branches["layout"]["propertyNames"]["enum"],
      "nested layout mounts take no options")

# capabilities: the kernel headers' names, each accepted by the parser and the schema
cap_pat = re.compile(resolve("#/$defs/capability")["pattern"])
header = "/usr/include/linux/capability.h"
names = [n.lower() for n in re.findall(r"^#define CAP_([A-Z_]+)\s+\d+\s*$", open(header).read(), re.M)
         if n not in ("LAST_CAP",)]
check(len(names) >= 41, "%s names %d capabilities" % (header, len(names)))
in_schema = set(re.search(r"\(([a-z_|A-Z]+)\)\$$", cap_pat.pattern).group(1).lower().split("|"))
check(in_schema == set(names), "the schema's capabilities == %s's: %s" % (header, sorted(in_schema ^ set(names))))
for n in names:
    for spelled in ("CAP_" + n.upper(), n):
        if not cap_pat.match(spelled):
            check(False, "the schema accepts capability %s" % spelled)
rc, errs = run(with_(upper={"dir": "u"}, overlay={"override_creds": {"uid": 0, "gid": 0, "capabilities": ["CAP_" + n.upper() for n in names]}}))
check(rc == 0, "rootasm accepts every capability the kernel headers name: %s" % [e["message"] for e in errs][:3])

# every string of a keys[] table in the parser's source is a key of the schema
all_keys = set()
for _, node in object_schemas(SCHEMA, "#"):
    all_keys |= set(node["properties"])
# (the parse stage: layout.c, layout-get.c, layout-exec.c and the volume kinds' files)
src = "".join(open(f).read() for f in sorted(glob.glob(os.path.join(SRC, "assembler/lib/layout*.c")) +
                                             glob.glob(os.path.join(SRC, "assembler/lib/volume*.c"))))
tables = re.findall(r"static const char \*const (?:c|common_)?keys\[\] = \{(.*?)\};", src, re.S)
# the exec section's keys are a table of key and parser; each volume kind's key is its .name
tables += re.findall(r"\} exec_keys\[\] = \{(.*?)\};", src, re.S)
tables += re.findall(r'\.name = ("[^"]+"),', src)
check(len(tables) >= 8, "found %d keys[] tables in the parser" % len(tables))
for t in tables:
    for k in re.findall(r'"([^"]+)"', t):
        check(k in all_keys, "the parser's key '%s' is in the schema" % k)

# FORMAT.md (the source of rootasm.layout(5)) names every key
fmt = open(os.path.join(SRC, "layouts/FORMAT.md")).read()
for k in sorted(all_keys):
    check(re.search(r"(?<![A-Za-z_])%s(?![A-Za-z_])" % re.escape(k), fmt) is not None, "FORMAT.md names the key '%s'" % k)

print("schema: %d/%d checks passed (%d example layouts, %d valid and %d invalid cases, %d mappings probed)" %
      (checks - len(failures), checks, len(examples), len(valid), len(invalid), len(PROBES)))
sys.exit(1 if failures else 0)
