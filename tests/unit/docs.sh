#!/bin/bash
# The documentation against the code:
#  - the built man pages render with `man -l` without a single groff warning
#    (and a broken page does warn: the check can fail);
#  - rootasm(1) names every command and every long option that the commands'
#    --help print, every key of a JSON error, the exit statuses, ROOTASM_DEBUG;
#  - rootasmd(8) names every long option of `rootasmd --help`, its signals, exit
#    statuses and the systemd units and variables it takes;
#  - rootasm-runtime(1) names every long option, annotation, key and variable
#    of `rootasm-runtime --help`;
#  - rootasm.layout(5) has every section of layouts/FORMAT.md (it is made from it)
#    but those between <!-- man: skip --> and <!-- man: end -->;
#  - kernel/README.md's and the cover letter's counts of the series' patches (new
#    ones) and of the mutations are those of kernel/patches/series and kernel/mutations/;
#  - the C example of README.md ("Use from a runtime") compiles against the
#    build tree with -Wall -Wextra -Werror, and refuses bad usage and a
#    missing layout with status 2 and one line; librootasm(3) shows the same.
# Usage: docs.sh SOURCE-DIR BUILD-DIR ROOTASM CC ROOTASMD
set -u
src=$1 build=$2 bin=$3 cc=$4 daemon=$5
fail=0 n=0
ok() { # status (first: expanded before the message's command substitutions), message
	n=$((n + 1))
	[ "$1" = 0 ] || { echo "FAIL: $2"; fail=$((fail + 1)); }
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

warnings() { MANWIDTH=80 man --warnings -E UTF-8 -l "$1" 2>&1 >/dev/null; }
printf '.TH BROKEN 1\n.SH NAME\nbroken \\- x\n.notamacro\n' >"$tmp/broken.1"
[ -n "$(warnings "$tmp/broken.1")" ]; ok $? "man --warnings stays silent on a broken page"
for p in rootasm.1 rootasm-runtime.1 rootasmd.8 rootasm.layout.5 librootasm.3; do
	page=$build/man/$p
	[ -s "$page" ]; ok $? "$page was not built"
	w=$(warnings "$page")
	[ -z "$w" ]; ok $? "man -l $p warns: $w"
	MANWIDTH=80 man -l "$page" 2>/dev/null >"$tmp/$p.txt"
	head -n1 "$tmp/$p.txt" | grep -q "${p%.*}(${p##*.})"; ok $? "$p renders no header line"
done

man1=$tmp/rootasm.1.txt
cmds=$("$bin" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
[ -n "$cmds" ]; ok $? "rootasm --help lists no commands"
for c in $cmds; do
	grep -qE "^ {7}$c( |,|$)" "$man1"
	ok $? "rootasm(1) has no entry for the command $c"
	for o in $("$bin" "$c" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o" "$man1"; ok $? "rootasm(1) does not name $c's option $o"
	done
done
for o in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$o" "$man1"; ok $? "rootasm(1) does not name the option $o"
done
keys=$("$bin" --json check /nonexistent.yaml 2>&1 >/dev/null | grep -o '"[a-z_]*":' | tr -d '":' | sort -u)
[ -n "$keys" ]; ok $? "rootasm --json check /nonexistent.yaml printed no JSON error"
for k in $keys; do
	grep -q "\"$k\"" "$man1"
	ok $? "rootasm(1) does not document the JSON error key $k"
done
for s in 0 1 2 125 126 127; do
	grep -qE "^       $s\$" "$man1"; ok $? "rootasm(1) has no entry for exit status $s"
done
grep -q ROOTASM_DEBUG "$man1"; ok $? "rootasm(1) does not name ROOTASM_DEBUG"

# rootasmd(8) against rootasmd --help
man8=$tmp/rootasmd.8.txt
opts=$("$daemon" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
[ -n "$opts" ]; ok $? "rootasmd --help names no option"
for o in $opts; do
	grep -qE -- "^ {7}(-[a-zA-Z], )?$o( |,|$)" "$man8"; ok $? "rootasmd(8) has no entry for the option $o"
done
for o in $(grep -oE -- '(^| )-[a-zA-Z],' <(LC_ALL=C "$daemon" --help) | tr -d ' ,'); do
	grep -qE -- "^ {7}$o, --" "$man8"; ok $? "rootasmd(8) has no entry for the short option $o"
done
for sig in $("$daemon" --help | grep -oE 'SIG[A-Z]+' | sort -u); do
	grep -qE "^ {7}(.*, )?$sig(,|$)" "$man8"; ok $? "rootasmd(8) has no entry for the signal $sig"
done
for s in $("$daemon" --help | sed -n 's/^Exit status: //p' | grep -oE '(^|, )[0-9]+' | tr -d ', '); do
	grep -qE "^       $s\$" "$man8"; ok $? "rootasmd(8) has no entry for exit status $s"
done
for w in rootasmd.socket rootasmd.service Type=notify READY=1 RELOADING=1 STOPPING=1 STATUS= JOURNAL_STREAM \
	LISTEN_FDS NOTIFY_SOCKET /run/rootasmd.sock /etc/rootasm/rootasmd.policy; do
	grep -qF -- "$w" "$man8"; ok $? "rootasmd(8) does not name $w"
done
grep -qF "Documentation=man:rootasmd(8)" "$src/assembler/daemon/rootasmd.service.in"
ok $? "rootasmd.service does not point at rootasmd(8) (Documentation=)"

# rootasm-runtime(1) against rootasm-runtime --help
# (with groff's hyphenation undone: "ROOTASM_RUN-" at a line's end, "TIME_ROOT" on the next)
manr=$tmp/rootasm-runtime.1.joined
sed -e ':a' -e '/\xe2\x80\x90$/{N;s/\xe2\x80\x90\n *//;ba' -e '}' "$tmp/rootasm-runtime.1.txt" >"$manr"
rhelp=$("$build/rootasm-runtime" --help)
[ -n "$rhelp" ]; ok $? "rootasm-runtime --help printed nothing"
for w in $(grep -oE -- '--[a-z][a-z-]*|org\.rootasm\.[a-z]+|ROOTASM_[A-Z_]+|/etc/rootasm/[a-z.]+' <<<"$rhelp" | sort -u); do
	grep -qF -- "$w" "$manr"; ok $? "rootasm-runtime(1) does not name $w"
done
for k in delegate layouts store socket root; do
	grep -qE "^ {7}$k = " "$manr"; ok $? "rootasm-runtime(1) has no entry for the config key $k"
done

# rootasm.layout(5) is FORMAT.md: every section is there
while read -r h; do
	grep -qxF "$(printf '%s' "$h" | tr a-z A-Z)" "$tmp/rootasm.layout.5.txt"
	ok $? "rootasm.layout(5) has no section '$h' of FORMAT.md"
done < <(awk '/^<!-- man: skip -->/ { s = 1 } /^<!-- man: end -->/ { s = 0 } !s && sub(/^## /, "")' "$src/layouts/FORMAT.md")

# the README's example
awk '/^## Use from a runtime/ { on = 1 } on && /^```c$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
	"$src/README.md" >"$tmp/runtime.c"
[ -s "$tmp/runtime.c" ]; ok $? "no \`\`\`c block under '## Use from a runtime' in README.md"
"$cc" -Wall -Wextra -Werror -o "$tmp/runtime" "$tmp/runtime.c" -I"$src/assembler/include" -L"$build" -lrootasm \
	-Wl,-rpath,"$build" 2>"$tmp/cc.log"
ok $? "the README example does not compile: $(cat "$tmp/cc.log")"
if [ -x "$tmp/runtime" ]; then
	err=$("$tmp/runtime" 2>&1); rc=$?
	[ $rc = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ $err == usage:* ]]
	ok $? "the README example without arguments: status $rc, '$err'"
	err=$("$tmp/runtime" /nonexistent.yaml "$tmp" 2>&1); rc=$?
	[ $rc = 2 ] && [[ $err == "open layout /nonexistent.yaml: No such file or directory" ]]
	ok $? "the README example on a missing layout: status $rc, '$err'"
fi
# librootasm(3) shows the same example (scdoc wants a backslash doubled)
awk '/^# EXAMPLE/ { on = 1 } on && /^```$/ { if (c) exit; c = 1; next } c { print }' \
	"$src/assembler/man/librootasm.3.scd" | sed 's/\\\\/\\/g' >"$tmp/man-example.c"
cmp -s "$tmp/runtime.c" "$tmp/man-example.c"
ok $? "librootasm(3)'s EXAMPLE is not README's: $(diff "$tmp/runtime.c" "$tmp/man-example.c" | head -5)"
# kernel/README.md's counts are the tree's: the series' patches, the mutations (never typed by hand)
patches=$(grep -cE '^[0-9]{4}-.*\.patch' "$src/kernel/patches/series")
muts=$(ls "$src"/kernel/mutations/*.patch | wc -l)
grep -q "^The series has two parts ($patches patches;" "$src/kernel/README.md"
ok $? "kernel/README.md does not count the series' $patches patches: $(grep -o 'two parts ([0-9]* patches' "$src/kernel/README.md")"
grep -q "deliberate breakages of the series' checks, $muts of them" "$src/kernel/README.md"
ok $? "kernel/README.md does not count the $muts mutations"
# and so are the cover letter's (kernel/export-patches --counts writes them)
cover=$src/kernel/patches/0000-cover-letter.patch
new=$(cd "$src/kernel/patches" && grep -l '^Upstream: none' $(cat series) | wc -l)
grep -q "^Subject: \[PATCH 00/$patches\]" "$cover" &&
	grep -q "^$((patches - new)) patches follow upstream commits, $new are new" "$cover" &&
	grep -q ": $muts deliberate breakages" "$cover"
ok $? "the cover letter's counts are not the tree's ($patches patches, $new new, $muts mutations): run kernel/export-patches --counts"
# every shell script of ci/, kernel/ and tests/ parses (a quote in an awk program broke
# tests/qemu/compare only when the QEMU tier ran it)
for f in "$src"/ci/* "$src"/kernel/* "$src"/tests/qemu/* "$src"/tests/qemu/selinux/* "$src"/tests/unit/*.sh; do
	[ -f "$f" ] || continue
	case "$(head -c 64 "$f")" in '#!/bin/bash'*|'#!/bin/sh'*|'#!/usr/bin/env bash'*) ;; *) continue ;; esac
	bash -n "$f" 2>"$tmp/parse.err"
	ok $? "${f#$src/} does not parse: $(head -2 "$tmp/parse.err")"
done
echo "docs: $((n - fail))/$n checks passed"
[ "$fail" = 0 ]
