#!/bin/bash
# What librootasm.so exports: its SONAME, and exactly the functions rootasm.h
# declares, each with a symbol version; the same list in the version script
# and in librootasm(3); no internal ra_* function (those are in the internal
# static library the unit tests link, and only there).
# Usage: abi_symbols.sh LIBROOTASM.SO INTERNAL.A SOURCE-DIR
set -u
so=$1 internal=$2 src=$3
header=$src/assembler/include/rootasm.h map=$src/assembler/lib/librootasm.map man=$src/assembler/man/librootasm.3.scd
fail=0 n=0
ok() { # status (first: expanded before the message's command substitutions), message
	n=$((n + 1))
	[ "$1" = 0 ] || { echo "FAIL: $2"; fail=$((fail + 1)); }
}
same() { # what, list A, list B
	n=$((n + 1))
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1 differ:"
		diff <(printf '%s\n' $2) <(printf '%s\n' $3) | sed -n 's/^[<>]/    &/p'
		fail=$((fail + 1))
	fi
}

soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = librootasm.so.0 ]; ok $? "SONAME is '$soname', not librootasm.so.0"

# every dynamic symbol the library defines: "NAME TYPE"
defined=$(nm -D --defined-only "$so" | awk '{ print $3, $2 }')
[ -n "$defined" ]; ok $? "nm -D --defined-only $so lists nothing"
other=$(printf '%s\n' "$defined" | grep -Ev '^rootasm_[a-z0-9_]+@@?LIBROOTASM_[0-9.]+ T$|^LIBROOTASM_[0-9.]+ A$')
[ -z "$other" ]; ok $? "exported besides rootasm_* functions and version nodes: $(echo $other)"
exported=$(printf '%s\n' "$defined" | sed -n 's/^\(rootasm_[a-z0-9_]*\)@@.*/\1/p' | LC_ALL=C sort)
# old versions kept for programs built before (compat.c): NAME@VERSION, the default NAME@@ a later one
compat=$(printf '%s\n' "$defined" | sed -n 's/^\(rootasm_[a-z0-9_]*@LIBROOTASM_[0-9.]*\) T$/\1/p' | LC_ALL=C sort)
for c in $compat; do
	f=${c%@*} v=${c#*@}
	d=$(printf '%s\n' "$defined" | sed -n "s/^$f@@\(LIBROOTASM_[0-9.]*\) T$/\1/p")
	[ -n "$d" ] && [ "$(printf '%s\n' "$v" "$d" | sort -V | head -1)" = "$v" ] && [ "$v" != "$d" ]
	ok $? "$c: the old version of a function whose default (${d:-none}) is not a later one"
	grep -q "$f@$v" "$src/assembler/lib/compat.c"; ok $? "$c is not bound in compat.c"
done

# functions the header declares (not the static inline ones), one per declaration line
declared=$(grep -E '^[a-z]' "$header" | grep -Ev '^(static|struct|enum|union|typedef|extern)\b|^#' |
	grep -oE '\brootasm_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | LC_ALL=C sort -u)
# the version script's global names
mapped=$(sed -e 's,/\*.*\*/,,' -e '/\/\*/,/\*\//d' "$map" | grep -oE '^[[:space:]]+rootasm_[a-z0-9_]+;' |
	tr -d ' \t;' | LC_ALL=C sort)

# a name is listed twice only for its old version (every node of the name has one version of it)
twice=$(printf '%s\n' $mapped | uniq -d)
[ "$twice" = "$(printf '%s\n' $compat | sed 's/@.*//' | LC_ALL=C sort -u)" ]
ok $? "librootasm.map lists twice '$(echo $twice)', the library has old versions of '$(printf '%s\n' $compat | sed 's/@.*//' | tr '\n' ' ')'"
mapped=$(printf '%s\n' $mapped | LC_ALL=C sort -u)
same "the functions rootasm.h declares and the ones librootasm.so exports" "$declared" "$exported"
same "the functions rootasm.h declares and librootasm.map's" "$declared" "$mapped"
for f in $declared; do
	grep -q "\b$f\b" "$man"; ok $? "librootasm(3) ($man) does not name $f"
done
# the inline helpers are not exported (they live in the header)
for f in $(grep -oE 'static inline [a-z ]+\**\b(rootasm_[a-z0-9_]+)\(' "$header" | grep -oE 'rootasm_[a-z0-9_]+'); do
	! printf '%s\n' $exported | grep -qx "$f"; ok $? "the inline $f is exported"
done
# internals: in the internal static library, not in the shared one
nm "$internal" 2>/dev/null | grep -q ' T ra_layout_parse$'; ok $? "$internal has no ra_layout_parse"
! nm -D "$so" | grep -q 'ra_layout_parse'; ok $? "librootasm.so exports ra_layout_parse"
echo "abi-symbols: $((n - fail))/$n checks passed; exported: $(echo $exported | wc -w) functions, $(echo $compat | wc -w) old versions"
[ "$fail" = 0 ]
