#!/bin/bash
# The command line's surface, the same in the three places a user meets it:
# for every command that `rootasm --help` lists, the long options of
# `rootasm COMMAND --help`, of its entry under COMMANDS in rootasm(1) (with
# the common ones under OPTIONS) and of the bash completion are one set; every
# command takes --help, --json, -q/--quiet and --debug after its name (and
# says so in its --help); rootasm(1)'s SYNOPSIS names every command and its SEE
# ALSO the runtimes and the other pages; `version` is a command like the others.
# Usage: cli_surface.sh ROOTASM COMPLETION-SCRIPT ROOTASM.1 (the built page)
set -u
bin=$1 script=$2 page=$3
fail=0 n=0
ok() { # status (first: expanded before the message's command substitutions), message
	n=$((n + 1))
	[ "$1" = 0 ] || { echo "FAIL: $2"; fail=$((fail + 1)); }
}
set1() { printf '%s\n' "$@" | grep . | LC_ALL=C sort -u | paste -sd' '; }
# shellcheck source=/dev/null
. "$script" || { echo "FAIL: sourcing $script"; exit 1; }
man=$(MANWIDTH=80 man -l "$page" 2>/dev/null)
[ -n "$man" ]; ok $? "man -l $page printed nothing"
common="--debug --help --json --quiet"

cmds=$("$bin" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' | LC_ALL=C sort -u)
[ -n "$cmds" ]; ok $? "rootasm --help lists no commands"
synopsis=$(awk '/^SYNOPSIS/ { on = 1; next } on && /^[A-Z]/ { exit } on' <<<"$man")
for c in $cmds; do
	help=$("$bin" "$c" --help 2>&1); rc=$?
	[ $rc = 0 ] && [[ $help == "Usage: rootasm $c"* ]]; ok $? "rootasm $c --help: status $rc, '${help%%$'\n'*}'"
	# the common options, each accepted in front of --help (which then prints and exits 0)
	out=$("$bin" "$c" --json --quiet --debug -q --json=pretty --help 2>&1); rc=$?
	[ $rc = 0 ] && [ "$out" = "$help" ]; ok $? "rootasm $c takes --json --quiet --debug -q: status $rc, '${out%%$'\n'*}'"
	h=$(set1 $(grep -o -- '--[a-z][a-z-]*' <<<"$help"))
	for o in $common; do
		[[ " $h " == *" $o "* ]]; ok $? "rootasm $c --help does not name $o"
	done
	grep -qE -- '^  (-q, )?--quiet ' <<<"$help"; ok $? "rootasm $c --help has no '--quiet' line"
	# the completion
	comp=$(set1 $(_rootasm_options "$c" | tr ' ' '\n' | sed 's/=.*//'))
	[ "$comp" = "$h" ]; ok $? "$c: completion '$comp', --help '$h'"
	# rootasm(1): the command's entry (its option entries: a blank line, then the option alone
	# at the entry's indentation), and the common options under OPTIONS
	entry=$(awk -v c="$c" '
		/^       [a-z]/ { on = ($1 == c || $1 == c ",") ; next }
		/^[A-Z]/ { on = 0 }
		on && blank && /^           --[a-z]/ { print $1 }
		{ blank = ($0 == "") }' <<<"$(sed -n '/^COMMANDS/,/^OPTIONS/p' <<<"$man")")
	m=$(set1 $entry $common)
	[ "$m" = "$h" ]; ok $? "$c: rootasm(1) '$m', --help '$h'"
	grep -qE "^ {7}rootasm $c( |$)" <<<"$synopsis"; ok $? "rootasm(1)'s SYNOPSIS has no 'rootasm $c'"
done
opts=$(sed -n '/^OPTIONS/,/^[A-Z]/p' <<<"$man")
for o in $common; do
	grep -qE -- "^ {7}(-[a-z], )?$o(\[|,| |$)" <<<"$opts"; ok $? "rootasm(1)'s OPTIONS has no entry for $o"
done
seealso=$(sed -n '/^SEE ALSO/,/^[A-Z]/p' <<<"$man" | tr '\n' ' ')
for p in 'crun(1)' 'runc(8)' 'rootasmd(8)' 'librootasm(3)' 'rootasm.layout(5)'; do
	[[ $seealso == *"$p"* ]]; ok $? "rootasm(1)'s SEE ALSO does not name $p"
done

# version: a command like the others
out=$("$bin" version --json); rc=$?
[ $rc = 0 ] && python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["version"] and d["library"]' "$out" 2>/dev/null
ok $? "rootasm version --json: status $rc, '$out'"
out=$("$bin" version --quiet); rc=$?
[ $rc = 0 ] && [[ $out =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; ok $? "rootasm version --quiet: status $rc, '$out'"
[[ $("$bin" --version) == "rootasm $out "* ]]; ok $? "rootasm --version does not start with 'rootasm $out'"
"$bin" version --frobnicate >/dev/null 2>&1; rc=$?
[ $rc = 2 ]; ok $? "rootasm version --frobnicate: status $rc, not 2"
# --quiet means something: no plan from check, only the absent features from probe
out=$(printf 'version: 1\nlayers:\n  - dir: /\n' | "$bin" check --offline --quiet - 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ]; ok $? "rootasm check --offline --quiet -: status $rc, '$out'"
out=$(printf 'version: 1\nlayers:\n  - dir: /\n' | "$bin" check --offline - 2>&1); rc=$?
[ $rc = 0 ] && [ -n "$out" ]; ok $? "rootasm check --offline -: status $rc, no plan"
out=$(printf 'version: 2\n' | "$bin" check --offline --quiet - 2>&1); rc=$?
[ $rc = 2 ] && [ -n "$out" ]; ok $? "rootasm check --quiet on a bad layout: status $rc, '$out'"
echo "cli_surface: $((n - fail))/$n checks passed"
[ "$fail" = 0 ]
