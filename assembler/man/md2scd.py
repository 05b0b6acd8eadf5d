#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""rootasm.layout(5) from layouts/FORMAT.md: the format has one source.

    md2scd.py FORMAT.md OUT.scd

The Markdown that FORMAT.md uses becomes scdoc(5): "## Title" a section,
paragraphs, "-" lists (nested by two spaces), fenced code blocks, `code`
and **bold** (both bold), and tables, which become one indented entry per
row (a man page has no room for wide tables): the first cell is the term,
the middle cells "header: value" after it, the last cell the text. A row
whose first cell is empty continues the row above. Anything between
"<!-- man: skip -->" and "<!-- man: end -->" (repository matters such as
which test exercises an example) stays out of the page. Anything else
that this script does not know is an error, not a guess.
"""
import re
import sys

HEAD = """rootasm.layout(5)

; Generated from layouts/FORMAT.md by assembler/man/md2scd.py: edit that.

# NAME

rootasm.layout - the layout files of rootasm(1) and librootasm(3)

# SYNOPSIS

_layout.yaml_ or _layout.json_, given to *rootasm check*, *rootasm assemble*,
*rootasm exec* or *rootasm_layout_load*(3).

# DESCRIPTION

"""

TAIL = """
# FILES

_/usr/share/rootasm/layout.schema.json_
	A JSON Schema (draft 2020-12) of this format: editors and programs that
	generate layouts can check a layout against it. *rootasm check --offline*
	is the reference; the schema accepts the same keys.

# SEE ALSO

*rootasm*(1), *librootasm*(3), *mount_setattr*(2), *user_namespaces*(7)
"""


def fail(lineno, msg):
    sys.exit("md2scd: FORMAT.md:%d: %s" % (lineno, msg))


def escape(text):
    """Plain text for scdoc: a backslash, an asterisk and an underscore that
    would start underlining are literal."""
    out = []
    for i, c in enumerate(text):
        if c in "\\*":
            out.append("\\" + c)
        elif c == "_" and (i == 0 or not text[i - 1].isalnum()):
            out.append("\\_")
        else:
            out.append(c)
    return "".join(out)


INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)]+)\)")


def inline(text, lineno):
    """Markdown inline markup -> scdoc."""
    text = text.replace("\\|", "|")
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("*" + escape(m.group(1)) + "*")
        elif m.group(2) is not None:
            out.append("*" + inline(m.group(2), lineno).replace("*", "") + "*")
        else:
            out.append(escape(m.group(3)))
        pos = m.end()
    out.append(escape(text[pos:]))
    s = "".join(out)
    if "`" in text[pos:] or "**" in text[pos:]:
        fail(lineno, "unbalanced inline markup: %s" % text)
    return s


def cells(line):
    # split on | that is not escaped as \|
    parts = re.split(r"(?<!\\)\|", line.strip())
    if parts[0] != "" or parts[-1] != "":
        return None
    return [c.strip() for c in parts[1:-1]]


def table(rows, lineno):
    """A Markdown table -> one entry per row."""
    head = cells(rows[0])
    if len(rows) < 2 or not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", rows[1].strip()):
        fail(lineno, "a table needs a header and a |---| line")
    out = []
    for n, r in enumerate(rows[2:]):
        c = cells(r)
        if c is None or len(c) != len(head):
            fail(lineno + 2 + n, "a table row with %s cells, the header has %d" %
                 ("?" if c is None else len(c), len(head)))
        term = inline(c[0], lineno + 2 + n) if c[0] else None
        extra = ["%s: %s" % (escape(head[i]), inline(c[i], lineno + 2 + n))
                 for i in range(1, len(c) - 1) if c[i]]
        text = inline(c[-1], lineno + 2 + n) if len(c) > 1 else ""
        if term is not None:
            if out:
                out.append("")
            out.append(term + (" (" + "; ".join(extra) + ")" if extra else ""))
        elif extra:
            out.append("\t" + "; ".join(extra) + ":")
        if text:
            out.append("\t" + text)
    return out


def convert(lines):
    out = []
    i, n = 0, len(lines)
    skipping = False
    seen_title = False
    # a paragraph or a list item being collected: [prefix, first line number, text lines]
    pending = None
    list_level = None

    def flush():
        nonlocal pending
        if pending:
            prefix, at, text = pending
            out.append(prefix + inline(" ".join(text), at))
        pending = None

    while i < n:
        line = lines[i].rstrip("\n")
        lineno = i + 1
        s = line.strip()
        if s == "<!-- man: skip -->":
            flush()
            skipping = True
            i += 1
            continue
        if s == "<!-- man: end -->":
            if not skipping:
                fail(lineno, "man: end without man: skip")
            skipping = False
            i += 1
            continue
        if skipping:
            i += 1
            continue
        if s.startswith("<!--"):
            fail(lineno, "an HTML comment this script does not know: %s" % s)
        if line.startswith("# "):
            if seen_title:
                fail(lineno, "a second title")
            seen_title = True
            i += 1
            continue
        m = re.match(r"(#{2,3}) (.*)", line)
        if m:
            flush()
            title = m.group(2).strip()
            if len(m.group(1)) == 2:
                out.extend(["", "# " + escape(title.upper()), ""])
            else:
                out.extend(["", "## " + escape(title), ""])
            list_level = None
            i += 1
            continue
        if s.startswith("```"):
            flush()
            block = []
            i += 1
            while i < n and not lines[i].strip().startswith("```"):
                block.append(lines[i].rstrip("\n").replace("\\", "\\\\"))
                i += 1
            if i == n:
                fail(lineno, "an unterminated code block")
            out.extend(["", "```"] + block + ["```", ""])
            list_level = None
            i += 1
            continue
        if not s:
            flush()
            out.append("")
            list_level = None
            i += 1
            continue
        if s.startswith("|"):
            flush()
            rows = []
            while i < n and lines[i].strip().startswith("|"):
                rows.append(lines[i].rstrip("\n"))
                i += 1
            out.extend([""] + table(rows, lineno) + [""])
            list_level = None
            continue
        m = re.match(r"( *)- (.*)", line)
        if m:
            flush()
            indent = len(m.group(1))
            if indent % 2:
                fail(lineno, "a list item indented by an odd number of spaces")
            list_level = indent // 2
            pending = ["\t" * list_level + "- ", lineno, [m.group(2)]]
            i += 1
            continue
        if re.match(r"\d+\. ", s) or s.startswith(("> ", "* ", "+ ")):
            fail(lineno, "Markdown this script does not convert: %s" % s)
        if pending is None:
            pending = ["", lineno, []]
        elif list_level is not None and not line.startswith(" "):
            fail(lineno, "a list item's next line must be indented")
        pending[2].append(s)
        i += 1
    flush()
    if skipping:
        fail(n, "man: skip without man: end")
    # no runs of blank lines, none at the start
    text, blank = [], True
    for l in out:
        if l == "" and blank:
            continue
        text.append(l)
        blank = l == ""
    return "\n".join(text).rstrip("\n") + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: md2scd.py FORMAT.md OUT.scd")
    with open(sys.argv[1], encoding="utf-8") as f:
        body = convert(f.readlines())
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(HEAD + body + TAIL)


main()
