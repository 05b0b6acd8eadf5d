#!/bin/bash
# The kernel's CC (ci/prologue.sh kernel_ccache): ccache in depend mode never sees a file
# the assembler's .incbin takes in, and gave back the object of an earlier one (a mutant
# kernel booted with another mutant's vmlinux inside: arch/x86/boot/compressed/piggy.S).
# Each source with .incbin, assembler or C, must give the object of the file it takes in
# now; a source without must still be a ccache hit the second time.
set -u
src=$1
command -v ccache >/dev/null || { echo "FAIL: ccache is not installed (ci/deps installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }

export ROOTASM_CACHE=$tmp/cache
# shellcheck source=../../ci/prologue.sh
. "$src/ci/prologue.sh"
set +e
kernel_ccache
[ -x "$KCC" ] && [ "$KCC" = "$tmp/cache/kernel/ccache-gcc" ] && ok || bad "no CC at $KCC"
cd "$tmp" || exit 1
printf '.section .rodata\n.incbin "blob.bin"\n' >piggy.S
printf 'asm(".section .rodata\\n.incbin \\"blob.bin\\"\\n.previous");\n' >configs.c
printf 'int f(void) { return 42; }\n' >plain.c
for s in piggy.S configs.c; do
	for v in AAAA BBBB CCCC; do
		echo "$v" >blob.bin
		# (as kbuild calls it: the dependency file through -Wp,-MMD)
		"$KCC" -Wp,-MMD,.o.d -c -o o.o "$s" || { bad "$s: $KCC failed"; continue; }
		got=$(objcopy -O binary -j .rodata o.o /dev/stdout | head -c4)
		[ "$got" = "$v" ] && ok || bad "$s: the object has '$got' of an earlier blob, not '$v'"
	done
done
ccache -z >/dev/null
for i in 1 2; do "$KCC" -Wp,-MMD,.o.d -c -o o.o plain.c; done
hits=$(ccache --print-stats | awk '$1 ~ /^(direct_cache_hit|primary_storage_hit|local_storage_hit)$/ { print $2; exit }')
[ "${hits:-0}" -ge 1 ] && ok || bad "a source without .incbin was not a ccache hit the second time: $(ccache --print-stats | grep -E 'hit|miss' | xargs)"
# written once, rewritten when it differs from the prologue's
echo changed >"$KCC"
kernel_ccache
grep -q 'exec ccache gcc' "$KCC" && ok || bad "a changed $KCC was not written again"

echo "kernel_ccache: $((n - fail))/$n passed"
[ $fail = 0 ]
